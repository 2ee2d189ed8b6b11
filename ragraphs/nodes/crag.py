"""Nodes of the CRAG graph (Corrective RAG, Yan et al. 2024, Algorithm 1).

retrieve -> evaluate -> {correct: refine | incorrect: rewrite -> web_search -> refine_web |
ambiguous: refine -> rewrite -> web_search -> refine_web} -> generate.

Settings come from ``runtime.context`` (:class:`ragraphs.settings.CRAGContext`); the
evaluator is ``c.judge("evaluator")`` (scores in [-1, 1]), the web search is
``c.web_search`` or the backend named by the context's ``web`` spec / ``RAGRAPHS_WEB``.
"""

from __future__ import annotations

import re

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from ..components import Components
from ..prompts import one_line
from ..settings import CRAGContext, context_of
from ..state.crag import CRAGState
from ..state.types import Node, Passage, reset, with_score
from ..tools.fetch import fetched_pages
from ..tools.parsing import looks_like_json
from ..tools.structured import Keywords, decide
from ..tools.text import text_key
from ..tools.web_tools import result_key
from .refine import judge_text, refine_knowledge
from .retrieve import make_retrieve
from .web import no_web, page_fetcher, web_backend

CORRECT, INCORRECT, AMBIGUOUS = "correct", "incorrect", "ambiguous"

# The paper's few-shot prompt for rewriting a question into web-search keywords
# (Appendix A, Table 5), sent as a completion prompt that ends where the model writes; its
# examples' keywords are written as the JSON of the Keywords decision
# (:mod:`ragraphs.tools.structured`), which the embedded model is held to by a grammar.
REWRITE_PROMPT = (
    "Extract at most three keywords separated by comma from the following dialogues and questions as "
    "queries for the web search, including topic background within dialogues and main intent within "
    "questions.\n"
    "question: What is Henry Feilden\u2019s occupation?\n"
    'query: {{"keywords": ["Henry Feilden", "occupation"]}}\n'
    "question: In what city was Billy Carlson born?\n"
    'query: {{"keywords": ["city", "Billy Carlson", "born"]}}\n'
    "question: What is the religion of John Gwynn?\n"
    'query: {{"keywords": ["religion of John Gwynn"]}}\n'
    "question: What sport does Kiribati men\u2019s national basketball team play?\n"
    'query: {{"keywords": ["sport", "Kiribati men\u2019s national basketball team play"]}}\n'
    "question: {question}\n"
    "query:"
)
STOP_REWRITE = ["\n", "question:", "query:"]


def decide_action(scores: list[float], upper: float, lower: float) -> tuple[str, str]:
    """The paper's action trigger (section 4.3): Correct if any score > upper, Incorrect if
    all scores < lower, Ambiguous otherwise. Returns (action, reason)."""
    if not scores:
        return INCORRECT, "no passages were retrieved"
    top = max(scores)
    if top > upper:
        n = sum(s > upper for s in scores)
        return CORRECT, f"{n} of {len(scores)} scores above the upper threshold {upper:g} (max {top:.3f})"
    if top < lower:
        return INCORRECT, f"all {len(scores)} scores below the lower threshold {lower:g} (max {top:.3f})"
    return AMBIGUOUS, f"max score {top:.3f} lies between the lower {lower:g} and upper {upper:g} thresholds"


def make_crag_retrieve(c: Components) -> Node[CRAGState, CRAGContext]:
    """The retriever's top-k documents, kept in ``retrieved`` (``passages`` starts empty)."""
    inner = make_retrieve(c)

    def retrieve(state: CRAGState, runtime: Runtime[CRAGContext]) -> dict:
        context_of(runtime, CRAGContext)  # another method's settings fail here, before any retrieval
        out = inner(state, runtime)
        docs = out.pop("passages")
        return {**out, "retrieved": docs, "passages": reset([])}

    return retrieve


def make_evaluate(c: Components) -> Node[CRAGState, CRAGContext]:
    """Score every retrieved document with the evaluator and choose the action."""

    def evaluate(state: CRAGState, runtime: Runtime[CRAGContext]) -> dict:
        ctx = context_of(runtime, CRAGContext)
        docs: list[Passage] = state.get("retrieved") or []
        upper, lower = float(ctx.upper), float(ctx.lower)
        pairs = [(state["question"], judge_text(d.get("title", ""), d.get("text", ""))) for d in docs]
        raw = [float(s) for s in c.judge("evaluator").score_batch(pairs)] if pairs else []
        action, reason = decide_action(raw, upper, lower)  # on the scores as read, not rounded (a rounded
        scores = [round(s, 4) for s in raw]                # 0.19003 read as 0.19, Ambiguous under upper 0.19)
        return {
            "scores": scores,
            # unrounded on the documents: refinement reuses a whole document's score for its one strip
            "retrieved": [with_score(d, s) for d, s in zip(docs, raw)],
            "action": action,
            "action_reason": reason,
            "_trace": {
                "scores": [{"id": d["id"], "title": d.get("title", ""), "score": s} for d, s in zip(docs, scores)],
                "upper": upper,
                "lower": lower,
                "action": action,
                "route": action,
                "reason": reason,
            },
        }

    return evaluate


def route_action(state: dict) -> str:
    return state.get("action") or INCORRECT


def route_after_refine(state: dict) -> str:
    """Ambiguous also searches the web; Correct goes straight to generation."""
    return "web" if state.get("action") == AMBIGUOUS else "generate"


def _refine_settings(ctx: CRAGContext) -> dict:
    return {
        "top_k": int(ctx.strip_top_k),
        "threshold": float(ctx.strip_threshold),
        "sentences_per_strip": int(ctx.strip_sentences),
    }


def _distinct_pages(web: list[Passage]) -> list[Passage]:
    """Web results without a second copy of a page's text (one article under its desktop and
    mobile addresses, or over http and https): each copy's strips took slots of other pages."""
    seen: set[str] = set()
    out = []
    for p in web:
        key = text_key(p.get("text"))
        if key and key in seen:
            continue
        seen.add(key)
        out.append(p)
    return out


def _refine_trace(r) -> dict:
    out = {
        "n_strips": r.n_strips,
        "kept": r.kept,
        "dropped_below_threshold": r.n_dropped_below_threshold,
        "dropped_beyond_top_k": r.n_dropped_top_k,
    }
    if r.below_threshold_kept:  # the kept strip is below the cut too (the trace did not say so until 2026-11-30)
        out["kept_below_threshold"] = True
    return out


def evaluated(state: CRAGState) -> dict[str, float]:
    """The evaluator's score of each retrieved document as it read it (``evaluate`` put it on the
    document and chose the action): refinement does not score a one-strip document again."""
    if not state.get("action"):  # not evaluated: the scores on the documents are the retriever's
        return {}
    out: dict[str, float] = {}
    for d in state.get("retrieved") or []:
        score = d.get("score")
        if isinstance(score, (int, float)):
            out[judge_text(d.get("title", ""), d.get("text") or "")] = float(score)
    return out


def make_refine(c: Components) -> Node[CRAGState, CRAGContext]:
    """Internal knowledge: the retrieved documents refined (decompose, filter, recompose)."""

    def refine(state: CRAGState, runtime: Runtime[CRAGContext]) -> dict:
        ctx = context_of(runtime, CRAGContext)
        settings = _refine_settings(ctx)
        docs = state.get("retrieved") or []
        r = refine_knowledge(c.judge("evaluator"), state["question"], docs, source="corpus", known=evaluated(state), **settings)
        return {
            "internal_knowledge": r.knowledge,
            "passages": reset(r.passages),
            "_trace": {"knowledge": "internal", **settings, **_refine_trace(r)},
        }

    return refine


def parse_query(raw: str) -> str:
    """The keyword query from the rewriter's completion (first line, bounded)."""
    line = next((ln.strip() for ln in (raw or "").splitlines() if ln.strip()), "")
    if line.lower().startswith("query:"):
        line = line[6:].strip()
    line = line.strip(" \"'`")
    return one_line(line, 200)


def read_keywords_legacy(text: str) -> Keywords | None:
    """Keywords written as plain text (``Henry Feilden, occupation``) instead of JSON (None for
    JSON no reader took: its braces and keys are no keywords)."""
    if looks_like_json(text):
        return None
    # the full-width and ideographic commas of Chinese and Japanese, and Arabic's, separate too
    # (until 2026-11-30 "北京，首都，人口，面积" was one keyword, never cut to three)
    words = [w.strip() for w in re.split("[,\uff0c\u3001\u060c]", parse_query(text)) if w.strip()]
    return Keywords(keywords=words) if words else None


def make_rewrite(c: Components) -> Node[CRAGState, CRAGContext]:
    """Rewrite the question into keyword queries with the paper's few-shot prompt."""

    def rewrite(state: CRAGState, runtime: Runtime[CRAGContext]) -> dict:
        ctx = context_of(runtime, CRAGContext)
        if no_web(c, ctx):  # the keywords are the web search's query: without one, no LLM call for them
            queries = [one_line(state["question"], 500)]
            return {"queries": queries, "_trace": {"queries": queries, "note": "no web search configured: not rewritten"}}
        max_tokens = int(ctx.rewrite_max_tokens)
        llm = c.llm(ctx.llm, max_tokens=int(ctx.max_new_tokens))
        prompt = REWRITE_PROMPT.format(question=one_line(state["question"], 500))
        out = decide(llm, prompt, Keywords, stop=STOP_REWRITE, max_tokens=max_tokens, legacy=read_keywords_legacy)
        query = one_line(", ".join(out.value.keywords), 200) if out.value is not None else ""
        note = None
        if len(query.replace(",", " ").split()) == 0:
            query, note = one_line(state["question"], 500), "the rewriter wrote no keywords; searching the question"
        queries = [query]
        details = {"queries": queries, **out.trace()}
        if note:
            details["note"] = note
        return {"queries": queries, **out.usage(), "_trace": details}

    return rewrite


MAX_PAGE_PARAGRAPHS = 200  # a 9,000-paragraph page cost about 49 s of strip scoring on 2 cores
MAX_PAGE_CHARS = 100_000  # and characters: one 2 MB paragraph (a text page without blank lines) is 24,000 strips


def _page_share(paragraphs: list[str]) -> list[str]:
    """A fetched page's first paragraphs within both bounds on the strip scoring's work."""
    out: list[str] = []
    room = MAX_PAGE_CHARS
    for p in paragraphs[:MAX_PAGE_PARAGRAPHS]:
        if room <= 0:
            break
        out.append(p[:room])
        room -= len(out[-1])
    return out


def make_web_search_node(c: Components) -> Node[CRAGState, CRAGContext]:
    """Search the web for the rewritten queries, prefer Wikipedia, fetch and extract pages."""

    def web_search(state: CRAGState, runtime: Runtime[CRAGContext]) -> dict:
        from ..tools.websearch import is_wikipedia, prefer_wikipedia, search_checked

        ctx = context_of(runtime, CRAGContext)
        queries = state.get("queries") or [state["question"]]
        k = int(ctx.web_k)
        try:
            backend, name = web_backend(c, ctx)
        except GraphBubbleUp:  # an interrupt() inside a component pauses the run; it is no failure
            raise
        except Exception as e:  # a bad spec or a missing offline file: answer from what we have
            backend, name = None, "error"
            err = f"web search unavailable: {type(e).__name__}: {e}"
            return {"web_results": [], "web_error": err, "_trace": {"backend": name, "queries": queries, "error": err}}
        if backend is None:
            err = "no web search configured"
            return {"web_results": [], "web_error": err, "_trace": {"backend": "none", "queries": queries, "error": err}}
        timeout = float(ctx.web_timeout)
        results: dict[str, Passage] = {}
        errors: list[str] = []
        calls = 0
        malformed = 0
        for q in queries:
            calls += 1
            try:
                # checked inside the timeout too: a lazy answer (a generator) is read there
                got, bad = search_checked(backend, q, k, timeout)
            except GraphBubbleUp:  # an interrupt() inside a component pauses the run; it is no failure
                raise
            except Exception as e:
                errors.append(f"search {q!r} failed: {type(e).__name__}: {str(e)[:200]}")
                continue
            malformed += bad
            for p in got:  # one result per page: the same address with another snippet or #fragment is a copy
                results.setdefault(result_key(p), p)
        ranked = prefer_wikipedia(list(results.values()))[:k]
        fetched: list[dict] = []
        if ranked and bool(ctx.fetch_pages):
            for i, u, page, error in fetched_pages(page_fetcher(c, ctx), ranked):
                if page is None:
                    fetched.append({"url": u, "ok": False, "error": error})
                    continue
                p = ranked[i]
                paras = _page_share(page.paragraphs)  # each strip is scored by the evaluator: a bound on the work
                meta = {**(p.get("meta") or {}), "paragraphs": paras, "fetched": True, "snippet": p["text"][:500]}
                if page.truncated:
                    meta["truncated"] = True
                if len(page.paragraphs) > len(paras):
                    meta["paragraphs_left_out"] = len(page.paragraphs) - len(paras)
                if sum(map(len, paras)) < sum(map(len, page.paragraphs[: len(paras)])):
                    meta["characters_left_out"] = True
                ranked[i] = {**p, "title": p["title"] or page.title, "text": "\n".join(paras), "meta": meta}
                fetched.append({"url": u, "ok": True, "paragraphs": len(page.paragraphs), "truncated": page.truncated})
        update: dict = {"web_results": ranked, "web_calls": calls}
        trace: dict = {
            "backend": name,
            "queries": queries,
            "results": [
                {
                    "title": p["title"],
                    "url": (p.get("meta") or {}).get("url", ""),
                    "wikipedia": is_wikipedia((p.get("meta") or {}).get("url", "")),
                }
                for p in ranked
            ],
        }
        if fetched:
            trace["fetched"] = fetched
        if malformed:
            trace["malformed_results"] = malformed  # dropped: not a mapping with text
        if errors:
            update["web_error"] = "; ".join(errors)
            trace["error"] = update["web_error"]
        elif not ranked:
            update["web_error"] = "the web search returned no results" + (
                f" ({malformed} malformed result(s) dropped)" if malformed else ""
            )
            trace["error"] = update["web_error"]
        update["_trace"] = trace
        return update

    return web_search


def make_refine_web(c: Components) -> Node[CRAGState, CRAGContext]:
    """External knowledge: the web results refined like the internal documents.

    When the web gave nothing to read (not configured, failed, timed out, no results, or
    results without text) on the Incorrect route, the run answers from what it has: with ``web_fallback="internal"``
    the retrieved documents are refined after all (the strip filter still applies),
    with ``"none"`` the generator gets no passages.
    """

    def refine_web(state: CRAGState, runtime: Runtime[CRAGContext]) -> dict:
        ctx = context_of(runtime, CRAGContext)
        settings = _refine_settings(ctx)
        judge = c.judge("evaluator")
        web = _distinct_pages(state.get("web_results") or [])
        r = refine_knowledge(judge, state["question"], web, source="web", keep_doc_ids=False, **settings)
        update: dict = {"external_knowledge": r.knowledge, "passages": r.passages}
        trace: dict = {"knowledge": "external", **settings, **_refine_trace(r)}
        if not r.passages:  # no results, or results with no text to read (an empty snippet, a failed fetch)
            why = state.get("web_error") or ("no web results" if not web else "the web results had no text to read")
            trace["web_unavailable"] = why
            if web and not state.get("web_error"):
                update["web_error"] = why
            fallback = str(ctx.web_fallback)
            if state.get("action") == INCORRECT and fallback == "internal":
                docs = state.get("retrieved") or []
                ri = refine_knowledge(judge, state["question"], docs, source="corpus", known=evaluated(state), **settings)
                update["internal_knowledge"] = ri.knowledge
                update["passages"] = reset(ri.passages)
                trace["fallback"] = (f"{why}; answering from the retrieved documents' best strips instead" if ri.passages
                                     else f"{why}; nothing retrieved either: answering without passages")
                trace.update({f"fallback_{k}": v for k, v in _refine_trace(ri).items()})
            elif state.get("action") == INCORRECT:
                trace["fallback"] = f"{why}; answering without passages"
            else:
                trace["fallback"] = f"{why}; answering from the internal knowledge only"
        return {**update, "_trace": trace}

    return refine_web
