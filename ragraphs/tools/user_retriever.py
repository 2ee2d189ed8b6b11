"""What a user's own store returns, read as ragraphs' passages.

- :func:`document_passage`: a LangChain ``Document`` as a passage;
- :class:`LangChainRetriever`: a LangChain vector store or retriever behind ragraphs'
  ``search(query, k, mode)``, each hit read with :func:`document_passage`;
- :class:`CheckedRetriever`: a user's object with ragraphs' ``search(query, k, mode)``, its
  signature checked once and each hit read as a passage (a ``Document``, or a dict without an
  ``id``, failed deep inside a node with a bare ``TypeError`` / ``KeyError`` until 2026-11-30).
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence, cast

import numpy as np
from langchain_core.callbacks import CallbackManager
from langchain_core.runnables.config import ensure_config

from ..errors import ConfigError
from ..state.types import Passage, make_passage
from .aio import run_to_end

KINDS = ("corpus", "web", "memory")  # the passage sources ragraphs routes on


def _distinct(passages: list[Passage]) -> list[Passage]:
    """The passages with one of each id, the first kept: a store holding a chunk twice (a
    ``Document`` without an id has one made of its title and text) gave DR-RAG and ERM4 the
    same passage twice, in their prompts and their budget, until 2026-12-03."""
    firsts: dict[str, Passage] = {}
    for p in passages:
        firsts.setdefault(p["id"], p)
    return list(firsts.values())


def _retrieved(inner: Any, query: str) -> list:
    """A LangChain retriever's documents: ``invoke``; a retriever that is async only (its sync
    method raises ``NotImplementedError``, its ``_aget_relevant_documents`` its own) through
    ``ainvoke`` on an event loop of its own (it failed every run, ``ainvoke``'s too, until 2026-12-03)."""
    from langchain_core.retrievers import BaseRetriever

    try:
        return inner.invoke(query)
    except NotImplementedError:
        if not (isinstance(inner, BaseRetriever)
                and type(inner)._aget_relevant_documents is not BaseRetriever._aget_relevant_documents):
            raise
    return run_to_end(lambda: inner.ainvoke(query))


def _plain(value: Any) -> bool:
    """A metadata value a passage can carry through checkpoints and JSON as it is."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    return isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value)


def _marked_by_ragraphs(d: Any, md: dict) -> bool:
    """Whether ``d`` is a document ragraphs made (``method_retriever``'s ``passage_document``):
    its metadata carries the passage's ``id`` (the same as the document's own) and ``score``
    beside the ``source`` kind. Only then is a ``source`` of "web" or "memory" a passage kind."""
    mid, did = md.get("id"), getattr(d, "id", None)
    return mid is not None and did is not None and str(mid) == str(did) and "score" in md


def document_passage(d: Any, score: float | None = None, source: str = "corpus") -> Passage:
    """A LangChain ``Document`` as a passage: its metadata's ``title`` (else the file or page
    its ``source`` names), its plain metadata in ``meta``, its id (the document's own, else
    ``metadata["id"]`` as text, after its file or page when it names one: ``"a.txt#1"``; a
    different ``metadata["id"]`` is kept as ``meta["metadata_id"]``) or one hashed from its text.

    A ``source`` of "web" or "memory" is the passage's kind only on a document ragraphs made
    (:func:`_marked_by_ragraphs`); on a user's document it is a label, kept in ``meta["source"]``,
    and the passage is ``source`` (corpus): it became that kind until 2026-11-30, so a user's
    "memory" document was counted as served memory and never stored in ERM4's reservoir."""
    md = d.metadata or {}
    origin = str(md.get("source") or "")
    label = origin in KINDS  # a kind's name, not a file or page
    kind = origin if label and (origin == source or _marked_by_ragraphs(d, md)) else source
    title = str(md.get("title") or "") or (origin.rstrip("/").rsplit("/", 1)[-1] if not label else "")
    meta = _document_meta(md, origin, label, kind)
    # the document's id first: a user's metadata["id"] is often a chunk number per file, shared
    # by chunks of other files (they merged into one passage until 2026-11-30, and an int id
    # reached nodes that take ids as text)
    doc_id = getattr(d, "id", None)
    pid = doc_id if doc_id not in (None, "") else md.get("id")
    if pid is md.get("id") and pid not in (None, "") and origin and not label:
        # no id of its own: the metadata's, within its file or page (a retriever that keeps no
        # Document.id, as BM25Retriever: chunks of files numbered alike merged until 2026-12-03)
        pid = f"{origin}#{pid}"
    if md.get("id") not in (None, "") and str(md["id"]) != str(pid) and _plain(md["id"]):
        meta.setdefault("metadata_id", md["id"])  # the user's own id, kept beside the store's
    p = make_passage(title, d.page_content, kind, None if score is None else float(score),
                     id=None if pid in (None, "") else str(pid))
    if meta:
        p["meta"] = meta
    return p


def _document_meta(md: dict, origin: str, label: bool, kind: str) -> dict:
    """A document's plain metadata as a passage's ``meta``: its file or page as ingest keeps it
    (``path`` or ``url``), a user's own label of a kind's name as ``source``."""
    meta = {k: (list(v) if isinstance(v, tuple) else v) for k, v in md.items()
            if k not in ("title", "id", "source") and isinstance(k, str) and _plain(v)}
    if origin and not label:  # a loader's file or page: as ingest keeps it
        meta.setdefault("url" if origin.startswith(("http://", "https://")) else "path", origin)
    elif label and kind != origin:  # the user's own label, kept
        meta["source"] = origin
    return meta


def _takes_query_k_mode(method: Any) -> bool:
    try:
        params = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError):  # no signature to read: taken as it is
        return True
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return True
    names = {p.name for p in params}
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return "mode" in names and (len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params))


class CheckedRetriever:
    """A user's retriever as the nodes read it: every other attribute is the user's object's own
    (``title_index``, ``modes``, ``count``...), ``search`` / ``search_many`` give passages."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        name = type(inner).__name__
        for method in ("search", "search_many"):
            if hasattr(inner, method) and not _takes_query_k_mode(getattr(inner, method)):
                raise ConfigError(f"{name}.{method} must take ({'query' if method == 'search' else 'queries'}, k, "
                                  f"mode) (mode: dense | bm25 | hybrid); it takes {inspect.signature(getattr(inner, method))}")

    def __getattr__(self, attr: str) -> Any:
        if attr == "inner":  # not set yet (copy, pickling): no recursion
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def _passages(self, hits: Any) -> list[Passage]:
        out = []
        for h in hits or []:
            if hasattr(h, "page_content") and hasattr(h, "metadata"):  # a LangChain Document
                out.append(document_passage(h))
            elif isinstance(h, dict) and isinstance(h.get("text"), str):
                out.append(self._hit_passage(h))
            else:
                raise ConfigError(f"{type(self.inner).__name__}.search returned {type(h).__name__}; each hit must be "
                                  "a passage dict with a 'text' (title, id, score, source optional) or a LangChain Document")
        return _distinct(out)

    def _hit_passage(self, h: dict) -> Passage:
        """A passage dict of the user's search with the field types the nodes read: title, id and
        source as text (an id hashed from title and text when it has none), score a number or
        None, ``meta`` a dict; its other keys kept. A title of 3 or an id of 5 reached the nodes
        as they were (a TypeError deep in DR-RAG's title links) until 2026-12-03."""
        score, meta = h.get("score"), h.get("meta")
        number = score is None or isinstance(score, (int, float, np.number)) and not isinstance(score, bool)
        bad = "meta" if meta is not None and not isinstance(meta, dict) else None if number else "score"
        if bad:
            raise ConfigError(f"{type(self.inner).__name__}.search returned a hit whose {bad!r} is {type(h[bad]).__name__}; "
                              "'score' must be a number or None, 'meta' a dict")
        pid = h.get("id")
        p = make_passage("" if h.get("title") is None else str(h["title"]), h["text"], str(h.get("source") or "corpus"),
                         None if score is None else float(score), id=None if pid in (None, "") else str(pid))
        return cast(Passage, {**{k: v for k, v in h.items() if v is not None}, **p})

    def search(self, query: str, k: int, mode: str = "dense") -> list[Passage]:
        if not hasattr(self.inner, "search"):  # one with the batch search only
            return self._passages(self.inner.search_many([query], k, mode=mode)[0])
        return self._passages(self.inner.search(query, k, mode=mode))

    def search_many(self, queries: Sequence[str], k: int, mode: str = "dense") -> list[list[Passage]]:
        if hasattr(self.inner, "search_many"):
            return [self._passages(r) for r in self.inner.search_many(queries, k, mode=mode)]
        return [self.search(q, k, mode=mode) for q in queries]


class LangChainRetriever:
    """Adapter: any LangChain ``VectorStore`` or ``BaseRetriever`` as a :class:`Retriever`.

    Only ``mode="dense"`` is meaningful for a foreign store (``modes``); a run asking for
    ``bm25`` or ``hybrid`` gets dense, and its trace says so. Each document's metadata
    rides along in the passage's ``meta`` (plain values: a loader's ``source`` path, ``page``,
    ``url``...), a loader's ``source`` as ``path`` (or ``url`` for an address), as ``ragraphs
    ingest`` keeps them; its title is ``metadata["title"]``, else the file or page that
    ``source`` names. The passage's own ``source`` stays the kind ragraphs routes on (``corpus``).
    """

    modes = ("dense",)
    KINDS = ("corpus", "web", "memory")

    def __init__(self, store_or_retriever: Any, source: str = "corpus"):
        self.inner = store_or_retriever
        self.source = source

    def search(self, query: str, k: int, mode: str = "dense") -> list[Passage]:
        inner = self.inner
        if hasattr(inner, "invoke") and not hasattr(inner, "similarity_search"):
            return _distinct([document_passage(d, None, self.source) for d in _retrieved(inner, query)])[:k]  # its own run
        # a vector store's search is no run of its own: it is made a retriever run of the caller's, so
        # callbacks, event streams and traces see it (they did not until 2026-12-01)
        cfg = ensure_config()
        run = CallbackManager.configure(cfg.get("callbacks"), inheritable_tags=cfg.get("tags"),
                                        inheritable_metadata=cfg.get("metadata")).on_retriever_start(
            {"name": type(inner).__name__}, query, name=type(inner).__name__)
        try:
            pairs = self._scored(inner, query, k)
        except BaseException as e:
            run.on_retriever_error(e)
            raise
        run.on_retriever_end([d for d, _ in pairs])
        return _distinct([document_passage(d, s, self.source) for d, s in pairs])

    @staticmethod
    def _scored(inner: Any, query: str, k: int) -> list:
        pairs = None
        if hasattr(inner, "similarity_search_with_relevance_scores"):
            try:
                pairs = inner.similarity_search_with_relevance_scores(query, k=k)
            except NotImplementedError:  # a store without a relevance function (InMemoryVectorStore)
                pairs = _similarities(inner, query, k)
        if pairs is None and hasattr(inner, "similarity_search"):
            pairs = [(d, None) for d in inner.similarity_search(query, k=k)]
        elif pairs is None:
            raise ConfigError(f"{type(inner).__name__} is neither a LangChain VectorStore nor a retriever")
        return pairs


def _similarities(inner: Any, query: str, k: int) -> list | None:
    """(Document, score) from a store whose plain scores are similarities, higher nearer:
    LangChain's ``InMemoryVectorStore`` (cosine; its passages' scores were None until
    2026-12-02). None for another store, whose plain scores may be distances."""
    from langchain_core.vectorstores import InMemoryVectorStore

    return inner.similarity_search_with_score(query, k=k) if isinstance(inner, InMemoryVectorStore) else None
