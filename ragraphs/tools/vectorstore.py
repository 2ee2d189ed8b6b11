"""Vector store (Chroma) and the retriever interface every graph uses.

:class:`Retriever` is the small interface nodes depend on: ``search(query, k, mode)``
returns :class:`~ragraphs.state.Passage` lists. :class:`ChromaCorpus` implements it over
Chroma (embedded persistent directory, or a Chroma server by URL) with a BM25 index beside
it for ``mode="bm25"`` and ``mode="hybrid"`` (reciprocal-rank fusion).
:class:`~ragraphs.tools.user_retriever.LangChainRetriever` adapts any LangChain ``VectorStore``
or ``BaseRetriever``.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import warnings
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import ConfigError, StoreError
from ..state.types import Passage, make_passage, with_score
from .bm25 import BM25Index
from .chroma_open import check_collection_name, chroma_client, open_collection
from .embeddings import MiniLMEmbeddings, embed_queries, embed_texts, unit_rows
from .titles import TitleIndex

MODES = ("dense", "bm25", "hybrid")
BM25_RECHECK_S = 10.0  # seconds between two reads of a collection's ids for a change that kept its count
REOPEN_S = 5.0  # seconds between two openings of a store folder again (50,000 passages: about 0.3 s each)
COUNT_TTL_S = 1.0  # a collection's size is read at most this often (a DR-RAG question read it 9 times)


@runtime_checkable
class Retriever(Protocol):
    def search(self, query: str, k: int, mode: str = "dense") -> list[Passage]: ...


def rrf_fuse(lists: Sequence[list[Passage]], k: int, c: int = 60) -> list[Passage]:
    """Reciprocal-rank fusion of ranked passage lists (score = sum 1/(c + rank))."""
    scores: dict[str, float] = {}
    first: dict[str, Passage] = {}
    for lst in lists:
        for r, p in enumerate(lst):
            scores[p["id"]] = scores.get(p["id"], 0.0) + 1.0 / (c + r + 1)
            first.setdefault(p["id"], p)
    ranked = sorted(scores, key=lambda i: -scores[i])[:k]
    return [with_score(first[i], scores[i]) for i in ranked]


def _digest(ids: Iterable[str]) -> str:
    """One hash of a collection's ids, whatever order they are read in."""
    h = hashlib.sha256()
    for i in sorted(ids):
        h.update(i.encode("utf-8", "replace") + b"\x00")
    return h.hexdigest()


def _stored_passage(id: str, text: str | None, metadata: dict | None, score: float | None = None) -> Passage:
    """A passage read back from the store; what ingest kept beside its title and source (the
    file's ``path`` or the page's ``url``, the ``chunk``) is its ``meta`` again."""
    m = dict(metadata or {})
    title, source = str(m.pop("title", "") or ""), str(m.pop("source", "corpus") or "corpus")
    meta = {k: v for k, v in m.items() if k not in ("id", "text", "score")}
    return make_passage(title, text or "", source, score, id=id, **meta)


_EMPTY_WARNED: set[tuple[str, str]] = set()  # (store, collection): warned once per process


def _warn_empty(where: str, collection: str, url: bool = False) -> None:
    """Once per store and collection: a search of an empty collection that opening it may have
    made (``Components(store_path=...)`` or ``collection=`` mistyped); until 2026-11-30 it
    answered from 0 passages without a word. A Chroma server's store is named by ``--store-url``."""
    if (where, collection) in _EMPTY_WARNED:
        return
    _EMPTY_WARNED.add((where, collection))
    warnings.warn(f"the Chroma collection {collection!r} in the store at {where} is empty (a store or collection "
                  "that is not there is made, empty, when opened): searches find no passages; `ragraphs ingest "
                  f"YOUR_DOCS {'--store-url' if url else '--store'} {where} --collection {collection}` (or "
                  "ragraphs.ingest.ingest(paths, "
                  "components.retriever)) fills it, and Components(create_collection=False) makes a missing one "
                  "an error", UserWarning, stacklevel=4)


class ChromaCorpus:
    """Passages in a Chroma collection, with a lazily built BM25 index beside it.

    Ids are content hashes, so adding the same passage twice stores it once. Writes go in
    batches, each one atomic in Chroma; an interrupted ingest leaves whole batches only,
    and re-running it completes the store to exactly the state of one full run.
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        url: str | None = None,
        collection: str = "ragraphs",
        embeddings: Any = None,
        create: bool = True,
    ):
        if not path and not url:
            raise ConfigError("ChromaCorpus needs a directory path or a server url")
        check_collection_name(collection)
        self.path, self.url, self.collection_name = path, url, collection
        self._check_empty = create  # the command line opens with create=False and says so itself
        chosen = embeddings is not None  # the caller's choice is kept; the default follows the store
        self.embeddings = embeddings or MiniLMEmbeddings()
        self._client, self._col, self.embeddings = open_collection(path, url, collection, self.embeddings,
                                                                   chosen=chosen, create=create)
        self._bm25: BM25Index | None = None
        self._bm25_key: tuple[int, str] = (-1, "")
        self._bm25_checked = 0.0
        self._ids_changed = False
        self._recheck: threading.Thread | None = None
        self._titles: TitleIndex | None = None
        self._lock = threading.RLock()
        self._count: tuple[int, float] | None = None  # (size, when read); this process's writes clear it
        self._recheck_s = 0.0  # how long the last read of every id took
        # the size the client's dense index was read at (None: take the next one, after this
        # process's own write), and whether the ids changed under it; reads and a reopen take turns
        self._dense_count: int | None = None
        self._dense_digest: str | None = None  # its ids' (taken by the next read of every id when None)
        self._dense_stale = False
        self._reopened = float("-inf")  # when it was last opened again
        self._col_lock = threading.RLock()

    def _read(self, what: Callable[[], Any]) -> Any:
        """A read of the collection; a failing store (a Chroma server gone mid-run) is a
        :class:`StoreError` (it was the client's own error until 2026-11-30)."""
        try:
            with self._col_lock:  # not while the client is opened again (:meth:`_follow_other_writers`)
                return what()
        except (ConfigError, StoreError):
            raise
        except Exception as e:
            raise StoreError(f"cannot read the vector store: {type(e).__name__}: {e}") from e

    # ---------------------------------------------------------------- writing
    def count(self, fresh: bool = False) -> int:
        """The collection's size, read again after :data:`COUNT_TTL_S`, this store's own write or when
        ``fresh`` (another's write is seen within that; every search read it until 2026-12-01)."""
        got, now = self._count, time.monotonic()
        if fresh or got is None or now - got[1] >= COUNT_TTL_S:
            got = self._count = (int(self._read(lambda: self._col.count())), now)
        return got[0]

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        with self._col_lock:  # every read and write of the collection: not while it is opened again
            return {i for s in range(0, len(ids), 500) for i in self._col.get(ids=list(ids[s : s + 500]), include=[])["ids"]}

    def ids_from(self, path: str | list[str], key: str = "path") -> set[str]:
        """Ids of the stored passages that ingest read from ``path`` (a file's absolute path or a
        page's address, their ``path`` metadata), or any of a list; ``key="real"``: by where a link led."""
        if not isinstance(path, list):
            path = [path]
        return self._read(lambda: {i for s in range(0, len(path), 500)  # 500 at a time, as existing_ids reads
                                   for i in self._col.get(where={key: {"$in": path[s : s + 500]}}, include=[])["ids"]})

    def remove(self, ids: Iterable[str]) -> int:
        """Delete these passages; returns how many were asked for."""
        ids = list(ids)
        try:
            with self._col_lock:
                for s in range(0, len(ids), 500):
                    self._col.delete(ids=ids[s : s + 500])
        except Exception as e:
            raise StoreError(f"cannot write to the vector store: {type(e).__name__}: {e}") from e
        if ids:
            with self._lock:
                self._bm25, self._count, self._dense_count, self._dense_digest = None, None, None, None
        return len(ids)

    def add(
        self,
        passages: Iterable[Passage],
        *,
        batch_size: int = 128,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Embed and add passages not yet stored; returns how many were added."""
        uniq: dict[str, Passage] = {}
        for p in passages:
            uniq.setdefault(p["id"], p)
        ids = list(uniq)
        have = self.existing_ids(ids) if ids else set()
        todo = [uniq[i] for i in ids if i not in have]
        if progress and have:
            progress(len(have))
        added = 0
        for s in range(0, len(todo), batch_size):
            batch = todo[s : s + batch_size]
            texts = [embedded_text(p) for p in batch]
            vecs = embed_texts(self.embeddings, texts)
            metas = []
            for p in batch:
                m: dict[str, str | int | float | bool] = {"title": p["title"], "source": p.get("source") or "corpus"}
                for key, val in (p.get("meta") or {}).items():
                    if isinstance(val, (str, int, float, bool)):
                        m[key] = val
                metas.append(m)
            try:
                with self._col_lock:
                    self._col.upsert(ids=[p["id"] for p in batch], embeddings=vecs.tolist(),
                                     documents=[p["text"] for p in batch], metadatas=metas)
            except Exception as e:
                raise StoreError(f"cannot write to the vector store: {type(e).__name__}: {e}") from e
            added += len(batch)
            if progress:
                progress(len(batch))
        if added:
            with self._lock:
                self._bm25, self._count, self._dense_count, self._dense_digest = None, None, None, None
        return added

    # ---------------------------------------------------------------- reading
    def all_passages(self) -> list[Passage]:
        out: list[Passage] = []
        n = self.count(fresh=True)  # every page of it
        for off in range(0, n, 2000):
            got = self._read(lambda: self._col.get(include=["documents", "metadatas"], limit=2000, offset=off))
            for i, d, m in zip(got["ids"], got["documents"], got["metadatas"]):
                out.append(_stored_passage(i, d, m))
        return out

    def _ids_digest(self) -> str:
        ids: list[str] = []
        for off in range(0, self.count(fresh=True), 20000):
            ids += self._read(lambda: self._col.get(include=[], limit=20000, offset=off))["ids"]
        return _digest(ids)

    def bm25(self) -> BM25Index:
        """The BM25 index of the collection, rebuilt when it changes: its count is read (at most
        every :data:`COUNT_TTL_S`) on each call, its ids in a thread of their own now and then (a file
        ingested again by another process keeps the count; the index served the old text until
        2026-11-30): a change they show is taken from the next call on (read in the call, they
        cost every question after a pause about 4 ms per 1,000 passages until 2026-11-30)."""
        with self._lock:
            n = self.count()
            now = time.monotonic()
            index = self._bm25
            stale = index is None or self._bm25_key[0] != n or self._ids_changed
            if not stale:
                self._start_recheck(self._bm25_key[1], now)
            if stale or index is None:
                passages = self.all_passages()  # the digest of their ids: no second read of the collection
                index = self._bm25 = BM25Index(passages)
                self._bm25_key, self._bm25_checked = (n, _digest(p["id"] for p in passages)), now
                self._titles, self._ids_changed = None, False
                self._dense_digest = self._dense_digest or self._bm25_key[1]
            return index

    def _start_recheck(self, digest: str, now: float) -> None:
        """Read every id again, in a thread of its own, if none runs and the last read was long
        enough ago: <= 1% of a core, 100 times the last read's time apart (every 10 s at any size
        until 2026-12-01). Call with ``_lock`` held."""
        if self._recheck is None and now - self._bm25_checked >= max(BM25_RECHECK_S, 100 * self._recheck_s):
            self._bm25_checked = now
            self._recheck = threading.Thread(target=self._recheck_ids, args=(digest,),
                                             name="ragraphs-store-recheck", daemon=True)
            self._recheck.start()

    def _recheck_ids(self, digest: str) -> None:
        """Whether the collection's ids still give ``digest`` (the BM25 index's, "" for none) and
        the dense index's; a change marks that index stale."""
        start = time.monotonic()
        try:
            now = self._ids_digest()
        except Exception:  # a failing store: the next read meets it and says so
            now = None
        with self._lock:
            self._recheck, self._recheck_s = None, time.monotonic() - start
            if now is None:
                return
            if digest and now != digest and self._bm25_key[1] == digest:
                self._ids_changed = True
            self._dense_digest = self._dense_digest or now
            self._dense_stale = self._dense_stale or now != self._dense_digest

    def title_index(self) -> TitleIndex:
        """The collection's passages by title (built with the BM25 index's passages, rebuilt with it)."""
        bm25 = self.bm25()
        with self._lock:
            if self._titles is None:
                self._titles = TitleIndex(bm25.passages)
            return self._titles

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        return embed_queries(self.embeddings, queries)

    def dense_search_vectors(self, vectors: np.ndarray, k: int) -> list[list[Passage]]:
        n = self.count() if len(vectors) else 0  # one read of the count (there were two)
        n = self.count(fresh=True) if 0 < len(vectors) and n < k else n  # fewer than k: another's write?
        if n == 0:
            return [[] for _ in range(len(vectors))]
        k = max(1, min(k, n))
        self._follow_other_writers(n)
        res = self._read(lambda: self._col.query(
            query_embeddings=np.asarray(vectors).tolist(),
            n_results=k,
            include=["documents", "metadatas", "distances"],
        ))
        out = []
        for ids, docs, metas, dists in zip(res["ids"], res["documents"], res["metadatas"], res["distances"]):
            row = []
            for i, d, m, dist in zip(ids, docs, metas, dists):
                if d is None:  # removed by another process since this one's index was read
                    continue
                row.append(_stored_passage(i, d, m, 1.0 - float(dist)))
            out.append(row)
        return out

    def _follow_other_writers(self, n: int) -> None:
        """Open the store's folder again when another process wrote to it since this client read
        its dense index (its size ``n`` is another, or the ids changed under the same size): an
        embedded Chroma client keeps its process's copy of that index, and a new client on the
        same folder shares it, so a dense search missed another process's passages until restart
        (until 2026-12-03). This process's own writes are in its copy already."""
        if self.url or not self.path:  # a Chroma server serves every client's writes
            return
        with self._lock:
            if self._dense_count is None:
                self._dense_count = n
            now = time.monotonic()
            if n == self._dense_count and not self._dense_stale:
                self._start_recheck(self._bm25_key[1] if self._bm25 is not None else "", now)
                return
            if now - self._reopened < REOPEN_S:  # another's ingest under way: its passages wait a few seconds
                return
            self._dense_count, self._dense_stale, self._reopened = n, False, now
        with self._col_lock:
            try:
                self._client.close()  # the process's copy is let go when no other client holds it
                self._client = chroma_client(self.path, None)
                self._col = self._client.get_collection(self.collection_name, embedding_function=None)
            except Exception as e:
                raise StoreError(f"cannot open the vector store at {self.path} again: {type(e).__name__}: {e}") from e
        digest = self._ids_digest()  # what the new copy holds (rare: after another's write)
        with self._lock:
            self._dense_digest = digest

    def search_many(self, queries: Sequence[str], k: int, mode: str = "dense") -> list[list[Passage]]:
        if mode not in MODES:
            raise ConfigError(f"unknown retrieval mode {mode!r}; choose from {', '.join(MODES)}")
        if getattr(self, "_check_empty", False):  # the first search only (InMemoryCorpus shares this method)
            self._check_empty = False
            if self.count() == 0:
                _warn_empty(self.url or os.path.abspath(str(self.path)), self.collection_name, url=bool(self.url))
        if mode == "bm25":
            idx = self.bm25()
            return [idx.search(q, k) for q in queries]
        dense = self.dense_search_vectors(self.embed_queries(queries), k if mode == "dense" else 2 * k)
        if mode == "dense":
            return dense
        idx = self.bm25()
        return [rrf_fuse([d, idx.search(q, 2 * k)], k) for q, d in zip(queries, dense)]

    def search(self, query: str, k: int, mode: str = "dense") -> list[Passage]:
        return self.search_many([query], k, mode)[0]


def usable_mode(retriever: Any, mode: str) -> str:
    """The retrieval mode ``retriever`` serves for ``mode``: ``mode`` itself, or ``"dense"`` for
    a retriever that names the modes it has (``modes``) and lacks this one (a LangChain store
    has no BM25 index beside it). Nodes record this one in their trace."""
    return mode if mode in getattr(retriever, "modes", MODES) else "dense"


def embedded_text(p: Passage) -> str:
    """What a stored passage's vector reads: its title, then its text."""
    return f"{p['title']}. {p['text']}" if p["title"] else p["text"]


class InMemoryCorpus:
    """A small in-memory corpus (numpy dense + BM25): for tests, pooled eval corpora and notebooks."""

    def __init__(self, passages: Iterable[Passage], embeddings: Any = None):
        uniq: dict[str, Passage] = {}
        for p in passages:
            uniq.setdefault(p["id"], p)
        self.passages = list(uniq.values())
        self.embeddings = embeddings or MiniLMEmbeddings()
        texts = [embedded_text(p) for p in self.passages]
        self.vectors = unit_rows(embed_texts(self.embeddings, texts)) if texts else np.zeros((0, 384), np.float32)
        self._bm25 = BM25Index(self.passages)

    def count(self) -> int:
        return len(self.passages)

    def all_passages(self) -> list[Passage]:
        return list(self.passages)

    def bm25(self) -> BM25Index:
        return self._bm25

    def title_index(self) -> TitleIndex:
        if getattr(self, "_titles", None) is None:
            self._titles = TitleIndex(self.passages)
        return self._titles

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        return embed_queries(self.embeddings, queries)

    def dense_search_vectors(self, vectors: np.ndarray, k: int) -> list[list[Passage]]:
        if not self.passages:
            return [[] for _ in range(len(vectors))]
        q = np.asarray(vectors, dtype=np.float32)
        q = q / (np.linalg.norm(q, axis=1, keepdims=True) + 1e-9)
        sims = q @ self.vectors.T
        out: list[list[Passage]] = []
        for row in sims:
            kk = min(k, row.size)
            top = np.argpartition(-row, kk - 1)[:kk]
            top = top[np.argsort(-row[top], kind="stable")]
            out.append([with_score(self.passages[i], float(row[i])) for i in top])
        return out

    search_many = ChromaCorpus.search_many
    search = ChromaCorpus.search
