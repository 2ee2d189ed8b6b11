"""DR-RAG (Hei et al. 2024): two-stage retrieval with a pair classifier, one LLM call.

::

    START -> first_stage --sm--> generate -> END
                         \\-qdc/cis/cfs-> second_stage --qdc--> generate
                                                      \\-cis-> inverse_select -> generate
                                                      \\-cfs-> forward_select -> generate

The strategy is a run setting (``DRRAGContext.strategy``); see :mod:`ragraphs.nodes.dr_rag`.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ..components import Components, default_components
from ..nodes.dr_rag import (
    make_dr_generate,
    make_first_stage,
    make_forward_select,
    make_inverse_select,
    make_second_stage,
    strategy_of,
)
from ..settings import DRRAGContext
from ..state.base import RAGInput
from ..state.dr_rag import DRRAGOutput, DRRAGState
from ._common import routed, timed


def _after_first(state: dict) -> str:
    return "sm" if state.get("strategy") == "sm" else "two_stage"


def _after_second(state: dict) -> str:
    s = state.get("strategy") or "cfs"
    return s if s in ("qdc", "cis", "cfs") else "cfs"


def build_dr_rag_graph(components: Components | None = None, *, checkpointer=None):
    """Compile the DR-RAG graph over ``components`` (embedded defaults if None)."""
    c = components or default_components()
    g = StateGraph(DRRAGState, context_schema=DRRAGContext, input_schema=RAGInput, output_schema=DRRAGOutput)
    g.add_node("first_stage", timed("first_stage", make_first_stage(c)))
    g.add_node("second_stage", timed("second_stage", make_second_stage(c)))
    g.add_node("inverse_select", timed("inverse_select", make_inverse_select(c)))
    g.add_node("forward_select", timed("forward_select", make_forward_select(c)))
    g.add_node("generate", timed("generate", make_dr_generate(c)))
    g.add_edge(START, "first_stage")
    after_first = {"sm": "generate", "two_stage": "second_stage"}
    after_second = {"qdc": "generate", "cis": "inverse_select", "cfs": "forward_select"}
    g.add_conditional_edges("first_stage", routed("first_stage", _after_first, after_first), after_first)
    g.add_conditional_edges("second_stage", routed("second_stage", _after_second, after_second), after_second)
    g.add_edge("inverse_select", "generate")
    g.add_edge("forward_select", "generate")
    g.add_edge("generate", END)
    return g.compile(checkpointer=checkpointer, name="dr-rag")


__all__ = ["DRRAGContext", "build_dr_rag_graph", "graph", "strategy_of"]

graph = build_dr_rag_graph()
