"""ERM4's reservoir in a LangGraph store (``reservoir="store"``): the same entries, matches and
popularity as the SQLite file, and the ERM4 graph storing and reusing knowledge through it.

LangGraph's ``InMemoryStore`` with a vector index over MiniLM (the index ``langgraph.json``
gives a server) and the real MiniLM; the server's own store is exercised in
``tests/studio/test_studio_server.py``.
"""

from __future__ import annotations

import pytest
from langgraph.store.memory import InMemoryStore

from fakes import ConstJudge
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.errors import ConfigError
from ragraphs.graphs.erm4 import ERM4Context, build_erm4_graph
from ragraphs.state.types import make_passage
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.tools.reservoir import Reservoir
from ragraphs.tools.store_reservoir import StoreReservoir
from ragraphs.tools.trigger import trigger_lookup
from ragraphs.tools.vectorstore import InMemoryCorpus

QUERIES = ["Henrik Selberg", "Lord Adolphus Vane-Tempest", "Danish chemist who introduced pH"]


def indexed_store(minilm) -> InMemoryStore:
    return InMemoryStore(index={"dims": 384, "embed": minilm, "fields": ["title"]})


@pytest.fixture(scope="module")
def wiki(data_dir):
    return pooled_passages(load_dataset(str(data_dir / "2wikimultihopqa.sample.jsonl"), "2wikimultihopqa"))


@pytest.fixture(scope="module")
def both(tmp_path_factory, wiki, minilm):
    file = Reservoir(tmp_path_factory.mktemp("res") / "reservoir.sqlite3", embeddings=minilm)
    file.add(wiki)
    store = StoreReservoir(indexed_store(minilm), search_limit=len(wiki))
    store.add(wiki)
    return file, store


def test_the_store_holds_the_same_entries_and_finds_the_same_matches_as_the_file(both):
    file, store = both
    assert store.count() == file.count() > 100
    for (pop_f, hits_f), (pop_s, hits_s) in zip(file.lookup(QUERIES, 0.6, 10), store.lookup(QUERIES, 0.6, 10)):
        assert pop_s == pop_f
        assert [h["title"] for h in hits_s] == [h["title"] for h in hits_f]
        assert [h["text"] for h in hits_s] == [h["text"] for h in hits_f]
        assert all(abs(a["score"] - b["score"]) < 1e-3 and b["source"] == "memory" for a, b in zip(hits_f, hits_s))
    assert store.lookup(QUERIES[:1], 0.6, 10)[0][0] >= 3  # inside the paper's boundary (theta 3)
    # the evaluator trigger pre-selects the same candidates by title, then the judge decides
    judge = ConstJudge(0.5)
    via_file = trigger_lookup(file, QUERIES, 0.4, 5, how="evaluator", judge=judge, candidates=4)
    via_store = trigger_lookup(store, QUERIES, 0.4, 5, how="evaluator", judge=judge, candidates=4)
    assert [(n, [h["title"] for h in hs]) for n, hs in via_store] == [(n, [h["title"] for h in hs]) for n, hs in via_file]
    assert [n for n, _ in via_store] == [4, 4, 4]


def test_adding_replaces_by_title_and_counts_as_the_file_does(minilm):
    res = StoreReservoir(indexed_store(minilm), collection="c1")
    counts = res.add([make_passage("Lima", "Lima is the capital of Peru."), make_passage("", "no title"),
                      make_passage("Vienna", "Vienna is the capital of Austria."), make_passage("lima ", "Lima, Peru.")])
    assert counts == {"added": 2, "replaced": 0, "unchanged": 0, "skipped": 1, "evicted": 0}
    # the first pair of a title won ("Lima", ranked first); a later write replaces it
    assert res.add([make_passage("lima", "Lima, Peru."), make_passage("Vienna", "Vienna, Austria.")]) == {
        "added": 0, "replaced": 2, "unchanged": 0, "skipped": 0, "evicted": 0}
    ((pop, (hit, *_)),) = res.lookup(["Lima"], 0.6, 3)
    assert pop == 1 and hit["title"] == "lima" and hit["text"] == "Lima, Peru." and hit["score"] > 0.99
    # collections are namespaces of their own
    assert StoreReservoir(res.store, collection="c2").count() == 0 and res.count() == 2


def test_a_missing_store_or_one_without_an_index_is_a_clear_error():
    """A store that says it has no index is refused before anything is written (review of
    2026-12-01: the first run wrote an entry, and every later one failed); one that does not say
    is refused at its first search that finds items without scores."""
    with pytest.raises(ConfigError, match="needs a LangGraph store"):
        StoreReservoir(None)
    plain = InMemoryStore()
    with pytest.raises(ConfigError, match="no vector index"):
        StoreReservoir(plain)
    assert not plain.search(("ragraphs", "erm4_reservoir", "default"))

    class Batched:  # a LangGraph server's store wraps the real one (BatchedStore._store), naming no index itself
        def __init__(self, inner):
            self._store = inner

    with pytest.raises(ConfigError, match="no vector index"):
        StoreReservoir(Batched(InMemoryStore()))
    StoreReservoir(Batched(InMemoryStore(index={"dims": 8, "embed": lambda texts: [[0.0] * 8 for _ in texts]})))

    class Unsaid:  # a store that keeps no index_config attribute
        def __init__(self):
            self.inner = InMemoryStore()

        def __getattr__(self, name):
            if name == "index_config":
                raise AttributeError(name)
            return getattr(self.inner, name)

    unsaid = StoreReservoir(Unsaid())
    unsaid.add([make_passage("Lima", "Lima is the capital of Peru.")])
    with pytest.raises(ConfigError, match="no vector index"):
        unsaid.lookup(["Lima"], 0.6, 3)


def test_entries_keep_their_address_file_and_page_in_both_reservoirs(tmp_path, minilm):
    """A passage served from memory cites where it came from, as it did when first found (review of
    2026-12-01: the url, path and page were not stored, so a chat's answer from memory named no source)."""
    web = make_passage("Paris", "Paris is the capital of France.", "web", url="https://en.wikipedia.org/wiki/Paris")
    doc = make_passage("Handbook", "Staff badges open the east door.", "corpus", path="/docs/handbook.pdf", page=3)
    for res in (Reservoir(tmp_path / "r.sqlite3", embeddings=minilm), StoreReservoir(indexed_store(minilm))):
        assert res.add([web, doc])["added"] == 2
        (_, (paris, *_)), (_, (book, *_)) = res.lookup(["Paris", "Handbook"], 0.6, 1)
        assert paris["source"] == "memory" and paris["meta"]["origin"] == "web"
        assert paris["meta"]["url"] == "https://en.wikipedia.org/wiki/Paris"
        assert (book["meta"]["path"], book["meta"]["page"]) == ("/docs/handbook.pdf", 3)
        # the same text from another page is stored again, with its new address
        moved = make_passage("Paris", "Paris is the capital of France.", "web", url="https://example.org/paris")
        assert res.add([moved]) == {"added": 0, "replaced": 1, "unchanged": 0, "skipped": 0, "evicted": 0}
        assert res.lookup(["Paris"], 0.6, 1)[0][1][0]["meta"]["url"] == "https://example.org/paris"


def test_erm4_stores_kept_knowledge_in_the_graphs_store_and_reuses_it(wiki, minilm):
    store = indexed_store(minilm)
    llm = FakeAnswerChat(responses=["Where was Henrik Selberg born?**Henrik Selberg", "Oslo"])
    c = Components(llm=llm, retriever=InMemoryCorpus(wiki, embeddings=minilm), embeddings=minilm,
                   judges={"nli": ConstJudge(0.8)})
    g = build_erm4_graph(c, store=store)
    ctx = ERM4Context(reservoir="store", trigger="title", tau=0.6, theta=2, filter_judge="nli", filter_threshold=0.5, k=5)
    out = g.invoke({"question": "Where was Henrik Selberg born?"}, context=ctx)
    assert out["outside"] and out["memory_update"]["added"] == len(out["passages"]) == 5
    assert StoreReservoir(store).count() == 5
    assert store.get(("ragraphs", "erm4_reservoir", "default"), "henrik selberg").value["title"] == "Henrik Selberg"
    # the same question again: inside the boundary now, answered from the store
    out2 = g.invoke({"question": "Where was Henrik Selberg born?"}, context=ctx)
    assert out2["inside"] and not out2["outside"] and out2["passages"]
    assert all(p["source"] == "memory" for p in out2["passages"])
    # without a store the setting is refused by name, before anything is stored
    with pytest.raises(ConfigError, match="reservoir=store needs a LangGraph store"):
        build_erm4_graph(c).invoke({"question": "Where was Henrik Selberg born?"}, context=ctx)


def test_a_chat_answering_with_erm4_keeps_the_reservoir_in_the_chats_store(wiki, minilm):
    from ragraphs.graphs.chat import build_chat_graph

    store = indexed_store(minilm)
    llm = FakeAnswerChat(responses=["Where was Henrik Selberg born?**Henrik Selberg", "Oslo"])
    c = Components(llm=llm, retriever=InMemoryCorpus(wiki, embeddings=minilm), embeddings=minilm,
                   judges={"nli": ConstJudge(0.8)})
    settings = {"reservoir": "store", "filter_judge": "nli", "filter_threshold": 0.5}
    out = build_chat_graph(c, store=store).invoke({"messages": [("user", "Where was Henrik Selberg born?")]},
                                                  context={"method": "erm4", "k": 3, "settings": settings})
    assert out["messages"][-1].content == "Oslo" and len(out["passages"]) == 3
    assert StoreReservoir(store).count() == 3  # the method's graph ran with the chat's store
