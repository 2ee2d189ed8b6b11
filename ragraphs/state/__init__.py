"""Typed graph states: shared types and one TypedDict per method."""

from .base import RAGInput, RAGOutput, RAGState
from .types import Node, Passage, add_trace, format_passages, make_passage, merge_passages, passage_id, reset, with_score, written

__all__ = [
    "Node",
    "Passage",
    "RAGInput",
    "RAGOutput",
    "RAGState",
    "add_trace",
    "format_passages",
    "make_passage",
    "merge_passages",
    "passage_id",
    "reset",
    "written",
    "with_score",
]
