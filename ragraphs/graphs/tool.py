"""A method as a LangChain tool, for an agent to call.

:func:`method_tool` wraps a method's graph in a ``StructuredTool`` that takes a question and
returns the method's answer with its sources, numbered, as the tool message's text; the whole
final state (passages, trace, LLM calls) is the message's artifact::

    from langgraph.prebuilt import create_react_agent   # or langchain's create_agent
    from ragraphs.graphs.tool import method_tool

    docs = method_tool("crag", components, description="Answers questions about our handbook.")
    agent = create_react_agent(model, tools=[docs])

A compiled graph's own ``as_tool()`` works too, but hands the agent the whole state as text.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from ..errors import ConfigError
from . import build_graph, method_context

SOURCE_CHARS = 300  # of each source's text in the tool message (the artifact keeps it whole)


class Question(BaseModel):
    question: str = Field(description="the question, standing alone (no 'it' or 'he' that needs the conversation)")


def tool_message(out: dict, source_chars: int = SOURCE_CHARS) -> str:
    """The answer, then its sources numbered (title and the start of the text)."""
    answer = str(out.get("answer") or "").strip() or "(no answer)"
    passages = out.get("passages") or []
    if not passages:
        return answer
    lines = []
    for i, p in enumerate(passages, 1):
        text = " ".join(str(p.get("text") or "").split())
        lines.append(f"[{i}] {p.get('title') or '(untitled)'}: {text[:source_chars]}{'...' if len(text) > source_chars else ''}")
    return answer + "\n\nSources:\n" + "\n".join(lines)


def method_tool(method: str, components: Any = None, *, name: str | None = None, description: str | None = None,
                **settings: Any) -> StructuredTool:
    """A tool that answers a question with ``method`` over ``components`` (the embedded defaults
    when None) and its run ``settings``; ``name`` defaults to ``ask_<method>``. A
    :class:`ConfigError` for an unknown method or setting."""
    context = method_context(method, settings)
    graph = build_graph(method, components)

    def run(question: str) -> tuple[str, dict]:
        out = graph.invoke({"question": question}, context=context)
        return tool_message(out), out

    async def arun(question: str) -> tuple[str, dict]:
        out = await graph.ainvoke({"question": question}, context=context)
        return tool_message(out), out

    tool_name = name or f"ask_{method.replace('-', '_')}"
    if not tool_name.replace("_", "").replace("-", "").isalnum():
        raise ConfigError(f"a tool name is letters, digits, '_' and '-'; got {tool_name!r}")
    return StructuredTool.from_function(
        func=run, coroutine=arun, name=tool_name, args_schema=Question, response_format="content_and_artifact",
        description=description or (f"Answers a question from the documents with {method} retrieval-augmented "
                                     "generation; returns the answer and its numbered sources."),
    )
