"""DR-RAG (Hei et al. 2024): a two-stage retrieval cascade with a pair classifier, one LLM call.

::

    START -> start -> first_stage -> [rerank] --sm--> generate -> END
                                     \\-qdc/cis/cfs-> second_stage -> [rerank_second]
                                          --qdc--> qdc_select -> generate
                                          --cis--> qdc_select -> inverse_select -> generate
                                          --cfs--> forward_select -> generate

``rerank`` / ``rerank_second`` run when the ``rerank`` setting names a re-ranker (default
``none``; ``evaluator`` is the shipped cross-encoder). The strategy is a run setting
(``DRRAGContext.strategy``); see :mod:`ragraphs.nodes.dr_rag`. Title links (``link_*``
settings, on by default, not in the paper) work inside ``first_stage``, ``second_stage`` and
the selections; see :mod:`ragraphs.nodes.dr_rag_links`.
"""

from __future__ import annotations

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from ..components import Components
from ..nodes.dr_rag import (
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
from ..nodes.dr_rag_generate import make_dr_generate
from ..nodes.rerank import rerank_spec
from ..settings import DRRAGContext, context_of
from ..state.base import RAGInput
from ..state.dr_rag import DRRAGOutput, DRRAGState
from ._common import Routes, components_of, routed, start_at, timed


def _reranks(runtime) -> bool:
    return rerank_spec(context_of(runtime, DRRAGContext)) != "none"


def _after_first(state: dict, runtime=None) -> str:
    if _reranks(runtime):
        return "rerank"
    return _after_rerank(state)


def _after_rerank(state: dict) -> str:
    return "sm" if state.get("strategy") == "sm" else "two_stage"


def _after_second(state: dict, runtime=None) -> str:
    if second_rerank_of(context_of(runtime, DRRAGContext)) != "none":
        return "rerank_second"
    return _select(state)


def _select(state: dict) -> str:
    s = state.get("strategy") or "cfs"
    return s if s in ("qdc", "cis", "cfs") else "cfs"


def _after_qdc(state: dict) -> str:
    return "cis" if state.get("strategy") == "cis" else "qdc"


def build_dr_rag_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph[DRRAGState, DRRAGContext, RAGInput, DRRAGOutput]:
    """Compile the DR-RAG graph over ``components`` (embedded defaults if None)."""
    c = components_of(components, "build_dr_rag_graph")
    g = StateGraph(DRRAGState, context_schema=DRRAGContext, input_schema=RAGInput, output_schema=DRRAGOutput)
    g.add_node("first_stage", timed("first_stage", make_first_stage(c)))
    g.add_node("rerank", timed("rerank", make_rerank_first(c)))
    g.add_node("second_stage", timed("second_stage", make_second_stage(c)))
    g.add_node("rerank_second", timed("rerank_second", make_rerank_second(c)))
    g.add_node("qdc_select", timed("qdc_select", make_qdc_select(c)))
    g.add_node("inverse_select", timed("inverse_select", make_inverse_select(c)))
    g.add_node("forward_select", timed("forward_select", make_forward_select(c)))
    g.add_node("generate", timed("generate", make_dr_generate(c)))
    start_at(g, "first_stage", settings=DRRAGContext)
    after_rerank: Routes = {"sm": "generate", "two_stage": "second_stage"}
    after_first: Routes = {"rerank": "rerank", **after_rerank}
    select: Routes = {"qdc": "qdc_select", "cis": "qdc_select", "cfs": "forward_select"}
    after_second: Routes = {"rerank_second": "rerank_second", **select}
    g.add_conditional_edges("first_stage", routed("first_stage", _after_first, after_first), after_first)
    g.add_conditional_edges("rerank", routed("rerank", _after_rerank, after_rerank), after_rerank)
    g.add_conditional_edges("second_stage", routed("second_stage", _after_second, after_second), after_second)
    g.add_conditional_edges("rerank_second", routed("rerank_second", _select, select), select)
    after_qdc: Routes = {"qdc": "generate", "cis": "inverse_select"}
    g.add_conditional_edges("qdc_select", routed("qdc_select", _after_qdc, after_qdc), after_qdc)
    g.add_edge("inverse_select", "generate")
    g.add_edge("forward_select", "generate")
    g.add_edge("generate", END)
    return g.compile(checkpointer=checkpointer, name="dr-rag")


__all__ = ["DRRAGContext", "build_dr_rag_graph", "graph", "strategy_of"]

graph = build_dr_rag_graph()
