"""State of the CRAG graph (Corrective RAG, Yan et al. 2024).

``passages`` (from :class:`RAGState`) holds what the generator received: the refined
knowledge, one passage per source document with its kept strips recomposed in order
(``source`` "corpus" for internal knowledge, "web" for external knowledge).
"""

from __future__ import annotations

from typing_extensions import NotRequired  # pydantic (Studio schemas) needs these on Python < 3.12

from .base import RAGOutput, RAGState
from .types import Passage


class CRAGState(RAGState):
    # the retriever's documents, scored by the evaluator (score in [-1, 1])
    retrieved: NotRequired[list[Passage]]
    scores: NotRequired[list[float]]
    # "correct" | "incorrect" | "ambiguous", and why
    action: NotRequired[str]
    action_reason: NotRequired[str]
    # keyword queries written for the web search
    queries: NotRequired[list[str]]
    # web results (pages fetched and extracted where they carry URLs)
    web_results: NotRequired[list[Passage]]
    # set when the web search was not configured, failed or timed out
    web_error: NotRequired[str]
    # recomposed knowledge, as the texts the generator sees
    internal_knowledge: NotRequired[str]
    external_knowledge: NotRequired[str]


class CRAGOutput(RAGOutput):
    """What a CRAG run returns: the shared output plus the evaluator's verdict and knowledge."""

    scores: NotRequired[list[float]]
    action: NotRequired[str]
    action_reason: NotRequired[str]
    queries: NotRequired[list[str]]
    web_error: NotRequired[str]
    internal_knowledge: NotRequired[str]
    external_knowledge: NotRequired[str]
