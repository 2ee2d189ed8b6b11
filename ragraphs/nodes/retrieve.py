"""Retrieval node: the question's top-k passages (or the re-ranker's candidates) from the graph's
retriever; with ``link_question``, the candidates whose title the question names first
(:mod:`ragraphs.nodes.links`)."""

from __future__ import annotations

from typing import Any, Sequence

from langgraph.runtime import Runtime

from ..components import Components
from ..settings import RAGContext, context_of
from ..state.base import RAGState
from ..state.types import Node, Passage, question_of
from ..tools.vectorstore import rrf_fuse, usable_mode
from .links import linked_search
from .rerank import retrieval_depth


def search_many(retriever: Any, queries: Sequence[str], k: int, mode: str, rrf_k: int | None = None) -> list[list[Passage]]:
    """Batched search where the retriever offers it, one query at a time otherwise.

    With ``rrf_k`` and ``mode="hybrid"``, the dense and BM25 lists (``k`` each) are fused
    here by reciprocal rank with that constant (score = sum 1 / (rrf_k + rank)); without
    it the retriever's own hybrid mode is used."""
    queries = list(queries)
    mode = usable_mode(retriever, mode)
    if mode == "hybrid" and rrf_k:
        dense = search_many(retriever, queries, k, "dense")
        sparse = search_many(retriever, queries, k, "bm25")
        return [rrf_fuse([d, s], k, c=int(rrf_k)) for d, s in zip(dense, sparse)]
    if hasattr(retriever, "search_many"):
        return [list(r) for r in retriever.search_many(queries, k, mode=mode)]
    return [list(retriever.search(q, k, mode=mode)) for q in queries]


def make_retrieve(c: Components, *, query_key: str = "question") -> Node[Any, Any]:
    def retrieve(state: RAGState, runtime: Runtime[RAGContext]) -> dict:
        ctx = context_of(runtime, RAGContext)
        query = question_of(state, query_key)
        mode = usable_mode(c.retriever, ctx.retrieval)
        k = int(ctx.k)
        n = retrieval_depth(ctx, k)
        passages, named = linked_search(c.retriever, query, n, mode, ctx)
        return {
            "passages": passages,
            "_trace": {
                "mode": mode,
                "k": k,
                "depth": n,
                "named_by_question": named,
                "retrieved": [{"id": p["id"], "title": p["title"], "score": p["score"]} for p in passages],
                "out_ids": [p["id"] for p in passages],
            },
        }

    return retrieve
