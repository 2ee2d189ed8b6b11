"""Persistent threads in PostgreSQL: a real server started on 127.0.0.1 for this module.

Skipped when the PostgreSQL server binaries (``initdb``, ``postgres``) are not installed;
CI installs them (Debian: ``apt-get install -y postgresql``).
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import free_port, main_captured, stop_process


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    cands = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return cands[-1] if cands else None


def _as_user():
    """PostgreSQL refuses to run as root: run it as the ``postgres`` system user then."""
    if os.geteuid() != 0:
        return None, None
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root and there is no 'postgres' user to run the PostgreSQL server as")

    def demote():
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)

    return demote, pw


@pytest.fixture(scope="module")
def pg_url():
    initdb, postgres = _pg_bin("initdb"), _pg_bin("postgres")
    if not initdb or not postgres:
        pytest.skip("PostgreSQL server binaries (initdb, postgres) are not installed: apt-get install -y postgresql")
    import psycopg

    demote, pw = _as_user()
    root = Path(tempfile.mkdtemp(prefix="ragraphs-pg-"))
    data = root / "data"
    if pw is not None:
        os.chown(root, pw.pw_uid, pw.pw_gid)
    log = root / "server.log"
    subprocess.run(
        [initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"],
        check=True, capture_output=True, preexec_fn=demote, cwd=root, timeout=180,
    )
    port = free_port()
    with open(log, "w") as fh:
        if pw is not None:
            os.chown(log, pw.pw_uid, pw.pw_gid)
        proc = subprocess.Popen(
            [postgres, "-D", str(data), "-h", "127.0.0.1", "-p", str(port), "-k", str(root), "-c", "fsync=off"],
            stdout=fh, stderr=subprocess.STDOUT, preexec_fn=demote, cwd=root,
        )
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail("postgres exited: " + log.read_text()[-2000:])
            try:
                with psycopg.connect(url, connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    pytest.fail("postgres did not accept connections in 60 s: " + log.read_text()[-2000:])
                time.sleep(0.3)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)  # fast shutdown
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def _rows(url: str, thread: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)).fetchone()[0]


def test_ask_history_replay_with_a_postgres_url(pg_url, capsys):
    code, out, err = main_captured(capsys, "ask", "Who wrote Hamlet?", "--method", "none", "--llm", "fake:Shakespeare",
                          "--thread", "pg-1", "--checkpointer", pg_url, "--quiet")
    assert code == 0 and out.strip() == "Shakespeare"
    assert _rows(pg_url, "pg-1") == 4  # input, __start__, start, generate

    code, out, err = main_captured(capsys, "history", "pg-1", "--checkpointer", pg_url, "--json")
    hist = json.loads(out)
    assert hist["method"] == "none" and hist["context"]["llm"] == "fake:Shakespeare"
    assert [c["step"] for c in hist["checkpoints"]] == [-1, 0, 1, 2]
    assert [e["node"] for c in hist["checkpoints"] for e in c["ran"]] == ["start", "generate"]
    assert hist["checkpoints"][-1]["answer"] == "Shakespeare"

    code, out, err = main_captured(capsys, "replay", "pg-1", "--from", "0", "--set", "llm=fake:Marlowe",
                          "--checkpointer", pg_url, "--json")
    rep = json.loads(out)
    assert code == 0 and rep["answer"] == "Marlowe" and [e["node"] for e in rep["ran"]] == ["start", "generate"]
    assert rep["from_step"] == 0
    # the replay is a new branch of the same thread; the first answer stays in the history
    code, out, err = main_captured(capsys, "history", "pg-1", "--checkpointer", pg_url)
    assert "branch from checkpoint" in out and "answer: Shakespeare" in out and "answer: Marlowe" in out
    # the password never shows
    code, out, err = main_captured(capsys, "history", "nope", "--checkpointer", pg_url.replace("postgres@", "postgres:secret@"))
    assert code != 0 and "no checkpoints for thread 'nope'" in err


def test_threads_are_shared_between_processes(pg_url, capsys, tmp_path):
    """What a multi-worker server needs: a run made by one process is read and continued by another."""
    env = {**os.environ, "RAGRAPHS_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "ragraphs", "ask", "Capital of Peru?", "--method", "none", "--llm", "fake:Lima",
           "--thread", "pg-shared", "--checkpointer", pg_url, "--quiet"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Lima"
    code, out, err = main_captured(capsys, "history", "pg-shared", "--checkpointer", pg_url, "--json")
    assert json.loads(out)["checkpoints"][-1]["answer"] == "Lima"


def test_async_postgres_checkpointer_serves_concurrent_runs(pg_url):
    from ragraphs.checkpoint import open_async_checkpointer, open_checkpointer
    from ragraphs.components import Components
    from ragraphs.graphs.none import build_none_graph
    from ragraphs.tools.llm import FakeAnswerChat

    async def main():
        async with open_async_checkpointer(pg_url) as saver:
            g = build_none_graph(Components(llm=FakeAnswerChat(responses=["42"])), checkpointer=saver)
            outs = await asyncio.gather(
                *[g.ainvoke({"question": f"q{i}?"}, {"configurable": {"thread_id": f"pg-async-{i}"}}) for i in range(6)]
            )
            return outs

    outs = asyncio.run(main())
    assert [o["answer"] for o in outs] == ["42"] * 6
    # every thread is in the database, readable by a synchronous saver elsewhere
    g = build_none_graph(Components(llm=FakeAnswerChat()), checkpointer=open_checkpointer(pg_url))
    for i in range(6):
        st = g.get_state({"configurable": {"thread_id": f"pg-async-{i}"}})
        assert st.values["question"] == f"q{i}?" and st.values["answer"] == "42" and st.next == ()


def test_processes_opening_a_new_database_at_once_set_it_up_once(pg_url):
    """Four async openers and four sync ones on fresh databases at once, as a server's workers
    start: the tables are made under an advisory lock (three of four failed with
    UniqueViolation until 2026-12-01)."""
    import threading

    import psycopg

    from ragraphs.checkpoint import open_async_checkpointer, open_checkpointer

    urls = []
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for name in ("race_async", "race_sync"):
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
            urls.append(pg_url.rsplit("/", 1)[0] + "/" + name)

    async def one():
        async with open_async_checkpointer(urls[0]) as saver:
            return await saver.aget_tuple({"configurable": {"thread_id": "none", "checkpoint_ns": ""}})

    async def four():
        return await asyncio.gather(*[one() for _ in range(4)], return_exceptions=True)

    assert asyncio.run(four()) == [None] * 4
    errors: list = []

    def sync_one():
        try:
            open_checkpointer(urls[1]).get_tuple({"configurable": {"thread_id": "none", "checkpoint_ns": ""}})
        except Exception as e:  # collected: the assertion below names it
            errors.append(e)

    threads = [threading.Thread(target=sync_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []


def test_bad_postgres_url_is_one_clear_error(capsys):
    port = free_port()  # nothing listens there
    code, out, err = main_captured(capsys, "ask", "Q?", "--method", "none", "--llm", "fake:x", "--thread", "t",
                          "--checkpointer", f"postgresql://u:pw@127.0.0.1:{port}/db")
    assert code != 0
    assert err.startswith("ragraphs: error: cannot use the PostgreSQL checkpointer at postgresql://u:***@127.0.0.1")
    assert "pw@" not in err and "Traceback" not in err


def test_a_postgres_address_in_another_form_is_refused_not_made_a_file(capsys, tmp_path, monkeypatch):
    """LangChain's postgresql+psycopg://, another scheme and a libpq string were opened as a SQLite
    file of that name (password and all) in the working folder until 2026-12-01."""
    monkeypatch.chdir(tmp_path)
    for spec, said in (("postgresql+psycopg://postgres:secret@127.0.0.1:1/db", "drop '+psycopg'"),
                       ("mysql://root:secret@127.0.0.1/db", "mysql://... is no address"),
                       ("host=127.0.0.1 port=1 user=postgres password=secret", "libpq 'host=... dbname=...' string")):
        for argv in (["ask", "Who?", "--method", "none", "--llm", "fake:x", "--thread", "t"], ["history", "t"]):
            code, out, err = main_captured(capsys, *argv, "--checkpointer", spec)
            assert code == 2 and said in err and "secret" not in err, err
    assert list(tmp_path.iterdir()) == []
    from ragraphs.checkpoint import open_async_checkpointer

    async def enter():
        async with open_async_checkpointer("postgresql+psycopg://u:secret@h/db"):
            pass

    with pytest.raises(Exception, match="drop '\\+psycopg'"):
        asyncio.run(enter())


def test_a_password_in_the_query_or_repeated_by_libpq_is_never_printed(capsys):
    """``?password=`` is masked like ``user:password@``, and libpq's own message, which
    repeats a malformed URL whole, names it without the password (both were printed until
    2026-11-30). No server is needed: the URL fails before any connection."""
    from ragraphs.checkpoint import describe

    assert describe("postgresql://u@db:5432/x?sslmode=require&password=qsecret9") == \
        "postgresql://u@db:5432/x?sslmode=require&password=***"
    assert describe("postgres://u:pw@db/x?PASSWORD=a%40b") == "postgres://u:***@db/x?PASSWORD=***"
    assert describe("postgresql://db/x?application_name=password") == "postgresql://db/x?application_name=password"
    pytest.importorskip("psycopg")  # without it the error is the install advice (test_a_missing_postgres_driver...)
    for url in ("postgresql://u:s3cretpw@[::1/db",  # libpq: ... in URI: "postgresql://u:s3cretpw@[::1/db"
                "postgresql://u@127.0.0.1:1/db?password=qsecret9&bogus=1",
                "postgresql://u:s3cret%40pw@[::1/db?password=qs%41cret9"):
        code, out, err = main_captured(capsys, "ask", "Q?", "--method", "none", "--llm", "fake:x", "--thread", "t",
                                       "--checkpointer", url)
        assert code == 2 and err.startswith("ragraphs: error: cannot use the PostgreSQL checkpointer at postgresql://u")
        assert "s3cret" not in err and "qsecret9" not in err and "qs%41cret9" not in err and "qsAcret9" not in err, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert 'in URI: "postgresql://u:***@[::1/db"' in main_captured(
        capsys, "history", "t", "--checkpointer", "postgresql://u:s3cretpw@[::1/db")[2]


@pytest.fixture
def chroma_server(tmp_path, minilm):
    """A Chroma server on 127.0.0.1 holding a slice of the bundled sample corpus."""
    import urllib.request

    from servers import ingest_sample_slice

    chroma = shutil.which("chroma") or os.path.join(os.path.dirname(sys.executable), "chroma")
    port = free_port()
    log = open(tmp_path / "chroma.log", "w")
    proc = subprocess.Popen(
        [chroma, "run", "--path", str(tmp_path / "chroma-data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail("chroma exited: " + (tmp_path / "chroma.log").read_text()[-2000:])
            try:
                with urllib.request.urlopen(url + "/api/v2/heartbeat", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("chroma did not start in 120 s")
                time.sleep(0.5)
        n = ingest_sample_slice(tmp_path / "ingest", minilm, store_url=url, collection="served")
        yield url, n
    finally:
        stop_process(proc)
        log.close()


@pytest.mark.slow
def test_server_with_postgres_checkpoints_and_chroma_server_and_the_cli_debugs_its_runs(pg_url, chroma_server, capsys, tmp_path):
    """The scale-out deployment on one machine: ``langgraph dev`` with the PostgreSQL
    checkpointer hook (examples/langgraph.postgres.json) and the corpus in a Chroma server.
    A run made through the server retrieves from Chroma, its checkpoints land in PostgreSQL,
    and ``ragraphs history/replay`` (another process's view) list and re-run it."""
    from langgraph_sdk import get_sync_client

    from servers import langgraph_dev

    chroma_url, n_passages = chroma_server
    assert n_passages >= 25
    config = Path(__file__).resolve().parent.parent / "examples" / "langgraph.postgres.json"
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    env = {"RAGRAPHS_CHECKPOINTER": pg_url, "RAGRAPHS_STORE_URL": chroma_url, "RAGRAPHS_COLLECTION": "served"}
    with langgraph_dev(config, home, cwd, env) as url:
        client = get_sync_client(url=url, timeout=300)
        assistant = next(a for a in client.assistants.search() if a["graph_id"] == "vanilla")
        thread = client.threads.create()
        out = client.runs.wait(thread["thread_id"], assistant["assistant_id"],
                               input={"question": "Which Danish chemist introduced the concept of pH?"},
                               context={"llm": "fake:Sørensen", "k": 3})
        assert out["answer"] == "Sørensen"
        assert "S. P. L. Sørensen" in [p["title"] for p in out["passages"]]  # from the Chroma server
    tid = thread["thread_id"]
    assert _rows(pg_url, tid) == 5  # input, __start__, start, retrieve, generate: in PostgreSQL
    code, out, err = main_captured(capsys, "history", tid, "--checkpointer", pg_url, "--json")
    hist = json.loads(out)
    assert code == 0 and hist["method"] == "vanilla" and hist["context"] == {"llm": "fake:Sørensen", "k": 3}
    assert [e["node"] for c in hist["checkpoints"] for e in c["ran"]] == ["start", "retrieve", "generate"]
    # replay the generator only, from the checkpoint after retrieve, with another answer model;
    # the passages are the ones the server retrieved (no store is needed for that step)
    code, out, err = main_captured(capsys, "replay", tid, "--from", "2", "--set", "llm=fake:Bohr", "--checkpointer", pg_url, "--json")
    rep = json.loads(out)
    assert code == 0 and rep["answer"] == "Bohr" and [e["node"] for e in rep["ran"]] == ["generate"]


def test_a_missing_postgres_driver_says_which_extra_to_install(monkeypatch):
    """Both checkpointers, the sync one of the command line and the async one of the server
    hook (a bare ``ModuleNotFoundError`` until 2026-11-30), name ``ragraphs[postgres]``."""
    import asyncio
    import sys

    import pytest

    from ragraphs.checkpoint import open_async_checkpointer, open_checkpointer
    from ragraphs.errors import ConfigError

    for name in ("psycopg", "psycopg_pool", "langgraph.checkpoint.postgres", "langgraph.checkpoint.postgres.aio"):
        monkeypatch.setitem(sys.modules, name, None)
    url = "postgresql://u:p@127.0.0.1:1/db"
    with pytest.raises(ConfigError, match=r"ragraphs\[postgres\]"):
        open_checkpointer(url)

    async def enter():
        async with open_async_checkpointer(url):
            pass

    with pytest.raises(ConfigError, match=r"ragraphs\[postgres\]"):
        asyncio.run(enter())


def test_the_pool_size_variable_is_checked_and_blank_is_the_default(monkeypatch):
    """``RAGRAPHS_PG_POOL``: blank is the default 8, a bad value a ``ConfigError`` naming it
    (``int()``'s ValueError traceback until 2026-11-30, a blank value's too)."""
    import asyncio

    import langgraph.checkpoint.postgres.aio  # noqa: F401  (imported before the pool class is replaced)
    import psycopg_pool
    import pytest

    from ragraphs.checkpoint import open_async_checkpointer
    from ragraphs.errors import ConfigError

    sizes = []

    class Pool:  # what the checkpointer asks for, before any connection
        def __init__(self, *args, max_size, **kwargs):
            sizes.append(max_size)
            raise RuntimeError("no connection in this test")

    monkeypatch.setattr(psycopg_pool, "AsyncConnectionPool", Pool)

    async def enter():
        async with open_async_checkpointer("postgresql://u:p@127.0.0.1:1/db"):
            pass

    for value, size in (("", 8), ("  ", 8), ("3", 3)):
        monkeypatch.setenv("RAGRAPHS_PG_POOL", value)
        with pytest.raises(RuntimeError, match="no connection"):
            asyncio.run(enter())
        assert sizes[-1] == size
    for bad in ("abc", "0", "-2"):
        monkeypatch.setenv("RAGRAPHS_PG_POOL", bad)
        with pytest.raises(ConfigError, match=f"RAGRAPHS_PG_POOL must be a positive integer, got '{bad}'"):
            asyncio.run(enter())
