"""ERM4 output reading: the Rewriter+ and NLI formats under the structured decisions, and the
knowledge helpers the filter and reader share: tagging, the mixed order, the recheck."""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence


from ..state.types import Passage
from ..tools.parsing import looks_like_json
from ..tools.structured import Entailment, RewritePlus
from ..tools.text import Held

from .erm4_prompts import NLI_LABELS


# ---------------------------------------------------------------- parsing

_STOPWORDS = set(
    "a an the of in on at to for from by with and or but is are was were be been being do does did what which who "
    "whom whose when where why how that this these those it its as than then there their they he she his her".split()
)
_LABEL_PREFIX = re.compile(
    r"^\s*(\[?(output|rewritten question|rewritten|question|queries|query\s*\d*)\]?\s*[:\-]\s*)+", re.I
)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[^\W_]+", (text or "").casefold()) if w not in _STOPWORDS and len(w) > 1}


def query_key(text: str) -> str:
    """A query's words, case and punctuation aside: "Alpha founder?" and "alpha founder." are
    one query (they were two, each a retrieval of the same passages, until 2026-11-30)."""
    return " ".join(re.findall(r"[^\W_]+", (text or "").casefold()))


def _clean_piece(piece: str) -> str:
    s = " ".join((piece or "").split())
    s = _LABEL_PREFIX.sub("", s)
    s = s.strip().strip("{}[]\"'`").strip()
    s = re.sub(r"^\d+[.)]\s+", "", s)
    return s.strip()


def parse_rewrite(text: str, question: str, max_queries: int = 3) -> tuple[str, list[str], str | None]:
    """Parse ``rewritten**query1**query2**query3``; returns (rewritten, queries, problem).

    A piece is used only when it is a plausible question/query: it has letters, is not
    overly long and shares at least one content word with the original question (a small
    model sometimes copies the few-shot examples). When the rewritten question is not
    usable the original question stands in; when no query is usable the original
    question is the only query. ``problem`` says what was replaced (None when nothing).
    """
    first_line = next((ln for ln in (text or "").splitlines() if ln.strip()), "")
    pieces = [_clean_piece(p) for p in re.split(r"\*{2,}|\s\|\s", first_line)]
    pieces = [p for p in pieces if p]
    return check_rewrite(pieces[:1], pieces[1:], question, max_queries)


def check_rewrite(first: list[str], rest: Sequence[str], question: str, max_queries: int = 3) -> tuple[str, list[str], str | None]:
    """Keep the plausible pieces of a rewrite (see :func:`parse_rewrite`): ``first`` holds
    the rewritten question (or nothing), ``rest`` the queries."""
    question = " ".join((question or "").split())
    qwords = _words(question)
    pieces = [_clean_piece(p) for p in list(first) + list(rest)]
    n_first = 1 if first and pieces[0] else 0
    pieces = [p for p in pieces if p]

    def usable(p: str, max_words: int) -> bool:
        n = len(p.split())
        return bool(re.search(r"[^\W\d_]", p)) and 1 <= n <= max_words and (not qwords or bool(_words(p) & qwords))

    problems = []
    rewritten = pieces[0] if n_first and usable(pieces[0], 60) else ""
    if not rewritten:
        problems.append("rewritten question unusable")
        rewritten = question
    else:  # a query may name what the rewritten question resolved (e.g. a bridge entity)
        qwords = qwords | _words(rewritten)
    queries: list[str] = []
    seen: set[str] = set()
    for p in pieces[n_first:]:
        key = query_key(p)
        if key in seen or not usable(p, 24):
            continue
        seen.add(key)
        queries.append(p)
        if len(queries) >= max_queries:
            break
    if not queries:
        problems.append("no usable query")
        queries = [question]
    return rewritten, queries, ("; ".join(problems) or None)


def read_rewrite_legacy(question: str, max_queries: int = 3) -> Callable[[str], RewritePlus | None]:
    """A reader of the paper's ``rewritten**query1**...`` text (None when nothing in it is usable)."""

    def read(text: str) -> RewritePlus | None:
        if looks_like_json(text):  # JSON no reader took: its braces and keys are no question
            return None
        rewritten, queries, problem = parse_rewrite(text, question, max_queries)
        if problem and "rewritten question unusable" in problem and "no usable query" in problem:
            return None
        return RewritePlus(rewritten_question=rewritten, queries=queries)

    return read


def read_nli_legacy(text: str) -> Entailment | None:
    """The paper's ``explanation**label`` text as a yes/no (None when no label is named)."""
    t = (text or "").casefold()
    if not any(lab in t for lab in NLI_LABELS):
        return None
    return Entailment(entailment="yes" if parse_nli(text) == "entailment" else "no")


def parse_nli(text: str) -> str:
    """The NLI label of an ``explanation**result`` output (neutral when none is found)."""
    t = (text or "").casefold()
    tail = t.split("**")[-1] if "**" in t else t
    for source in (tail, t):
        found = [(source.find(lab), lab) for lab in NLI_LABELS if lab in source]
        if found:
            return min(found)[1]
    return "neutral"


def mixed_order(lists: Sequence[Sequence[Passage]], limit: int | None = None) -> list[Passage]:
    """The paper's "mixed order": top items evenly sampled from the queries' ranked lists
    (1st of every query, then 2nd of every query, ...), de-duplicated by id and by title and text: a
    memory entry and the corpus or web passage it was stored from carry different ids."""
    out: list[Passage] = []
    held = Held()
    depth = max((len(x) for x in lists), default=0)
    for r in range(depth):
        for lst in lists:
            if r >= len(lst):
                continue
            p = lst[r]
            if p not in held:
                held.add(p)
                out.append(p)
                if limit is not None and len(out) >= limit:
                    return out
    return out


def knowledge_text(p: Passage) -> str:
    """A knowledge instance as the judges read it: ``"Title\\ncontent"``."""
    title = (p.get("title") or "").strip()
    text = " ".join((p.get("text") or "").split())
    return f"{title}\n{text}" if title else text


# ---------------------------------------------------------------- knowledge lists
def tag_knowledge(passages: list[Passage], qi: int, query: str, origin: str) -> list[Passage]:
    out: list[Passage] = []
    for r, p in enumerate(passages):
        meta = {**(p.get("meta") or {}), "query": query, "query_index": qi, "rank": r, "knowledge": origin}
        out.append({**p, "meta": meta})
    return out


def brief_knowledge(passages: list[Passage]) -> list[dict]:
    return [
        {"title": p["title"], "source": p.get("source"), "score": p.get("score"), "query_index": (p.get("meta") or {}).get("query_index")}
        for p in passages
    ]


def interleaved(first: list[Passage], second: list[Passage]) -> list[Passage]:
    """Two ranked lists as one, alternating (corpus 1st, web 1st, corpus 2nd, ...): the mixed
    order takes each query's ranks in turn, so web results after all of the corpus's never
    reached the filter once two queries filled ``max_knowledge`` (until 2026-11-30)."""
    out: list[Passage] = []
    for i in range(max(len(first), len(second))):
        out += first[i:i + 1] + second[i:i + 1]
    return out


def filter_candidates(state: Mapping[str, Any], limit: int | None) -> list[Passage]:
    queries = list(state.get("queries") or [])
    per_query: list[list[Passage]] = [[] for _ in queries]
    for p in list(state.get("memory_knowledge") or []) + list(state.get("external_knowledge") or []):
        qi = int((p.get("meta") or {}).get("query_index", 0))
        if 0 <= qi < len(per_query):
            per_query[qi].append(p)
    for lst in per_query:
        lst.sort(key=lambda p: int((p.get("meta") or {}).get("rank", 0)))
    return mixed_order(per_query, limit)


def query_indexes(state: Mapping[str, Any], routes: list) -> set[int]:
    asked = {r["query"] for r in routes}
    return {i for i, q in enumerate(state.get("queries") or []) if q in asked}


def memory_missed(state: Mapping[str, Any], cands: list[Passage], kept: list[Passage]) -> list:
    """The inside queries whose memory the filter judged and dropped all of: the trigger matched
    a stored title (often another entity's: "Michael B. Jordan" and "Michael Jordan"), so the
    reservoir cannot answer them, and the outside search they skipped can (``memory_recheck``)."""
    def mine(p: Passage, qi: int) -> bool:
        meta = p.get("meta") or {}
        return meta.get("knowledge") == "memory" and int(meta.get("query_index", -1)) == qi

    out = []
    for route in state.get("inside") or []:
        qi = min(query_indexes(state, [route]), default=-1)
        if any(mine(p, qi) for p in cands) and not any(mine(p, qi) for p in kept):
            out.append(route)
    return out
