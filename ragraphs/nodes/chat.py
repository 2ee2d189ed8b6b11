"""The chat graph's nodes: the last user message in, the method's answer out as an AI message.

- ``question``: the text of the last user message becomes the turn's ``question``.
- ``rewrite`` (``follow_up="rewrite"``, from the second turn on): the LLM rewrites that
  message into a question that stands alone, from the last ``history_turns`` turns ("Where
  was she born?" after "Who wrote Rebecca?" / "Daphne du Maurier" -> "Where was Daphne du
  Maurier born?"), one structured decision (:class:`~ragraphs.tools.structured.Standalone`).
- ``answer``: the method answers the turn's ``question`` on its own, as the methods answer one
  question; the earlier messages stay in the thread.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from ..components import Components
from ..errors import InputError
from ..prompts import one_line
from ..setting_values import RUN_SETTINGS, recorded_settings
from ..settings import ChatContext, context_of
from ..state.types import Node, passage_where
from ..tools.structured import Standalone, decide
from ..tools.text import message_text

# (method, question, context) -> the method graph's output; the graph builder supplies it, so
# that this module never imports a graph
RunMethod = Callable[[str, str, ChatContext], dict]

REWRITE, AS_ASKED = "rewrite", "as_asked"

FOLLOW_UP_INSTRUCTIONS = (
    "Rewrite the user's last message as a question that can be understood without the conversation: put "
    "what words such as he, she, it, they, there or that refer to in their place. A message that already "
    "stands alone is written as it is.\n\n"
)
# (earlier turns, last message, the question standing alone), written for this prompt
FOLLOW_UP_SHOTS = [
    ([("Who wrote the novel Rebecca?", "Daphne du Maurier")], "Where was she born?",
     "Where was Daphne du Maurier born?"),
    ([("Which river flows through Vienna?", "the Danube"), ("Into which sea does it flow?", "the Black Sea")],
     "Which countries border that sea?", "Which countries border the Black Sea?"),
    ([("What is the capital of Peru?", "Lima")], "Who designed the Eiffel Tower?", "Who designed the Eiffel Tower?"),
]


def last_user_text(messages: Sequence[BaseMessage]) -> str:
    """The text of the last human message (text blocks joined when its content is a list)."""
    for m in reversed(messages or []):
        if getattr(m, "type", None) == "human":
            return message_text(m.content)
    raise InputError('no user message: run the chat graph with {"messages": [("user", "...")]} as its input')


def earlier_turns(messages: Sequence[BaseMessage], most: int) -> list[tuple[str, str]]:
    """The last ``most`` (user message, answer) turns before the last user message, oldest
    first; a user message with no answer after it (its turn failed) is left out: the rewrite
    read it as a turn answered with nothing until 2026-11-30."""
    msgs = list(messages or [])
    last = max((i for i, m in enumerate(msgs) if getattr(m, "type", None) == "human"), default=-1)
    turns: list[tuple[str, str]] = []
    for m in msgs[:max(last, 0)]:
        kind = getattr(m, "type", None)
        if kind == "human":
            turns.append((message_text(m.content), ""))
        elif kind == "ai" and turns and not turns[-1][1]:
            turns[-1] = (turns[-1][0], message_text(m.content))
    turns = [t for t in turns if t[1]]
    return turns[-most:] if most > 0 else []


def follow_up_prompt(turns: Sequence[tuple[str, str]], message: str, max_chars: int = 300) -> str:
    """The few-shot prompt of the follow-up rewrite (examples in the decision's JSON)."""
    import json

    def block(history, last) -> str:
        lines = ["Conversation:"]
        for q, a in history:
            lines += [f"User: {one_line(q, max_chars)}", f"Assistant: {one_line(a, max_chars) or '(no answer)'}"]
        return "\n".join(lines + [f"Last message: {one_line(last, max_chars)}", "Standing alone:"])

    shots = [block(h, m) + " " + json.dumps({"question": q}) for h, m, q in FOLLOW_UP_SHOTS]
    return FOLLOW_UP_INSTRUCTIONS + "\n\n".join(shots + [block(turns, message)])


def _same(text: str, *others: str) -> bool:
    """Whether ``text`` is one of ``others``, ignoring case, spacing and punctuation at the ends."""
    def key(t: str) -> str:
        return " ".join(t.lower().split()).strip(" ?.!")

    return key(text) in {key(o) for o in others}


def read_question(state: Any, runtime: Runtime[ChatContext]) -> dict:
    """The turn's question: the last user message as written. A thread whose last message is
    not the user's (a run with no new message, a tool's reply) has nothing new to answer: an
    ``InputError`` (it answered the old question again until 2026-11-30)."""
    messages = state.get("messages") or []
    question = last_user_text(messages)  # none at all: "no user message"
    last = next((m for m in reversed(messages) if getattr(m, "type", None) != "system"), None)
    if last is not None and getattr(last, "type", None) != "human":
        raise InputError(f"the conversation's last message is the {getattr(last, 'type', '?')}'s, not the user's: "
                         'nothing new to answer; add {"messages": [("user", "...")]}')
    settings = recorded_settings(context_of(runtime, ChatContext))  # the router reads them on update_state
    # each turn's trace starts afresh: the thread's checkpoints keep the earlier turns' (the
    # whole conversation's trace, rewritten at every checkpoint, grew with the square of the
    # turns until 2026-11-30: 71 MB of SQLite after 160 short turns)
    return {"question": question, "rewrite_calls": 0, RUN_SETTINGS: settings, "trace": Overwrite([]),
            "_trace": {"question": question[:500]}}


def route_follow_up(state: dict, runtime: Runtime[ChatContext]) -> str:
    """``rewrite`` when the chat rewrites follow-ups and earlier turns exist, else ``as_asked``."""
    ctx = context_of(runtime, ChatContext)
    if ctx.follow_up == "rewrite" and earlier_turns(state.get("messages") or [], int(ctx.history_turns)):
        return REWRITE
    return AS_ASKED


def make_rewrite_follow_up(c: Components) -> Node[Any, ChatContext]:
    """Rewrite the last user message into a question that stands alone (one LLM decision);
    the message is kept as written when the decision fails or writes nothing."""

    def rewrite(state: dict, runtime: Runtime[ChatContext]) -> dict:
        ctx = context_of(runtime, ChatContext)
        messages = state.get("messages") or []
        message = last_user_text(messages)
        turns = earlier_turns(messages, int(ctx.history_turns))
        # the model the method answers with: a chat's `settings` name it over the shared `llm`
        # (the rewrite ran the embedded Gemma beside settings={"llm": ...} until 2026-11-30)
        shared = ctx.settings or {}
        llm = c.llm(shared.get("llm") or ctx.llm, max_tokens=int(shared.get("max_new_tokens") or ctx.max_new_tokens))
        # "nostream": the decision's JSON is no reply, so it stays out of the chat's messages
        # stream (Studio's chat view showed it before the answer until 2026-11-30)
        out = decide(llm, follow_up_prompt(turns, message), Standalone, stop=["\n"], tags=["nostream"])
        question = one_line(out.value.question, 500) if out.value is not None else ""
        details: dict[str, Any] = {"message": message[:500], "turns_read": len(turns), **out.trace()}
        if not question:
            question, details["note"] = message, "the rewrite wrote no question; the message is answered as written"
        elif _same(question, *(q for q, _ in turns)) and not _same(question, message):
            # a small model may copy an earlier question instead of rewriting the last one
            question, details["note"] = message, "the rewrite repeated an earlier message; the message is answered as written"
        details["question"] = question[:500]
        details.update(out.usage())
        return {"question": question, "rewrite_calls": out.calls, "_trace": details}

    return rewrite


def _answered(state: dict, ctx: ChatContext, question: str, out: dict) -> dict:
    """The chat's update from the method's run ``out``: the AI message with its sources."""
    # the LLM calls of the turn: the method's and the follow-up rewrite's
    calls = int(out.get("llm_calls", 0)) + int(state.get("rewrite_calls") or 0)
    passages = list(out.get("passages") or [])
    reply = AIMessage(content=out.get("answer") or "", name=ctx.method,
                      response_metadata={"llm_calls": calls, "web_calls": out.get("web_calls", 0),
                                         "question": question,
                                         # the answer's sources, on the message a chat view shows,
                                         # with their address, file and page where they have them
                                         "passages": [{**{k: p.get(k) for k in ("id", "title", "source", "score")},
                                                       **passage_where(p)} for p in passages]})
    return {
        "messages": [reply],
        "passages": passages,
        # the method's own trace rides along, so a turn can be read node by node
        "_trace": {"method": ctx.method, "question": question[:500], "answer": reply.content,
                   "passages": [p.get("title") for p in out.get("passages") or []], "run": out.get("trace") or []},
    }


def make_chat_answer(run_method: RunMethod) -> Node[Any, ChatContext]:
    def answer(state: dict, runtime: Runtime[ChatContext]) -> dict:
        ctx = context_of(runtime, ChatContext)
        question = state.get("question") or last_user_text(state.get("messages") or [])
        return _answered(state, ctx, question, run_method(ctx.method, question, ctx))

    return answer


def make_chat_answer_async(run_method: Callable[[str, str, ChatContext], Awaitable[dict]]) -> Callable[..., Awaitable[dict]]:
    """:func:`make_chat_answer` for ``ainvoke`` / ``astream``: the method runs with ``ainvoke``,
    so a checkpointer with only async methods (a LangGraph server's custom checkpointer) serves
    it too."""
    async def answer(state: dict, runtime: Runtime[ChatContext]) -> dict:
        ctx = context_of(runtime, ChatContext)
        question = state.get("question") or last_user_text(state.get("messages") or [])
        return _answered(state, ctx, question, await run_method(ctx.method, question, ctx))

    return answer
