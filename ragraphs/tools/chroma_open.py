"""Opening a Chroma store: its client (an embedded folder or a server), the collection by a
checked name, and the embeddings it was built with; :class:`~ragraphs.tools.vectorstore.ChromaCorpus`
reads and writes it."""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import ConfigError, StoreError, check_folder_place, without_userinfo
from .embeddings import MiniLMEmbeddings, embedder_id, same_embedder
from .env import positive_number


def chroma_client(path: str | None, url: str | None) -> Any:
    """A Chroma client: an embedded one on the folder ``path``, or a server's at ``url``."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if url:
        return _server_client(url, settings)
    assert path
    try:
        os.makedirs(path, exist_ok=True)
        return chromadb.PersistentClient(path=path, settings=settings)
    except Exception as e:
        raise StoreError(f"cannot open Chroma store at {path}: {type(e).__name__}: {e}") from e


def _server_client(url: str, settings: Any) -> Any:
    """A Chroma server's client at ``url``: an IPv6 host in its brackets, a ``user:password@``
    part sent as HTTP basic auth and never shown (until 2026-12-03 it was printed in errors and
    recorded in threads, never sent; an IPv6 host or a malformed address failed unreadably)."""
    import base64

    import chromadb

    shown = without_userinfo(url)
    try:
        u = urlparse(url)
        port = u.port or (443 if u.scheme == "https" else 8000)
    except ValueError as e:
        raise ConfigError(f"bad Chroma server URL {shown!r} ({e}; expected http://host:port)") from e
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ConfigError(f"bad Chroma server URL {shown!r} (expected http://host:port)")
    headers = None
    if u.username is not None:
        token = base64.b64encode(f"{unquote(u.username)}:{unquote(u.password or '')}".encode()).decode()
        headers = {"Authorization": f"Basic {token}"}
    host = f"[{u.hostname}]" if ":" in u.hostname else u.hostname
    timeout = positive_number("RAGRAPHS_STORE_TIMEOUT", 60.0)
    _answers_in_time(f"{u.scheme}://{host}:{port}", shown, headers, timeout)
    try:
        client = chromadb.HttpClient(host=host, port=port, ssl=u.scheme == "https", headers=headers, settings=settings)
    except Exception as e:
        # the client is given the host alone: its message holds no password
        raise StoreError(f"cannot reach Chroma server at {shown}: {e}") from e
    session = getattr(getattr(client, "_server", None), "_session", None)  # chromadb's httpx client: no timeout of
    if session is not None:  # its own, so a server that stopped answering held a run for good (until 2026-12-03)
        import httpx

        session.timeout = httpx.Timeout(timeout)
    return client


def _answers_in_time(base: str, shown: str, headers: dict | None, timeout: float) -> None:
    """A :class:`StoreError` when the Chroma server at ``base`` accepts the connection and does not
    answer its heartbeat within ``timeout`` seconds (``RAGRAPHS_STORE_TIMEOUT``); a refused
    connection is left to the client, which says so."""
    import httpx

    try:
        httpx.get(base + "/api/v2/heartbeat", headers=headers or {}, timeout=timeout)
    except httpx.TimeoutException as e:
        raise StoreError(f"Chroma server at {shown} did not answer in {timeout:g} s (RAGRAPHS_STORE_TIMEOUT)") from e
    except httpx.HTTPError:
        return


def check_collection_name(collection: str) -> None:
    """Chroma's rules for a collection's name, checked here so that a bad name is a
    ConfigError (exit 2), not a StoreError."""
    if (not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]", collection or "")
            or ".." in collection or re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", collection)):
        raise ConfigError(
            f"bad collection name {collection!r}: 3-512 characters of letters, digits, '.', '_' or '-', "
            "starting and ending with a letter or digit, no '..', not an IPv4 address"
        )


def holds_other_files(path: str) -> bool:
    """Whether the folder ``path`` is no Chroma store and holds files of other kinds (hidden ones,
    a ``.gitkeep`` or macOS's ``.DS_Store``, aside): no place for a store's files."""
    return (os.path.isdir(path) and not os.path.isfile(os.path.join(path, "chroma.sqlite3"))
            and any(not n.startswith(".") for n in os.listdir(path)))


def open_collection(path: str | None, url: str | None, collection: str, embeddings: Any, *,
                    chosen: bool, create: bool) -> tuple[Any, Any, Any]:
    """The client, the collection and the embeddings to read it with: the caller's when
    ``chosen``, else the packaged MiniLM the store was built with (float32 or int8). With
    ``create`` False a missing store or collection is a ConfigError that says how to make it."""
    if path and not url:
        _refuse_no_store(path, create)
    client = chroma_client(path, url)
    emb_name = embedder_id(embeddings)
    try:
        if create:
            col = client.get_or_create_collection(
                collection,
                metadata={"hnsw:space": "cosine", "embedding": emb_name},
                embedding_function=None,
            )
        else:
            col = client.get_collection(collection, embedding_function=None)
    except Exception as e:
        if not create and type(e).__name__ == "NotFoundError":  # a mistyped name: the user's to mend
            try:
                names = sorted(c if isinstance(c, str) else c.name for c in client.list_collections())
            except Exception:  # pragma: no cover - the listing is only a hint
                names = []
            where = url or path
            raise ConfigError(f"no collection {collection!r} in the store at {where} (its collections: "
                              f"{', '.join(names) or 'none'}); `ragraphs ingest PATH --collection {collection}` "
                              "makes one") from e
        raise StoreError(f"cannot open collection {collection!r}: {type(e).__name__}: {e}") from e
    return client, col, _reading_embeddings(col, collection, embeddings, emb_name, chosen)


def _refuse_no_store(path: str, create: bool) -> None:
    """A folder that is no store: a file there, or (``create`` False) no Chroma file in it. Opening
    it would write one there (a folder of the user's documents got a chroma.sqlite3, and ingest
    skipped it from then on)."""
    check_folder_place(path, "store", ConfigError)  # a file there: no "no store" advice, no raw FileExistsError
    if not create and not os.path.isfile(os.path.join(path, "chroma.sqlite3")):
        hint = ("that folder holds other files; give `ragraphs ingest YOUR_DOCS --store NEW_FOLDER` a new folder"
                if holds_other_files(path) else f"`ragraphs ingest YOUR_DOCS --store {path}` makes one")
        raise ConfigError(f"no store at {path}; {hint}")


def _reading_embeddings(col: Any, collection: str, embeddings: Any, emb_name: str, chosen: bool) -> Any:
    """The embeddings to read the collection with: the packaged MiniLM it was built with
    (float32 or int8) unless the caller ``chosen`` theirs; others than it was built with are refused."""
    stored = (col.metadata or {}).get("embedding")
    if stored and stored != emb_name and not chosen and stored in ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8"):
        # a store built by `ingest --exact` (float32), or without it (int8): read it with its own encoder
        return MiniLMEmbeddings(fast=stored.endswith("-int8"))
    if stored and not same_embedder(str(stored), emb_name):
        hint = {"all-MiniLM-L6-v2": " (`ragraphs ingest --exact` writes with it)",
                "all-MiniLM-L6-v2-int8": " (`ragraphs ingest` without --exact writes with it)"}.get(str(stored), "")
        raise ConfigError(
            f"collection {collection!r} was built with embeddings {stored!r}{hint}, not {emb_name!r}; "
            "use the same embeddings or another collection"
        )
    return embeddings
