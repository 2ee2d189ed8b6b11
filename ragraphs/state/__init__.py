"""Typed graph states: shared types and one TypedDict per method."""

from .base import RAGInput, RAGOutput, RAGState
from .types import Passage, add_trace, format_passages, make_passage, merge_passages, passage_id, reset

__all__ = [
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
]
