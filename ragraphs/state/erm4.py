"""State of the ERM4 graph (four-module synergy: Query Rewriter+, Knowledge Filter,
Memory Knowledge Reservoir, Retrieval Trigger).

``passages`` (from :class:`RAGState`) is the knowledge handed to the generator: what the
Knowledge Filter kept, in mixed order; empty when the filter dropped everything
(``backoff``).
"""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict  # pydantic (Studio schemas) needs these on Python < 3.12

from .base import RAGOutput, RAGState
from .types import Passage


class QueryRoute(TypedDict):
    """The Retrieval Trigger's decision for one generated query."""

    query: str
    popularity: int  # reservoir entries whose title has cosine >= tau with the query


class ERM4State(RAGState):
    # Query Rewriter+: the clarified question and the search-friendly queries
    rewritten_question: NotRequired[str]
    queries: NotRequired[list[str]]
    # Retrieval Trigger: queries inside (memory) / outside (external) the knowledge boundary
    inside: NotRequired[list[QueryRoute]]
    outside: NotRequired[list[QueryRoute]]
    # knowledge before filtering, by origin (each list best first per query)
    memory_knowledge: NotRequired[list[Passage]]
    external_knowledge: NotRequired[list[Passage]]
    # Knowledge Filter: how many instances were dropped; backoff when none survived
    filtered_out: NotRequired[int]
    backoff: NotRequired[bool]
    # the inside queries whose memory the filter dropped all of, searched outside after all
    # (``memory_recheck``), and the filter's passes (1, or 2 with a recheck)
    memory_missed: NotRequired[list[QueryRoute]]
    filter_passes: NotRequired[int]
    # Memory Knowledge Reservoir update: counts from the last write
    memory_update: NotRequired[dict]
    # set when a web search failed or timed out (the run goes on without its knowledge)
    web_error: NotRequired[str]


class ERM4Output(RAGOutput):
    """What an ERM4 run returns: the common output plus the four modules' decisions."""

    rewritten_question: NotRequired[str]
    queries: NotRequired[list[str]]
    inside: NotRequired[list[QueryRoute]]
    outside: NotRequired[list[QueryRoute]]
    memory_knowledge: NotRequired[list[Passage]]
    external_knowledge: NotRequired[list[Passage]]
    filtered_out: NotRequired[int]
    backoff: NotRequired[bool]
    memory_missed: NotRequired[list[QueryRoute]]
    memory_update: NotRequired[dict]
    web_error: NotRequired[str]
