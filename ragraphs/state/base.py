"""State of the baseline graphs (vanilla RAG and no-retrieval).

Every method's state extends :class:`RAGState`, so the CLI and the evaluator can read
``answer``, ``passages``, ``llm_calls``, ``parse_failures`` and ``trace`` the same way for all methods.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import NotRequired, TypedDict  # pydantic (Studio schemas) needs these on Python < 3.12

from .types import Passage, add_trace, merge_passages


class RAGInput(TypedDict):
    # the description is what Studio's input form shows beside the field
    question: Annotated[str, Field(description="The question to answer from the indexed passages.")]


class RAGState(TypedDict):
    question: str
    # passages handed to the generator (de-duplicated by id)
    passages: NotRequired[Annotated[list[Passage], merge_passages]]
    answer: NotRequired[str]
    llm_calls: NotRequired[Annotated[int, operator.add]]
    web_calls: NotRequired[Annotated[int, operator.add]]
    input_tokens: NotRequired[Annotated[int, operator.add]]
    output_tokens: NotRequired[Annotated[int, operator.add]]
    # structured LLM decisions that needed the lenient reader or the repair, or failed
    parse_failures: NotRequired[Annotated[int, operator.add]]
    # one entry per node run: {"node", "elapsed_s", ...node-specific details}
    trace: NotRequired[Annotated[list[dict], add_trace]]
    # the settings the run started with, recorded by its first node: the conditional edges
    # read them when LangGraph runs one without the run's context (update_state, Studio's edits)
    run_settings: NotRequired[dict[str, Any]]


class RAGOutput(TypedDict):
    question: str
    answer: str
    passages: list[Passage]
    llm_calls: int
    web_calls: int
    input_tokens: int
    output_tokens: int
    parse_failures: int
    trace: list[dict]
