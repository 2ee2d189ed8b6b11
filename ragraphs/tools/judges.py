"""Compact judges: small fast models that score text pairs.

Interface (thresholds live in the methods, not in the judges):

- ``score(question, passage) -> float`` and ``score_batch(pairs) -> np.ndarray``.
- relevance evaluator ("evaluator"): scores in [-1, 1] (CRAG's convention);
- pair classifier ("pair"): ``score_pair(question, d1, d2)`` probability-like in [0, 1];
- NLI check ("nli"): ``score(premise, hypothesis)`` entailment probability in [0, 1].

This module currently provides the cosine-similarity baseline judges; the trained
judges replace them as the shipped defaults.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np

from .embeddings import MiniLMEmbeddings, embed_texts


@runtime_checkable
class Judge(Protocol):
    def score(self, question: str, passage: str) -> float: ...

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


class CosineJudge:
    """Baseline: cosine similarity of MiniLM embeddings, mapped to [-1, 1]."""

    name = "cosine"

    def __init__(self, embeddings: Any = None, scale: float = 1.0, offset: float = 0.0):
        self.embeddings = embeddings or MiniLMEmbeddings()
        self.scale, self.offset = scale, offset

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        a = embed_texts(self.embeddings, [p[0] or " " for p in pairs])
        b = embed_texts(self.embeddings, [(p[1] or " ")[:5000] for p in pairs])
        cos = np.sum(a * b, axis=1)
        return np.clip(cos * self.scale + self.offset, -1.0, 1.0).astype(np.float32)

    def score(self, question: str, passage: str) -> float:
        return float(self.score_batch([(question, passage)])[0])


class CosinePairJudge:
    """Baseline pair classifier: mean cosine of the question with both passages, in [0, 1]."""

    name = "cosine-pair"

    def __init__(self, embeddings: Any = None):
        self.base = CosineJudge(embeddings)

    def score_pairs(self, triples: Sequence[tuple[str, str, str]]) -> np.ndarray:
        if not triples:
            return np.zeros(0, dtype=np.float32)
        s1 = self.base.score_batch([(q, d1) for q, d1, _ in triples])
        s2 = self.base.score_batch([(q + " " + d1, d2) for q, d1, d2 in triples])
        return ((s1 + s2) / 2 + 1) / 2

    def score_pair(self, question: str, d1: str, d2: str) -> float:
        return float(self.score_pairs([(question, d1, d2)])[0])


def load_default_judge(name: str, embeddings: Any = None):
    """The shipped default judge for ``name`` ("evaluator", "pair" or "nli")."""
    if name in ("evaluator", "nli"):
        return CosineJudge(embeddings)
    if name == "pair":
        return CosinePairJudge(embeddings)
    from ..errors import ConfigError

    raise ConfigError(f"unknown judge {name!r}; choose evaluator, pair or nli")


def iter_pairs(question: str, passages: Iterable[str]) -> list[tuple[str, str]]:
    return [(question, p) for p in passages]
