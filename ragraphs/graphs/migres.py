"""MIGRES: Missing Information Guided Retrieve-Extraction-Solving (Wang et al., 2024).

One iteration::

    retrieve -> filter_knowledge --passages--> leaf_extract -> memory -> main_judge
                                 \\-empty-----> knowledge_prompt -> leaf_extract
                                 \\-empty (knowledge prompting off) -> memory

    main_judge --reread-------> reader_answer -> END   (answer_with="reader", the default)
               --answered-----> END                    (answer_with="main": the Main Module's answer)
               --unanswerable-> generate_queries --new queries--> retrieve (next iteration)
                                                 \\-exhausted----> final_answer -> END
               --guard--------> final_answer -> END

Each run begins at the entry node ``start`` (``graphs._common.start_at``), which checks the
question and the settings and, on a thread that holds an earlier run, sets its state back to
empty; it then goes to ``retrieve``, and a loop back to ``retrieve`` never passes it again.
The first iteration retrieves with the question itself. ``main_judge`` ends every
iteration and counts it; the routing function sends the run to ``final_answer`` (a
best-effort answer from what was gathered) once ``max_iterations`` verdicts were
"unanswerable", or as soon as the Query Generator has nothing new to ask
(``stop_when_exhausted``: the same query would only bring back what was read). The
guard reads the run's context (Table 12: 5 for multi-hop and commonsense QA, 3 for
open-domain QA) and is capped at the graph's ``iteration_cap``;
the compiled graph also carries a recursion limit derived from that cap, so no run can
loop unbounded whatever the LLM writes. Both readers (``reader_answer``, ``final_answer``)
read the question's own top retrieved passages first, then what the loop's own queries
found and kept (``reader_evidence``).
"""

from __future__ import annotations

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from ..components import Components
from ..nodes.migres import (
    make_filter_knowledge,
    make_generate_queries,
    make_knowledge_prompt,
    make_leaf_extract,
    make_main_judge,
    make_memory,
    make_retrieve,
)
from ..nodes.migres_reader import make_final_answer
from ..settings import MIGRESContext, context_of
from ..state.base import RAGInput
from ..state.migres import MIGRESOutput, MIGRESState
from ._common import RecordedRuntime, Routes, components_of, routed, start_at, timed

#: the most iterations any run may take, whatever its context says
ITERATION_CAP = 10
#: graph steps one iteration can take: retrieve, filter, knowledge, leaf, memory, main, queries
STEPS_PER_ITERATION = 7


def iteration_limit(ctx: MIGRESContext | None, cap: int = ITERATION_CAP) -> int:
    """The guard: the run's ``max_iterations``, at least 1 and at most ``cap``."""
    return max(1, min(int((ctx or MIGRESContext()).max_iterations), cap))


def recursion_limit_for(iterations: int) -> int:
    """A LangGraph recursion limit that ``iterations`` full iterations plus the final answer fit in."""
    return STEPS_PER_ITERATION * iterations + 5


def build_migres_graph(
    components: Components | None = None, *, checkpointer: Checkpointer = None, iteration_cap: int = ITERATION_CAP
) -> CompiledStateGraph[MIGRESState, MIGRESContext, RAGInput, MIGRESOutput]:
    """Compile the MIGRES graph over ``components`` (embedded defaults if None).

    ``iteration_cap`` bounds every run's ``max_iterations``; the compiled graph's recursion
    limit is derived from it.
    """
    c = components_of(components, "build_migres_graph")
    cap = max(1, int(iteration_cap))
    g = StateGraph(MIGRESState, context_schema=MIGRESContext, input_schema=RAGInput, output_schema=MIGRESOutput)
    g.add_node("retrieve", timed("retrieve", make_retrieve(c)))
    g.add_node("filter_knowledge", timed("filter_knowledge", make_filter_knowledge(c)))
    g.add_node("knowledge_prompt", timed("knowledge_prompt", make_knowledge_prompt(c)))
    g.add_node("leaf_extract", timed("leaf_extract", make_leaf_extract(c)))
    g.add_node("memory", timed("memory", make_memory(c)))
    g.add_node("main_judge", timed("main_judge", make_main_judge(c)))
    g.add_node("generate_queries", timed("generate_queries", make_generate_queries(c)))
    g.add_node("final_answer", timed("final_answer", make_final_answer(c)))
    g.add_node("reader_answer", timed("reader_answer", make_final_answer(c)))  # the same reader, after "answerable"

    def after_filter(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> str:
        if state.get("candidates"):
            return "passages"
        return "knowledge" if context_of(runtime, MIGRESContext).knowledge_prompting else "nothing"

    def after_judge(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> str:
        if state.get("answered"):
            return "reread" if context_of(runtime, MIGRESContext).answer_with == "reader" else "answered"
        if int(state.get("iterations") or 0) >= iteration_limit(context_of(runtime, MIGRESContext), cap):
            return "guard"
        # a caller's recursion_limit: no room for another iteration (LangGraph's count means
        # nothing where it runs this router for update_state, without the run's runtime)
        left = None if isinstance(runtime, RecordedRuntime) else state.get("remaining_steps")
        if left is not None and left <= STEPS_PER_ITERATION + 2:
            return "guard"
        return "unanswerable"

    start_at(g, "retrieve", settings=MIGRESContext)
    g.add_edge("retrieve", "filter_knowledge")
    filtered: Routes = {"passages": "leaf_extract", "knowledge": "knowledge_prompt", "nothing": "memory"}
    g.add_conditional_edges("filter_knowledge", routed("filter_knowledge", after_filter, filtered), filtered)
    g.add_edge("knowledge_prompt", "leaf_extract")
    g.add_edge("leaf_extract", "memory")
    g.add_edge("memory", "main_judge")
    judged: Routes = {"answered": END, "reread": "reader_answer", "unanswerable": "generate_queries", "guard": "final_answer"}
    g.add_conditional_edges("main_judge", routed("main_judge", after_judge, judged), judged)

    def after_queries(state: MIGRESState) -> str:
        return "exhausted" if state.get("exhausted") else "new queries"

    asked: Routes = {"new queries": "retrieve", "exhausted": "final_answer"}
    g.add_conditional_edges("generate_queries", routed("generate_queries", after_queries, asked), asked)
    g.add_edge("final_answer", END)
    g.add_edge("reader_answer", END)
    compiled = g.compile(checkpointer=checkpointer, name="migres")
    return compiled.with_config(recursion_limit=recursion_limit_for(cap))


graph = build_migres_graph()

__all__ = ["ITERATION_CAP", "MIGRESContext", "build_migres_graph", "graph", "iteration_limit", "recursion_limit_for"]
