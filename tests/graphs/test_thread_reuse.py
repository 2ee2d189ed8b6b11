"""A second question asked on a thread that already holds a run starts from its input alone.

LangGraph keeps a thread's state between runs, and a method's reducers add to it: without the
reset the second run's passages, LLM calls, token counts and trace held the first run's too,
and MIGRES answered from the first question's passages. Each method here answers question 2
on a reused thread exactly as on a fresh one. The reset is the run's entry node
(``graphs._common.start_at``), reached from START only: until 2026-11-30 it was done inside
the method's first node (``starts_a_run``), so a first node that failed or paused left the new
question beside the earlier run's answer, and MIGRES's retry of a question cut short inside
its loop went on with the old run and its old settings.
"""

from __future__ import annotations

import dataclasses
import operator
import uuid
from collections.abc import Sequence
from typing import Annotated, Literal, TypedDict

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import add_messages
from pydantic import BaseModel, Field
from typing_extensions import NotRequired

from fakes import LexicalRetriever, ScriptedChat
from ragraphs import Components
from ragraphs.graphs import build_graph
from ragraphs.state import RAGState as _RAGStateForSeq
from ragraphs.state import make_passage

CORPUS = [
    make_passage("Lima", "Lima is the capital and largest city of Peru."),
    make_passage("Peru", "Peru is a country in South America; its capital is Lima."),
    make_passage("Paris", "Paris is the capital and largest city of France."),
    make_passage("France", "France is a country in Western Europe; its capital is Paris."),
    make_passage("Seine", "The Seine is a river that flows through Paris in France."),
]
Q1, Q2 = "What is the capital of Peru?", "Which river flows through the capital of France?"
KEYS = ("answer", "llm_calls", "input_tokens", "output_tokens", "parse_failures", "web_calls")


def _reply(prompt: str) -> str:
    """The same reply to the same prompt; MIGRES's Main Module never commits, so it loops."""
    if "missing_information" in prompt:
        return '{"answer": "unanswerable", "missing_information": "the river of Paris"}'
    return "Paris"


def _graph(method, checkpointer=None):
    llm = ScriptedChat(script=_reply)
    return build_graph(method, Components(llm=llm, retriever=LexicalRetriever(CORPUS)), checkpointer=checkpointer)


def _seen(out):
    return {**{k: out.get(k) for k in KEYS}, "passages": [p["id"] for p in out.get("passages") or []],
            "nodes": [t["node"] for t in out["trace"]]}


EMPTY = ("", [], {}, 0, 0.0, False, None)


def _same_but_emptied(fresh, reused):
    """The reused thread's output is the fresh one's, but for the keys the entry node set back to
    empty, which a fresh run never wrote (docs/debugging.md: they read as empty values)."""
    strip = ("elapsed_s", "earlier_run_reset")
    assert [{k: v for k, v in e.items() if k not in strip} for e in reused["trace"]] == \
        [{k: v for k, v in e.items() if k not in strip} for e in fresh["trace"]]
    assert reused["trace"][0]["earlier_run_reset"] is True and "earlier_run_reset" not in fresh["trace"][0]
    assert {k: v for k, v in reused.items() if k != "trace" and k in fresh} == {k: v for k, v in fresh.items() if k != "trace"}
    extra = {k: v for k, v in reused.items() if k not in fresh}
    assert all(v in EMPTY for v in extra.values()), extra


@pytest.mark.parametrize("method", ["none", "vanilla", "crag", "dr-rag", "erm4", "migres"])
def test_a_second_question_on_a_used_thread_is_answered_as_on_a_fresh_one(method, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))  # ERM4's reservoir: its own, empty
    context = {"use_memory": False} if method == "erm4" else {}
    fresh = _graph(method).invoke({"question": Q2}, context=context)

    g = _graph(method, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    first = g.invoke({"question": Q1}, cfg, context=context)
    assert first["llm_calls"] >= 1 and first["trace"]
    second = g.invoke({"question": Q2}, cfg, context=context)
    assert _seen(second) == _seen(fresh)
    assert second["question"] == Q2
    _same_but_emptied(fresh, second)
    assert second["trace"][0] == {**second["trace"][0], "node": "start", "asked": Q2}
    # the thread's history keeps both runs: the first one is still there to read or replay
    questions = {s.values.get("question") for s in g.get_state_history(cfg)}
    assert {Q1, Q2} <= questions


class _Flaky(LexicalRetriever):
    down = False

    def search(self, query, k, mode="dense"):
        if self.down:
            raise RuntimeError("store unreachable")
        return super().search(query, k, mode)


@pytest.mark.parametrize("method", ["vanilla", "crag", "migres"])
def test_a_failing_first_node_on_a_used_thread_leaves_no_earlier_answer_beside_the_new_question(method):
    """The store fails in the second question's first node: the thread's state holds the new
    question with empty values, not the first run's answer, passages and counters beside it
    (until 2026-11-30 it did: the reset was that node's own update); ``invoke(None)`` then goes
    on with the failed node, as the same run, and answers as a fresh run does."""
    fresh = _graph(method).invoke({"question": Q2})
    store = _Flaky(CORPUS)
    g = build_graph(method, Components(llm=ScriptedChat(script=_reply), retriever=store), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    assert g.invoke({"question": Q1}, cfg)["answer"]
    store.down = True
    with pytest.raises(RuntimeError, match="unreachable"):
        g.invoke({"question": Q2}, cfg)
    held = g.get_state(cfg)
    assert held.next == ("retrieve",)
    v = held.values
    assert v["question"] == Q2 and not v.get("answer") and not v.get("llm_calls") and not v.get("passages")
    assert [e["node"] for e in v["trace"]] == ["start"] and v["trace"][0]["earlier_run_reset"]
    store.down = False
    resumed = g.invoke(None, cfg)
    assert _seen(resumed) == _seen(fresh)


@pytest.mark.parametrize("method", ["none", "erm4"])
def test_an_interrupt_in_the_first_node_on_a_used_thread_shows_no_earlier_answer(method, tmp_path, monkeypatch):
    """The first node that calls the LLM (none's ``generate``, ERM4's ``rewrite``) pauses on
    ``interrupt()`` (an approval step in a chat model of the user's): what ``invoke`` returns
    holds the new question and no answer, where it held the first run's answer until 2026-11-30."""
    from langgraph.types import Command, interrupt

    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))
    ask = {"on": False}

    def script(prompt):
        if ask["on"]:
            interrupt("approve this LLM call?")
        return _reply(prompt)

    context = {"use_memory": False} if method == "erm4" else {}
    g = build_graph(method, Components(llm=ScriptedChat(script=script), retriever=LexicalRetriever(CORPUS)),
                    checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    assert g.invoke({"question": Q1}, cfg, context=context)["answer"]
    ask["on"] = True
    paused = g.invoke({"question": Q2}, cfg, context=context)
    assert paused["__interrupt__"] and paused["question"] == Q2
    assert not paused.get("answer") and not paused.get("llm_calls") and not paused.get("passages")
    ask["on"] = False
    done = g.invoke(Command(resume=True), cfg, context=context)
    assert done["question"] == Q2 and done["answer"] == "Paris" and done["trace"][0]["asked"] == Q2


def test_migres_loop_going_back_to_retrieve_is_the_same_run():
    """MIGRES's ``retrieve`` is where each iteration begins; the loop back to it never passes
    the entry node, so it keeps what the run gathered."""
    out = _graph("migres").invoke({"question": Q2})
    nodes = [t["node"] for t in out["trace"]]
    assert nodes.count("retrieve") >= 2 and out["iterations"] == nodes.count("main_judge") >= 2
    assert nodes.count("start") == 1 and nodes[:2] == ["start", "retrieve"]
    assert len(out["memory_queries"]) >= 2  # the second iteration's query joined the first's


class _FailsOnce(LexicalRetriever):
    """The store fails on its second search (MIGRES's second iteration)."""

    def __init__(self, corpus):
        super().__init__(corpus)
        self.calls = 0

    def search(self, query, k, mode="dense"):
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("the store went away")
        return super().search(query, k, mode)


def test_a_new_question_after_a_migres_loop_cut_short_is_a_new_run():
    """A run stopped inside its loop (here the store fails in the second iteration's retrieve;
    Ctrl-C or a cancelled Studio run leave the same state) and then a new question on the
    thread: the new question does not carry on the old loop."""
    fresh = _graph("migres").invoke({"question": Q1})
    g = build_graph("migres", Components(llm=ScriptedChat(script=_reply), retriever=_FailsOnce(CORPUS)),
                    checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "cut"}}
    with pytest.raises(RuntimeError, match="went away"):
        g.invoke({"question": Q2}, cfg)
    assert g.get_state(cfg).values["trace"][-1]["node"] == "generate_queries"  # cut inside the loop
    again = g.invoke({"question": Q1}, cfg)
    assert _seen(again) == _seen(fresh)
    assert again["trace"][0]["asked"] == Q1 and again["memory_queries"][0] == Q1


def test_the_same_question_asked_again_after_a_migres_loop_cut_short_is_a_fresh_run_with_its_settings():
    """The same question asked again (not ``invoke(None)``) after a run stopped in its second
    iteration: a new run under the new settings, as on a fresh thread. Until 2026-11-30 it went
    on with the stopped run, under its old ``k`` and ``max_iterations`` ("from inside the graph
    the two cannot be told apart"); a new input now always passes the entry node."""
    new = {"k": 5, "max_iterations": 5}
    fresh = _graph("migres").invoke({"question": Q2}, context=new)
    g = build_graph("migres", Components(llm=ScriptedChat(script=_reply), retriever=_FailsOnce(CORPUS)),
                    checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "cut"}}
    with pytest.raises(RuntimeError, match="went away"):
        g.invoke({"question": Q2}, cfg, context={"k": 2, "max_iterations": 2})
    again = g.invoke({"question": Q2}, cfg, context=new)
    assert _seen(again) == _seen(fresh) and again["iterations"] == fresh["iterations"]
    assert [e.get("k") for e in again["trace"] if e["node"] == "retrieve"] == [5] * again["iterations"]
    assert {k: g.get_state(cfg).values["run_settings"][k] for k in new} == new


def test_an_input_without_a_question_on_a_used_thread_runs_the_held_question_again():
    """LangGraph keeps a thread's values and an input that writes no question (``{}``, a
    mistyped key) writes nothing: the run asks the thread's question again. The entry node
    cannot tell that from the same question asked again, so docs/debugging.md says so; on a
    fresh thread the same input is an InputError."""
    from ragraphs.errors import InputError

    g = _graph("vanilla", checkpointer=InMemorySaver())
    with pytest.raises(InputError, match="no question given"):
        g.invoke({"query": Q2}, {"configurable": {"thread_id": "new"}})
    cfg = {"configurable": {"thread_id": "t"}}
    g.invoke({"question": Q1}, cfg)
    again = g.invoke({"query": Q2}, cfg)
    assert again["question"] == Q1 and again["trace"][0]["earlier_run_reset"] and again["llm_calls"] == 1


class _UserState(TypedDict, total=False):
    question: str
    notes: Annotated[list, operator.add]
    answer: str
    trace: Annotated[list, operator.add]


@pytest.mark.parametrize("form", ["start_at", "starts_a_run"])
def test_the_helpers_take_an_async_first_node_and_langgraphs_other_node_forms(form):
    """A user's graph (docs/extending.md): an ``async def`` first node after ``start_at``, or
    under ``starts_a_run``, the older form (it failed with ``'coroutine' object has no
    attribute 'get'`` until 2026-11-30), nodes
    written ``(state)`` or ``(state, config)``, and one that routes with a ``Command``, each
    timed and traced; a second question on the thread still starts from its input alone."""
    import asyncio

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command

    from ragraphs.graphs import start_at, starts_a_run, timed

    S = _UserState
    async def first(state, runtime):
        return {"notes": [f"read {state['question']}"]}

    def second(state):
        return {"notes": ["second"]}

    def third(state, config):
        return Command(update={"notes": [config["configurable"]["thread_id"]]}, goto="last")

    def last(state):
        return {"answer": " / ".join(state["notes"])}

    g = StateGraph(S)
    g.add_node("first", timed("first", first) if form == "start_at" else starts_a_run("first", first, S))
    g.add_node("second", timed("second", second))
    g.add_node("third", timed("third", third))
    g.add_node("last", timed("last", last))
    if form == "start_at":
        start_at(g, "first")
    else:
        g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", "third")
    g.add_edge("last", END)
    graph = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t1"}}
    out = asyncio.run(graph.ainvoke({"question": "q1"}, cfg))
    assert out["answer"] == "read q1 / second / t1"
    nodes = ["first", "second", "third", "last"]
    assert [e["node"] for e in out["trace"]] == (["start", *nodes] if form == "start_at" else nodes)
    again = asyncio.run(graph.ainvoke({"question": "q2"}, cfg))
    assert again["answer"] == "read q2 / second / t1" and len(again["trace"]) == len(out["trace"])
    assert again["trace"][0]["asked"] == "q2" and again["trace"][0]["earlier_run_reset"]


class _SeqState(_RAGStateForSeq):  # a user's state with abstract collection types
    steps: NotRequired[Annotated[Sequence[str], operator.add]]
    messages: NotRequired[Annotated[Sequence[BaseMessage], add_messages]]


class _StyledState(BaseModel):  # a pydantic state with defaults
    question: str = ""
    style: str = "short"
    request: str = Field(default_factory=lambda: uuid.uuid4().hex[:8])
    steps: Annotated[list, operator.add] = Field(default_factory=lambda: ["init"])
    answer: str = ""
    trace: Annotated[list, operator.add] = []


@dataclasses.dataclass
class _DataState:  # a dataclass state
    question: str = ""
    answer: str = ""
    trace: Annotated[list, operator.add] = dataclasses.field(default_factory=list)


def test_start_at_reads_a_first_run_as_first_whatever_the_states_key_types():
    """A user's state with a ``Sequence`` reducer key (LangGraph's agent tutorials write
    ``Annotated[Sequence[BaseMessage], add_messages]``), a pydantic state with a default: the
    entry node took every first run for a reused thread (their empty
    values compared unequal to its guesses) and reset them, crashing (``None + list``) or
    wiping the default, until 2026-11-30. A reused thread's run starts from the empty values
    LangGraph gives, the pydantic default included."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, StateGraph

    from ragraphs.graphs import start_at, timed

    Seq, Styled = _SeqState, _StyledState

    def first(state):
        return {"steps": ["first"], "messages": [AIMessage(content=state["question"])],
                "answer": f"{len(state.get('steps') or [])} earlier steps"}

    g = StateGraph(Seq)
    g.add_node("first", timed("first", first))
    start_at(g, "first")
    g.add_edge("first", END)
    graph = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "s"}}
    out = graph.invoke({"question": "q1"}, cfg)
    assert out["steps"] == ["first"] and out["answer"] == "0 earlier steps"
    assert "earlier_run_reset" not in out["trace"][0]
    again = graph.invoke({"question": "q2"}, cfg)
    assert again["steps"] == ["first"] and [m.content for m in again["messages"]] == ["q2"]
    assert again["answer"] == "0 earlier steps" and again["trace"][0]["earlier_run_reset"]

    def styled(state):
        return {"answer": f"{state.style} answer to {state.question} with {state.steps}", "style": "long",
                "request": state.request + "!", "steps": ["first"]}

    g2 = StateGraph(Styled)
    g2.add_node("first", timed("first", styled))
    start_at(g2, "first")
    g2.add_edge("first", END)
    graph2 = g2.compile(checkpointer=InMemorySaver())
    first_run = graph2.invoke({"question": "q1"}, cfg)
    assert first_run["answer"] == "short answer to q1 with []"  # LangGraph starts a reducer key empty
    requests = {first_run["request"]}
    for q in ("q2", "q3"):  # the defaults again; the factory's value made afresh each reset
        out = graph2.invoke({"question": q}, cfg)
        assert out["answer"] == f"short answer to {q} with []" and out["steps"] == ["first"]
        requests.add(out["request"])
    assert len(requests) == 3

    def plain(state):
        return {"answer": f"to {state.question}"}

    g3 = StateGraph(_DataState)  # 'object is not iterable' in the entry node until 2026-11-30
    g3.add_node("first", timed("first", plain))
    start_at(g3, "first")
    g3.add_edge("first", END)
    graph3 = g3.compile(checkpointer=InMemorySaver())
    assert graph3.invoke({"question": "q1"}, cfg)["answer"] == "to q1"
    again = graph3.invoke({"question": "q2"}, cfg)
    assert again["answer"] == "to q2" and again["trace"][0]["earlier_run_reset"]


def test_timed_nodes_get_what_langgraph_injects_by_name():
    """``store`` and ``writer`` (LangGraph injects them by parameter name) reach a timed node:
    until 2026-11-30 the node got no store (TypeError) and the Runtime in place of the writer."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.store.memory import InMemoryStore

    from ragraphs.graphs import timed

    def keep(state, *, store):
        store.put(("notes",), "q", {"question": state["question"]})
        return {"notes": ["kept"]}

    def tell(state, writer, runtime):
        writer({"told": state["question"]})
        return {"notes": [type(runtime).__name__]}

    def read(state, store):
        return {"answer": store.get(("notes",), "q").value["question"]}

    g = StateGraph(_UserState)
    g.add_sequence([(name, timed(name, fn)) for name, fn in (("keep", keep), ("tell", tell), ("read", read))])
    g.add_edge(START, "keep")
    g.add_edge("read", END)
    graph = g.compile(store=InMemoryStore())
    custom = [c for mode, c in graph.stream({"question": "q1"}, stream_mode=["custom", "values"]) if mode == "custom"]
    out = graph.invoke({"question": "q1"})
    assert out["answer"] == "q1" and out["notes"] == ["kept", "Runtime"]
    assert {"told": "q1"} in custom
    assert [e["node"] for e in out["trace"]] == ["keep", "tell", "read"]


def test_routed_routers_take_langgraphs_forms_too():
    """``routed`` calls a router as ``timed`` calls a node: ``(state)``, ``(state, runtime)``
    and ``(state, config)`` each get what they ask for."""
    from langgraph.graph import END, START, StateGraph

    from ragraphs.graphs import routed, timed

    def by_config(state, config):
        return "b" if config["configurable"]["thread_id"] == "to-b" else "c"

    def by_runtime(state, runtime):
        return "end" if runtime.context is None else "end"

    g = StateGraph(_UserState)
    for name in ("a", "b", "c"):
        g.add_node(name, timed(name, lambda state, n=name: {"notes": [n]}))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", routed("a", by_config, {"b": "b", "c": "c"}), {"b": "b", "c": "c"})
    g.add_conditional_edges("b", routed("b", by_runtime, {"end": END}), {"end": END})
    g.add_edge("c", END)
    graph = g.compile(checkpointer=InMemorySaver())
    assert graph.invoke({"question": "q"}, {"configurable": {"thread_id": "to-b"}})["notes"] == ["a", "b"]
    assert graph.invoke({"question": "q"}, {"configurable": {"thread_id": "other"}})["notes"] == ["a", "c"]


def test_routed_keeps_a_routers_literal_targets_and_settings_need_their_state_key():
    """A router typed ``-> Literal["b", "c"]`` and given no path map keeps its branches in the
    drawing (routed replaced its return type until a mend of 2026-11-30); ``starts_a_run`` with
    ``settings`` (and ``start_at``) over a state without ``run_settings`` warns that edits take
    the defaults."""
    import pytest
    from langgraph.graph import END, START, StateGraph

    from ragraphs.graphs import routed, start_at, starts_a_run, timed
    from ragraphs.settings import RAGContext

    def pick(state) -> Literal["b", "c"]:  # Literal: this module's, so the hint resolves
        return "b"

    g = StateGraph(_UserState)
    for name in ("a", "b", "c"):
        g.add_node(name, timed(name, lambda state, n=name: {"notes": [n]}))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", routed("a", pick))
    g.add_edge("b", END)
    g.add_edge("c", END)
    drawn = g.compile().get_graph().draw_mermaid()
    assert "a -.-> b" in drawn and "a -.-> c" in drawn
    with pytest.warns(UserWarning, match="has no 'run_settings' key"):
        starts_a_run("a", lambda state: {}, _UserState, settings=RAGContext)
    with pytest.warns(UserWarning, match="start_at.*has no 'run_settings' key"):
        start_at(StateGraph(_UserState), "a", settings=RAGContext)
