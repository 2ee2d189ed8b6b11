"""A graph invoked without ``context=`` runs on its context class's defaults.

Every node reads ``ctx = runtime.context or XContext()``, so the defaults live in one place
(:mod:`ragraphs.settings`). These runs pass no context at all and check, from the trace,
what the nodes used against the class's defaults: CRAG routes by the calibrated thresholds,
DR-RAG retrieves with the context's mode, ERM4's trigger uses tau/theta, MIGRES's guard
stops at ``max_iterations``. langchain_core's fake chat model and fake embeddings stand
in for Gemma and MiniLM; the corpus is an in-memory one (numpy dense + real BM25).
"""

from __future__ import annotations

import pytest
from langchain_core.language_models import FakeListChatModel

from fakes import ConstJudge, small_corpus
from ragraphs.components import Components
from ragraphs.graphs import build_graph
from ragraphs.nodes.dr_rag import first_stage_size
from ragraphs.settings import CRAGContext, DRRAGContext, ERM4Context, MIGRESContext, RAGContext

QUESTION = "Which river flows through the capital of Austria?"
DOCS = [
    ("Vienna", "Vienna is the capital of Austria. The Danube flows through Vienna."),
    ("Danube", "The Danube is the second-longest river in Europe; it flows through Vienna and Budapest."),
    ("Austria", "Austria is a country in Central Europe. Its capital is Vienna."),
    ("Salzburg", "Salzburg lies on the Salzach river, near the border with Germany."),
    ("Graz", "Graz is the second-largest city of Austria, on the Mur river."),
    ("Budapest", "Budapest is the capital of Hungary, on both banks of the Danube."),
    ("Linz", "Linz is a city on the Danube in Upper Austria."),
    ("Innsbruck", "Innsbruck lies on the Inn river in the Alps."),
    ("Rhine", "The Rhine flows from the Swiss Alps to the North Sea."),
    ("Elbe", "The Elbe flows through Dresden and Hamburg."),
]


@pytest.fixture(scope="module")
def corpus():
    return small_corpus(DOCS)


@pytest.fixture(autouse=True)
def _no_web_and_a_private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))  # ERM4's reservoir goes here
    monkeypatch.delenv("RAGRAPHS_WEB", raising=False)


def _components(corpus, replies, **judges):
    llm = FakeListChatModel(responses=list(replies))
    return Components(llm=llm, retriever=corpus, embeddings=corpus.embeddings, judges=judges)


def _entries(out, node):
    return [t for t in out["trace"] if t["node"] == node]


def _entry(out, node):
    (e,) = _entries(out, node)
    return e


def test_vanilla_and_none_without_context(corpus):
    d = RAGContext()
    out = build_graph("vanilla", _components(corpus, ["Danube"])).invoke({"question": QUESTION})
    r = _entry(out, "retrieve")
    assert (r["mode"], r["k"]) == (d.retrieval, d.k)
    assert out["answer"] == "Danube" and len(out["passages"]) == d.k and out["llm_calls"] == 1

    out = build_graph("none", _components(corpus, ["the Danube"])).invoke({"question": QUESTION})
    assert out["answer"] == "the Danube" and out["llm_calls"] == 1 and [t["node"] for t in out["trace"]] == ["start", "generate"]
    # skip_generation stops the closed-book reader too (it called the LLM until 2026-11-30)
    out = build_graph("none", _components(corpus, ["the Danube"])).invoke({"question": QUESTION},
                                                                          context=RAGContext(skip_generation=True))
    assert out["answer"] == "" and out.get("llm_calls", 0) == 0 and _entry(out, "generate")["skipped"] == "skip_generation"


@pytest.mark.parametrize(
    "score, action",
    [
        (0.95, "correct"),
        (0.575, "correct"),  # the paper's 0.59 (the nodes' old fallback) would say ambiguous
        (0.0, "ambiguous"),
        (-0.04, "ambiguous"),
        (-0.06, "incorrect"),  # under the evaluator's own relevance cut (the default lower)
        (-0.95, "incorrect"),
    ],
)
def test_crag_routes_by_the_context_thresholds(corpus, score, action):
    d = CRAGContext()
    assert -0.95 < -0.9 < -0.06 < d.lower < -0.04 < 0.0 < d.upper < 0.575 < 0.59  # the cases straddle the paper's and the defaults
    c = _components(corpus, ["Danube river Vienna", "Danube"], evaluator=ConstJudge(score))
    out = build_graph("crag", c).invoke({"question": QUESTION})
    ev = _entry(out, "evaluate")
    assert (ev["upper"], ev["lower"]) == (d.upper, d.lower)
    assert out["action"] == ev["action"] == action
    r = _entry(out, "retrieve")
    assert (r["mode"], r["k"]) == (d.retrieval, d.k)
    for refine in _entries(out, "refine") + _entries(out, "refine_web"):
        assert (refine["top_k"], refine["threshold"], refine["sentences_per_strip"]) == (
            d.strip_top_k, d.strip_threshold, d.strip_sentences)
    if action == "correct":  # straight to the answer: one LLM call
        assert out["llm_calls"] == 1 and out["answer"] == "Danube river Vienna"
    else:  # the web search with the context's backend setting (none configured): no rewrite call
        assert _entry(out, "rewrite")["queries"] == [QUESTION]
        assert _entry(out, "web_search")["backend"] == "none"
        assert "no web search configured" in _entry(out, "refine_web")["web_unavailable"]
        assert out["llm_calls"] == 1 and out["answer"] == "Danube river Vienna"


def test_dr_rag_retrieves_with_the_context_mode(corpus):
    d = DRRAGContext()
    assert d.retrieval != RAGContext().retrieval  # hybrid, where the nodes once fell back to dense
    c = _components(corpus, ["Danube"], pair=ConstJudge(0.9))
    out = build_graph("dr-rag", c).invoke({"question": QUESTION})
    first, second = _entry(out, "first_stage"), _entry(out, "second_stage")
    assert (first["strategy"], first["mode"], first["k"], first["n"]) == (d.strategy, d.retrieval, d.k, first_stage_size(d))
    assert (second["mode"], second["k2"]) == (d.retrieval, d.k2)  # second_retrieval "same"
    assert [t["node"] for t in out["trace"]] == ["start", "first_stage", "second_stage", "forward_select", "generate"]
    assert len(out["passages"]) <= d.k and out["answer"] == "Danube"


def test_erm4_trigger_and_retrieval_use_the_context(corpus):
    d = ERM4Context()
    c = _components(corpus, ["Which river flows through Vienna?**Vienna river**Danube Vienna", "Danube"], nli=ConstJudge(0.9), evaluator=ConstJudge(0.9))
    out = build_graph("erm4", c).invoke({"question": QUESTION})
    mem = _entry(out, "memory_check")
    assert (mem["tau"], mem["theta"]) == (d.tau, d.theta)
    assert len(mem["outside"]) == 2  # an empty reservoir: every query goes outside
    r = _entry(out, "retrieve")
    assert (r["source"], r["k"]) == (d.external, d.k) and all(q["n"] == d.k for q in r["queries"])
    f = _entry(out, "filter")
    assert f["filter"] == d.filter and 0 < f["kept"] == f["candidates"] <= min(d.max_knowledge, 2 * d.k)
    assert out["answer"] == "Danube" and _entry(out, "memory_update")


def test_migres_guard_stops_at_the_context_max_iterations(corpus):
    d = MIGRESContext()
    # a model that never answers: every verdict is "unanswerable", so only the guard ends the run
    c = _components(corpus, ['unanswerable", "missing_information": "the river"}'], evaluator=ConstJudge(0.5), nli=ConstJudge(0.9))
    # the default loop stops earlier, once the model has nothing new to ask ("the river" again)
    out = build_graph("migres", c).invoke({"question": QUESTION})
    assert d.stop_when_exhausted and out["final"] == "exhausted"
    assert len(_entries(out, "main_judge")) < d.max_iterations
    # the paper's loop, other settings left at their defaults, runs to the guard
    out = build_graph("migres", c).invoke({"question": QUESTION}, context=MIGRESContext(stop_when_exhausted=False))
    assert len(_entries(out, "main_judge")) == d.max_iterations and out["final"] == "guard"
    assert _entry(out, "final_answer")
    r = _entries(out, "retrieve")[0]
    assert (r["mode"], r["k"]) == (d.retrieval, d.k)


def test_a_graph_run_as_a_subgraph_reads_its_settings_from_the_parents_context(corpus):
    """LangGraph hands a subgraph its parent's context. A user's app graph with a context class of
    its own runs ours as a node: the settings that class names (``k``, ``web``) reach our nodes,
    checked, and the others keep their defaults; a plain dict works the same way."""
    from dataclasses import dataclass
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from ragraphs.errors import ConfigError

    @dataclass
    class App:  # the user's own run context: one field of theirs, two of ours
        user_id: str = "ada"
        k: int = 2
        web: str = "none"

    class AppState(TypedDict, total=False):
        question: str
        answer: str
        trace: list

    def app(method, c, context_schema=App):
        g = StateGraph(AppState, context_schema=context_schema)
        g.add_node("rag", build_graph(method, c))
        g.add_edge(START, "rag")
        g.add_edge("rag", END)
        return g.compile()

    out = app("vanilla", _components(corpus, ["Danube"])).invoke({"question": QUESTION}, context=App())
    r = _entry(out, "retrieve")
    assert out["answer"] == "Danube" and r["k"] == 2 and r["mode"] == RAGContext().retrieval
    # CRAG takes web from it too: an Incorrect route searches no web backend
    c = _components(corpus, ["Danube river Vienna", "Danube"], evaluator=ConstJudge(-0.95))
    out = app("crag", c).invoke({"question": QUESTION}, context=App())
    assert _entry(out, "retrieve")["k"] == 2 and _entry(out, "web_search")["backend"] == "none"
    assert _entry(out, "evaluate")["upper"] == CRAGContext().upper  # not named by App: the default
    # a parent context that names none of our settings gives the defaults; a dict is read by key
    @dataclass
    class Other:
        user_id: str = "bob"
    out = app("vanilla", _components(corpus, ["Danube"]), Other).invoke({"question": QUESTION}, context=Other())
    assert _entry(out, "retrieve")["k"] == RAGContext().k
    out = app("vanilla", _components(corpus, ["Danube"]), None).invoke({"question": QUESTION}, context={"k": 3})
    assert _entry(out, "retrieve")["k"] == 3
    # the values are checked as ours are
    with pytest.raises(ConfigError, match="'k'"):
        app("vanilla", _components(corpus, ["Danube"])).invoke({"question": QUESTION}, context=App(k=0))


@pytest.mark.parametrize("method, replies, judges, first", [
    ("dr-rag", ["Danube"], {"pair": ConstJudge(0.9)}, "first_stage"),
    ("erm4", ["Which river flows through Vienna?**Vienna river**Danube Vienna", "Danube"],
     {"nli": ConstJudge(0.9), "evaluator": ConstJudge(0.9)}, "retrieve"),
    ("migres", ['unanswerable", "missing_information": "the river"}'],
     {"evaluator": ConstJudge(0.5), "nli": ConstJudge(0.9)}, "retrieve"),
])
def test_every_method_runs_as_a_subgraph_under_a_parents_own_context(corpus, method, replies, judges, first):
    from dataclasses import dataclass
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    @dataclass
    class App:
        user_id: str = "ada"
        k: int = 2

    class AppState(TypedDict, total=False):
        question: str
        answer: str
        trace: list

    g = StateGraph(AppState, context_schema=App)
    g.add_node("rag", build_graph(method, _components(corpus, replies, **judges)))
    g.add_edge(START, "rag")
    g.add_edge("rag", END)
    out = g.compile().invoke({"question": QUESTION}, context=App())
    assert isinstance(out["answer"], str) and _entries(out, first)[0]["k"] == 2


@pytest.mark.parametrize("method", ["vanilla", "dr-rag", "crag"])
def test_settings_given_in_configurable_are_not_read_and_a_warning_says_so(method):
    """``config={"configurable": {"k": 1}}``, the form before LangGraph's run context: the
    graphs read their settings from the context alone, and a warning names each setting given
    there that the context does not give. A setting the context gives too, as a LangGraph
    server's copy of the context, is no warning. **Was a gap** (until 2026-12-03): the setting
    was dropped without a word (four passages where one was asked for)."""
    import warnings

    c = Components(llm=FakeListChatModel(responses=["the Danube"] * 8), retriever=small_corpus(DOCS),
                   judges={"evaluator": ConstJudge(0.9), "pair": ConstJudge(0.9)})
    g = build_graph(method, c)
    with pytest.warns(UserWarning, match=r"run setting\(s\) k given in config\['configurable'\] are not read: pass "
                                         r"the run's settings as its context, invoke\(\.\.\., context=\{'k': \.\.\.\}\)"):
        g.invoke({"question": QUESTION}, config={"configurable": {"k": 1, "thread_id": "t"}})
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="run setting")
        out = g.invoke({"question": QUESTION}, config={"configurable": {"k": 2}}, context={"k": 2})
    assert out["answer"] == "the Danube" and (method == "crag" or len(out["passages"]) == 2)
