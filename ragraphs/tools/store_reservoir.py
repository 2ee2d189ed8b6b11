"""ERM4's Memory Knowledge Reservoir in a LangGraph store (``BaseStore``).

:class:`StoreReservoir` keeps the same title-content pairs as the SQLite
:class:`~ragraphs.tools.reservoir.Reservoir`, in the store a graph runs with: the one a
LangGraph server gives every run (PostgreSQL on a deployment, so every replica shares one
memory), or ``build_erm4_graph(c, store=InMemoryStore(...))`` in a program. ERM4 uses it with
the run setting ``reservoir="store"``.

Each entry is one item under the namespace ``("ragraphs", "erm4_reservoir", collection)``,
keyed by its title (case-folded, white space collapsed), its value ``{"title", "content",
"source", "where"}`` (``where``: the passage's url, path and page); only the title is embedded (``index=["title"]``). The Retrieval Trigger's
popularity comes from the store's semantic search: the entries among the ``search_limit``
most similar titles whose score (cosine similarity, for the stores LangGraph ships) is >=
``tau``. So the store needs a vector index built with the same embeddings the thresholds were
set for, MiniLM (``langgraph.json`` here configures one; a store without an index is refused
with a message that says so).

Differences from the SQLite file: no least-recently-used bound (a store's items can carry a
time to live instead), and popularity is counted among ``search_limit`` entries at most.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..errors import ConfigError
from ..state.types import Passage, passage_where
from .reservoir_entries import latest_by_title, memory_passage, where_of

NAMESPACE = ("ragraphs", "erm4_reservoir")
NO_INDEX = ("the LangGraph store has no vector index, so the reservoir cannot match titles: give it one on the "
            "'title' field with MiniLM's embeddings (langgraph.json's store.index, or "
            "InMemoryStore(index={'dims': 384, 'embed': MiniLMEmbeddings(), 'fields': ['title']}))")


def _index_config(store: Any) -> Any:
    """The store's ``index_config`` (None: it has no index), looked for through the wrappers a
    LangGraph server puts around its store (``BatchedStore._store``); ``...`` when none says."""
    for _ in range(4):
        if store is None:
            break
        if "index_config" in dir(store):
            return getattr(store, "index_config", ...)
        store = getattr(store, "_store", None)
    return ...


class StoreReservoir:
    """The reservoir's operations (``add``, ``lookup``, ``nearest``, ``touch``, ``count``)
    over a LangGraph ``BaseStore`` with a vector index."""

    def __init__(self, store: Any, *, collection: str = "default", search_limit: int = 100):
        if store is None:
            raise ConfigError("reservoir=store needs a LangGraph store: run the graph on a LangGraph server, or build "
                              "it with a store (build_erm4_graph(c, store=InMemoryStore(index=...)))")
        if _index_config(store) is None:  # a store that says it has no index (InMemoryStore(), PostgresStore
            # without index=, a server's store around one): refused before anything is written (until
            # 2026-12-01 the first run wrote an entry and every later one failed)
            raise ConfigError(NO_INDEX)
        self.store = store
        self.collection = collection or "default"
        self.namespace = (*NAMESPACE, self.collection)
        self.search_limit = max(1, int(search_limit))

    def add(self, passages: Iterable[Passage]) -> dict[str, int]:
        """Store title-content pairs; a pair replaces the stored one with the same title.
        Returns counts ``{"added", "replaced", "unchanged", "skipped", "evicted"}`` as the
        SQLite reservoir does (``evicted`` is always 0)."""
        latest, skipped = latest_by_title(passages)
        counts = {"added": 0, "replaced": 0, "unchanged": 0, "skipped": skipped, "evicted": 0}
        for k, p in latest.items():
            value = {"title": " ".join(p["title"].split()), "content": p["text"].strip(),
                     "source": str(p.get("source") or ""), "where": passage_where(p)}
            old = self.store.get(self.namespace, k)
            if old is not None and all(old.value.get(f) == value[f] for f in ("title", "content")) \
                    and where_of(old.value.get("where")) == value["where"]:
                counts["unchanged"] += 1
                continue
            counts["replaced" if old is not None else "added"] += 1
            self.store.put(self.namespace, k, value, index=["title"])
        return counts

    def _search(self, query: str, limit: int) -> list[Passage]:
        items = self.store.search(self.namespace, query=query, limit=limit)
        if items and all(getattr(it, "score", None) is None for it in items):
            raise ConfigError(NO_INDEX)
        return [memory_passage(it.value.get("title", ""), it.value.get("content", ""), it.value.get("source") or "",
                               float(it.score if it.score is not None else 0.0), where_of(it.value.get("where")))
                for it in items]

    def lookup(self, queries: Sequence[str], tau: float, k: int) -> list[tuple[int, list[Passage]]]:
        """For each query: its popularity (entries whose title scores >= ``tau``, among the
        ``search_limit`` best) and up to ``k`` of them, best first, ``score`` = the title's similarity."""
        out = []
        for q in queries:
            hits = [p for p in self._search(q, self.search_limit) if float(p["score"] or 0.0) >= tau]
            hits.sort(key=lambda p: -float(p["score"] or 0.0))
            out.append((len(hits), hits[: max(0, int(k))]))
        return out

    def nearest(self, queries: Sequence[str], m: int) -> list[list[Passage]]:
        """For each query, the ``m`` entries with the most similar titles, best first."""
        return [self._search(q, max(1, int(m))) for q in queries]

    def touch(self, titles: Iterable[str]) -> None:
        """Nothing to do: a store keeps no least-recently-used order (its items' time to live
        bounds it instead)."""

    def count(self) -> int:
        n, offset, page = 0, 0, 1000
        while True:
            items = self.store.search(self.namespace, limit=page, offset=offset)
            n += len(items)
            if len(items) < page:
                return n
            offset += page
