"""A paused thread edited with ``update_state`` (Studio's state editing) goes on as its run would.

LangGraph's ``update_state`` runs the conditional edge after the node it writes as, without the
run's context; a router that asked for ``runtime`` by parameter was refused there ("Missing
required config key 'N/A'"), at the most natural points to pause: vanilla's ``generate``, CRAG's
``evaluate``, DR-RAG's second stage, MIGRES's ``generate_queries``, the chat's answer. The routers
now read the settings their run recorded (``run_settings``), so the edited thread keeps the route
the run's own settings give, not the defaults'.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Overwrite

from fakes import RIVER_CONTEXTS, RIVER_QUESTION, LexicalRetriever, ScriptedChat, river_components
from ragraphs import Components
from ragraphs.graphs import build_graph
from ragraphs.graphs.chat import build_chat_graph
from ragraphs.state import make_passage

CORPUS = [
    make_passage("Lima", "Lima is the capital and largest city of Peru."),
    make_passage("Paris", "Paris is the capital and largest city of France."),
    make_passage("France", "France is a country in Western Europe; its capital is Paris."),
    make_passage("Seine", "The Seine is a river that flows through Paris in France."),
]
QUESTION, CONTEXTS = RIVER_QUESTION, RIVER_CONTEXTS


def _components() -> Components:
    return river_components(CORPUS)


def _nodes(g) -> list[str]:
    return [n for n in g.get_graph().nodes if not n.startswith("__")]


@pytest.mark.parametrize("method", ["vanilla", "crag", "dr-rag", "erm4", "migres"])
def test_a_thread_paused_before_any_node_takes_an_edit_and_goes_on(method, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))
    context = CONTEXTS.get(method, {})
    whole = build_graph(method, _components()).invoke({"question": QUESTION}, context=context)
    g = build_graph(method, _components(), checkpointer=InMemorySaver())
    paused = 0
    for node in _nodes(g):
        cfg = {"configurable": {"thread_id": f"{method}-{node}"}}
        g.invoke({"question": QUESTION}, cfg, context=context, interrupt_before=[node])
        if g.get_state(cfg).next != (node,):
            continue  # a node this run never reaches
        paused += 1
        g.update_state(cfg, {"trace": []})  # the edit: refused before at half these nodes
        assert g.get_state(cfg).next == (node,), node
        out = g.invoke(None, cfg, context=context)
        assert out["answer"] == whole["answer"], node
        assert [t["node"] for t in out["trace"]] == [t["node"] for t in whole["trace"]], node
    assert paused >= 2


def test_an_edit_keeps_the_route_of_the_runs_own_settings(tmp_path, monkeypatch):
    """vanilla with ``rerank="evaluator"``: the defaults (no re-ranker) would send the edited
    thread from ``retrieve`` straight to ``generate``."""
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))
    g = build_graph("vanilla", _components(), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    context = {"rerank": "evaluator", "k": 2}
    g.invoke({"question": QUESTION}, cfg, context=context, interrupt_before=["rerank"])
    assert g.get_state(cfg).values["run_settings"]["rerank"] == "evaluator"
    g.update_state(cfg, {"trace": []})
    assert g.get_state(cfg).next == ("rerank",)
    out = g.invoke(None, cfg, context=context)
    assert [t["node"] for t in out["trace"]] == ["start", "retrieve", "rerank", "generate"]


def test_the_chat_paused_before_its_answer_takes_an_edit(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))
    g = build_chat_graph(_components(), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "chat"}}
    g.invoke({"messages": [HumanMessage(QUESTION)]}, cfg, interrupt_before=["answer"])
    g.update_state(cfg, {"question": QUESTION})
    assert g.get_state(cfg).next == ("answer",)
    out = g.invoke(None, cfg)
    assert out["messages"][-1].content == "the Seine"


def test_passages_edited_with_overwrite_are_the_ones_generate_reads(tmp_path, monkeypatch):
    """docs/debugging.md: a plain list merges into the passages by id; Overwrite replaces them."""
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))
    prompts: list[str] = []

    def reply(prompt: str) -> str:
        prompts.append(prompt)
        return "the Seine"

    comps = Components(llm=ScriptedChat(script=reply), retriever=LexicalRetriever(CORPUS))
    g = build_graph("vanilla", comps, checkpointer=InMemorySaver())
    for how, thread in ((list, "plain"), (Overwrite, "overwrite")):
        cfg = {"configurable": {"thread_id": thread}}
        g.invoke({"question": QUESTION}, cfg, interrupt_before=["generate"])
        held = g.get_state(cfg).values["passages"]
        assert len(held) >= 2
        g.update_state(cfg, {"passages": how(held[:1])})
        out = g.invoke(None, cfg)
        read = [p["title"] for p in out["passages"]]
        assert read == ([p["title"] for p in held] if how is list else [held[0]["title"]])
        assert all(p["text"] in prompts[-1] for p in out["passages"])
        assert (held[1]["text"] in prompts[-1]) == (how is list)
