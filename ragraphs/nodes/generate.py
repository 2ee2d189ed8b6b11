"""Generation nodes: answer from passages, or closed-book."""

from __future__ import annotations

from typing import Callable

from langgraph.runtime import Runtime

from ..components import Components
from ..graphs._common import llm_usage
from ..prompts import STOP_ANSWER, clean_answer, closed_book_prompt, rag_answer_prompt
from ..tools.llm import complete


def _llm(c: Components, ctx):
    return c.llm(getattr(ctx, "llm", None), max_tokens=int(getattr(ctx, "max_new_tokens", 32)))


def make_generate(c: Components, *, passages_key: str = "passages", question_key: str = "question") -> Callable:
    """Answer the question from the passages in ``state[passages_key]`` (one LLM call)."""

    def generate(state: dict, runtime: Runtime) -> dict:
        ctx = runtime.context
        passages = state.get(passages_key) or []
        question = state.get(question_key) or state["question"]
        if getattr(ctx, "skip_generation", False):
            return {"answer": "", "_trace": {"skipped": "skip_generation", "n_passages": len(passages)}}
        prompt = rag_answer_prompt(question, passages, max_chars=int(getattr(ctx, "max_passage_chars", 1200)))
        out = complete(_llm(c, ctx), prompt, stop=STOP_ANSWER, max_tokens=int(getattr(ctx, "max_new_tokens", 32)))
        answer = clean_answer(out.text)
        return {
            "answer": answer,
            **llm_usage(out),
            "_trace": {"n_passages": len(passages), "raw": out.text[:500], "input_tokens": out.input_tokens},
        }

    return generate


def make_generate_closed_book(c: Components) -> Callable:
    """Answer without any retrieved passage (the no-retrieval baseline)."""

    def generate(state: dict, runtime: Runtime) -> dict:
        ctx = runtime.context
        out = complete(
            _llm(c, ctx),
            closed_book_prompt(state["question"]),
            stop=STOP_ANSWER,
            max_tokens=int(getattr(ctx, "max_new_tokens", 32)),
        )
        return {"answer": clean_answer(out.text), **llm_usage(out), "_trace": {"raw": out.text[:500]}}

    return generate
