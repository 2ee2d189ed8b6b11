"""Vanilla RAG: retrieve -> generate."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ..components import Components, default_components
from ..nodes.generate import make_generate
from ..nodes.retrieve import make_retrieve
from ..settings import RAGContext
from ..state.base import RAGInput, RAGOutput, RAGState
from ._common import timed


def build_vanilla_graph(components: Components | None = None, *, checkpointer=None):
    """Compile the vanilla RAG graph over ``components`` (embedded defaults if None)."""
    c = components or default_components()
    g = StateGraph(RAGState, context_schema=RAGContext, input_schema=RAGInput, output_schema=RAGOutput)
    g.add_node("retrieve", timed("retrieve", make_retrieve(c)))
    g.add_node("generate", timed("generate", make_generate(c)))
    g.add_edge(START, "retrieve")
    g.add_edge("retrieve", "generate")
    g.add_edge("generate", END)
    return g.compile(checkpointer=checkpointer, name="vanilla")


graph = build_vanilla_graph()
