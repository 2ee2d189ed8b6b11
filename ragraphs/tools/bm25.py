"""Sparse retrieval with bm25s over a list of passages."""

from __future__ import annotations

import re
import threading

import numpy as np

from ..state.types import Passage, with_score

_TOKEN = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or is are was were be been being as that this "
    "these those it its which who whom whose what when where why how did do does has have had "
    "not no than then there their they he she his her him we you your our i me my".split()
)


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall((text or "").lower()) if t not in STOPWORDS]


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
