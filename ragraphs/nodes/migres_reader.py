"""MIGRES's reader: the last LLM call, which writes the answer and routes nothing.

``final_answer`` (the iteration guard, or nothing new left to ask) and ``reader_answer``
(after the Main Module's "answerable" verdict, with ``answer_with="reader"``) are this one
node. Not in the paper, where the Main Module's verdict carries the answer; see
docs/migres.md.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..components import Components
from ..prompts import (
    STOP_ANSWER,
    clean_answer,
    mismatches_question_type,
    rag_answer_prompt,
    reads_as_sentence,
    restates_question,
    shorten_answer_prompt,
    shortening_options,
)
from ..settings import MIGRESContext, context_of
from ..state.migres import MIGRESState
from ..state.types import Node, Passage, cut_text, make_passage
from ..tools.llm import complete, llm_usage
from ..tools.structured import choice_gbnf, constraint_mode
from .migres import _llm


def reader_evidence(state: MIGRESState, ctx: MIGRESContext) -> tuple[list[Passage], list[Passage]]:
    """What the reader reads, and which of it the loop had not read (it joins the run's passages).

    ``reader_evidence="followups"`` (the default): the question's own top
    ``reader_question_passages`` retrieved passages, whole as vanilla reads them, then the
    passages the loop's own queries found and kept (the Knowledge Filter's text; not those of
    the question's first retrieval), ``max_passages`` in all, so the reader reads what vanilla
    reads unless the missing-information queries found something; the LLM's knowledge only
    when there is no passage at all. ``"passages"``: the same with every kept passage.
    ``"gathered"``: the Leaf Module's statements, the kept passages and the first LLM knowledge.
    """
    read = list(state.get("passages") or [])
    cap = int(ctx.max_passages)
    knowledge = list(state.get("generated_knowledge") or [])[:1]
    if ctx.reader_evidence == "gathered":
        statements = [u["info"] for u in state.get("useful_info") or []]
        memo = [make_passage("Known information", " ".join(statements), "memory")] if statements else []
        return memo + read[:cap] + knowledge, []
    top = list(state.get("question_passages") or [])[: max(0, int(ctx.reader_question_passages))]
    ids = {p["id"] for p in top}
    extra = [p for p in read if p["id"] not in ids]
    if ctx.reader_evidence == "followups":
        extra = [p for p in extra if (p.get("meta") or {}).get("query") not in (None, state.get("question"))]
    evidence = (top + extra)[:cap]
    seen = {p["id"] for p in read}
    return evidence or knowledge, [p for p in evidence if p["id"] not in seen]


def reader_prompt(state: MIGRESState, evidence: list[Passage], ctx: MIGRESContext) -> str:
    """The reader's prompt over ``evidence``: the question's own top passages cut to
    ``reader_question_chars`` (vanilla's length), every other passage to ``max_passage_chars``."""
    own, rest = int(ctx.reader_question_chars) or int(ctx.max_passage_chars), int(ctx.max_passage_chars)
    top = [] if ctx.reader_evidence == "gathered" else (state.get("question_passages") or [])
    top_ids = {p["id"] for p in top[: max(0, int(ctx.reader_question_passages))]}
    longest = max(own, rest)

    def shorter(p: Passage) -> Passage:  # the prompt cuts at the longer length; a shorter cut is made here
        n = own if p["id"] in top_ids else rest
        return p if n >= longest else {**p, "text": cut_text(p.get("text") or "", n)}

    return rag_answer_prompt(state["question"], [shorter(p) for p in evidence], max_chars=longest)


def shorten(llm, question: str, answer: str, ctx: MIGRESContext) -> tuple[str, dict, str | None]:
    """The answer cut (one LLM call): the short phrase a sentence-long answer names, the call's
    usage, and the phrase refused (else None). With ``shorten_to_span`` the phrase must be a run
    of the answer's words, or yes / no when the question asks yes or no
    (:func:`~ragraphs.prompts.shortening_options`): a llama.cpp model is held to it by a
    grammar, and any other model's phrase is checked and refused when it is neither. With
    ``shorten_not_question`` a phrase that only restates the question
    (:func:`~ragraphs.prompts.restates_question`) is refused too, and with
    ``shorten_answer_type`` a bare date or number for a question that asks for a place or a
    person (:func:`~ragraphs.prompts.mismatches_question_type`). The phrase is "" when the cut
    wrote nothing usable (the answer then stays as it is)."""
    kw: dict[str, Any] = {}
    options = shortening_options(question, answer) if ctx.shorten_to_span else []
    if options and constraint_mode(llm) == "grammar":
        kw["grammar"] = choice_gbnf(options)
    out = complete(llm, shorten_answer_prompt(question, answer), stop=STOP_ANSWER,
                   max_tokens=int(ctx.max_new_tokens), **kw)
    short = clean_answer(out.text, cut_asides=bool(ctx.cut_asides))
    refused = short and (
        (ctx.shorten_to_span and not _is_option(short, options))
        or (ctx.shorten_not_question and restates_question(question, short))
        or (ctx.shorten_answer_type and mismatches_question_type(question, short))
    )
    return ("", llm_usage(out), short) if refused else (short, llm_usage(out), None)


def _is_option(short: str, options: list[str]) -> bool:
    s = " ".join(short.lower().split())
    return any(s == o.lower() for o in options)


def within_answer(question: str, answer: str, short: str) -> bool:
    """Whether ``short`` is one of :func:`~ragraphs.prompts.shortening_options` (case aside):
    a run of up to 8 of the answer's whole words, or yes / no to a yes-or-no question."""
    return _is_option(short, shortening_options(question, answer))


def make_final_answer(c: Components) -> Node[MIGRESState, MIGRESContext]:
    """Answer the question with the reader prompt over :func:`reader_evidence` (one LLM call):
    the best effort when the iteration guard stops the loop or no new query is left, and the
    answer itself after an "answerable" verdict with ``answer_with="reader"`` (``final`` keeps
    saying how the loop ended). Passages it reads that the loop had not join the run's
    ``passages``."""

    def final_answer(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> dict:
        ctx = context_of(runtime, MIGRESContext)
        evidence, added = reader_evidence(state, ctx)
        final = "answered" if state.get("answered") else ("exhausted" if state.get("exhausted") else "guard")
        if ctx.skip_generation:  # retrieval only: the passages the reader would read join `passages` as in a full run
            return {"answer": "", "final": final, **({"passages": added} if added else {}),
                    "_trace": {"skipped": "skip_generation", "evidence": [p["id"] for p in evidence]}}
        prompt = reader_prompt(state, evidence, ctx)
        out = complete(_llm(c, ctx), prompt, stop=STOP_ANSWER, max_tokens=int(ctx.max_new_tokens))
        answer = clean_answer(out.text, cut_asides=bool(ctx.cut_asides), whole=bool(ctx.whole_answer))
        usage = llm_usage(out)
        shortened = refused = None
        if ctx.shorten_answers and not ctx.whole_answer and reads_as_sentence(answer):
            # the small reader tends to copy a whole sentence (a statement, a passage's line)
            short, extra, refused = shorten(_llm(c, ctx), state["question"], answer, ctx)
            usage = {k: v + extra[k] for k, v in usage.items()}
            if short:
                shortened, answer = answer, short
        return {
            "answer": answer,
            "final": final,
            **({"passages": added} if added else {}),
            **usage,
            "_trace": {"n_evidence": len(evidence), "evidence": [p["id"] for p in evidence], "raw": out.text[:500],
                       "shortened_from": shortened,
                       **({"cut_refused": refused} if refused else {}),
                       "calls": usage["llm_calls"],
                       "iterations": state.get("iterations"),
                       "main_module_answer": state.get("answer") if state.get("answered") else None},
        }

    return final_answer
