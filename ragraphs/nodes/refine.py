"""CRAG's knowledge refinement: decompose, filter, recompose (paper section 4.4, Appendix B).

1. *Decompose*: every document is cut into knowledge strips. A document of one or two
   sentences is one strip; a longer one is cut into units of a few sentences
   (:func:`ragraphs.tools.text.strips`). A fetched web page is already split into its
   paragraphs (the paper splits HTML on ``<p>``); a long paragraph is cut the same way.
2. *Filter*: the retrieval evaluator scores every strip against the question; the strips
   scoring above ``threshold`` are kept, at most ``top_k`` of them (the best scores).
3. *Recompose*: the kept strips are put back in their original order (document order,
   then position in the document) and joined per document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..state.types import Passage, make_passage
from ..tools.text import join_sentences, strips as split_strips


_OWN_KEYS = frozenset({"id", "title", "text", "source", "score"})  # a passage's own fields, never meta

def judge_text(title: str, text: str) -> str:
    """What the evaluator reads for a document or strip: ``"Title\\ntext"`` (the judges' form)."""
    title = (title or "").strip()
    return f"{title}\n{text}" if title else text


@dataclass
class Refined:
    passages: list[Passage]  # one per document that kept at least one strip
    knowledge: str  # the recomposed text, documents separated by blank lines
    kept: list[dict] = field(default_factory=list)  # trace: kept strips with scores
    n_strips: int = 0
    n_dropped_below_threshold: int = 0
    n_dropped_top_k: int = 0
    below_threshold_kept: bool = False  # no strip passed the cut: the best one kept all the same


def decompose(doc: Passage, sentences_per_strip: int = 3) -> list[str]:
    """Knowledge strips of one document (paragraphs of a fetched page are units already)."""
    paragraphs = (doc.get("meta") or {}).get("paragraphs")
    units: list[str] = []
    if paragraphs:
        for para in paragraphs:
            units.extend(split_strips(para, sentences_per_strip))
    else:
        units = split_strips(doc.get("text") or "", sentences_per_strip)
    return [u for u in units if u.strip()]


def _strip_scores(judge: Any, question: str, texts: list[str], known: Mapping[str, float] | None) -> list[float]:
    """The judge's score of each strip (as it reads it), each distinct text scored once and one
    it gave already (``known``) not again."""
    known = known or {}
    todo = [t for t in dict.fromkeys(texts) if t not in known]
    fresh = dict(zip(todo, (float(x) for x in judge.score_batch([(question, t) for t in todo])))) if todo else {}
    return [float(known[t]) if t in known else fresh[t] for t in texts]


def _recompose(docs: list[Passage], units: list[tuple[int, int, str]], scores: list[float], chosen: list[int],
               source: str, keep_doc_ids: bool) -> tuple[list[Passage], list[dict]]:
    """One passage per document of the chosen strips (its kept strips joined in their order),
    and the kept strips' record for the trace."""
    by_doc: dict[int, list[int]] = {}
    for i in chosen:
        by_doc.setdefault(units[i][0], []).append(i)
    passages: list[Passage] = []
    kept: list[dict] = []
    for di, idxs in by_doc.items():
        d = docs[di]
        # the document's own metadata rides along (a file's path and page, a user's keys; only
        # the url did until 2026-11-30), then what refinement adds
        meta = {**{k: v for k, v in (d.get("meta") or {}).items() if k not in _OWN_KEYS},
                "doc_id": d["id"],
                "strips": [units[i][2] for i in idxs],
                "strip_scores": [round(scores[i], 4) for i in idxs]}
        passages.append(make_passage(d.get("title", ""), join_sentences(units[i][2] for i in idxs), source,
                                     max(scores[i] for i in idxs), id=d["id"] if keep_doc_ids else None, **meta))
        kept += [{"doc": d.get("title", ""), "strip": units[i][1], "score": round(scores[i], 4), "text": units[i][2][:200]}
                 for i in idxs]
    return passages, kept


def refine_knowledge(
    judge: Any,
    question: str,
    docs: list[Passage],
    *,
    top_k: int = 5,
    threshold: float = -0.5,
    sentences_per_strip: int = 3,
    source: str = "corpus",
    keep_doc_ids: bool = True,
    known: Mapping[str, float] | None = None,
) -> Refined:
    """Decompose ``docs`` into strips, keep the ``top_k`` best above ``threshold`` (the best
    one when none is above it), recompose.

    Each output passage keeps its source document's id when ``keep_doc_ids`` (it *is* that
    document, refined), with ``meta`` holding the document id, the kept strips and scores.

    ``known``: scores the judge already gave (the text as it reads it, :func:`judge_text` ->
    score), e.g. CRAG's evaluation of each whole document: a document of one strip is not
    scored again.
    """
    units = [(di, si, s) for di, d in enumerate(docs) for si, s in enumerate(decompose(d, sentences_per_strip))]
    if not units:
        return Refined([], "", [], 0, 0, 0)
    scores = _strip_scores(judge, question, [judge_text(docs[di].get("title", ""), s) for di, _si, s in units], known)
    above = [i for i, sc in enumerate(scores) if sc > threshold]
    n_below = len(units) - len(above)
    fallback = not above and top_k > 0
    if fallback:  # nothing passes the cut: the best strip, not an empty context
        above = [max(range(len(scores)), key=scores.__getitem__)]
    best = sorted(above, key=lambda i: -scores[i])[: max(0, int(top_k))]
    chosen = sorted(best, key=lambda i: (units[i][0], units[i][1]))  # original order
    passages, kept = _recompose(docs, units, scores, chosen, source, keep_doc_ids)
    knowledge = "\n\n".join(p["text"] for p in passages)
    return Refined(
        passages,
        knowledge,
        kept,
        n_strips=len(units),
        n_dropped_below_threshold=n_below - (1 if fallback else 0),
        n_dropped_top_k=len(above) - len(best),
        below_threshold_kept=fallback,
    )
