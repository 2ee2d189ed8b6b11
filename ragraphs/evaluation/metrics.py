"""Answer and retrieval metrics, one question at a time, and their averages.

Answer metrics follow the SQuAD / FlashRAG conventions (re-implemented here):

- the answer and each gold alias are *normalised*: Unicode NFKC, lower case, punctuation
  removed (SQuAD's ASCII set and every Unicode punctuation mark, such as an en dash), the
  articles ``a``/``an``/``the`` removed, runs of white space collapsed;
- **EM**: 1 if the normalised prediction equals some normalised gold alias;
- **F1**: token-level F1 between the normalised prediction and a gold alias, the best over
  aliases; when either side is ``yes``/``no``/``noanswer`` and they differ, that pair scores 0
  (so "no" does not get partial credit against "yes");
- **acc**: 1 if some normalised gold alias occurs inside the normalised prediction as a
  substring (FlashRAG's "Sub-EM"; CRAG's own script tests the raw, case-sensitive gold in the
  raw output, which is stricter); a ``yes`` / ``no`` gold is the prediction's first yes or no
  word, ``noanswer`` a whole word, so that "no" is not found in "know" or "not" and "Yes, there
  is no doubt" answers yes; a gold of one or two characters (PopQA's "LA", "US") only as a whole
  word, so that "la" is not found in "Tulsa, Oklahoma" (FlashRAG and the papers' scripts take the
  plain substring there too).

Retrieval metric (DR-RAG, Table 5):

- **recall**: the fraction of the question's gold supporting paragraphs found among the
  passages handed to the generator; **docs** is how many passages that was. A passage
  matches a gold paragraph when their ids are equal (both are content hashes of title and
  text), or, for stores whose passages were cut into chunks or re-titled, when the
  passage's text (white space collapsed) is contained in the gold paragraph's text or
  contains it, and the titles agree when both have one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

from ..tools.text import normalize_answer

_SPECIAL = ("yes", "no", "noanswer")


def normalize(text: str | None) -> str:
    """SQuAD normalisation, plus NFKC and every Unicode punctuation mark
    (:func:`ragraphs.tools.text.normalize_answer`, the one the graphs compare answers with)."""
    return normalize_answer(text)


def _golds(golds: str | Iterable[str] | None) -> list[str]:
    if golds is None:
        return []
    if isinstance(golds, str):
        golds = [golds]
    return [str(g) for g in golds if g is not None and str(g).strip()]


def _bare(text: str | None) -> str:
    """Lower case, punctuation removed, white space collapsed: the normalisation without the
    article removal, for a gold that is all articles."""
    return normalize_answer(text, articles=False)


def _pairs(prediction: str | None, golds: str | Iterable[str] | None) -> list[tuple[str, str]]:
    return [(p, g) for p, g, _ in _compared(prediction, golds)]


def _compared(prediction: str | None, golds: str | Iterable[str] | None) -> list[tuple[str, str, bool]]:
    """(normalised prediction, normalised gold, whole words only) for each gold; golds that
    normalise to nothing (e.g. "The", the band "The The") are compared with the articles kept
    instead, and by whole words, so they can never match an empty prediction by accident nor
    "the thermos" (they were compared as raw text, punctuation and all, until 2026-11-30: "A."
    did not match "A")."""
    pred = normalize(prediction)
    out = []
    for g in _golds(golds):
        ng = normalize(g)
        out.append((pred, ng, False) if ng else (_bare(prediction), _bare(g), True))  # True: whole words only
    return out


def exact_match(prediction: str | None, golds: str | Iterable[str] | None) -> float:
    return float(any(p == g and g != "" for p, g in _pairs(prediction, golds)))


def _f1_pair(pred: str, gold: str) -> float:
    if (pred in _SPECIAL or gold in _SPECIAL) and pred != gold:
        return 0.0
    p_toks, g_toks = pred.split(), gold.split()
    common = Counter(p_toks) & Counter(g_toks)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(p_toks)
    recall = same / len(g_toks)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str | None, golds: str | Iterable[str] | None) -> float:
    return max((_f1_pair(p, g) for p, g in _pairs(prediction, golds)), default=0.0)


def _contains(pred: str, gold: str) -> bool:
    words = pred.split()
    if gold in ("yes", "no"):  # the prediction's first yes or no ("Yes, there is no doubt." answers yes)
        said = next((w for w in words if w in ("yes", "no")), None)
        return said == gold
    if gold in _SPECIAL:  # "noanswer" is not found inside another word
        return gold in words
    if len(gold) <= 2:  # a gold of one or two characters: whole words only
        return f" {gold} " in f" {pred} "
    return gold != "" and gold in pred


def accuracy(prediction: str | None, golds: str | Iterable[str] | None) -> float:
    """Substring accuracy: some normalised gold alias occurs in the normalised prediction
    (``yes`` / ``no`` / ``noanswer`` only as a whole word)."""
    return float(any(f" {g} " in f" {p} " if whole else _contains(p, g) for p, g, whole in _compared(prediction, golds)))


def answer_scores(prediction: str | None, golds: str | Iterable[str] | None) -> dict[str, float | None]:
    """EM, F1 and acc of one prediction; all None when the question has no gold answer."""
    if not _golds(golds):
        return {"em": None, "f1": None, "acc": None}
    return {"em": exact_match(prediction, golds), "f1": f1_score(prediction, golds), "acc": accuracy(prediction, golds)}


# ---------------------------------------------------------------- retrieval
def _flat(text: str | None) -> str:
    return " ".join((text or "").split())


def _title(t: str | None) -> str:
    return " ".join((t or "").lower().split())


def passage_matches(passage: dict, gold: dict) -> bool:
    """Whether a retrieved passage is (a piece of) a gold paragraph (see module docstring)."""
    if passage.get("id") and passage.get("id") == gold.get("id"):
        return True
    pt, gt = _title(passage.get("title")), _title(gold.get("title"))
    if pt and gt and pt != gt:
        return False
    ptext, gtext = _flat(passage.get("text")), _flat(gold.get("text"))
    if not ptext or not gtext:
        return False
    if ptext in gtext or gtext in ptext:
        # a tiny fragment ("1974.") inside a paragraph is no evidence of retrieving it
        return min(len(ptext), len(gtext)) >= 40 or (pt != "" and pt == gt)
    return False


def gold_found(passages: Sequence[dict], gold: Sequence[dict]) -> list[bool]:
    """For each gold paragraph, whether some passage matches it."""
    ids = {p.get("id") for p in passages}
    found = []
    for g in gold:
        found.append(g.get("id") in ids or any(passage_matches(p, g) for p in passages))
    return found


def retrieval_recall(passages: Sequence[dict], gold: Sequence[dict]) -> float | None:
    """Fraction of gold paragraphs among ``passages``; None when there is no gold paragraph."""
    if not gold:
        return None
    found = gold_found(passages, gold)
    return sum(found) / len(found)


# ---------------------------------------------------------------- averages
def mean(values: Iterable[Any]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None
