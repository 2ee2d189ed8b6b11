"""Sparse retrieval with bm25s over a list of passages."""

from __future__ import annotations

import re
import threading

import numpy as np

from ..state.types import Passage, with_score
from .text import CJK_LETTERS, HAS_CJK  # Chinese, Japanese and Korean letters

_TOKEN = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or is are was were be been being as that this "
    "these those it its which who whom whose what when where why how did do does has have had "
    "not no than then there their they he she his her him we you your our i me my".split()
)

_CJK_RUN = re.compile(f"[{CJK_LETTERS}]+|[^{CJK_LETTERS}]+")


def _pieces(token: str) -> list[str]:
    """One ``\\w+`` token as BM25 terms: itself, unless it holds CJK letters, whose runs become
    overlapping character pairs (a lone letter stays itself) beside the token's other parts."""
    if not HAS_CJK.search(token):
        return [token]
    out: list[str] = []
    for run in _CJK_RUN.findall(token):
        if HAS_CJK.match(run):
            out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        else:
            out.append(run)
    return out


def tokenize(text: str) -> list[str]:
    """BM25 terms: lower-cased words, stop words left out. Chinese, Japanese and Korean, which
    put no spaces between words, give overlapping character pairs ("北京是首都" is 北京 京是 是首
    首都): until 2026-11-30 a whole sentence was one term, so no query matched it."""
    text = (text or "").lower()
    if not HAS_CJK.search(text):
        return [t for t in _TOKEN.findall(text) if t not in STOPWORDS]
    return [t for w in _TOKEN.findall(text) for t in _pieces(w) if t not in STOPWORDS]


class BM25Index:
    """A BM25 (Lucene variant, k1=1.5, b=0.75) index over passages' title and text."""

    def __init__(self, passages: list[Passage], k1: float = 1.5, b: float = 0.75):
        import bm25s

        self.passages = list(passages)
        self._lock = threading.Lock()
        corpus_tokens = [tokenize(f"{p['title']} {p['text']}") or ["_empty_"] for p in self.passages]
        self._retriever = bm25s.BM25(k1=k1, b=b)
        if self.passages:
            self._retriever.index(corpus_tokens, show_progress=False)

    def __len__(self) -> int:
        return len(self.passages)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage for the query."""
        if not self.passages:
            return np.zeros(0, dtype=np.float32)
        toks = tokenize(query)
        if not toks:
            return np.zeros(len(self.passages), dtype=np.float32)
        with self._lock:
            return np.asarray(self._retriever.get_scores(toks), dtype=np.float32)

    def search(self, query: str, k: int) -> list[Passage]:
        s = self.scores(query)
        if s.size == 0:
            return []
        k = min(k, s.size)
        top = np.argpartition(-s, k - 1)[:k]
        top = top[np.argsort(-s[top], kind="stable")]
        return [with_score(self.passages[i], float(s[i])) for i in top if s[i] > 0]
