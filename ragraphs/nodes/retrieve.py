"""Retrieval node: the question's top-k passages from the graph's retriever."""

from __future__ import annotations

from typing import Callable

from langgraph.runtime import Runtime

from ..components import Components
from ..errors import InputError
from ..settings import RAGContext
from ..state.base import RAGState


def make_retrieve(c: Components, *, query_key: str = "question") -> Callable[[dict, Runtime], dict]:
    def retrieve(state: RAGState, runtime: Runtime[RAGContext]) -> dict:
        ctx = runtime.context or RAGContext()
        query = state.get(query_key) or ""
        if not query.strip():
            raise InputError("the question is empty")
        mode = ctx.retrieval
        k = int(ctx.k)
        passages = c.retriever.search(query, k, mode=mode)
        return {
            "passages": passages,
            "_trace": {
                "mode": mode,
                "k": k,
                "retrieved": [{"id": p["id"], "title": p["title"], "score": p["score"]} for p in passages],
            },
        }

    return retrieve
