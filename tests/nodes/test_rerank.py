"""The shared re-rank node and its helpers (fake judges), vanilla's re-ranking, and the
evaluation harness's per-stage report."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ragraphs.components import Components
from ragraphs.errors import ConfigError
from ragraphs.graphs.vanilla import build_vanilla_graph
from ragraphs.nodes.rerank import judge_scores, rerank_passages, rerank_spec, reranker_of
from ragraphs.evaluation.runner import stage_recall, summarize
from ragraphs.settings import RAGContext
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.tools.titles import TitleIndex
from ragraphs.nodes.erm4 import make_external_retrieve
from ragraphs.nodes.links import linked_search
from ragraphs.settings import ERM4Context


class Ranked:
    """A retriever returning passages 0..k-1 in that order."""

    def __init__(self):
        self.asked: list[tuple[int, str]] = []

    def search(self, q, k, mode="dense"):
        self.asked.append((k, mode))
        return [{"id": str(i), "title": f"T{i}", "text": f"text {i}", "source": "c", "score": 1.0 / (i + 1)} for i in range(k)]


class ByNumber:
    """Scores a passage by the number in its title (so the last retrieved is the best)."""

    name = "by-number"

    def __init__(self):
        self.seen = 0

    def score_batch(self, pairs):
        self.seen += len(pairs)
        return np.asarray([float(t.split("\n")[0].split()[-1].lstrip("T")) for _, t in pairs], dtype=np.float32)


def test_rerank_passages_orders_and_caches():
    j = ByNumber()
    ps = Ranked().search("q", 5)
    cache: dict = {}
    out = rerank_passages(j, "q", ps, cache)
    assert [p["id"] for p in out] == ["4", "3", "2", "1", "0"]
    assert out[0]["score"] == 4.0 and out[0]["meta"]["retrieval_score"] == pytest.approx(0.2)
    assert out[0]["meta"]["retrieval_rank"] == 5
    judge_scores(j, "q", ps, cache)
    assert j.seen == 5  # cached: nothing scored twice
    assert rerank_passages(None, "q", ps) == ps


def test_reranker_setting():
    j = ByNumber()
    c = Components(judges={"evaluator": j})
    assert rerank_spec(RAGContext()) == "none" and reranker_of(c, "none") is None
    assert reranker_of(c, "evaluator").inner is j  # the user's judge, its scores checked (since 2026-12-03)
    with pytest.raises(ConfigError):
        reranker_of(c, "/no/such/cross-encoder")


def test_vanilla_with_and_without_rerank():
    r, j = Ranked(), ByNumber()
    c = Components(llm=FakeAnswerChat(responses=["x"]), retriever=r, judges={"evaluator": j})
    g = build_vanilla_graph(c)
    out = g.invoke({"question": "q?"}, context=RAGContext(k=2))
    assert [t["node"] for t in out["trace"]] == ["start", "retrieve", "generate"] and r.asked[-1] == (2, "dense")
    assert [p["id"] for p in out["passages"]] == ["0", "1"]
    out = g.invoke({"question": "q?"}, context=RAGContext(k=2, rerank="evaluator", rerank_depth=6))
    assert [t["node"] for t in out["trace"]] == ["start", "retrieve", "rerank", "generate"] and r.asked[-1] == (6, "dense")
    assert [p["id"] for p in out["passages"]] == ["5", "4"]
    assert out["llm_calls"] == 1


class Titled(Ranked):
    """:class:`Ranked` with passages titled "Page i" and a title index, as the Chroma store has."""

    def search(self, q, k, mode="dense"):
        return [{**p, "title": f"Page {p['id']}"} for p in super().search(q, k, mode)]

    def title_index(self):
        return TitleIndex({"id": str(i), "title": f"Page {i}", "text": ""} for i in range(30))


def test_vanilla_puts_the_pages_the_question_names_first():
    r = Titled()
    c = Components(llm=FakeAnswerChat(responses=["x"]), retriever=r, judges={"evaluator": ByNumber()})
    g = build_vanilla_graph(c)
    q = "Who founded the company of Page 7, and when was page 1 written?"  # "page 1" names nothing
    out = g.invoke({"question": q}, context=RAGContext(k=2))
    assert [p["id"] for p in out["passages"]] == ["0", "1"]  # off: the retrieval order
    out = g.invoke({"question": q}, context=RAGContext(k=2, link_question=True, link_depth=10))
    assert r.asked[-2:] == [(2, "dense"), (10, "dense")]  # a wider search for the named pages
    assert [p["id"] for p in out["passages"]] == ["7", "0"] and out["passages"][0]["meta"]["named_by_question"]
    assert out["trace"][1]["named_by_question"] == 1
    # past the link depth, a named page is not searched for
    out = g.invoke({"question": q}, context=RAGContext(k=2, link_question=True, link_depth=5))
    assert [p["id"] for p in out["passages"]] == ["0", "1"]
    # after the re-ranker, the named page still leads
    out = g.invoke({"question": "Page 1?"}, context=RAGContext(k=2, rerank="evaluator", rerank_depth=6, link_question=True))
    assert [p["id"] for p in out["passages"]] == ["1", "5"]
    out = g.invoke({"question": "Page 1?"}, context=RAGContext(k=2, rerank="evaluator", rerank_depth=6))
    assert [p["id"] for p in out["passages"]] == ["5", "4"]
    # a retriever without a title index keeps its order
    plain = build_vanilla_graph(Components(llm=FakeAnswerChat(responses=["x"]), retriever=Ranked()))
    out = plain.invoke({"question": "T7?"}, context=RAGContext(k=2, link_question=True))
    assert [p["id"] for p in out["passages"]] == ["0", "1"]


def test_linked_search_and_erm4_retrieval_for_each_query():
    r = Titled()
    got, named = linked_search(r, "Where is Page 12?", 3, "dense", RAGContext(link_question=True))
    assert [p["id"] for p in got] == ["12", "0", "1"] and named == 1
    assert linked_search(r, "Where is Page 12?", 3, "dense", RAGContext())[0] == r.search("q", 3)  # off: as retrieved
    # ERM4's external retrieval: each outside query leads with the pages it names
    node = make_external_retrieve(Components(retriever=r))
    state = {"queries": ["Page 4 founder", "Page 9 birthplace"], "outside": [{"query": "Page 9 birthplace"}]}
    out = node(state, SimpleNamespace(context=ERM4Context(k=2, link_question=True)))
    assert [p["id"] for p in out["external_knowledge"]] == ["9", "0"]
    out = node(state, SimpleNamespace(context=ERM4Context(k=2)))
    assert [p["id"] for p in out["external_knowledge"]] == ["0", "1"]


def test_migres_retrieves_the_pages_each_query_names_first():
    """MIGRES's own retrieve node (one search per query of the iteration) honours
    ``link_question`` as the shared node does: each query leads with the pages it names."""
    from ragraphs.nodes.migres import make_retrieve as migres_retrieve
    from ragraphs.settings import MIGRESContext

    node = migres_retrieve(Components(retriever=Titled()))
    state = {"question": "Who wrote Page 4?", "queries": ["Page 9 birthplace", "founder of Page 11"]}
    on = node(state, SimpleNamespace(context=MIGRESContext(k=2, link_question=True)))
    assert [p["id"] for p in on["candidates"]] == ["9", "0", "11", "0"]
    assert on["candidates"][0]["meta"]["named_by_question"] and on["candidates"][0]["meta"]["query"] == "Page 9 birthplace"
    assert on["_trace"]["named_by_question"] == 2
    off = node(state, SimpleNamespace(context=MIGRESContext(k=2)))
    assert [p["id"] for p in off["candidates"]] == ["0", "1", "0", "1"] and "named_by_question" not in off["_trace"]
    first = node({"question": "Who wrote Page 4?"}, SimpleNamespace(context=MIGRESContext(k=2, link_question=True)))
    assert [p["id"] for p in first["candidates"]] == ["4", "0"]  # the first iteration asks the question


def test_erm4_and_migres_retrieval_take_the_rerank_setting():
    """The ``rerank`` setting re-ranks ERM4's corpus retrieval and MIGRES's per-query retrieval
    as it does vanilla's (accepted and ignored until 2026-11-30); a re-ranker that cannot be
    loaded is an error, not a silent no-op."""
    from ragraphs.nodes.migres import make_retrieve as migres_retrieve
    from ragraphs.settings import MIGRESContext

    r = Titled()
    c = Components(retriever=r, judges={"evaluator": ByNumber()})
    erm4 = make_external_retrieve(c)
    state = {"queries": ["who founded it"], "outside": [{"query": "who founded it"}]}
    out = erm4(state, SimpleNamespace(context=ERM4Context(k=2, rerank="evaluator", rerank_depth=6)))
    assert [p["id"] for p in out["external_knowledge"]] == ["5", "4"] and r.asked[-1] == (6, "dense")
    out = erm4(state, SimpleNamespace(context=ERM4Context(k=2)))
    assert [p["id"] for p in out["external_knowledge"]] == ["0", "1"] and r.asked[-1] == (2, "dense")
    with pytest.raises(ConfigError):
        erm4(state, SimpleNamespace(context=ERM4Context(k=2, rerank="/no/such/cross-encoder")))
    migres = migres_retrieve(c)
    q = {"question": "Who wrote it?", "queries": ["birthplace", "founder"]}
    on = migres(q, SimpleNamespace(context=MIGRESContext(k=2, rerank="evaluator", rerank_depth=5)))
    assert [p["id"] for p in on["candidates"]] == ["4", "3", "4", "3"]
    assert on["candidates"][2]["meta"]["query"] == "founder"
    off = migres(q, SimpleNamespace(context=MIGRESContext(k=2)))
    assert [p["id"] for p in off["candidates"]] == ["0", "1", "0", "1"]
    with pytest.raises(ConfigError, match=r"^run setting 'rerank': judge model not found: /no/such/cross-encoder"):
        migres(q, SimpleNamespace(context=MIGRESContext(k=2, rerank="/no/such/cross-encoder")))
    # the traces say which re-ranker read how many candidates a query (nothing of it without one)
    assert (on["_trace"]["reranker"], on["_trace"]["depth"]) == ("evaluator", 5) and "reranker" not in off["_trace"]
    out = erm4(state, SimpleNamespace(context=ERM4Context(k=2, rerank="Evaluator", rerank_depth=6)))
    assert (out["_trace"]["reranker"], out["_trace"]["depth"]) == ("evaluator", 6)
    assert [p["id"] for p in out["external_knowledge"]] == ["5", "4"]  # "Evaluator" was a model name until 2026-11-30
    # with link_question too, the page a query names stays first after the re-ranker, as in vanilla
    named = migres({"question": "Who wrote it?", "queries": ["Page 1 founder"]},
                   SimpleNamespace(context=MIGRESContext(k=2, rerank="evaluator", rerank_depth=6, link_question=True)))
    assert [p["id"] for p in named["candidates"]] == ["1", "5"] and named["_trace"]["named_by_question"] == 1
    state1 = {"queries": ["Page 1 founder"], "outside": [{"query": "Page 1 founder"}]}
    out = erm4(state1, SimpleNamespace(context=ERM4Context(k=2, rerank="evaluator", rerank_depth=6, link_question=True)))
    assert [p["id"] for p in out["external_knowledge"]] == ["1", "5"]


def test_stage_report():
    trace = [{"node": "first_stage", "out_ids": ["a", "b", "c"]}, {"node": "rerank", "out_ids": ["c"]}, {"node": "generate"}]
    st = stage_recall(trace, {"a", "c"})
    assert st["recall"] == {"first_stage": 1.0, "rerank": 0.5} and st["docs"] == {"first_stage": 3, "rerank": 1}
    recs = [{"wall_s": 0.2, "node_s": {"first_stage": 0.01, "rerank": 0.03, "generate": 0.1}, "stage_recall": st["recall"],
             "stage_docs": st["docs"], "trace": trace, "recall": 0.5, "docs": 1}]
    s = summarize(recs)
    assert s["stages"]["rerank"] == {"ms": 30.0, "recall": 0.5, "docs": 1.0}
    assert s["retrieval_ms_avg"] == 40.0


def test_retrieval_time_leaves_out_the_nodes_that_ask_the_llm():
    """A node that makes an LLM call (a rewrite, a decision, the answer) carries ``llm_calls`` in
    its trace entry, and the eval's retrieval time is the rest (every node but ``generate`` until
    2026-11-30: CRAG's and ERM4's rewrites and MIGRES's decisions counted as retrieval)."""
    from ragraphs.datasets import Example
    from ragraphs.evaluation.runner import score_example
    from ragraphs.graphs._common import timed

    runtime = SimpleNamespace(context=None, stream_writer=None)
    rewrite = timed("rewrite", lambda s, r: {"llm_calls": 1, "queries": ["q"]})({}, runtime)
    search = timed("retrieve", lambda s, r: {"candidates": []})({}, runtime)
    assert rewrite["trace"][0]["llm_calls"] == 1 and "llm_calls" not in search["trace"][0]
    trace = [dict(rewrite["trace"][0], elapsed_s=0.5), dict(search["trace"][0], elapsed_s=0.02),
             {"node": "generate", "elapsed_s": 1.0, "llm_calls": 1}]
    ex = Example(id="1", question="q?", answers=["a"], dataset="popqa")
    rec = score_example(ex, {"answer": "a", "trace": trace, "llm_calls": 2}, 1.6, retrieval_only=False)
    assert rec["retrieval_s"] == 0.02 and rec["node_s"]["rewrite"] == 0.5
    assert summarize([rec])["retrieval_ms_avg"] == 20.0


def test_rerank_leaves_the_order_alone_without_a_title_index():
    """``link_question`` needs a retriever with a title index; without one the re-ranker's
    order stands, as the search's does (titles alone were matched here until 2026-11-30)."""
    from fakes import LexicalRetriever

    from ragraphs.state.types import make_passage

    docs = [make_passage("Paris", "Paris is the capital city of France.", "corpus"),
            make_passage("France", "France is a country in Europe.", "corpus")]
    retr = LexicalRetriever(docs)
    assert not hasattr(retr, "title_index")

    class Scores:
        name = "fixed"

        def score_batch(self, pairs):
            return [0.9 if "capital" in p else 0.1 for _, p in pairs]

    c = Components(llm=FakeAnswerChat(responses=["Paris"]), retriever=retr, judges={"evaluator": Scores()})
    q = {"question": "What is the capital city of France?"}
    plain = build_vanilla_graph(c).invoke(q, context=RAGContext(k=1, rerank="evaluator"))
    linked = build_vanilla_graph(c).invoke(q, context=RAGContext(k=1, rerank="evaluator", link_question=True))
    assert [p["title"] for p in plain["passages"]] == [p["title"] for p in linked["passages"]] == ["Paris"]


def test_a_rerank_value_that_names_nothing_is_refused_when_the_settings_are_read(tmp_path, monkeypatch):
    """``rerank=evalutor`` was taken and failed when the first question retrieved (after ERM4's
    Rewriter+ call; never, for a question ERM4 answered from memory): now the settings refuse it,
    naming the setting and the nearest choice. Any case of none/evaluator is taken; a folder here
    is taken; a value with a ``/`` is left to the loader (it may be a path on the server)."""
    from ragraphs.settings import DRRAGContext, MIGRESContext

    for cls in (RAGContext, DRRAGContext, ERM4Context, MIGRESContext):
        with pytest.raises(ConfigError, match=r"^run setting 'rerank': 'evalutor' is not none, evaluator, a folder here "
                                              r"or a model in the local Hugging Face cache .*; did you mean 'evaluator'\?$"):
            cls(rerank="evalutor")
    for ok in ("NONE", " Evaluator ", "off", "", "org/some-reranker", "/srv/models/bge", str(tmp_path)):
        RAGContext(rerank=ok)
    assert rerank_spec(RAGContext(rerank=" EVALUATOR ")) == "evaluator" and rerank_spec(RAGContext(rerank="Off")) == "none"
    (tmp_path / "reranker").mkdir()
    monkeypatch.chdir(tmp_path)
    RAGContext(rerank="reranker")  # a folder of the working directory, named bare


def test_warm_up_loads_a_reranker_named_by_its_folder():
    """``warm_up`` loaded the evaluator for ``rerank=evaluator`` only: a re-ranker named by its
    folder was loaded inside the first question's retrieval (its time counted there)."""
    from ragraphs.tools.judges import weights_dir

    c = Components(retriever=Ranked(), judges={"evaluator": ByNumber()})
    folder = str(weights_dir())
    c.warm_up(RAGContext(rerank=folder, skip_generation=True))
    assert f"evaluator@{folder}" in c.judges
    assert reranker_of(c, folder) is c.judges[f"evaluator@{folder}"]
