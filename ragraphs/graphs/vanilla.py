"""Vanilla RAG: start -> retrieve -> [rerank ->] generate (the re-ranker is the ``rerank`` setting)."""

from __future__ import annotations

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from ..components import Components
from ..nodes.generate import make_generate
from ..nodes.rerank import make_rerank, rerank_spec
from ..nodes.retrieve import make_retrieve
from ..settings import RAGContext, context_of
from ..state.base import RAGInput, RAGOutput, RAGState
from ._common import Routes, components_of, routed, start_at, timed


def _after_retrieve(state: dict, runtime=None) -> str:
    return "generate" if rerank_spec(context_of(runtime, RAGContext)) == "none" else "rerank"


def build_vanilla_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None
) -> CompiledStateGraph[RAGState, RAGContext, RAGInput, RAGOutput]:
    """Compile the vanilla RAG graph over ``components`` (embedded defaults if None)."""
    c = components_of(components, "build_vanilla_graph")
    g = StateGraph(RAGState, context_schema=RAGContext, input_schema=RAGInput, output_schema=RAGOutput)
    g.add_node("retrieve", timed("retrieve", make_retrieve(c)))
    g.add_node("rerank", timed("rerank", make_rerank(c)))
    g.add_node("generate", timed("generate", make_generate(c)))
    start_at(g, "retrieve", settings=RAGContext)
    paths: Routes = {"rerank": "rerank", "generate": "generate"}
    g.add_conditional_edges("retrieve", routed("retrieve", _after_retrieve, paths), paths)
    g.add_edge("rerank", "generate")
    g.add_edge("generate", END)
    return g.compile(checkpointer=checkpointer, name="vanilla")


graph = build_vanilla_graph()
