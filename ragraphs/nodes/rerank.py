"""Re-ranking with a cross-encoder: the shared ``rerank`` node and its helpers.

A first retrieval stage fetches a wide list of candidates cheaply (dense, BM25 or both fused);
the re-ranker reads the question and each candidate *together* and keeps the best few. The
re-ranker is the run's ``rerank`` setting:

- ``none``: keep the retrieval order (no model is loaded);
- ``evaluator``: the graph's evaluator judge (``Components.judge("evaluator")``: the shipped
  multi-task cross-encoder, or the user's);
- any other value: a local CrossEncoder directory or cached model name, loaded once per
  process with :func:`ragraphs.tools.judges.load_judge` as an evaluator.

Scores go on the passages (``score``; the retrieval score moves to ``meta.retrieval_score``),
so traces and Studio show why a passage was kept.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from langgraph.runtime import Runtime

from ..components import Components
from ..setting_values import rerank_name
from ..settings import RAGContext, context_of
from ..state.types import Node, Passage, reset
from .links import linked_search, named_count, question_links, title_index_of


def rerank_spec(ctx: Any) -> str:
    """The run's ``rerank`` setting as the nodes read it (:func:`~ragraphs.setting_values.rerank_name`)."""
    return rerank_name((ctx or RAGContext()).rerank)  # a graph invoked without context: the defaults


def reranker_of(c: Components, spec: str) -> Any | None:
    """The judge a ``rerank`` setting names (None for ``none``), loaded once per Components."""
    return c.reranker(spec)


def retrieval_depth(ctx: Any, k: int) -> int:
    """How many candidates to retrieve: k, or the re-ranker's ``rerank_depth`` when it re-ranks."""
    if rerank_spec(ctx) == "none":
        return k
    return max(k, int(ctx.rerank_depth or k))


def reranked_by(ctx: Any, k: int) -> dict[str, Any]:
    """What a trace says of a per-query re-rank (ERM4's, MIGRES's): the re-ranker and the
    candidates it read per query; nothing without one."""
    spec = rerank_spec(ctx)
    return {} if spec == "none" else {"reranker": spec, "depth": retrieval_depth(ctx, k)}


def reranked_search(c: Components, query: str, k: int, mode: str, ctx: Any) -> tuple[list[Passage], int]:
    """A query's ``k`` passages: :func:`~ragraphs.nodes.links.linked_search` over
    ``rerank_depth`` candidates re-ranked against the query when the ``rerank`` setting names a
    re-ranker (ERM4's and MIGRES's per-query retrieval), else its first ``k``; with how many the
    query named."""
    judge = reranker_of(c, rerank_spec(ctx))
    got, named = linked_search(c.retriever, query, retrieval_depth(ctx, k), mode, ctx)
    if judge is None:
        return got[:k], named
    ranked = rerank_passages(judge, query, got)
    index = title_index_of(c.retriever) if getattr(ctx, "link_question", False) else None
    if index is not None:  # the pages the query names stay first, as the shared rerank node keeps them
        ranked = question_links(query, ranked, index)
    kept = ranked[:k]
    return kept, named_count(kept)


def passage_text(p: Passage) -> str:
    """A passage as the judges read it: ``"Title\\ntext"``."""
    title = (p.get("title") or "").strip()
    text = " ".join((p.get("text") or "").split())
    return f"{title}\n{text}" if title else text


def judge_scores(judge: Any, query: str, passages: Sequence[Passage], cache: dict | None = None) -> list[float]:
    """The judge's score of each passage for ``query`` in one batch; ``cache`` (passage id ->
    score, for this query) is read and filled, so a passage is scored once per question."""
    cache = {} if cache is None else cache
    todo = [p for p in dict((p["id"], p) for p in passages).values() if p["id"] not in cache]
    if todo:
        pairs = [(query, passage_text(p)) for p in todo]
        if hasattr(judge, "score_batch"):
            got = judge.score_batch(pairs)
        else:
            got = [judge.score(q, t) for q, t in pairs]
        for p, s in zip(todo, got):
            cache[p["id"]] = float(s)
    return [cache[p["id"]] for p in passages]


def rerank_passages(judge: Any, query: str, passages: Sequence[Passage], cache: dict | None = None) -> list[Passage]:
    """``passages`` sorted by the judge's score (ties keep the retrieval order)."""
    passages = list(passages)
    if judge is None or not passages:
        return passages
    scores = judge_scores(judge, query, passages, cache)
    order = sorted(range(len(passages)), key=lambda i: (-scores[i], i))
    out: list[Passage] = []
    for i in order:
        p = passages[i]
        meta = {**(p.get("meta") or {}), "retrieval_score": p.get("score"), "retrieval_rank": i + 1}
        out.append({**p, "score": scores[i], "meta": meta})
    return out


def brief(p: Passage) -> dict:
    return {"id": p["id"], "title": p.get("title", ""), "score": p.get("score")}


def make_rerank(
    c: Components,
    *,
    source: str = "passages",
    keep: Callable[[Any, dict], int] | None = None,
    extra: Callable[[dict, list[Passage], list[Passage]], dict] | None = None,
) -> Node[Any, Any]:
    """The ``rerank`` node: score ``state[source]`` against the question with the run's
    re-ranker, keep the best ``keep(ctx, state)`` (default ``ctx.k``) as ``passages``.

    ``extra(state, ranked, kept)`` adds graph-specific fields to the update."""

    def rerank(state: dict, runtime: Runtime) -> dict:
        ctx = context_of(runtime, RAGContext)
        spec = rerank_spec(ctx)
        judge = reranker_of(c, spec)
        candidates = list(state.get(source) or [])
        n = keep(ctx, state) if keep else max(1, int(ctx.k))
        cache: dict = {}
        ranked = rerank_passages(judge, state.get("question") or "", candidates, cache)
        index = title_index_of(c.retriever) if getattr(ctx, "link_question", False) else None
        if index is not None:  # the candidates the question names stay first (a retriever without a
            # title index leaves the order as it is, as its search does; until 2026-11-30 titles alone were matched here)
            ranked = question_links(state.get("question") or "", ranked, index)
        kept = ranked[:n]
        update = {
            "passages": reset(kept),
            "_trace": {
                "reranker": spec if judge is None else getattr(judge, "name", spec),
                "n_candidates": len(candidates),
                "n_scored": len(cache),
                "keep": n,
                "kept": [brief(p) for p in kept],
                "out_ids": [p["id"] for p in kept],
            },
        }
        if extra:
            update.update(extra(state, ranked, kept))
        return update

    return rerank


__all__ = ["brief", "judge_scores", "make_rerank", "passage_text", "rerank_passages", "rerank_spec", "reranked_search",
           "reranked_by", "reranker_of", "retrieval_depth"]
