"""DR-RAG (Hei et al. 2024): a two-stage retrieval cascade with a pair classifier, one LLM call.

::

    START -> first_stage -> [rerank] --sm--> generate -> END
                                     \\-qdc/cis/cfs-> second_stage -> [rerank_second]
                                          --qdc--> qdc_select -> generate
                                          --cis--> qdc_select -> inverse_select -> generate
                                          --cfs--> forward_select -> generate

``rerank`` / ``rerank_second`` run when the ``rerank`` setting names a re-ranker (default:
the shipped cross-encoder evaluator). The strategy is a run setting
(``DRRAGContext.strategy``); see :mod:`ragraphs.nodes.dr_rag`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph

from ..components import Components, default_components
from ..nodes.dr_rag import (
    make_dr_generate,
    make_first_stage,
    make_forward_select,
    make_inverse_select,
    make_qdc_select,
    make_rerank_first,
    make_rerank_second,
    make_second_stage,
    second_rerank_of,
    strategy_of,
)
from ..nodes.rerank import rerank_spec
from ..settings import RAGContext
from ..state.base import RAGInput
from ..state.dr_rag import DRRAGOutput, DRRAGState
from ._common import routed, timed


@dataclass(kw_only=True)
class DRRAGContext(RAGContext):
    """DR-RAG settings. ``k`` is the most documents handed to the LLM (the paper's top-k)."""

    strategy: Literal["sm", "qdc", "cis", "cfs"] = field(
        default="cfs",
        metadata={"description": "sm: top-k | qdc: query-document concatenation | cis: inverse selection | cfs: forward selection"},
    )
    retrieval: Literal["dense", "bm25", "hybrid"] = field(
        default="hybrid", metadata={"description": "first-stage candidate retrieval: dense (MiniLM), bm25, or hybrid (both, fused)"}
    )
    second_retrieval: Literal["same", "dense", "bm25", "hybrid"] = field(
        default="same", metadata={"description": "second-stage retrieval for the <q, d_i> queries; same = retrieval"}
    )
    fusion_k: int | None = field(
        default=60,
        metadata={"description": "hybrid fusion: reciprocal rank, score = sum 1/(fusion_k + rank) over the dense and BM25 "
                                 "lists; none = the retriever's own hybrid mode"},
    )
    rerank: str = field(
        default="none",
        metadata={"description": "re-ranker of both stages' candidates: none | evaluator (the shipped cross-encoder) | "
                                 "a CrossEncoder directory or name"},
    )
    rerank_depth: int = field(
        default=30, metadata={"description": "candidate depth: first-stage candidates retrieved for the re-ranker"}
    )
    second_rerank: Literal["question", "concat", "none"] = field(
        default="question",
        metadata={"description": "second-stage candidates scored against the question, against q + d_i, or kept in retrieval order"},
    )
    k1: int | None = field(
        default=None, metadata={"description": "static-relevant documents of the first stage (default ceil(k/2))"}
    )
    k2: int = field(default=10, metadata={"description": "second-stage candidates retrieved per <q, d_i> query"})
    pair_threshold: float | None = field(
        default=None,
        metadata={"description": "pair cut: the classifier accepts C(q, d_i, d') >= this, in [0, 1] (default: calibrated on the dev files)"},
    )
    pick: Literal["first", "best"] = field(
        default="first",
        metadata={"description": "CFS: per d_i, the first accepted candidate in (re-ranked) order (Algorithm 1) or the best scored"},
    )
    fill: bool = field(
        default=True,
        metadata={"description": "CFS: fill the rest of the k budget with the next re-ranked first-stage candidates (SM's)"},
    )
    concat_chars: int = field(
        default=1000, metadata={"description": "characters of d_i appended to the query in the second stage"}
    )


def _reranks(runtime) -> bool:
    return rerank_spec(getattr(runtime, "context", None)) != "none"


def _after_first(state: dict, runtime=None) -> str:
    if _reranks(runtime):
        return "rerank"
    return _after_rerank(state)


def _after_rerank(state: dict) -> str:
    return "sm" if state.get("strategy") == "sm" else "two_stage"


def _after_second(state: dict, runtime=None) -> str:
    if second_rerank_of(getattr(runtime, "context", None)) != "none":
        return "rerank_second"
    return _select(state)


def _select(state: dict) -> str:
    s = state.get("strategy") or "cfs"
    return s if s in ("qdc", "cis", "cfs") else "cfs"


def _after_qdc(state: dict) -> str:
    return "cis" if state.get("strategy") == "cis" else "qdc"


def build_dr_rag_graph(components: Components | None = None, *, checkpointer=None):
    """Compile the DR-RAG graph over ``components`` (embedded defaults if None)."""
    c = components or default_components()
    g = StateGraph(DRRAGState, context_schema=DRRAGContext, input_schema=RAGInput, output_schema=DRRAGOutput)
    g.add_node("first_stage", timed("first_stage", make_first_stage(c)))
    g.add_node("rerank", timed("rerank", make_rerank_first(c)))
    g.add_node("second_stage", timed("second_stage", make_second_stage(c)))
    g.add_node("rerank_second", timed("rerank_second", make_rerank_second(c)))
    g.add_node("qdc_select", timed("qdc_select", make_qdc_select(c)))
    g.add_node("inverse_select", timed("inverse_select", make_inverse_select(c)))
    g.add_node("forward_select", timed("forward_select", make_forward_select(c)))
    g.add_node("generate", timed("generate", make_dr_generate(c)))
    g.add_edge(START, "first_stage")
    after_rerank = {"sm": "generate", "two_stage": "second_stage"}
    after_first = {"rerank": "rerank", **after_rerank}
    select = {"qdc": "qdc_select", "cis": "qdc_select", "cfs": "forward_select"}
    after_second = {"rerank_second": "rerank_second", **select}
    g.add_conditional_edges("first_stage", routed("first_stage", _after_first, after_first), after_first)
    g.add_conditional_edges("rerank", routed("rerank", _after_rerank, after_rerank), after_rerank)
    g.add_conditional_edges("second_stage", routed("second_stage", _after_second, after_second), after_second)
    g.add_conditional_edges("rerank_second", routed("rerank_second", _select, select), select)
    after_qdc = {"qdc": "generate", "cis": "inverse_select"}
    g.add_conditional_edges("qdc_select", routed("qdc_select", _after_qdc, after_qdc), after_qdc)
    g.add_edge("inverse_select", "generate")
    g.add_edge("forward_select", "generate")
    g.add_edge("generate", END)
    return g.compile(checkpointer=checkpointer, name="dr-rag")


__all__ = ["DRRAGContext", "build_dr_rag_graph", "graph", "strategy_of"]

graph = build_dr_rag_graph()
