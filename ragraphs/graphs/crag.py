"""CRAG, Corrective Retrieval-Augmented Generation (Yan et al. 2024), as a LangGraph graph.

::

    start -> retrieve -> [rerank ->] evaluate -+- correct ---> refine ------------------------------+-> generate
                                               +- incorrect -> rewrite -> web_search -> refine_web --+
                                               +- ambiguous -> refine -> rewrite -> web_search -> refine_web

- ``start``: the run's entry node (``graphs._common.start_at``): checks the question and
  the settings; on a used thread it sets the earlier run's state back to empty.
- ``rerank`` (only with the ``rerank`` setting, ``none`` by default): the re-ranker reads a
  wider list (``rerank_depth``) and keeps the best ``k`` for the evaluator, as in vanilla.
- ``evaluate``: the retrieval evaluator (``c.judge("evaluator")``, scores in [-1, 1])
  scores every retrieved document; Correct if any score > ``upper``, Incorrect if all are
  < ``lower``, Ambiguous otherwise (paper section 4.3).
- ``refine``: decompose-then-recompose of the retrieved documents into internal knowledge
  (strips scored by the evaluator, top ``strip_top_k`` above ``strip_threshold``, in order).
- ``rewrite``: the paper's few-shot keyword-query prompt (Appendix A).
- ``web_search``: the configured backend (``c.web_search``, or the ``web`` setting /
  ``RAGRAPHS_WEB``: ``offline:PATH``, ``searxng:URL``, ``ddg``), Wikipedia first, URLs
  fetched and extracted by the safe fetcher.
- ``refine_web``: the same refinement on the web results (external knowledge); Ambiguous
  combines both. If the web gave nothing the run answers from what it has and the trace
  says why.
- ``generate``: the shared answer node over ``passages`` (the refined knowledge).
"""

from __future__ import annotations

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from ..components import Components
from ..nodes.crag import (
    AMBIGUOUS,
    CORRECT,
    INCORRECT,
    make_crag_retrieve,
    make_evaluate,
    make_refine,
    make_refine_web,
    make_rewrite,
    make_web_search_node,
    route_action,
    route_after_refine,
)
from ..nodes.generate import make_generate
from ..nodes.rerank import make_rerank, rerank_spec
from ..settings import CALIBRATED_LOWER, CALIBRATED_UPPER, PAPER_LOWER, PAPER_UPPER, CRAGContext, context_of
from ..state.base import RAGInput
from ..state.crag import CRAGOutput, CRAGState
from ..state.types import reset
from ._common import Routes, components_of, routed, start_at, timed

def _after_retrieve(state: dict, runtime=None) -> str:
    return "evaluate" if rerank_spec(context_of(runtime, CRAGContext)) == "none" else "rerank"


def _rerank_keeps_retrieved(state: dict, ranked: list, kept: list) -> dict:
    """CRAG's evaluator reads ``retrieved``; ``passages`` stays empty until the refinement."""
    return {"retrieved": kept, "passages": reset([])}


def build_crag_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph[CRAGState, CRAGContext, RAGInput, CRAGOutput]:
    """Compile the CRAG graph over ``components`` (embedded defaults if None)."""
    c = components_of(components, "build_crag_graph")
    g = StateGraph(CRAGState, context_schema=CRAGContext, input_schema=RAGInput, output_schema=CRAGOutput)
    g.add_node("retrieve", timed("retrieve", make_crag_retrieve(c)))
    # the `rerank` setting (none by default): the evaluator keeps the best k of a wider list
    g.add_node("rerank", timed("rerank", make_rerank(c, source="retrieved", extra=_rerank_keeps_retrieved)))
    g.add_node("evaluate", timed("evaluate", make_evaluate(c)))
    g.add_node("refine", timed("refine", make_refine(c)))
    g.add_node("rewrite", timed("rewrite", make_rewrite(c)))
    g.add_node("web_search", timed("web_search", make_web_search_node(c)))
    g.add_node("refine_web", timed("refine_web", make_refine_web(c)))
    g.add_node("generate", timed("generate", make_generate(c)))
    start_at(g, "retrieve", settings=CRAGContext)
    after_retrieve: Routes = {"rerank": "rerank", "evaluate": "evaluate"}
    g.add_conditional_edges("retrieve", routed("retrieve", _after_retrieve, after_retrieve), after_retrieve)
    g.add_edge("rerank", "evaluate")
    actions: Routes = {CORRECT: "refine", INCORRECT: "rewrite", AMBIGUOUS: "refine"}
    g.add_conditional_edges("evaluate", routed("evaluate", route_action, actions), actions)
    after_refine: Routes = {"web": "rewrite", "generate": "generate"}
    g.add_conditional_edges("refine", routed("refine", route_after_refine, after_refine), after_refine)
    g.add_edge("rewrite", "web_search")
    g.add_edge("web_search", "refine_web")
    g.add_edge("refine_web", "generate")
    g.add_edge("generate", END)
    # a straight pipeline of at most 9 steps (with the entry node start): no loops, so a small recursion limit suffices
    return g.compile(checkpointer=checkpointer, name="crag").with_config({"recursion_limit": 20})


graph = build_crag_graph()

__all__ = [
    "CALIBRATED_LOWER",
    "CALIBRATED_UPPER",
    "CRAGContext",
    "PAPER_LOWER",
    "PAPER_UPPER",
    "build_crag_graph",
    "graph",
]
