"""ERM4 nodes: Query Rewriter+, Retrieval Trigger over the Memory Knowledge Reservoir,
external retrieval, Knowledge Filter, reservoir update and the answer (or back-off).

Prompts (paper appendix / section 3) are kept here, next to the nodes that use them: the
paper's instruction texts, followed by few-shot examples written for ragraphs (general
knowledge, no benchmark questions) written in the JSON of each decision's schema
(:mod:`ragraphs.tools.structured`: a grammar for the embedded model). The paper's plain
``rewritten**query1**query2**query3`` and ``explanation**result`` formats are still read
(counted as parse failures) when an unconstrained model writes them.
"""

from __future__ import annotations

import warnings
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from ..components import Components
from ..errors import ConfigError
from ..prompts import STOP_ANSWER, clean_answer, closed_book_prompt
from ..settings import ERM4Context, context_of
from ..state.erm4 import ERM4State
from ..state.types import Node, Passage, passage_id, question_of, reset, with_score
from ..tools.fetch import fetch_results, query_paragraphs
from ..tools.judges import own_threshold
from ..tools.llm import complete, llm_usage
from ..tools.reservoir import Reservoir, open_reservoir
from ..tools.store_reservoir import StoreReservoir
from ..tools.structured import Entailment, RewritePlus, decide
from ..tools.text import Held
from ..tools.trigger import trigger_lookup
from ..tools.web_tools import distinct
from ..tools.websearch import search_checked
from ..tools.vectorstore import usable_mode
from .erm4_parsing import (
    brief_knowledge,
    check_rewrite,
    filter_candidates,
    interleaved,
    knowledge_text,
    memory_missed,
    query_indexes,
    query_key,
    read_nli_legacy,
    read_rewrite_legacy,
    tag_knowledge,
)
from .erm4_prompts import (
    rewrite_prompt,
    nli_prompt,
)
from .rerank import reranked_by, reranked_search
from .web import no_web, page_fetcher, web_backend

# prompts: nodes/erm4_prompts.py; output reading: nodes/erm4_parsing.py

# ---------------------------------------------------------------- helpers


def _needs_web(ctx: ERM4Context) -> ConfigError:
    return ConfigError(f"external={ctx.external!r} needs a web search: the web setting, $RAGRAPHS_WEB or "
                       "Components(web_search=...)")


def _llm(c: Components, ctx: ERM4Context):
    # the same (spec, max_tokens) as the generator: one model instance per process
    return c.llm(ctx.llm, max_tokens=int(ctx.max_new_tokens))


def _warn_shared(c: Components) -> None:
    """Once per Components: a retriever of the user's has no name that stays the same across
    processes, so its memory is the shared collection ``default``, which every other such
    corpus on this reservoir reads too."""
    if getattr(c, "_warned_shared_memory", False):  # a flag on the object: an id can be another's later
        return
    setattr(c, "_warned_shared_memory", True)
    warnings.warn(
        "ERM4's memory for a retriever or vector store of your own is the reservoir collection 'default', "
        "shared by every such corpus on the default reservoir file (one corpus's memory can answer for another's "
        "questions); set reservoir_collection to a name of this corpus's own to keep it apart",
        UserWarning, stacklevel=3,
    )


def get_reservoir(c: Components, ctx: ERM4Context, store: Any = None) -> Reservoir | StoreReservoir:
    """The graph's reservoir: ``c.extra["reservoir"]``, else with ``reservoir="store"`` the
    run's LangGraph ``store``, else the context's file (opened once per process). Its
    collection is ``reservoir_collection``, or the corpus's own (:meth:`Components.corpus_name`)."""
    r = c.extra.get("reservoir")
    if r is not None:
        return r
    collection = ctx.reservoir_collection or c.corpus_name() or "default"
    if not ctx.reservoir_collection and not ctx.reservoir_path and ctx.reservoir == "file" and c.corpus_name() is None:
        _warn_shared(c)  # the default file, shared by every app of this user
    if ctx.reservoir == "store":
        if "." in collection:  # LangGraph's namespaces refuse it with an error that names no setting
            raise ConfigError(f"reservoir_collection {collection!r}: a LangGraph store's namespace takes no '.'; "
                              "use letters, digits, '_' or '-' with reservoir='store'")
        return StoreReservoir(store, collection=collection)
    bound = int(ctx.reservoir_max_entries or 0)
    return open_reservoir(
        ctx.reservoir_path or None,
        collection=collection,
        embeddings=c.embeddings,
        max_entries=bound if bound > 0 else None,
    )


# ---------------------------------------------------------------- nodes


def make_rewrite(c: Components) -> Node[ERM4State, ERM4Context]:
    """Query Rewriter+: one LLM call -> rewritten question and up to ``max_queries`` queries."""

    def rewrite(state: ERM4State, runtime: Runtime[ERM4Context]) -> dict:
        ctx = context_of(runtime, ERM4Context)
        question = " ".join(question_of(state).split())
        if ctx.external in ("web", "both") and no_web(c, ctx):  # before any LLM call (it was after, until 2026-11-30)
            raise _needs_web(ctx)
        if ctx.use_memory and ctx.reservoir == "store":  # the reservoir's nodes run with use_memory only
            # no store, a '.' in the collection, a store without an index: refused before the LLM call too
            # (at the memory check, after it, until 2026-12-01)
            get_reservoir(c, ctx, getattr(runtime, "store", None))
        max_q = max(1, int(ctx.max_queries))
        out = decide(_llm(c, ctx), rewrite_prompt(question), RewritePlus, stop=["\n", "[Original Question]"],
                     max_tokens=int(ctx.rewrite_max_tokens), legacy=read_rewrite_legacy(question, max_q))
        if out.value is not None:
            rewritten, queries, problem = check_rewrite([out.value.rewritten_question], out.value.queries, question, max_q)
        else:
            rewritten, queries, problem = question, [question], "no rewrite could be read"
        if ctx.include_question_query and query_key(question) not in {query_key(q) for q in queries}:
            queries = [question] + queries
        return {
            "rewritten_question": rewritten,
            "queries": queries,
            **out.usage(),
            "_trace": {**out.trace(), "rewritten": rewritten, "queries": queries, "fallback": problem},
        }

    return rewrite


def make_memory_check(c: Components) -> Node[ERM4State, ERM4Context]:
    """Retrieval Trigger: Pop(q) = #reservoir entries matching q at tau; inside when Pop >= theta.

    ``trigger="title"``: cosine of query and title (the paper); ``trigger="evaluator"``: the
    evaluator judge on (query, "Title\\ncontent") for the ``trigger_candidates`` (at least
    ``theta``) most similar titles (see :mod:`ragraphs.tools.trigger`). Inside queries take their knowledge from the
    reservoir (up to ``memory_k`` matching entries, best first; those the filter keeps are marked
    as used for the eviction order); outside queries go to external retrieval.
    """

    def memory_check(state: ERM4State, runtime: Runtime[ERM4Context]) -> dict:
        ctx = context_of(runtime, ERM4Context)
        queries = list(state.get("queries") or [state["question"]])
        tau, theta = float(ctx.tau), int(ctx.theta)
        if not ctx.use_memory:
            routes = [{"query": q, "popularity": 0} for q in queries]
            return {
                "inside": [], "outside": routes, "memory_knowledge": [], "external_knowledge": [],
                "_trace": {"memory": "off", "outside": routes},
            }
        how = ctx.trigger
        res = get_reservoir(c, ctx, runtime.store)
        found = trigger_lookup(res, queries, tau, int(ctx.memory_k), how=how,
                               judge=c.judge("evaluator") if how == "evaluator" else None,
                               # popularity counts among the candidates: fewer than theta sent every
                               # query outside (trigger_candidates=2, theta=3) until 2026-12-01
                               candidates=max(int(ctx.trigger_candidates), theta))
        inside, outside, knowledge = [], [], []
        for qi, (q, (pop, entries)) in enumerate(zip(queries, found)):
            route = {"query": q, "popularity": int(pop)}
            if pop >= theta:
                inside.append(route)
                knowledge += tag_knowledge(entries, qi, q, "memory")
            else:
                outside.append(route)
        return {
            "inside": inside,
            "outside": outside,
            "memory_knowledge": knowledge,
            "external_knowledge": [],  # filled by the retrieve node for the outside queries
            "_trace": {"trigger": how, "tau": tau, "theta": theta, "inside": inside, "outside": outside, "memory": brief_knowledge(knowledge)},
        }

    return memory_check


def route_after_memory(state: dict) -> str:
    """``external`` when some query is outside the knowledge boundary, else ``memory_only``."""
    return "external" if state.get("outside") else "memory_only"


def _query_part(p: Passage, query: str, max_chars: int) -> Passage:
    """A fetched page cut to its paragraphs BM25 ranks best for the query that found it
    (paper, section 6), which the filter reads and the reservoir keeps; a snippet as it is."""
    if not (p.get("meta") or {}).get("fetched"):
        return p
    text, kept, total = query_paragraphs(query, p.get("text") or "", max_chars)
    # its own id: the same page cut for another query is other knowledge, not a copy to drop
    return {**p, "id": passage_id(p.get("title") or "", text), "text": text,
            "meta": {**p["meta"], "paragraphs_kept": f"{kept}/{total}", "page_id": p["id"]}}


def _address(p: Passage) -> str:
    return str((p.get("meta") or {}).get("url") or "")


def make_external_retrieve(c: Components) -> Node[ERM4State, ERM4Context]:
    """External retrieval for the outside queries: the vector store and/or web search."""

    def retrieve(state: ERM4State, runtime: Runtime[ERM4Context]) -> dict:
        ctx = context_of(runtime, ERM4Context)
        queries = list(state.get("queries") or [])
        missed = list(state.get("memory_missed") or []) if state.get("filter_passes") else []
        # the recheck: only the inside queries whose memory the filter dropped, after what the first pass found
        outside = {r["query"] for r in (missed or state.get("outside") or [])}
        earlier = list(state.get("external_knowledge") or []) if missed else []
        source = ctx.external
        backend = web_backend(c, ctx)[0] if source in ("web", "both") else None
        if source in ("web", "both") and backend is None:
            raise _needs_web(ctx)
        k = int(ctx.k)
        # the corpus is opened only where it is read (external="web" reads the web alone)
        mode = usable_mode(c.retriever, ctx.retrieval) if source in ("corpus", "both") else ctx.retrieval
        web_timeout = float(ctx.web_timeout)
        knowledge: list[Passage] = []
        web_calls = 0
        web_errors: list[str] = []
        malformed = 0
        fetched: list[dict] = []
        pages: dict[str, Passage] = {}  # each address fetched once a question, whichever queries find it
        # the recheck fetches no address the first pass fetched (its cut is already knowledge): the snippet stands
        seen = {_address(p) for p in earlier if (p.get("meta") or {}).get("fetched")}
        per_query = []
        for qi, q in enumerate(queries):
            if q not in outside:
                continue
            got: list[Passage] = []
            if source in ("corpus", "both"):
                got += reranked_search(c, q, k, mode, ctx)[0]
            web_got: list[Passage] = []
            if source in ("web", "both"):
                web_calls += 1
                # a failed, slow or garbled web search costs its knowledge, not the run
                try:
                    web, bad = search_checked(backend, q, k, web_timeout)
                except GraphBubbleUp:  # an interrupt() inside a component pauses the run; it is no failure
                    raise
                except Exception as e:
                    web_errors.append(f"web search {q!r} failed: {type(e).__name__}: {str(e)[:200]}")
                else:
                    web = distinct(web)  # copies of a page: fetched and kept once (3 times until 2026-12-03)
                    if web and ctx.fetch_pages:
                        new = [p for p in web[:k] if _address(p) not in pages and _address(p) not in seen]
                        done, report = fetch_results(page_fetcher(c, ctx), new)
                        pages.update({_address(p): p for p in done if _address(p)})
                        web = [pages.get(_address(p), p) for p in web[:k]]
                        web = [_query_part(p, q, int(ctx.max_passage_chars)) for p in web]
                        fetched += report
                    web_got = web[:k]
                    malformed += bad
                    if bad and not web:
                        web_errors.append(f"web search {q!r} returned no usable results ({bad} malformed)")
            got = interleaved(got, web_got) if got and web_got else got + web_got
            knowledge += tag_knowledge(got, qi, q, "external")
            per_query.append({"query": q, "n": len(got)})
        trace: dict[str, Any] = {"source": source, "k": k, **(reranked_by(ctx, k) if source != "web" else {}),
                                 "queries": per_query, "retrieved": brief_knowledge(knowledge)}
        if missed:
            trace["recheck"] = [r["query"] for r in missed]
        update: dict[str, Any] = {"external_knowledge": earlier + knowledge, "web_calls": web_calls}
        if malformed:
            trace["malformed_results"] = malformed
        if fetched:
            trace["fetched"] = fetched
        if web_errors:
            update["web_error"] = trace["web_error"] = "; ".join(web_errors)
        return {**update, "_trace": trace}

    return retrieve


def make_filter(c: Components) -> Node[ERM4State, ERM4Context]:
    """Knowledge Filter: keep the knowledge judged entailment for the rewritten question.

    ``filter="judge"`` (default): the ``filter_judge`` role scores each instance and keeps it
    at >= ``filter_threshold`` (None: the judge's own cut, ``own_threshold``):
    ``"evaluator"``, relevance of (question, knowledge) in [-1, 1]; ``"nli"``, entailment
    probability of (knowledge, question) in [0, 1]. ``filter="llm"``: the paper's NLI prompt,
    one call per instance, kept when the label is entailment. ``filter="none"``: keep everything
    (the paper's Rewriter+-Retriever-Reader). When nothing survives: back-off.
    """

    def filter_knowledge(state: ERM4State, runtime: Runtime[ERM4Context]) -> dict:
        ctx = context_of(runtime, ERM4Context)
        question = state.get("rewritten_question") or state["question"]
        passes = int(state.get("filter_passes") or 0)
        rechecked = list(state.get("memory_missed") or []) if passes else []
        if rechecked:  # the second pass: what the outside search found for them, beside what the first kept
            again = query_indexes(state, rechecked)

            def new_for_them(p: Passage) -> bool:
                meta = p.get("meta") or {}
                return meta.get("knowledge") == "external" and int(meta.get("query_index", -1)) in again
            # what the first pass judged (kept or dropped) is not judged again, nor counted twice
            first = filter_candidates({**state, "external_knowledge": [p for p in state.get("external_knowledge") or []
                                                                       if not new_for_them(p)]}, int(ctx.max_knowledge))
            judged = Held(first)
            cands = [p for p in filter_candidates(state, None) if new_for_them(p) and p not in judged][: int(ctx.max_knowledge)]
            before = list(state.get("passages") or [])
        else:
            cands, before = filter_candidates(state, int(ctx.max_knowledge)), []
        how = ctx.filter
        update: dict[str, Any] = {}
        decisions: list[dict] = []
        if how == "none":
            kept = cands
        elif how == "judge":
            role = ctx.filter_judge
            pairs = [(question, knowledge_text(p)) if role == "evaluator" else (knowledge_text(p), question) for p in cands]
            judge = c.judge(role)
            scores = judge.score_batch(pairs) if cands else []
            thr = ctx.filter_threshold
            # None: the judge's own cut, else the scale's middle
            thr = own_threshold(judge, 0.0 if role == "evaluator" else 0.5) if thr is None else float(thr)
            kept = [with_score(p, float(s)) for p, s in zip(cands, scores) if float(s) >= thr]
            decisions = [{"title": p["title"], "score": round(float(s), 4), "kept": float(s) >= thr} for p, s in zip(cands, scores)]
        else:  # "llm"
            llm, kept = _llm(c, ctx), []
            usage = {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0, "parse_failures": 0}
            for p in cands:
                out = decide(llm, nli_prompt(question, knowledge_text(p), ctx.hypothesis),
                             Entailment, stop=["\n", "[Question]"], max_tokens=16, legacy=read_nli_legacy)
                usage = {k: usage[k] + v for k, v in out.usage().items()}
                yes = out.value is not None and out.value.entailment == "yes"
                if yes:
                    kept.append(p)
                decisions.append({"title": p["title"], "entailment": yes, "kept": yes, "parsed": out.how})
            if usage["llm_calls"]:
                update.update(usage)
        missed = [] if passes or not ctx.memory_recheck else memory_missed(state, cands, kept)
        dropped = len(cands) - len(kept)
        held = Held(before)
        kept = before + [p for p in kept if p not in held]
        backoff = not kept and not missed
        if kept and ctx.use_memory:  # the entries served and kept are the ones used (eviction order)
            served = [p["title"] for p in kept if p.get("source") == "memory"]
            if served:
                get_reservoir(c, ctx, runtime.store).touch(served)
        update.update({
            "passages": reset(kept),
            "filtered_out": (int(state.get("filtered_out") or 0) if passes else 0) + dropped,
            "backoff": backoff,
            "filter_passes": passes + 1,
            **({"memory_missed": missed} if not passes else {}),
            "_trace": {"filter": how, "judge": ctx.filter_judge if how == "judge" else None, "candidates": len(cands),
                       "kept": len(kept), "backoff": backoff, "decisions": decisions,
                       **({"recheck": [r["query"] for r in missed]} if missed else {})},
        })
        return update

    return filter_knowledge


def route_after_filter(state: dict) -> str:
    """``recheck`` when an inside query's memory was all dropped (its outside search, once),
    ``backoff`` when the filter kept nothing (answer without external knowledge), else ``answer``."""
    if state.get("memory_missed") and int(state.get("filter_passes") or 0) == 1:
        return "recheck"
    return "backoff" if state.get("backoff") else "answer"


def _question_for_answer(state: ERM4State, ctx: ERM4Context) -> str:
    if ctx.answer_question == "original":
        return state["question"]
    return state.get("rewritten_question") or state["question"]


def make_generate(c: Components) -> Node[ERM4State, ERM4Context]:
    """The reader: the rewritten question with the filtered knowledge (one LLM call)."""
    from ..prompts import rag_answer_prompt

    def generate(state: ERM4State, runtime: Runtime[ERM4Context]) -> dict:
        ctx = context_of(runtime, ERM4Context)
        passages = state.get("passages") or []
        if ctx.skip_generation:
            return {"answer": "", "_trace": {"skipped": "skip_generation", "n_passages": len(passages)}}
        q = _question_for_answer(state, ctx)
        prompt = rag_answer_prompt(q, passages, max_chars=int(ctx.max_passage_chars))
        out = complete(_llm(c, ctx), prompt, stop=STOP_ANSWER, max_tokens=int(ctx.max_new_tokens))
        return {
            "answer": clean_answer(out.text, cut_asides=bool(ctx.cut_asides), whole=bool(ctx.whole_answer)),
            **llm_usage(out),
            "_trace": {"question": q, "n_passages": len(passages), "raw": out.text[:500], "input_tokens": out.input_tokens},
        }

    return generate


def make_backoff_generate(c: Components) -> Node[ERM4State, ERM4Context]:
    """Back-off: no knowledge survived the filter, so the LLM answers on its own."""

    def backoff(state: ERM4State, runtime: Runtime[ERM4Context]) -> dict:
        ctx = context_of(runtime, ERM4Context)
        if ctx.skip_generation:
            return {"answer": "", "_trace": {"skipped": "skip_generation", "backoff": True}}
        q = _question_for_answer(state, ctx)
        out = complete(_llm(c, ctx), closed_book_prompt(q), stop=STOP_ANSWER, max_tokens=int(ctx.max_new_tokens))
        return {"answer": clean_answer(out.text, cut_asides=bool(ctx.cut_asides), whole=bool(ctx.whole_answer)), **llm_usage(out), "_trace": {"question": q, "backoff": True, "raw": out.text[:500]}}

    return backoff


def make_memory_update(c: Components) -> Node[ERM4State, ERM4Context]:
    """Memory Knowledge Reservoir update: store the kept external title-content pairs
    (a newer entry replaces the stored one with the same title)."""

    def memory_update(state: ERM4State, runtime: Runtime[ERM4Context]) -> dict:
        ctx = context_of(runtime, ERM4Context)
        if not ctx.use_memory or not ctx.update_memory:
            return {"memory_update": {"offered": 0}, "_trace": {"memory": "not updated"}}
        fresh = [p for p in state.get("passages") or [] if p.get("source") != "memory"]
        res = get_reservoir(c, ctx, runtime.store)
        if not fresh:
            counts = {"added": 0, "replaced": 0, "unchanged": 0, "skipped": 0, "evicted": 0}
        elif isinstance(res, Reservoir) and c.extra.get("reservoir") is None:
            # the run's bound goes with its write (a file reservoir is shared by the process's runs)
            counts = res.add(fresh, max_entries=int(ctx.reservoir_max_entries or 0) or None)
        else:
            counts = res.add(fresh)
        # offered, not stored: a pair without a title is skipped (the counts say what was stored;
        # the trace said "stored" for every pair offered until 2026-11-30)
        return {"memory_update": counts, "_trace": {"offered": len(fresh), **counts}}

    return memory_update
