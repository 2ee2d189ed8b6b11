"""What a LangChain / LangGraph user meets when they embed ragraphs in an app of their own: a
chat model that replies in content parts, a judge of their own, the graphs as nodes of their
graph (their settings class, their state keys, their async nodes), settings of None, and an
ERM4 memory whose embeddings changed."""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass
from typing import Annotated

import numpy as np
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import NotRequired, TypedDict

from fakes import HashEmbeddings, LexicalRetriever, OverlapJudge, ScriptedChat
from ragraphs import Components
from ragraphs.errors import ConfigError
from ragraphs.graphs import build_graph, method_context
from ragraphs.graphs import routed, start_at, starts_a_run, timed
from ragraphs.settings import RAGContext
from ragraphs.state import RAGState, make_passage

CORPUS = [
    make_passage("Lima", "Lima is the capital and largest city of Peru."),
    make_passage("Peru", "Peru is a country in South America; its capital is Lima."),
    make_passage("Paris", "Paris is the capital and largest city of France."),
]


def test_a_reply_in_content_parts_is_read_as_its_text():
    # Anthropic with thinking, Gemini, OpenAI's responses API: a list of parts, reasoning first
    parts = [{"type": "reasoning", "reasoning": "Lima is named."}, {"type": "text", "text": "Li"},
             {"type": "text", "text": "ma"}]
    llm = GenericFakeChatModel(messages=iter([AIMessage(content=parts)]))
    out = build_graph("vanilla", Components(llm=llm, retriever=LexicalRetriever(CORPUS))).invoke(
        {"question": "What is the capital of Peru?"})
    assert out["answer"] == "Lima"


def test_a_pair_judge_with_score_batch_alone_serves_dr_rag():
    judge = OverlapJudge("pair")
    c = Components(llm=ScriptedChat(script=lambda p: "Lima"), retriever=LexicalRetriever(CORPUS),
                   judges={"evaluator": OverlapJudge(), "pair": judge})
    for strategy in ("cfs", "cis"):
        out = build_graph("dr-rag", c).invoke({"question": "What is the capital of Peru?"},
                                               context={"strategy": strategy, "retrieval": "dense"})
        assert out["answer"] == "Lima" and out["passages"]
    assert judge.batches  # it read (q, d1 + blank line + d2) pairs


def test_components_refuse_what_would_fail_later():
    with pytest.raises(ConfigError, match="LangChain chat or completion model, got the string .fake:Paris.; for a model spec"):
        Components(llm="fake:Paris")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown judge role.*'evalutor'"):
        Components(judges={"evalutor": OverlapJudge()})


def test_a_settings_of_none_is_kept_where_none_means_something():
    assert method_context("erm4", {"filter_threshold": None}).filter_threshold is None  # the judge's own cut
    assert method_context("dr-rag", {"fusion_k": None}).fusion_k is None


class Parent(TypedDict):
    question: str
    answer: NotRequired[str]


@dataclass
class AppContext(RAGContext):  # docs/extending.md: your settings as a RAGContext subclass
    tenant: str = "acme"


@pytest.mark.parametrize("method", ["crag", "dr-rag"])
def test_a_method_runs_as_a_node_under_a_parent_settings_class_of_its_own(method):
    c = Components(llm=ScriptedChat(script=lambda p: "Lima"), retriever=LexicalRetriever(CORPUS),
                   judges={"evaluator": OverlapJudge(), "pair": OverlapJudge("pair")})
    g = StateGraph(Parent, context_schema=AppContext)
    g.add_node("rag", build_graph(method, c))
    g.add_edge(START, "rag")
    g.add_edge("rag", END)
    out = g.compile().invoke({"question": "What is the capital of Peru?"}, context=AppContext(k=2, tenant="x"))
    assert out["answer"] == "Lima"
    # one of ragraphs' own method settings handed to another method is still a mistake
    with pytest.raises(ConfigError, match="runs with"):
        build_graph("crag", c).invoke({"question": "q"}, context=method_context("dr-rag", {}))


class SetState(RAGState):
    seen: NotRequired[Annotated[set[str], operator.or_]]


@pytest.mark.parametrize("form", ["start_at", "starts_a_run"])
def test_a_used_thread_sets_a_users_own_state_keys_back_to_empty(form):
    """Both forms (``start_at``, and ``starts_a_run``, the older one) reset a key of the user's
    own type (a set under ``operator.or_``)."""
    def first(state, runtime):
        return {"seen": {state["question"]}, "answer": state["question"]}

    g = StateGraph(SetState)
    if form == "start_at":
        g.add_node("first", timed("first", first))
        start_at(g, "first")
    else:
        g.add_node("first", starts_a_run("first", first, SetState))
        g.add_edge(START, "first")
    g.add_edge("first", END)
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"question": "one"}, cfg)
    assert app.invoke({"question": "two"}, cfg)["seen"] == {"two"}


def test_async_nodes_and_routers_stay_async_when_timed_and_routed():
    async def node(state, runtime):
        await asyncio.sleep(0)
        return {"answer": "A", "_trace": {"note": "async"}}

    async def router(state):
        return "done"

    g = StateGraph(RAGState)
    g.add_node("gen", timed("gen", node))
    g.add_edge(START, "gen")
    g.add_conditional_edges("gen", routed("gen", router, {"done": END}), {"done": END})
    out = asyncio.run(g.compile().ainvoke({"question": "q"}))
    assert out["answer"] == "A" and out["trace"][0]["node"] == "gen" and out["trace"][0]["note"] == "async"


def test_callable_objects_with_an_async_call_stay_async_when_timed_and_routed():
    """A node or router that is an object whose ``__call__`` is ``async`` runs as LangGraph runs
    it unwrapped. **Was a bug** (until 2026-12-03): under ``timed`` the node failed with
    "'coroutine' object is not iterable" and under ``routed`` the router's coroutine was the route
    (``KeyError``), each never awaited."""
    class Node:
        async def __call__(self, state):
            await asyncio.sleep(0)
            return {"answer": "from an object"}

    class Router:
        async def __call__(self, state):
            return "done"

    g = StateGraph(RAGState)
    g.add_node("gen", timed("gen", Node()))
    start_at(g, "gen")
    g.add_conditional_edges("gen", routed("gen", Router(), {"done": END}), {"done": END})
    out = asyncio.run(g.compile().ainvoke({"question": "q"}))
    assert out["answer"] == "from an object" and [e["node"] for e in out["trace"]][-1] == "gen"


def test_a_users_node_may_hand_on_passages_without_an_id():
    """Passages a node of the user's own returns without ``id`` get the one ``make_passage``
    gives (the same text reached twice is one passage); a passage that is not a dict is a
    ``TypeError`` naming ``make_passage``. **Was a bug** (until 2026-12-03): a bare
    ``KeyError: 'id'`` from the state's reducer."""
    def retrieve(state):
        p = {"title": "Paris", "text": "Paris is the capital of France.", "source": "corpus", "score": 1.0}
        return {"passages": [p, dict(p)]}

    g = StateGraph(RAGState)
    g.add_node("retrieve", timed("retrieve", retrieve))
    start_at(g, "retrieve")
    g.add_edge("retrieve", END)
    out = g.compile().invoke({"question": "capital?"})
    assert [p["id"] for p in out["passages"]] == [make_passage("Paris", "Paris is the capital of France.")["id"]]
    g = StateGraph(RAGState)
    g.add_node("retrieve", timed("retrieve", lambda state: {"passages": ["Paris is the capital."]}))
    start_at(g, "retrieve")
    g.add_edge("retrieve", END)
    with pytest.raises(TypeError, match="make_passage"):
        g.compile().invoke({"question": "capital?"})


class NamelessHash(HashEmbeddings):
    """Embeddings with no ``name`` of their own (a user's): the reservoir knows them by class."""

    def __init__(self, dim: int):
        super().__init__(dim=dim)
        del self.name


def test_an_erm4_memory_of_other_embeddings_is_refused_by_name(tmp_path):
    from ragraphs.tools.reservoir import Reservoir

    path = str(tmp_path / "r.sqlite3")
    Reservoir(path, embeddings=NamelessHash(32)).add([make_passage("Lima", "Lima is in Peru.")])
    other = Reservoir(path, embeddings=NamelessHash(16))
    with pytest.raises(ConfigError, match="32-dimensional vectors, these embeddings give 16"):
        other.popularity(["Lima"], 0.5)
    with pytest.raises(ConfigError, match="32-dimensional"):
        other.add([make_passage("Peru", "Peru is a country.")])
    assert np.isfinite(Reservoir(path, embeddings=NamelessHash(32)).popularity(["Lima"], 0.5)).all()
