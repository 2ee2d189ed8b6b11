"""Title links shared by the retrieval nodes: the candidates whose title the question names.

A question very often names the page it is about ("Who directed *The Ninth Gate*?"), and a
Wikipedia-style corpus gives every passage its page title, so a candidate whose title the
question names is put first (see :mod:`ragraphs.tools.titles` for what counts as naming).
DR-RAG's static documents, the shared ``retrieve`` node (vanilla, CRAG), MIGRES's and ERM4's
retrieval for each query and the shared ``rerank`` node use it, each behind the
run's ``link_question`` setting; a retriever without a title index (a LangChain
store) leaves the order as it is.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..state.types import Passage, with_meta
from ..tools.titles import names


def title_index_of(retriever: Any) -> Any:
    """The retriever's :class:`~ragraphs.tools.titles.TitleIndex`, or None where it has none."""
    index = getattr(retriever, "title_index", None)
    return index() if callable(index) else None


def index_names(index: Any, title: str, text: str) -> bool:
    """Whether ``text`` names ``title``: with the corpus's index (generic titles never, short
    names too) or, without one, by the title alone."""
    return index.names(title, text) if index is not None else names(title, text)


def question_links(question: str, cands: Sequence[Passage], index: Any = None) -> list[Passage]:
    """``cands`` with those whose title the question names first (each group in its order),
    marked ``named_by_question``."""
    named = [d for d in cands if index_names(index, d.get("title") or "", question)]
    ids = {d["id"] for d in named}
    return [with_meta(d, named_by_question=True) for d in named] + [d for d in cands if d["id"] not in ids]


def lead_with_named(question: str, cands: Sequence[Passage], pool: Sequence[Passage], index: Any) -> list[Passage]:
    """``cands`` led by the passages of ``pool`` (a wider candidate list) whose title the
    question names."""
    found = [d for d in question_links(question, pool, index) if (d.get("meta") or {}).get("named_by_question")]
    ids = {d["id"] for d in found}
    return found + [d for d in cands if d["id"] not in ids]


def named_count(passages: Sequence[Passage]) -> int:
    """How many of ``passages`` are marked ``named_by_question``."""
    return sum(bool((p.get("meta") or {}).get("named_by_question")) for p in passages)


def linked_search(retriever: Any, query: str, k: int, mode: str, ctx: Any) -> tuple[list[Passage], int]:
    """``retriever.search(query, k, mode)``, led (with ``ctx.link_question`` and a retriever
    with a title index) by the passages among the first ``ctx.link_depth`` whose title the
    query names; with how many were named."""
    got = list(retriever.search(query, k, mode=mode))
    index = title_index_of(retriever) if getattr(ctx, "link_question", False) else None
    if index is None:
        return got, 0
    wide = int(ctx.link_depth)
    pool = got if wide <= k else list(retriever.search(query, wide, mode=mode))
    got = lead_with_named(query, got, pool[:wide], index)[:k]
    return got, named_count(got)


__all__ = ["index_names", "lead_with_named", "linked_search", "named_count", "question_links", "title_index_of"]
