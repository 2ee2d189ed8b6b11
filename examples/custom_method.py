"""A method of your own, built from ragraphs' parts: judge-filtered RAG.

::

    start -> retrieve -> judge_filter -+- kept -------> generate
                                       +- none_kept --> answer_alone

``start`` is the run's entry node (``start_at``); ``retrieve``, ``generate`` and
``answer_alone`` are ragraphs' shared nodes; ``judge_filter``
is new: it keeps the retrieved passages the shipped evaluator (a cross-encoder) scores above
a cut, and when none passes, the question is answered without passages. The walk-through is
docs/extending.md. Runs offline on the embedded defaults::

    python examples/custom_method.py "Steven Covey, the father of Sean Covey, wrote what similar sounding title to The 7 Habits of Highly Effective Teens?"
    python examples/custom_method.py "..." --keep-above 1.0     # nothing passes: the LLM answers alone

The store holds the paragraphs of the bundled sample's first five questions.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import NotRequired

from ragraphs import Components, default_components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.graphs import Routes, routed, start_at, timed
from ragraphs.nodes.generate import make_generate, make_generate_closed_book
from ragraphs.nodes.retrieve import make_retrieve
from ragraphs.settings import RAGContext, context_of
from ragraphs.state import Node, Passage, RAGInput, RAGOutput, RAGState, reset
from ragraphs.tools.judges import own_threshold, passage_text


# 1. The state: the baseline's, plus what the new node writes.
class FilteredState(RAGState):
    kept: NotRequired[int]


# 2. The settings: the baseline's, plus the new node's. Values are checked when the context is
#    built (FilteredContext(keep_above="x") is a ConfigError), and Studio shows the descriptions.
@dataclass(kw_only=True)
class FilteredContext(RAGContext):
    keep_above: float | None = field(
        default=None,
        metadata={"description": "evaluator score a passage needs to be kept; none: the judge's own cut"},
    )


# 3. The new node: a factory that takes the components once and returns node(state, runtime).
def make_judge_filter(c: Components) -> Node[FilteredState, FilteredContext]:
    def judge_filter(state: FilteredState, runtime: Runtime[FilteredContext]) -> dict[str, Any]:
        ctx = context_of(runtime, FilteredContext)
        judge = c.judge("evaluator")  # loaded once, shared by every run
        cut = ctx.keep_above if ctx.keep_above is not None else own_threshold(judge, 0.0)
        passages: list[Passage] = state.get("passages") or []
        scores = [float(s) for s in judge.score_batch([(state["question"], passage_text(p)) for p in passages])]
        kept = [p for p, s in zip(passages, scores) if s > cut]
        return {
            "passages": reset(kept),  # replace the list (the reducer would append)
            "kept": len(kept),
            "_trace": {"cut": round(cut, 4), "scores": [round(s, 4) for s in scores], "kept": len(kept)},
        }

    return judge_filter


def after_filter(state: FilteredState) -> str:
    return "kept" if state.get("kept") else "none_kept"


# 4. The graph, read top to bottom like the method's algorithm box.
def build_filtered_graph(c: Components) -> CompiledStateGraph[FilteredState, FilteredContext, RAGInput, RAGOutput]:
    g = StateGraph(FilteredState, context_schema=FilteredContext, input_schema=RAGInput, output_schema=RAGOutput)
    g.add_node("retrieve", timed("retrieve", make_retrieve(c)))
    g.add_node("judge_filter", timed("judge_filter", make_judge_filter(c)))
    g.add_node("generate", timed("generate", make_generate(c)))
    g.add_node("answer_alone", timed("answer_alone", make_generate_closed_book(c)))
    # the entry node `start`, then retrieve: a new question on a used thread starts from its input alone
    start_at(g, "retrieve", settings=FilteredContext)
    g.add_edge("retrieve", "judge_filter")
    routes: Routes = {"kept": "generate", "none_kept": "answer_alone"}
    g.add_conditional_edges("judge_filter", routed("judge_filter", after_filter, routes), routes)
    g.add_edge("generate", END)
    g.add_edge("answer_alone", END)
    return g.compile(name="judge-filtered")


# For LangGraph Studio (`langgraph dev` with this file in a langgraph.json, docs/extending.md):
# the embedded defaults the package's own graphs share (one MiniLM and one set of judges in the
# server, the store $RAGRAPHS_STORE_URL / $RAGRAPHS_COLLECTION name). Nothing loads until a run.
graph = build_filtered_graph(default_components())


def sample_store(embeddings: Any, n_questions: int = 5) -> InMemoryVectorStore:
    """The paragraphs of the bundled sample's first questions in a LangChain vector store."""
    path = resources.files("ragraphs") / "data" / "sample" / "hotpotqa_sample.jsonl"
    store = InMemoryVectorStore(embeddings)
    store.add_documents([
        Document(page_content=p["text"], metadata={"title": p["title"], "id": p["id"]})
        for p in pooled_passages(load_dataset(str(path), "hotpotqa", limit=n_questions))
    ])
    return store


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("question")
    ap.add_argument("--keep-above", type=float, default=None)
    args = ap.parse_args(argv)
    if not args.question.strip():  # before the models load (a traceback after them until 2026-12-03)
        ap.error("the question is empty")
    from ragraphs.tools.embeddings import MiniLMEmbeddings

    embeddings = MiniLMEmbeddings()
    graph = build_filtered_graph(Components(embeddings=embeddings, vectorstore=sample_store(embeddings)))
    out = graph.invoke({"question": args.question}, context=FilteredContext(keep_above=args.keep_above))
    print(out["answer"])
    for step in out["trace"]:
        print(f"  {step['node']:<13} {1000 * step['elapsed_s']:7.0f} ms", file=sys.stderr)
    print(f"  passages kept: {[p['title'] for p in out['passages']]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
