"""No-retrieval baseline: the LLM answers from its own knowledge."""

from __future__ import annotations

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from ..components import Components, default_components
from ..nodes.generate import make_generate_closed_book
from ..settings import RAGContext
from ..state.base import RAGInput, RAGOutput, RAGState
from ._common import start_at, timed


def build_none_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph[RAGState, RAGContext, RAGInput, RAGOutput]:
    c = components or default_components()
    g = StateGraph(RAGState, context_schema=RAGContext, input_schema=RAGInput, output_schema=RAGOutput)
    g.add_node("generate", timed("generate", make_generate_closed_book(c)))
    start_at(g, "generate", settings=RAGContext)
    g.add_edge("generate", END)
    return g.compile(checkpointer=checkpointer, name="none")


graph = build_none_graph()
