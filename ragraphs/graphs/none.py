"""No-retrieval baseline: the LLM answers from its own knowledge."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from ..components import Components, default_components
from ..nodes.generate import make_generate_closed_book
from ..settings import RAGContext
from ..state.base import RAGInput, RAGOutput, RAGState
from ._common import starts_a_run


def build_none_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph[RAGState, RAGContext, RAGInput, RAGOutput]:
    c = components or default_components()
    g = StateGraph(RAGState, context_schema=RAGContext, input_schema=RAGInput, output_schema=RAGOutput)
    g.add_node("generate", starts_a_run("generate", make_generate_closed_book(c), RAGState, settings=RAGContext))
    g.add_edge(START, "generate")
    g.add_edge("generate", END)
    return g.compile(checkpointer=checkpointer, name="none")


graph = build_none_graph()
