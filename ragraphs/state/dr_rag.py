"""State of the DR-RAG graph (Dynamic-Relevant RAG, Hei et al. 2024).

``passages`` (from :class:`RAGState`) is the paper's context ``Cnt``: the documents handed
to the LLM, in the order they were added (first-stage documents, then the second-stage
documents each strategy keeps). The evaluator computes recall and the number of documents
on it. The other fields keep every intermediate step visible in Studio and in traces.
"""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict  # pydantic (Studio schemas) needs these on Python < 3.12

from .base import RAGOutput, RAGState
from .types import Passage


class PairScore(TypedDict):
    """One classifier decision C(q, d_i, d'_ij): a first-stage and a second-stage document."""

    first: str  # id of the static-relevant document d_i
    second: str  # id of the candidate dynamic-relevant document d'_ij
    score: float  # the pair classifier's score in [0, 1]
    accepted: bool  # score (+ link_bonus) >= the run's acceptance threshold
    link_bonus: NotRequired[float]  # title links: d_i names d''s title (the bonus added before the cut)
    bridge_bonus: NotRequired[float]  # bridge names: the bonus added before the cut (see DRRAGContext.bridge_bonus)


class DRRAGState(RAGState):
    # the strategy this run followed: "sm" | "qdc" | "cis" | "cfs"
    strategy: NotRequired[str]
    # the first stage's candidates (in re-ranked order when a re-ranker ran); the first k1
    # are the static-relevant documents, the next ones fill CFS's budget
    candidates: NotRequired[list[Passage]]
    # the re-ranker's score of each passage id scored against the question
    rerank_scores: NotRequired[dict[str, float]]
    # static-relevant documents of the first retrieval stage, d_1 .. d_k1
    first_stage: NotRequired[list[Passage]]
    # second retrieval stage: for each first-stage document (same order), the documents
    # retrieved with the query concatenated with that document, d'_i1 .. d'_ik2
    second_stage: NotRequired[list[list[Passage]]]
    # the classifier's decisions (CIS and CFS), and the threshold they were taken at
    classifier_scores: NotRequired[list[PairScore]]
    pair_threshold: NotRequired[float]
    # ids of the second-stage documents dropped (CIS) or never accepted (CFS) and not handed on by the fill
    rejected: NotRequired[list[str]]


class DRRAGOutput(RAGOutput, total=False):
    """What a DR-RAG run returns: the common output plus its stages and decisions."""

    strategy: str
    candidates: list[Passage]
    rerank_scores: dict[str, float]
    first_stage: list[Passage]
    second_stage: list[list[Passage]]
    classifier_scores: list[PairScore]
    pair_threshold: float
    rejected: list[str]
