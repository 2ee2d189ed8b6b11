"""ERM4, the four-module synergy for RAG (Shi et al. 2024), as a LangGraph graph.

::

    start -> rewrite -> memory_check -+- external ----> retrieve -+-> filter -+- answer --> generate -+-> memory_update
                                      +- memory_only -------------+     ^     +- backoff -> backoff --+
                                                                        +-----+- recheck (once)

- ``start``: the run's entry node (``graphs._common.start_at``): checks the question and
  the settings; on a used thread it sets the earlier run's state back to empty.
- ``rewrite`` (Query Rewriter+, section 3.1): one LLM call gives a clarified rewritten
  question and up to three search-friendly queries (JSON under a schema; the paper's
  ``rewritten**q1**q2**q3`` is still read from a model that writes it).
- ``memory_check`` (Retrieval Trigger, section 3.4): for each query, popularity = number
  of reservoir entries whose title has cosine >= ``tau`` with it (or, ``trigger="evaluator"``,
  whose title and content the evaluator judge scores >= ``tau``); inside the knowledge
  boundary when popularity >= ``theta`` (the reservoir's knowledge is used), outside
  otherwise (external retrieval). tau is the paper's 0.6 (measured against 0.475-1.0 with
  ``bench/erm4_efficiency.py`` on 2Wiki dev); theta is 1, calibrated for MiniLM on 2Wiki dev
  (``bench/erm4_trigger_calibration.py``; the paper's 3 is a setting).
- ``retrieve``: the outside queries' top ``k`` from the vector store (re-ranked with the
  ``rerank`` setting) and/or web search (web results' pages fetched and extracted with the
  guarded fetcher, each cut to the paragraphs BM25 ranks best for its query, section 6).
- ``filter`` (Knowledge Filter, section 3.2): memory and external knowledge in the paper's
  mixed order, kept only when judged relevant to the rewritten question
  (``c.judge("evaluator")``; ``filter_judge="nli"`` for entailment, or the paper's NLI prompt
  with ``filter="llm"``).
- ``recheck`` (not in the paper; ``memory_recheck``, on by default): an inside query whose
  memory the filter dropped all of goes to ``retrieve`` after all, once, and the filter reads
  what it found beside what it kept; the trigger had matched a stored title, often another
  entity's, and the paper then answered without knowledge.
- ``generate``: the rewritten question with the kept knowledge; ``backoff`` answers
  without external knowledge when nothing survived the filter.
- ``memory_update`` (Memory Knowledge Reservoir, section 3.3): the kept external
  title-content pairs are stored; a newer entry replaces the one with the same title; beyond
  ``reservoir_max_entries`` the least recently used entries are evicted.

The reservoir is a SQLite file shared safely by concurrent processes
(:mod:`ragraphs.tools.reservoir`), or with ``reservoir="store"`` the graph's LangGraph store
(:mod:`ragraphs.tools.store_reservoir`: a server's, shared by its replicas); pass your own as
``Components(extra={"reservoir": r})``.
"""

from __future__ import annotations

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from ..components import Components
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
from ..settings import ERM4Context
from ..state.base import RAGInput
from ..state.erm4 import ERM4Output, ERM4State
from ._common import Routes, components_of, routed, start_at, timed


def build_erm4_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None, store: BaseStore | None = None
) -> CompiledStateGraph[ERM4State, ERM4Context, RAGInput, ERM4Output]:
    """Compile the ERM4 graph over ``components`` (embedded defaults if None); ``store`` is the
    LangGraph store the reservoir lives in with the run setting ``reservoir="store"`` (a
    LangGraph server gives its own)."""
    c = components_of(components, "build_erm4_graph")
    g = StateGraph(ERM4State, context_schema=ERM4Context, input_schema=RAGInput, output_schema=ERM4Output)
    g.add_node("rewrite", timed("rewrite", make_rewrite(c)))
    g.add_node("memory_check", timed("memory_check", make_memory_check(c)))
    g.add_node("retrieve", timed("retrieve", make_external_retrieve(c)))
    g.add_node("filter", timed("filter", make_filter(c)))
    g.add_node("generate", timed("generate", make_generate(c)))
    g.add_node("backoff", timed("backoff", make_backoff_generate(c)))
    g.add_node("memory_update", timed("memory_update", make_memory_update(c)))
    start_at(g, "rewrite", settings=ERM4Context)
    g.add_edge("rewrite", "memory_check")
    after_memory: Routes = {"external": "retrieve", "memory_only": "filter"}
    g.add_conditional_edges("memory_check", routed("memory_check", route_after_memory, after_memory), after_memory)
    g.add_edge("retrieve", "filter")
    after_filter: Routes = {"answer": "generate", "backoff": "backoff", "recheck": "retrieve"}
    g.add_conditional_edges("filter", routed("filter", route_after_filter, after_filter), after_filter)
    g.add_edge("generate", "memory_update")
    g.add_edge("backoff", "memory_update")
    g.add_edge("memory_update", END)
    return g.compile(checkpointer=checkpointer, store=store, name="erm4")


graph = build_erm4_graph()

__all__ = ["ERM4Context", "build_erm4_graph", "graph"]
