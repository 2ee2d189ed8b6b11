"""A method as a LangChain tool, for an agent to call.

:func:`method_tool` wraps a method's graph in a ``StructuredTool`` that takes a question and
returns the method's answer with its sources, numbered (with each source's address or file
where it has one), as the tool message's text; the message's artifact is the answer, the
passages and the run's counts (``artifact="state"``: the whole final state, trace and all; an
agent's thread keeps every artifact in its messages, so the default stays small)::

    from langgraph.prebuilt import create_react_agent   # or langchain's create_agent
    from ragraphs.graphs.tool import method_tool

    docs = method_tool("crag", components, description="Answers questions about our handbook.")
    agent = create_react_agent(model, tools=[docs])

A compiled graph's own ``as_tool()`` works too, but hands the agent the whole state as text.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field, field_validator

from ..errors import ConfigError
from ..state.types import passage_place
from . import build_graph, method_context
from ._common import nested_run

SOURCE_CHARS = 300  # of each source's text in the tool message (the artifact keeps it whole)


class Question(BaseModel):
    question: str = Field(description="the question, standing alone (no 'it' or 'he' that needs the conversation)")

    @field_validator("question")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        # a validation error goes back to the model as a tool message; the graph's own InputError
        # ended the agent's whole run (until 2026-11-30)
        if not v.strip():
            raise ValueError("the question is empty: ask it in words")
        return v


ARTIFACT_KEYS = ("answer", "passages", "llm_calls", "web_calls", "input_tokens", "output_tokens", "iterations",
                 "parse_failures", "final", "web_error")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what OpenAI's tool calling takes


def _where(p: dict) -> str:
    where = passage_place(p)
    return f" ({where})" if where else ""


def tool_message(out: dict, source_chars: int = SOURCE_CHARS) -> str:
    """The answer, then its sources numbered (title and the start of the text)."""
    answer = str(out.get("answer") or "").strip() or "(no answer)"
    passages = out.get("passages") or []
    if not passages:
        return answer
    lines = []
    for i, p in enumerate(passages, 1):
        text = " ".join(str(p.get("text") or "").split())
        lines.append(f"[{i}] {p.get('title') or '(untitled)'}{_where(p)}: "
                     f"{text[:source_chars]}{'...' if len(text) > source_chars else ''}")
    return answer + "\n\nSources:\n" + "\n".join(lines)


def method_tool(method: str, components: Any = None, *, name: str | None = None, description: str | None = None,
                artifact: Literal["brief", "state"] = "brief", **settings: Any) -> StructuredTool:
    """A tool that answers a question with ``method`` over ``components`` (the embedded defaults
    when None) and its run ``settings``; ``name`` defaults to ``ask_<method>``; ``artifact``: the
    answer, passages and counts (``brief``) or the whole final state. The graph keeps its own
    recursion limit (MIGRES: 75, above what its ``max_iterations`` guard, at most 10, needs): an agent's config
    carries LangGraph's default 25 whether or not the caller set it. A :class:`ConfigError` for
    an unknown method or setting."""
    if artifact not in ("brief", "state"):
        raise ConfigError(f"artifact is 'brief' or 'state'; got {artifact!r}")
    context = method_context(method, settings)
    graph = build_graph(method, components)

    def made(out: dict) -> tuple[str, dict]:
        return tool_message(out), out if artifact == "state" else {k: out[k] for k in ARTIFACT_KEYS if k in out}

    # under an agent's checkpointer the method writes checkpoints only when it stops early (nested_run)
    def run(question: str) -> tuple[str, dict]:
        return made(graph.invoke({"question": question}, context=context, **nested_run()))

    async def arun(question: str) -> tuple[str, dict]:
        return made(await graph.ainvoke({"question": question}, context=context, **nested_run()))

    tool_name = name or f"ask_{method.replace('-', '_')}"
    if not _NAME.fullmatch(tool_name):
        raise ConfigError(f"a tool name is 1 to 64 ASCII letters, digits, '_' and '-' (what OpenAI's tool calling "
                          f"takes); got {tool_name!r}")
    return StructuredTool.from_function(
        func=run, coroutine=arun, name=tool_name, args_schema=Question, response_format="content_and_artifact",
        description=description or _DEFAULT_DESCRIPTION.get(method, f"Answers a question from the documents with {method} "
                                                              "retrieval-augmented generation; returns the answer and its numbered sources."),
    )


# a method that reads no documents says so (the `none` tool claimed documents and sources until 2026-12-03)
_DEFAULT_DESCRIPTION = {"none": "Answers a question from the language model's own knowledge, reading no documents; "
                                "returns the answer alone."}
