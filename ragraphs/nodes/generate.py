"""Generation nodes: answer from passages, or closed-book."""

from __future__ import annotations

from typing import Any, Mapping

from langgraph.runtime import Runtime

from ..components import Components
from ..prompts import STOP_ANSWER, clean_answer, closed_book_prompt, rag_answer_prompt
from ..settings import RAGContext, context_of
from ..state.base import RAGState
from ..state.types import Node, question_of
from ..tools.llm import complete, llm_usage


def _llm(c: Components, ctx: RAGContext):
    return c.llm(ctx.llm, max_tokens=int(ctx.max_new_tokens))


def make_generate(c: Components, *, passages_key: str = "passages", question_key: str = "question") -> Node[Any, Any]:
    """Answer the question from the passages in ``state[passages_key]`` (one LLM call)."""

    def generate(state: Mapping[str, Any], runtime: Runtime[RAGContext]) -> dict:  # reads the keys it is given
        ctx = context_of(runtime, RAGContext)
        passages = state.get(passages_key) or []
        question = state.get(question_key) or state["question"]
        if ctx.skip_generation:
            return {"answer": "", "_trace": {"skipped": "skip_generation", "n_passages": len(passages)}}
        prompt = rag_answer_prompt(question, passages, max_chars=int(ctx.max_passage_chars))
        out = complete(_llm(c, ctx), prompt, stop=STOP_ANSWER, max_tokens=int(ctx.max_new_tokens))
        answer = clean_answer(out.text, cut_asides=bool(ctx.cut_asides), whole=bool(ctx.whole_answer))
        return {
            "answer": answer,
            **llm_usage(out),
            "_trace": {"n_passages": len(passages), "raw": out.text[:500], "input_tokens": out.input_tokens},
        }

    return generate


def make_generate_closed_book(c: Components) -> Node[Any, Any]:
    """Answer without any retrieved passage (the no-retrieval baseline)."""

    def generate(state: RAGState, runtime: Runtime[RAGContext]) -> dict:
        ctx = context_of(runtime, RAGContext)
        if ctx.skip_generation:  # as every other method's reader (it called the LLM until 2026-11-30)
            return {"answer": "", "_trace": {"skipped": "skip_generation"}}
        out = complete(
            _llm(c, ctx),
            closed_book_prompt(question_of(state)),
            stop=STOP_ANSWER,
            max_tokens=int(ctx.max_new_tokens),
        )
        return {"answer": clean_answer(out.text, cut_asides=bool(ctx.cut_asides), whole=bool(ctx.whole_answer)), **llm_usage(out), "_trace": {"raw": out.text[:500]}}

    return generate
