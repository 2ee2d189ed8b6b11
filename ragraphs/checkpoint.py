"""Checkpointers for persistent threads: a SQLite file or a PostgreSQL server.

A *spec* names where a thread's checkpoints live:

- ``None`` or ``""``: the default SQLite file ``$RAGRAPHS_HOME/checkpoints.sqlite``;
- a path (``runs.sqlite``, ``~/x/cp.db``): that SQLite file, created on first use;
- ``postgresql://user:pass@host:5432/db`` (or ``postgres://``): a PostgreSQL database,
  shared by every process and every server worker that points at it.

:func:`open_checkpointer` gives a synchronous saver for ``graph.invoke`` / ``graph.stream``
(the CLI), :func:`open_async_checkpointer` an async one for ``ainvoke`` / ``astream``, and
:func:`server_checkpointer` is the hook a LangGraph server config can name in its
``"checkpointer": {"path": ...}`` entry (see ``docs/deployment.md``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import re
import sqlite3
import time
from contextlib import asynccontextmanager
from pathlib import Path, PurePath
from typing import Any, AsyncIterator, TypeGuard
from urllib.parse import unquote

from .errors import ConfigError, InputError, file_in_the_way
from .settings import data_dir
from .tools.env import positive_int

DEFAULT_FILE = "checkpoints.sqlite"
ENV_VAR = "RAGRAPHS_CHECKPOINTER"
_POSTGRES_MISSING = ("a PostgreSQL checkpointer needs langgraph-checkpoint-postgres, psycopg[binary] and psycopg-pool: "
                     "pip install 'ragraphs[postgres]' (or -e '.[postgres]' in a checkout)")


# What a checkpoint may rebuild beyond LangGraph's own safe types (SAFE_MSGPACK_TYPES: the
# langchain_core messages and Document, datetime, uuid, set, Send, Overwrite, Interrupt, ...).
# ragraphs' states are TypedDicts of plain values, so none is needed: see strict_serde.
EXTRA_MSGPACK_TYPES: tuple[tuple[str, str], ...] = ()


def strict_serde() -> Any:
    """The serializer of every saver ragraphs opens: LangGraph's ``JsonPlusSerializer`` that
    rebuilds only the types it lists as safe (and :data:`EXTRA_MSGPACK_TYPES`). LangGraph's
    default one imports and calls any ``module.name(*args)`` a checkpoint names (unless
    ``LANGGRAPH_STRICT_MSGPACK=true``), so a crafted checkpoint file ran code when read
    (``ragraphs history t --checkpointer evil.sqlite``, until 2026-11-30); now such a value
    is read as its raw arguments, with LangGraph's "Blocked deserialization" warning. Needs
    langgraph-checkpoint 4.0.1 or later (the first with ``allowed_msgpack_modules``); an older
    one is a :class:`ConfigError` saying so."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    try:
        return JsonPlusSerializer(allowed_msgpack_modules=EXTRA_MSGPACK_TYPES or None)
    except TypeError as e:  # langgraph-checkpoint < 4.0.1 lacks the keyword
        from importlib.metadata import PackageNotFoundError, version

        try:
            have = version("langgraph-checkpoint")
        except PackageNotFoundError:
            have = "unknown"
        raise ConfigError(f"ragraphs' checkpoints need langgraph-checkpoint>=4.0.1 (installed: {have}): "
                          "pip install -U 'langgraph-checkpoint>=4.0.1'") from e


# the PostgreSQL advisory lock that ragraphs' processes take around the checkpoint tables'
# setup: several opening a new database at once (a server's workers, the first `ask --thread`s)
# raced to create them, and all but one failed with UniqueViolation until 2026-12-01. Tried, not
# waited for: a session waiting in pg_advisory_lock holds a transaction open, which the setup's
# CREATE INDEX CONCURRENTLY waits for (a deadlock PostgreSQL does not detect)
SETUP_LOCK = 0x7261677270  # "ragrp"
TRY_LOCK = "SELECT pg_try_advisory_lock(%s) AS locked"
SETUP_WAIT_S = 120.0
SETUP_WAITED = (f"another process held the checkpoint tables' setup lock for {SETUP_WAIT_S:g} s (a setup stuck behind "
                "an open transaction, or a transaction-mode pooler such as pgbouncer: give the database's own port)")


def cli_spec(given: str | None) -> str | None:
    """The checkpointer the command line opens: ``--checkpointer`` as given, else
    ``$RAGRAPHS_CHECKPOINTER`` (a server's, as ``RAGRAPHS_STORE_URL`` gives ``--store-url``; read
    by the server hook only until 2026-12-01), else None (the default SQLite file)."""
    return given or os.environ.get(ENV_VAR, "").strip() or None


def default_checkpointer_path() -> str:
    return str(data_dir() / DEFAULT_FILE)


def is_postgres_url(spec: str | None) -> TypeGuard[str]:
    return spec is not None and "://" in spec and spec.split("://", 1)[0].lower() in ("postgresql", "postgres")


def describe(spec: str | None) -> str:
    """The spec as a user reads it: a PostgreSQL URL without its password, whether in the user
    part (``user:***@host``) or a query value (``?password=***``; shown as given until 2026-11-30)."""
    if is_postgres_url(spec):
        scheme, rest = spec.split("://", 1)
        rest, q, query = rest.partition("?")
        if "@" in rest:
            cred, host = rest.rsplit("@", 1)
            user = cred.split(":", 1)[0]
            rest = f"{user}:***@{host}" if ":" in cred else f"{cred}@{host}"
        query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", query)
        return f"{scheme}://{rest}{q}{query}"
    return sqlite_path(spec)


def _passwords(spec: str) -> list[str]:
    """The passwords a PostgreSQL URL holds (user part, ``password=`` query values), as written
    and percent-decoded, longest first."""
    rest, _, query = spec.split("://", 1)[1].partition("?")
    found = re.findall(r"(?i)(?:^|&)password=([^&]*)", query)
    cred = rest.rsplit("@", 1)[0] if "@" in rest else ""
    if ":" in cred:
        found.append(cred.split(":", 1)[1])
    return sorted({s for f in found for s in (f, unquote(f)) if s}, key=len, reverse=True)


_CONNINFO = re.compile(r"\s*(host|hostaddr|dbname|user|port|password|service|sslmode)\s*=", re.I)


def sqlite_path(spec: str | None) -> str:
    """The SQLite file ``spec`` names (a path, ``sqlite:///path``; empty: the default file). A
    PostgreSQL address in another form is a :class:`ConfigError`: ``postgresql+psycopg://...``
    (LangChain's form), another ``scheme://`` or a libpq ``host=... dbname=...`` string was a
    SQLite file of that name, password and all, in the working folder until 2026-12-01."""
    if not spec:
        return default_checkpointer_path()
    scheme = spec.split("://", 1)[0] if "://" in spec else ""
    if scheme and scheme.lower() != "sqlite":
        hint = (f"drop '{scheme[scheme.index('+'):]}': postgresql://USER:PASSWORD@HOST:PORT/DB"
                if scheme.lower().startswith("postgres") and "+" in scheme else
                "give postgresql://USER:PASSWORD@HOST:PORT/DB (PostgreSQL) or a file path (SQLite)")
        raise ConfigError(f"checkpointer {scheme}://... is no address ragraphs opens; {hint}")
    if _CONNINFO.match(spec):
        raise ConfigError("checkpointer: a libpq 'host=... dbname=...' string is not read; "
                          "give postgresql://USER:PASSWORD@HOST:PORT/DB (PostgreSQL) or a file path (SQLite)")
    if spec.startswith("sqlite:///"):
        spec = spec[len("sqlite:///") :]  # sqlite:///rel.db, sqlite:////abs/path.db
    return str(Path(spec).expanduser())


def _postgres_error(spec: str, e: Exception) -> ConfigError:
    """One line naming the server without its password: libpq repeats the whole URL in some
    errors (a malformed one), which is replaced by :func:`describe`'s form, and any password
    left in the line by ``***`` (both were printed until 2026-11-30)."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    first = first.replace(spec, describe(spec))
    for secret in _passwords(spec):
        first = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", "***", first)
    return ConfigError(f"cannot use the PostgreSQL checkpointer at {describe(spec)}: {first}")


_OPEN: list = []  # connections opened by open_checkpointer, closed at exit


def _close_all() -> None:
    while _OPEN:
        conn = _OPEN.pop()
        try:
            conn.close()
        except Exception:
            pass


atexit.register(_close_all)


def close_checkpointer(saver: Any) -> None:
    """Close the connection of a saver :func:`open_checkpointer` gave (otherwise closed at
    exit): an app or notebook that opens one per session frees it here (a file descriptor or
    two each, kept until exit, until 2026-11-30)."""
    conn = getattr(saver, "conn", None)
    if conn is None:
        return
    if any(c is conn for c in _OPEN):
        _OPEN[:] = [c for c in _OPEN if c is not conn]
    conn.close()


def _check_folder_of(path: str) -> None:
    """A :class:`ConfigError` where a parent of the SQLite file ``path`` is a file (a raw
    ``FileExistsError`` / ``NotADirectoryError`` until 2026-11-30)."""
    found = file_in_the_way(os.path.dirname(path))
    if found is not None:
        raise ConfigError(f"--checkpointer {path}: {found} is a file, not a folder; give a file name in a folder")


def open_checkpointer(spec: str | None = None, *, must_exist: bool = False):
    """A synchronous checkpointer for ``spec`` (see the module doc), ready to use.

    The tables are created on first use. The connection stays open for the life of the
    process (closed at exit, or by :func:`close_checkpointer`); pass the saver as
    ``build_<method>_graph(..., checkpointer=)``.
    With ``must_exist`` (the verbs that read threads: ``history``, ``replay``) a SQLite file
    that is not there, or empty, is an :class:`InputError` and nothing is created.
    """
    if is_postgres_url(spec):
        try:
            import psycopg
            from psycopg.rows import dict_row
            from langgraph.checkpoint.postgres import PostgresSaver
        except ImportError as e:  # pragma: no cover - install problem
            raise ConfigError(_POSTGRES_MISSING) from e
        try:
            conn = psycopg.connect(spec, autocommit=True, prepare_threshold=0, row_factory=dict_row, connect_timeout=10)
        except Exception as e:
            raise _postgres_error(spec, e) from e
        saver = PostgresSaver(conn, serde=strict_serde())
        try:
            deadline = time.monotonic() + SETUP_WAIT_S
            while not (conn.execute(TRY_LOCK, (SETUP_LOCK,)).fetchone() or {}).get("locked"):  # see SETUP_LOCK
                if time.monotonic() > deadline:
                    raise TimeoutError(SETUP_WAITED)
                time.sleep(0.2)
            try:
                saver.setup()
            finally:
                with contextlib.suppress(Exception):  # a broken connection: setup's own error tells it
                    conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
        except Exception as e:
            with contextlib.suppress(Exception):  # a process that tries again keeps no connection per try
                conn.close()
            raise _postgres_error(spec, e) from e
        _OPEN.append(conn)
        return saver

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = sqlite_path(spec)
    if os.path.isdir(path):
        raise ConfigError(f"--checkpointer {path} is a directory; give a file name such as {path}/checkpoints.sqlite")
    _check_folder_of(path)
    if must_exist and (not os.path.isfile(path) or os.path.getsize(path) == 0):
        raise InputError(f"no checkpoints in {path}: `ragraphs ask ... --thread ID` keeps a run there")
    if must_exist:  # history / replay: another program's SQLite file is refused, not given tables and WAL mode
        _check_checkpoint_file(path)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, check_same_thread=False)
        lite = SqliteSaver(db, serde=strict_serde())
        lite.setup()
    except sqlite3.DatabaseError as e:
        raise ConfigError(f"cannot use {path} as a SQLite checkpointer: {e}") from e
    except OSError as e:
        raise ConfigError(f"cannot create the checkpointer file {path}: {e}") from e
    _OPEN.append(db)
    return lite


def read_only_uri(path: PurePath) -> str:
    """SQLite's read-only URI of an absolute path. A Windows share (``\\\\server\\share\\...``)
    gets an empty authority, ``file:////server/share/...``: SQLite refuses ``file://server/``."""
    uri = path.as_uri()
    if uri.startswith("file://") and not uri.startswith("file:///"):
        uri = "file:////" + uri[len("file://"):]
    return f"{uri}?mode=ro"


def _read_only(path: str, query: str) -> list:
    """``query``'s rows from the SQLite file ``path``, opened read-only (nothing written to it);
    a :class:`ConfigError` naming the file when it is no database."""
    try:
        with sqlite3.connect(read_only_uri(Path(path).resolve()), uri=True) as ro:
            return ro.execute(query).fetchall()
    except sqlite3.DatabaseError as e:
        raise ConfigError(f"cannot use {path} as a SQLite checkpointer: {e}") from e


def _check_checkpoint_file(path: str) -> None:
    """A :class:`ConfigError` unless ``path`` holds LangGraph's SQLite checkpoint tables (read
    without writing: opened read-only)."""
    cols = {r[1] for r in _read_only(path, "PRAGMA table_info(checkpoints)")}
    if not {"thread_id", "checkpoint_id", "checkpoint"} <= cols:
        raise ConfigError(f"{path} is not a checkpoint file (it has no LangGraph checkpoints table); "
                          "give the file `ragraphs ask --thread` wrote")


@asynccontextmanager
async def open_async_checkpointer(spec: str | None = None, *, server: bool = False) -> AsyncIterator:
    """An async checkpointer for ``spec``, for ``graph.ainvoke`` / ``astream`` and servers
    (``server``: the saver :mod:`ragraphs.checkpoint_server` gives a LangGraph server).

    PostgreSQL uses a small connection pool, so concurrent runs in one worker share it.
    """
    if is_postgres_url(spec):
        try:
            import psycopg
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
            from psycopg.rows import dict_row
            from psycopg_pool import AsyncConnectionPool
        except ImportError as e:  # the same message as the sync path (a bare import error until 2026-11-30)
            raise ConfigError(_POSTGRES_MISSING) from e

        pool: Any = AsyncConnectionPool(  # of dict rows, as the saver reads them
            spec,
            min_size=1,
            max_size=positive_int("RAGRAPHS_PG_POOL") or 8,  # int(...) of a blank or bad value was a traceback
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=False,
        )
        try:
            await pool.open(wait=True, timeout=15)
        except Exception as e:
            await pool.close()
            raise _postgres_error(spec, e) from e
        try:
            if server:
                from .checkpoint_server import server_postgres_saver
            saver = (server_postgres_saver() if server else AsyncPostgresSaver)(pool, serde=strict_serde())
            try:  # under the lock, on a connection of its own (a pool of one would wait for itself)
                async with await psycopg.AsyncConnection.connect(spec, autocommit=True, prepare_threshold=0,
                                                                  connect_timeout=10) as lock:
                    deadline = time.monotonic() + SETUP_WAIT_S
                    while not (await (await lock.execute(TRY_LOCK, (SETUP_LOCK,))).fetchone() or (False,))[0]:
                        if time.monotonic() > deadline:
                            raise TimeoutError(SETUP_WAITED)
                        await asyncio.sleep(0.2)
                    await saver.setup()
            except Exception as e:  # a raw psycopg error until 2026-12-01, as the sync path's is not
                raise _postgres_error(spec, e) from e
            yield saver
        finally:
            await pool.close()
        return

    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = sqlite_path(spec)
    if os.path.isdir(path):  # the sync opener's checks (raw sqlite3 errors until 2026-11-30)
        raise ConfigError(f"checkpointer {path} is a directory; give a file name such as {path}/checkpoints.sqlite")
    _check_folder_of(path)
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        _read_only(path, "SELECT name FROM sqlite_master LIMIT 1")
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"cannot create the checkpointer file {path}: {e}") from e
    async with aiosqlite.connect(path) as conn:  # AsyncSqliteSaver.from_conn_string takes no serde
        from .checkpoint_server import ServerSqliteSaver

        lite = (ServerSqliteSaver if server else AsyncSqliteSaver)(conn, serde=strict_serde())
        try:
            await lite.setup()
        except sqlite3.DatabaseError as e:
            raise ConfigError(f"cannot use {path} as a SQLite checkpointer: {e}") from e
        yield lite


@asynccontextmanager
async def server_checkpointer() -> AsyncIterator:
    """Checkpointer hook for a LangGraph server (``langgraph.json``: ``"checkpointer": {"path":
    "ragraphs.checkpoint.server_checkpointer"}``, the dotted form LangGraph's loader reads): the spec comes from ``$RAGRAPHS_CHECKPOINTER``
    (a PostgreSQL URL for a multi-worker deployment; a SQLite file for one process)."""
    spec = os.environ.get(ENV_VAR) or None
    async with open_async_checkpointer(spec, server=True) as saver:  # `rollback` needs adelete_for_runs
        yield saver
