"""CRAG, Corrective Retrieval-Augmented Generation (Yan et al. 2024), as a LangGraph graph.

::

    retrieve -> evaluate -+- correct ---> refine ------------------------------+-> generate
                          +- incorrect -> rewrite -> web_search -> refine_web --+
                          +- ambiguous -> refine -> rewrite -> web_search -> refine_web

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

from dataclasses import dataclass, field

from langgraph.graph import END, START, StateGraph

from ..components import Components, default_components
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
from ..settings import RAGContext
from ..state.base import RAGInput
from ..state.crag import CRAGOutput, CRAGState
from ._common import routed, timed

# The paper's thresholds for its T5-large evaluator on PopQA (Appendix B).
PAPER_UPPER, PAPER_LOWER = 0.59, -0.9
# The same rule (`ragraphs calibrate-crag`, unit=question, alpha=1) fitted for the shipped
# evaluator on the whole popqa.dev.jsonl (499 questions, pooled corpus, dense top-4):
# upper 0.971, lower -0.9708: Correct 89.2%, Ambiguous 9.8%, Incorrect 1.0% of the questions,
# with the paper's values 94.6% / 4.2% / 1.2% (see docs/crag.md).
CALIBRATED_UPPER, CALIBRATED_LOWER = 0.97, -0.97


@dataclass(kw_only=True)
class CRAGContext(RAGContext):
    """CRAG's run settings: the paper's defaults (Appendix B), thresholds calibrated by its rule."""

    upper: float = field(
        default=CALIBRATED_UPPER,
        metadata={"description": "Correct when any document's evaluator score is above this (paper: 0.59)"},
    )
    lower: float = field(
        default=CALIBRATED_LOWER,
        metadata={"description": "Incorrect when every document's evaluator score is below this (paper: -0.9)"},
    )
    strip_top_k: int = field(default=5, metadata={"description": "knowledge strips kept by refinement"})
    strip_threshold: float = field(default=-0.5, metadata={"description": "strips must score above this to be kept"})
    strip_sentences: int = field(default=3, metadata={"description": "sentences per strip for documents longer than two"})
    web: str = field(
        default="",
        metadata={"description": "web search when the graph has none: offline:PATH | searxng:URL | ddg | none (default $RAGRAPHS_WEB)"},
    )
    web_k: int = field(default=5, metadata={"description": "web results used (Wikipedia pages first)"})
    web_timeout: float = field(default=10.0, metadata={"description": "seconds one web search may take"})
    fetch_pages: bool = field(default=True, metadata={"description": "fetch result URLs and extract their text"})
    fetch_timeout: float = field(default=5.0, metadata={"description": "seconds per page fetch (socket timeout)"})
    fetch_max_bytes: int = field(default=2_000_000, metadata={"description": "size cap of one fetched page"})
    fetch_allow_private: bool = field(
        default=False, metadata={"description": "allow fetching pages on private or loopback addresses"}
    )
    rewrite_max_tokens: int = field(default=24, metadata={"description": "tokens the query rewriter may write"})
    web_fallback: str = field(
        default="internal",
        metadata={"description": "Incorrect route with no web results: internal (refine the retrieved documents) | none"},
    )


def build_crag_graph(components: Components | None = None, *, checkpointer=None):
    """Compile the CRAG graph over ``components`` (embedded defaults if None)."""
    c = components or default_components()
    g = StateGraph(CRAGState, context_schema=CRAGContext, input_schema=RAGInput, output_schema=CRAGOutput)
    g.add_node("retrieve", timed("retrieve", make_crag_retrieve(c)))
    g.add_node("evaluate", timed("evaluate", make_evaluate(c)))
    g.add_node("refine", timed("refine", make_refine(c)))
    g.add_node("rewrite", timed("rewrite", make_rewrite(c)))
    g.add_node("web_search", timed("web_search", make_web_search_node(c)))
    g.add_node("refine_web", timed("refine_web", make_refine_web(c)))
    g.add_node("generate", timed("generate", make_generate(c)))
    g.add_edge(START, "retrieve")
    g.add_edge("retrieve", "evaluate")
    actions = {CORRECT: "refine", INCORRECT: "rewrite", AMBIGUOUS: "refine"}
    g.add_conditional_edges("evaluate", routed("evaluate", route_action, actions), actions)
    after_refine = {"web": "rewrite", "generate": "generate"}
    g.add_conditional_edges("refine", routed("refine", route_after_refine, after_refine), after_refine)
    g.add_edge("rewrite", "web_search")
    g.add_edge("web_search", "refine_web")
    g.add_edge("refine_web", "generate")
    g.add_edge("generate", END)
    # a straight pipeline of at most 7 steps: no loops, so a small recursion limit suffices
    return g.compile(checkpointer=checkpointer, name="crag").with_config({"recursion_limit": 20})


graph = build_crag_graph()
