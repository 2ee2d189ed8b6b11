"""The chat graph's one node: the last user message in, the method's answer out as an AI message.

Each turn is answered on its own, as the methods answer one question: the earlier messages stay
in the thread but do not reach the method.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.runtime import Runtime

from ..errors import InputError
from ..settings import ChatContext, context_of
from ..state.types import Node

# (method, question, context) -> the method graph's output; the graph builder supplies it, so
# that this module never imports a graph
RunMethod = Callable[[str, str, ChatContext], dict]


def last_user_text(messages: Sequence[BaseMessage]) -> str:
    """The text of the last human message (text blocks joined when its content is a list)."""
    for m in reversed(messages or []):
        if getattr(m, "type", None) != "human":
            continue
        content = m.content
        if isinstance(content, str):
            return content
        return " ".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content
                        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text"))
    raise InputError('no user message: run the chat graph with {"messages": [("user", "...")]} as its input')


def make_chat_answer(run_method: RunMethod) -> Node[Any, ChatContext]:
    def answer(state: dict, runtime: Runtime[ChatContext]) -> dict:
        ctx = context_of(runtime, ChatContext)
        question = last_user_text(state.get("messages") or [])
        out = run_method(ctx.method, question, ctx)
        reply = AIMessage(content=out.get("answer") or "", name=ctx.method,
                          response_metadata={"llm_calls": out.get("llm_calls", 0), "web_calls": out.get("web_calls", 0)})
        return {
            "messages": [reply],
            "passages": list(out.get("passages") or []),
            # the method's own trace rides along, so a turn can be read node by node
            "_trace": {"method": ctx.method, "question": question[:500], "answer": reply.content,
                       "passages": [p.get("title") for p in out.get("passages") or []], "run": out.get("trace") or []},
        }

    return answer
