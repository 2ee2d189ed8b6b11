"""A judge of the user's own, checked where the nodes read it: one finite score per input.

A judge that gave fewer scores than inputs had the rest dropped without a word (``zip``), more
scores than inputs ran past the documents, and NaN scores routed CRAG to Ambiguous, until
2026-12-03. :func:`checked_judge` wraps any judge that is not one of ragraphs' own classes; every
other attribute is the judge's own.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import ConfigError

_BATCHES = ("score_batch", "score_pairs")  # a list of inputs in, a score per input out


class CheckedJudge:
    """``inner`` as the nodes read it: :data:`_BATCHES` calls and ``score_pair`` checked."""

    def __init__(self, role: str, inner: Any) -> None:
        self.role, self.inner = role, inner

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)  # an AttributeError as the judge's own
        if not callable(attr) or name not in (*_BATCHES, "score_pair"):
            return attr
        if name == "score_pair":
            return lambda *args, **kw: self._one(attr(*args, **kw))

        def scored(inputs, *args, **kw):
            return self._checked(name, len(inputs), attr(inputs, *args, **kw))

        return scored

    @property
    def name(self) -> str:
        """The judge's own ``name``, else its type's (what a run's trace records)."""
        return str(getattr(self.inner, "name", type(self.inner).__name__))

    def _what(self, call: str) -> str:
        return f"the {self.role} judge ({type(self.inner).__name__}.{call})"

    def _checked(self, call: str, n: int, scores: Any) -> Any:
        try:
            if not hasattr(scores, "__len__"):  # a generator: read once, here
                scores = list(scores)
            values = np.asarray(scores, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as e:
            raise ConfigError(f"{self._what(call)} must give one number per input; got {type(scores).__name__}") from e
        if values.size != n:
            raise ConfigError(f"{self._what(call)} gave {values.size} scores for {n} inputs; it must give one per input")
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ConfigError(f"{self._what(call)} gave {values[bad[0]]} for input {int(bad[0])} of {n}; "
                              "a score must be a finite number")
        return scores

    def _one(self, score: Any) -> Any:
        try:
            ok = math.isfinite(float(score))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ConfigError(f"{self._what('score_pair')} gave {score!r}; a score must be a finite number")
        return score


def checked_judge(role: str, judge: Any) -> Any:
    """``judge`` checked (:class:`CheckedJudge`), unless it is one of ragraphs' own or checked."""
    if isinstance(judge, CheckedJudge) or type(judge).__module__.split(".")[0] == "ragraphs":
        return judge
    return CheckedJudge(role, judge)
