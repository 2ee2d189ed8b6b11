"""ERM4, the four-module synergy for RAG (Shi et al. 2024), as a LangGraph graph.

::

    rewrite -> memory_check -+- external ----> retrieve -+-> filter -+- answer --> generate -+-> memory_update
                             +- memory_only -------------+           +- backoff -> backoff --+

- ``rewrite`` (Query Rewriter+, section 3.1): one LLM call gives a clarified rewritten
  question and up to three search-friendly queries (``rewritten**q1**q2**q3``).
- ``memory_check`` (Retrieval Trigger, section 3.4): for each query, popularity = number
  of reservoir entries whose title has cosine >= ``tau`` with it (or, ``trigger="evaluator"``,
  whose title and content the evaluator judge scores >= ``tau``); inside the knowledge
  boundary when popularity >= ``theta`` (the reservoir's knowledge is used), outside
  otherwise (external retrieval). tau 0.75 and theta 1 are calibrated for MiniLM on 2Wiki
  dev (``bench/erm4_trigger_calibration.py``); the paper's 0.6 and 3 are settings.
- ``retrieve``: the outside queries' top ``k`` from the vector store and/or web search (web
  results' pages fetched and extracted with the guarded fetcher).
- ``filter`` (Knowledge Filter, section 3.2): memory and external knowledge in the paper's
  mixed order, kept only when judged relevant to the rewritten question
  (``c.judge("evaluator")``; ``filter_judge="nli"`` for entailment, or the paper's NLI prompt
  with ``filter="llm"``).
- ``generate``: the rewritten question with the kept knowledge; ``backoff`` answers
  without external knowledge when nothing survived the filter.
- ``memory_update`` (Memory Knowledge Reservoir, section 3.3): the kept external
  title-content pairs are stored; a newer entry replaces the one with the same title; beyond
  ``reservoir_max_entries`` the least recently used entries are evicted.

The reservoir is a SQLite file shared safely by concurrent processes
(:mod:`ragraphs.tools.reservoir`); pass your own as ``Components(extra={"reservoir": r})``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph

from ..components import Components, default_components
from ..nodes.erm4 import (
    make_backoff_generate,
    make_external_retrieve,
    make_filter,
    make_generate,
    make_memory_check,
    make_memory_update,
    make_rewrite,
    route_after_filter,
    route_after_memory,
)
from ..settings import RAGContext
from ..state.base import RAGInput
from ..state.erm4 import ERM4Output, ERM4State
from ._common import routed, timed


@dataclass(kw_only=True)
class ERM4Context(RAGContext):
    """ERM4's run settings, with the paper's defaults where it gives them (sections 4.1, 6)."""

    k: int = field(default=5, metadata={"description": "external knowledge per outside query (paper: n=5 in section 6)"})
    tau: float = field(
        default=0.75,
        metadata={"description": "Retrieval Trigger: match threshold (title cosine, or evaluator score); 0.75 calibrated "
                  "for MiniLM on 2Wiki dev (bench/erm4_trigger_calibration.py; paper: 0.6)"},
    )
    trigger: Literal["title", "evaluator"] = field(
        default="title", metadata={"description": "Retrieval Trigger match: title cosine (paper) | evaluator judge on title+content"}
    )
    trigger_candidates: int = field(
        default=10, metadata={"description": "evaluator trigger: entries pre-selected by title cosine per query"}
    )
    theta: int = field(
        default=1, metadata={"description": "Retrieval Trigger: popularity threshold, inside when >= theta (paper: 3)"}
    )
    memory_k: int = field(default=10, metadata={"description": "reservoir entries used per inside query (best first)"})
    max_queries: int = field(default=3, metadata={"description": "queries kept from the rewriter"})
    include_question_query: bool = field(
        default=False, metadata={"description": "also search with the original question (not in the paper)"}
    )
    rewrite_max_tokens: int = field(default=80, metadata={"description": "tokens the rewriter may write"})
    max_knowledge: int = field(
        default=10, metadata={"description": "knowledge instances (mixed order) passed to the filter and reader (paper: 30)"}
    )
    filter: Literal["judge", "llm", "none"] = field(
        default="judge", metadata={"description": "Knowledge Filter: nli judge | the paper's NLI prompt | none"}
    )
    filter_judge: Literal["nli", "evaluator"] = field(
        default="evaluator", metadata={"description": "judge filter role: nli (knowledge entails question) | evaluator (relevance)"}
    )
    filter_threshold: float | None = field(
        default=0.5,
        metadata={"description": "judge filter: keep when the judge's score is >= this (None: the judge's validated "
                  "threshold); 0.5 for the evaluator from bench/erm4_filter_threshold.py on 2Wiki+HotpotQA dev"},
    )
    hypothesis: Literal["strong", "weak"] = field(
        default="strong", metadata={"description": "llm filter: strong (contains answers) or weak (possibly aids)"}
    )
    answer_question: Literal["rewritten", "original"] = field(
        default="rewritten", metadata={"description": "which question the reader answers (paper: rewritten)"}
    )
    external: Literal["corpus", "web", "both"] = field(
        default="corpus", metadata={"description": "external knowledge: the vector store, web search, or both"}
    )
    web_timeout: float = field(default=10.0, metadata={"description": "seconds one web search may take"})
    fetch_pages: bool = field(default=True, metadata={"description": "web: fetch result URLs and use the page text"})
    fetch_timeout: float = field(default=5.0, metadata={"description": "seconds per page fetch (socket timeout)"})
    fetch_allow_private: bool = field(
        default=False, metadata={"description": "allow fetching pages on private or loopback addresses"}
    )
    use_memory: bool = field(default=True, metadata={"description": "use the Memory Knowledge Reservoir and trigger"})
    update_memory: bool = field(default=True, metadata={"description": "store kept knowledge in the reservoir"})
    reservoir_path: str = field(
        default="", metadata={"description": "reservoir SQLite file (default $RAGRAPHS_HOME/erm4/reservoir.sqlite3)"}
    )
    reservoir_collection: str = field(default="default", metadata={"description": "reservoir collection name"})
    reservoir_max_entries: int = field(
        default=10000, metadata={"description": "reservoir bound: least recently used entries beyond it are evicted (0: none)"}
    )


def build_erm4_graph(components: Components | None = None, *, checkpointer=None):
    """Compile the ERM4 graph over ``components`` (embedded defaults if None)."""
    c = components or default_components()
    g = StateGraph(ERM4State, context_schema=ERM4Context, input_schema=RAGInput, output_schema=ERM4Output)
    g.add_node("rewrite", timed("rewrite", make_rewrite(c)))
    g.add_node("memory_check", timed("memory_check", make_memory_check(c)))
    g.add_node("retrieve", timed("retrieve", make_external_retrieve(c)))
    g.add_node("filter", timed("filter", make_filter(c)))
    g.add_node("generate", timed("generate", make_generate(c)))
    g.add_node("backoff", timed("backoff", make_backoff_generate(c)))
    g.add_node("memory_update", timed("memory_update", make_memory_update(c)))
    g.add_edge(START, "rewrite")
    g.add_edge("rewrite", "memory_check")
    after_memory = {"external": "retrieve", "memory_only": "filter"}
    g.add_conditional_edges("memory_check", routed("memory_check", route_after_memory, after_memory), after_memory)
    g.add_edge("retrieve", "filter")
    after_filter = {"answer": "generate", "backoff": "backoff"}
    g.add_conditional_edges("filter", routed("filter", route_after_filter, after_filter), after_filter)
    g.add_edge("generate", "memory_update")
    g.add_edge("backoff", "memory_update")
    g.add_edge("memory_update", END)
    return g.compile(checkpointer=checkpointer, name="erm4")


graph = build_erm4_graph()
