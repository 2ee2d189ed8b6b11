"""No-retrieval baseline: the LLM answers from its own knowledge."""

from __future__ import annotations

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from ..components import Components
from ..nodes.generate import make_generate_closed_book
from ..settings import RAGContext
from ..state.base import RAGInput, RAGOutput, RAGState
from ._common import components_of, start_at, timed


def build_none_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph[RAGState, RAGContext, RAGInput, RAGOutput]:
    """Compile the no-retrieval graph over ``components`` (embedded defaults if None): one node,
    ``generate``, where the LLM answers the question from its own knowledge. Of the run settings
    it reads ``llm``, ``max_new_tokens``, ``cut_asides``, ``whole_answer`` and ``skip_generation``; nothing is
    retrieved, so the retrieval settings have no effect."""
    c = components_of(components, "build_none_graph")
    g = StateGraph(RAGState, context_schema=RAGContext, input_schema=RAGInput, output_schema=RAGOutput)
    g.add_node("generate", timed("generate", make_generate_closed_book(c)))
    start_at(g, "generate", settings=RAGContext)
    g.add_edge("generate", END)
    return g.compile(checkpointer=checkpointer, name="none")


graph = build_none_graph()
