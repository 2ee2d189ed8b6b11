"""DR-RAG nodes: a retrieval cascade, the pair classifier's selections, one LLM call.

The paper (Hei et al. 2024, "DR-RAG: Applying Dynamic Document Relevance to
Retrieval-Augmented Generation for Question-Answering") retrieves ``k1`` *static-relevant*
documents with the query (first stage), concatenates the query with each of them and
retrieves again (second stage) to reach *dynamic-relevant* documents, which share little
with the query alone. A small classifier C(q, d1, d2) decides whether two documents
together matter for the query. Strategies (the paper's Table 5):

- ``sm``:  top-k by similarity (one retrieval; with ``retrieval="bm25"`` the BM25 row);
- ``qdc``: Query-Document Concatenation: the first new second-stage document of each
  pair is added until the context holds k documents (Eq. 1);
- ``cis``: Classifier Inverse Selection: QDC, then every second-stage document that C
  rejects together with *all* first-stage documents is dropped (Eq. 3);
- ``cfs``: Classifier Forward Selection: for each first-stage document, walk its
  second-stage list and keep the first document C accepts with it (Eq. 4; the paper's Algorithm 1 keeps every accepted one).

Each retrieval stage is a cascade: a wide candidate list (dense, BM25, or both fused by
reciprocal rank), optionally re-ranked by a cross-encoder (``rerank``, default none: DR-RAG's
own ``rerank`` node for the first stage, ``rerank_second`` for the second). Within the budget of ``k`` documents, CFS keeps the
k1 static documents, adds for each the dynamic document C accepts, and (``fill``) fills the
rest with the next re-ranked first-stage candidates, so that when C accepts nothing CFS hands
the LLM exactly SM's documents (with title links on: unless the question names a page). Every
classifier decision of a question is one batched ``score_pairs`` call, every retrieval of a
stage one batched search.

Title links (not in the paper; :mod:`ragraphs.nodes.dr_rag_links`) follow the pages a text
names: the first stage puts the candidates the question names first, the second stage adds
the pages each static document names, and CFS / CIS add a bonus to such a partner's score,
and a smaller one (``bridge_bonus``) to a partner that shares a capitalised name with its
static document, the bridge entity.
"""

from __future__ import annotations

from typing import Any, Mapping

from langgraph.runtime import Runtime

from ..components import Components
from ..prompts import one_line
from ..settings import DRRAGContext, context_of
from ..state.dr_rag import DRRAGState
from ..state.types import Node, Passage, question_of, reset, with_meta
from ..tools.judges import own_threshold, score_triples
from ..tools.text import Held
from ..tools.vectorstore import usable_mode
from .dr_rag_links import linked_candidates, pair_priors, uses_question_links
from .dr_rag_select import fill_budget, forward_walk, never_accepted, priors_of, qdc_select
from .links import lead_with_named, named_count, question_links, title_index_of
from .rerank import brief, judge_scores, rerank_passages, rerank_spec, reranker_of
from .retrieve import search_many


DEFAULT_THRESHOLD = 0.5  # the pair classifier's acceptance cut for a judge that names none


# ---------------------------------------------------------------- helpers
def strategy_of(ctx: Any) -> str:
    return ctx.strategy  # sm | qdc | cis | cfs: DRRAGContext checks it when built


def first_stage_size(ctx: Any) -> int:
    """k1: the run's ``k1``, else ceil(k/2) (the paper's k1 + k2 = k with one new document per pair)."""
    k = max(1, int(ctx.k))
    k1 = ctx.k1
    k1 = (k + 1) // 2 if k1 in (None, 0, "") else int(k1)
    return max(1, min(k1, k))


def kept_first(ctx: Any, state: Mapping[str, Any]) -> int:
    """Documents the first stage hands on: k for SM, k1 otherwise."""
    strategy = state.get("strategy") or strategy_of(ctx)
    return max(1, int(ctx.k)) if strategy == "sm" else first_stage_size(ctx)


def second_mode(ctx: Any) -> str:
    mode = ctx.second_retrieval
    if mode in (None, "", "same"):
        return ctx.retrieval
    return str(mode)


def second_rerank_of(ctx: Any) -> str:
    return "none" if rerank_spec(ctx) == "none" else ctx.second_rerank


def pair_threshold(ctx: Any, judge: Any) -> float:
    """The acceptance threshold: the run's ``pair_threshold``; else the judge's own ``threshold``
    (the shipped pair judge's cross-fitted cut); else 0.5."""
    t = ctx.pair_threshold
    if t is not None:
        return float(t)
    return own_threshold(judge, DEFAULT_THRESHOLD)


def doc_text(p: Passage, sep: str = ". ") -> str:
    """A passage as one text: title and text (the judges take ``sep="\\n"``)."""
    title = (p.get("title") or "").strip()
    text = " ".join((p.get("text") or "").split())
    return f"{title}{sep}{text}" if title else text


def judge_text(p: Passage) -> str:
    return doc_text(p, "\n")


def concat_query(question: str, doc: Passage, max_chars: int = 400) -> str:
    """q*_i = Concat(q, d_i): the question followed by the document (title and text)."""
    d = doc_text(doc)
    if max_chars and len(d) > max_chars:
        d = d[:max_chars]
    return f"{one_line(question)} {d}"


# ---------------------------------------------------------------- retrieval nodes
def make_first_stage(c: Components) -> Node[DRRAGState, DRRAGContext]:
    """First stage: the question's candidates (``rerank_depth`` of them when a re-ranker
    follows); without a re-ranker its top k (SM) or k1 are the static-relevant documents."""

    def first_stage(state: DRRAGState, runtime: Runtime[DRRAGContext]) -> dict:
        ctx = context_of(runtime, DRRAGContext)
        question = question_of(state)
        strategy = strategy_of(ctx)
        mode = usable_mode(c.retriever, ctx.retrieval)
        k = max(1, int(ctx.k))
        n = k if strategy == "sm" else first_stage_size(ctx)
        # without a re-ranker, SM's top k (CFS fills its budget from them); with one, a wide list
        depth = k if rerank_spec(ctx) == "none" else max(k, int(ctx.rerank_depth))
        cands = search_many(c.retriever, [question], depth, mode, ctx.fusion_k)[0][:depth]
        named = 0
        if uses_question_links(ctx, strategy):
            wide = int(ctx.link_depth)
            pool = cands if wide <= depth else search_many(c.retriever, [question], wide, mode, ctx.fusion_k)[0][:wide]
            cands = lead_with_named(question, cands, pool, title_index_of(c.retriever))
            named = named_count(cands)
        cands = [with_meta(d, stage=1) for d in cands]
        docs = cands[:n]
        return {
            "strategy": strategy,
            "candidates": cands,
            "first_stage": docs,
            "second_stage": [],
            "classifier_scores": [],
            "rejected": [],
            "rerank_scores": {},
            "passages": reset(docs),
            "_trace": {"strategy": strategy, "mode": mode, "k": k, "n": n, "depth": depth, "named_by_question": named,
                       "retrieved": [brief(d) for d in docs], "out_ids": [d["id"] for d in cands]},
        }

    return first_stage


def make_rerank_first(c: Components) -> Node[DRRAGState, DRRAGContext]:
    """``rerank``: the cross-encoder scores every candidate with the question; the best k
    (SM) or k1 become the static-relevant documents."""

    def rerank(state: DRRAGState, runtime: Runtime[DRRAGContext]) -> dict:
        ctx = context_of(runtime, DRRAGContext)
        spec = rerank_spec(ctx)
        judge = reranker_of(c, spec)
        cands = list(state.get("candidates") or [])
        n = kept_first(ctx, state)
        cache: dict = {}
        ranked = rerank_passages(judge, state["question"], cands, cache)
        if uses_question_links(ctx, state.get("strategy") or strategy_of(ctx)):
            ranked = question_links(state["question"], ranked, title_index_of(c.retriever))
        docs = ranked[:n]
        return {
            "candidates": ranked,
            "first_stage": docs,
            "rerank_scores": cache,
            "passages": reset(docs),
            "_trace": {"reranker": getattr(judge, "name", spec), "n_scored": len(cache), "keep": n,
                       "kept": [brief(d) for d in docs], "out_ids": [d["id"] for d in docs]},
        }

    return rerank


def make_second_stage(c: Components) -> Node[DRRAGState, DRRAGContext]:
    """Second stage: one search per q*_i = <q, d_i> (batched), ``k2`` candidates each."""

    def second_stage(state: DRRAGState, runtime: Runtime[DRRAGContext]) -> dict:
        ctx = context_of(runtime, DRRAGContext)
        first = list(state.get("first_stage") or [])
        depth = max(1, int(ctx.k2))
        mode = usable_mode(c.retriever, second_mode(ctx))
        if len(first) >= max(1, int(ctx.k)):  # k1 = k: the budget is full, nothing to search or score
            return {"second_stage": [], "_trace": {"skipped": f"the first stage holds k = {int(ctx.k)} documents",
                                                   "out_ids": [p["id"] for p in first]}}
        queries = [concat_query(state["question"], d, int(ctx.concat_chars)) for d in first]
        second = search_many(c.retriever, queries, depth, mode, ctx.fusion_k) if queries else []
        second = linked_candidates(c.retriever, first, second, int(ctx.link_expand or 0))
        pool = list(dict.fromkeys([p["id"] for p in first] + [p["id"] for cands in second for p in cands]))
        return {
            "second_stage": second,
            "_trace": {"mode": mode, "k2": depth, "link_expand": int(ctx.link_expand or 0),
                       "linked": [sum(1 for p in cands if (p.get("meta") or {}).get("linked_from")) for cands in second],
                       "candidates": [[brief(p) for p in cands] for cands in second],
                       "out_ids": pool},
        }

    return second_stage


def make_rerank_second(c: Components) -> Node[DRRAGState, DRRAGContext]:
    """``rerank_second``: re-order each second-stage list by the cross-encoder's score of the
    candidate with the question (``second_rerank="question"``, scores shared with the first
    stage) or with the concatenated query q*_i (``"concat"``)."""

    def rerank_second(state: DRRAGState, runtime: Runtime[DRRAGContext]) -> dict:
        ctx = context_of(runtime, DRRAGContext)
        how = second_rerank_of(ctx)
        if how == "none":
            return {"_trace": {"skipped": "second_rerank=none"}}
        judge = reranker_of(c, rerank_spec(ctx))
        first = list(state.get("first_stage") or [])
        second = list(state.get("second_stage") or [])
        cache = dict(state.get("rerank_scores") or {})
        n0 = len(cache)
        if how == "question":
            flat = [p for cands in second for p in cands]
            judge_scores(judge, state["question"], flat, cache)
            ranked = [rerank_passages(judge, state["question"], cands, cache) for cands in second]
            scored = len(cache) - n0
        else:
            chars = int(ctx.concat_chars)
            ranked, scored = [], 0
            for d, cands in zip(first, second):
                local: dict = {}
                ranked.append(rerank_passages(judge, concat_query(state["question"], d, chars), cands, local))
                scored += len(local)
        return {
            "second_stage": ranked,
            "rerank_scores": cache,
            "_trace": {"how": how, "n_scored": scored, "top": [brief(r[0]) for r in ranked if r]},
        }

    return rerank_second


# ---------------------------------------------------------------- selection nodes
def make_qdc_select(c: Components) -> Node[DRRAGState, DRRAGContext]:
    """QDC (Eq. 1): the first new document of each (re-ranked) second-stage list, up to k."""

    def qdc(state: DRRAGState, runtime: Runtime[DRRAGContext]) -> dict:
        k = max(1, int(context_of(runtime, DRRAGContext).k))
        first = list(state.get("first_stage") or [])
        added = qdc_select(first, list(state.get("second_stage") or []), k)
        return {"passages": added, "_trace": {"qdc_added": [brief(p) for p in added],
                                              "out_ids": [p["id"] for p in first + added]}}

    return qdc


def make_inverse_select(c: Components) -> Node[DRRAGState, DRRAGContext]:
    """CIS (Eq. 3): drop each second-stage document C rejects together with every d_i."""

    def inverse_select(state: DRRAGState, runtime: Runtime[DRRAGContext]) -> dict:
        ctx = context_of(runtime, DRRAGContext)
        question = state["question"]
        first = list(state.get("first_stage") or [])
        first_ids = {p["id"] for p in first}
        context = list(state.get("passages") or [])
        dynamic = [p for p in context if p["id"] not in first_ids]
        judge = c.judge("pair")
        th = pair_threshold(ctx, judge)
        pairs = [(d, dp) for dp in dynamic for d in first]
        scores = score_triples(judge, [(question, judge_text(d), judge_text(dp)) for d, dp in pairs], ctx.pair_tokens)
        bonus, bridge = pair_priors(ctx, question, pairs, c.retriever)
        decisions = []
        for (d, dp), s in zip(pairs, scores):
            priors = priors_of((d["id"], dp["id"]), bonus, bridge)
            decisions.append({"first": d["id"], "second": dp["id"], "score": round(s, 6),
                              "accepted": s + sum(priors.values()) >= th, **priors})
        keep_ids = {x["second"] for x in decisions if x["accepted"]}
        kept = [p for p in dynamic if p["id"] in keep_ids]
        dropped = [p["id"] for p in dynamic if p["id"] not in keep_ids]
        return {
            "passages": reset(first + kept),
            "classifier_scores": decisions,
            "pair_threshold": th,
            "rejected": dropped,
            "_trace": {"threshold": th, "judge": getattr(judge, "name", type(judge).__name__), "n_pairs": len(pairs),
                       "kept": [brief(p) for p in kept], "dropped": dropped, "out_ids": [p["id"] for p in first + kept]},
        }

    return inverse_select


def make_forward_select(c: Components) -> Node[DRRAGState, DRRAGContext]:
    """CFS (Eq. 4): per d_i, keep one d'_ij not in Cnt that C accepts; then
    (``extra_partners``) the other accepted candidates, best first, and (``fill``) the next
    re-ranked first-stage candidates up to k."""

    def forward_select(state: DRRAGState, runtime: Runtime[DRRAGContext]) -> dict:
        ctx = context_of(runtime, DRRAGContext)
        question = state["question"]
        k = max(1, int(ctx.k))
        first = list(state.get("first_stage") or [])
        second = list(state.get("second_stage") or [])
        held = Held(first)
        judge = c.judge("pair")
        th = pair_threshold(ctx, judge)
        # every candidate the walk may look at, scored in one batch
        pairs = [(i, d) for i, cands in enumerate(second) for d in cands if d not in held]
        scores = score_triples(judge, [(question, judge_text(first[i]), judge_text(d)) for i, d in pairs], ctx.pair_tokens)
        score_of = {(first[i]["id"], d["id"]): s for (i, d), s in zip(pairs, scores)}
        pick = str(ctx.pick or "best")
        docs = [(first[i], d) for i, d in pairs]
        bonus, bridge = pair_priors(ctx, question, docs, c.retriever)
        added, decisions = forward_walk(first, second, score_of, th, k, pick, bonus, bool(ctx.extra_partners), bridge)
        filled = fill_budget(first + added, state.get("candidates") or [], k) if ctx.fill else []
        # a filled one was rejected by C yet is fed
        rejected = never_accepted(decisions, {p["id"] for p in first + added + filled})
        return {
            "passages": added + filled,
            "classifier_scores": decisions,
            "pair_threshold": th,
            "rejected": rejected,
            "_trace": {
                "threshold": th,
                "judge": getattr(judge, "name", type(judge).__name__),
                "pick": pick,
                "n_scored": len(pairs),
                "n_linked": len(bonus),
                "n_bridged": len(bridge),
                "added": [brief(p) for p in added],
                "filled": [brief(p) for p in filled],
                "out_ids": [p["id"] for p in first + added + filled],
            },
        }

    return forward_select
