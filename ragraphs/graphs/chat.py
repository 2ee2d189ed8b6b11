"""Any method as a chat: user messages in, each answered by the method as an AI message.

::

    START -> question -+- as_asked ----------+-> answer -> END
                       +- rewrite -> rewrite -+

- ``question``: the last user message is the turn's question;
- ``rewrite`` (run setting ``follow_up="rewrite"``, from the second turn on): the LLM rewrites
  it into a question that stands alone, from the last ``history_turns`` turns;
- ``answer``: the method's graph answers the question; its answer is the AI message.

The state's ``messages`` merge as in LangGraph's ``MessagesState`` (``add_messages``), so LangGraph
Studio opens it in its chat view and an app built on messages can add it as a node. They are
kept in a ``DeltaChannel``, LangGraph's beta channel whose checkpoints hold each step's new
messages, not the whole list (a SQLite thread wrote every message at every step until
2026-12-02: 37 MB after 160 short turns, 3 MB since). The run
setting ``method`` picks the method; the shared settings (``k``, ``llm``, ``retrieval``, ...)
reach it, and ``settings`` holds its own by name (``{"web": "ddg"}`` for CRAG). With a
checkpointer each thread keeps its conversation. The method answers each turn's question on its
own: with ``follow_up="alone"`` (the default) the message as written, with ``"rewrite"`` the
question the rewrite made of it.
"""

from __future__ import annotations

import uuid
from dataclasses import fields
from typing import Annotated, Any, Sequence

from langchain_core.runnables import RunnableLambda
from langchain_core.messages import AnyMessage, convert_to_messages
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime, get_runtime
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer
from typing_extensions import NotRequired, TypedDict

from ..components import Components
from ..nodes.chat import (AS_ASKED, REWRITE, make_chat_answer, make_chat_answer_async, make_rewrite_follow_up, read_question,
                          route_follow_up)
from ..settings import ChatContext, RAGContext, check_setting_names, context_from, context_of
from ..state.types import Passage, add_trace
from ._common import Routes, components_of, nested_run, routed, timed


_MESSAGE_IDS = uuid.UUID("5f0c1a52-7a8e-4b8e-9a57-2c3d1e0b6a41")  # the namespace of the ids given below


def _with_ids(write: Any, at: int, taken: set[str] | frozenset[str] = frozenset()) -> list:
    """A write's messages, each without an id given one made of its place in the list and its
    content, and none of the ``taken`` ids. The channel keeps the writes as sent and folds them
    again on every read of the thread, so ``add_messages``' random ids changed each time: a user
    message could not be removed (``RemoveMessage``) nor edited by its id, and an edit was added
    as a new message (until 2026-12-03). After a removal a place comes round again: a message of
    the same words that one had there took its id and replaced it (until 2026-12-03, evening)."""
    out = []
    for i, m in enumerate(convert_to_messages(write if isinstance(write, list) else [write])):
        if m.id:
            out.append(m)
            continue
        salt = 0
        while (mid := _place_id(at + i, m, salt)) in taken:
            salt += 1
        out.append(m.model_copy(update={"id": mid}))
    return out


def _place_id(place: int, m: Any, salt: int) -> str:
    """The id of a message without one: its place, kind and words (and, past a taken id, a count)."""
    return str(uuid.uuid5(_MESSAGE_IDS, f"{place}\x00{m.type}\x00{m.content!r}" + (f"\x00{salt}" if salt else "")))


def fold_messages(messages: list, writes: Sequence[Any]) -> list:
    """``add_messages`` over a batch of writes, one after another (DeltaChannel's reducer); the
    same ids on every fold (:func:`_with_ids`)."""
    out: Any = messages
    for w in writes:
        out = add_messages(out, _with_ids(w, len(out), {str(m.id) for m in out if getattr(m, "id", None)}))
    return list(out)


class ChatMessages(TypedDict):
    """``MessagesState``'s one key, in a ``DeltaChannel`` (a whole copy every 100 writes: 50 turns)."""

    messages: Annotated[list[AnyMessage], DeltaChannel(fold_messages)]


class ChatState(ChatMessages):
    # the turn's question (the last user message, or the rewrite's), the rewrite's LLM calls,
    # the last answer's passages (each replaced every turn) and the trace of every turn
    question: NotRequired[str]
    rewrite_calls: NotRequired[int]
    passages: NotRequired[list[Passage]]
    trace: NotRequired[Annotated[list[dict], add_trace]]
    run_settings: NotRequired[dict[str, Any]]  # the turn's settings, for the router on update_state


class ChatOutput(ChatMessages):
    question: NotRequired[str]
    passages: NotRequired[list[Passage]]


def method_context(ctx: ChatContext) -> Any:
    """The settings ``ctx.method`` runs with: its own defaults, then the chat's shared settings
    that differ from :class:`RAGContext`'s defaults, then ``settings`` by name, each name and
    value checked against the method's own class (a mistyped name gets the closest ones).

    A shared setting left at its default leaves the method's own default in place: DR-RAG keeps
    its hybrid retrieval and title links, MIGRES its ``k`` of 8. To give a method the value that
    happens to be the shared default (``k=4`` for MIGRES), name it in ``settings``."""
    from . import get_context_class

    cls = get_context_class(ctx.method)
    check_setting_names(cls, ctx.settings, ctx.method)
    base = RAGContext()
    changed = {f.name: getattr(ctx, f.name) for f in fields(RAGContext) if getattr(ctx, f.name) != getattr(base, f.name)}
    return context_from(cls, {**changed, **ctx.settings}, keep_none=True)


def read_checked_question(state: Any, runtime: Runtime[ChatContext]) -> dict:
    """:func:`read_question` once the run's ``method`` is checked against :data:`METHODS`: a name
    it lacks is a ``ConfigError`` listing the registered methods, before any LLM call. The check
    is here, not in :class:`ChatContext` (below the graphs), so a method added to ``METHODS``
    answers too (a fixed list of the six refused it until 2026-11-30). The method's settings
    (``settings`` by name, values, locked names) are checked here too, before the follow-up
    rewrite reads ``settings["llm"]``: until 2026-12-01 it called the model they named, a
    locked ``llm`` included, before the answer node refused them."""
    method_context(context_of(runtime, ChatContext))
    return read_question(state, runtime)


def both_ways(name: str, node: Any, anode: Any) -> Any:
    """One graph node that runs ``node`` under ``invoke`` and ``anode`` under ``ainvoke``, each
    ``(state, runtime)``: LangGraph's own node runnable (as ``add_node`` makes of a function, no
    run of its own in a trace); where a LangGraph version lacks it, a ``RunnableLambda`` (a
    nested run of the same name in a trace)."""
    try:
        from langgraph._internal._runnable import RunnableCallable
    except ImportError:  # pragma: no cover - another LangGraph layout
        async def arun(state: Any) -> Any:
            return await anode(state, get_runtime())

        return RunnableLambda(lambda state: node(state, get_runtime()), afunc=arun, name=name)
    return RunnableCallable(node, anode, name=name, trace=False)


def build_chat_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None, store: BaseStore | None = None
) -> CompiledStateGraph[ChatState, ChatContext, ChatMessages, ChatOutput]:
    """Compile the chat graph over ``components`` (embedded defaults if None); each method's
    graph is built on first use over the same components and runs with the chat's ``store``."""
    from . import build_graph

    c = components_of(components, "build_chat_graph")
    built: dict[str, Any] = {}

    def graph_of(method: str) -> Any:
        if method not in built:
            built[method] = build_graph(method, c)
        return built[method]

    # checkpoints only when the method stops early (see nested_run): a finished answer leaves
    # none in the chat's thread (78% of a DR-RAG thread until 2026-11-30)
    def run_method(method: str, question: str, ctx: ChatContext) -> dict:
        return graph_of(method).invoke({"question": question}, context=method_context(ctx), **nested_run())

    async def arun_method(method: str, question: str, ctx: ChatContext) -> dict:
        return await graph_of(method).ainvoke({"question": question}, context=method_context(ctx), **nested_run())

    # the method runs with invoke under invoke and with ainvoke under ainvoke: a LangGraph server's
    # custom checkpointer (its adapter has async methods only) failed every turn with
    # NotImplementedError until 2026-12-01, the method's invoke asking it for get_tuple
    answer = both_ways("answer", timed("answer", make_chat_answer(run_method)),
                       timed("answer", make_chat_answer_async(arun_method)))

    g = StateGraph(ChatState, context_schema=ChatContext, input_schema=ChatMessages, output_schema=ChatOutput)
    g.add_node("question", timed("question", read_checked_question))
    g.add_node("rewrite", timed("rewrite", make_rewrite_follow_up(c)))
    g.add_node("answer", answer)
    g.add_edge(START, "question")
    follow_up: Routes = {AS_ASKED: "answer", REWRITE: "rewrite"}
    g.add_conditional_edges("question", routed("question", route_follow_up, follow_up), follow_up)
    g.add_edge("rewrite", "answer")
    g.add_edge("answer", END)
    return g.compile(checkpointer=checkpointer, store=store, name="chat")


graph = build_chat_graph()

__all__ = ["ChatContext", "ChatState", "build_chat_graph", "graph", "method_context"]
