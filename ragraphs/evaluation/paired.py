"""Does a run differ from a reference run by more than its sample? A paired bootstrap.

Two runs over the same questions are compared question by question: for each metric, the
mean of the per-question differences (run minus reference) and its 95% percentile
bootstrap interval (``scipy.stats.bootstrap``, seeded). An interval that holds 0 means the
sample does not settle the sign of the difference; so does a sample of fewer than
``MIN_N`` questions, whatever its interval (with all differences equal, the bootstrap
interval has no width). A failed question is paired with its score of 0, as the run's summary
counts it (until 2026-11-30 it was left out, so a method that failed often could read as even
with its reference here while its summary was far behind; no run stored under ``bench/results``
had a failed question); questions missing from either run are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

METRICS = ("em", "f1", "acc")
MIN_N = 10  # fewer paired questions than this settle nothing


@dataclass(frozen=True)
class PairedDifference:
    metric: str
    n: int
    mean: float
    low: float
    high: float

    @property
    def settled(self) -> bool:
        """True when the interval excludes 0 and at least ``MIN_N`` questions were paired."""
        return self.n >= MIN_N and (self.low > 0 or self.high < 0)


def _by_id(records: Iterable[Mapping] | Mapping[str, Mapping]) -> dict[str, Mapping]:
    items = records.values() if isinstance(records, Mapping) else records
    return {str(r["id"]): r for r in items if "id" in r}


def paired_differences(records: Iterable[Mapping] | Mapping[str, Mapping],
                       reference: Iterable[Mapping] | Mapping[str, Mapping], *,
                       metrics: Sequence[str] = METRICS, seed: int = 0,
                       n_resamples: int = 9999) -> list[PairedDifference]:
    """One :class:`PairedDifference` per metric that both runs scored on some common question."""
    from scipy.stats import bootstrap

    run, ref = _by_id(records), _by_id(reference)
    ids = sorted(set(run) & set(ref))
    out = []
    for m in metrics:
        pairs = [(run[i].get(m), ref[i].get(m)) for i in ids]
        d = np.array([float(a) - float(b) for a, b in pairs if a is not None and b is not None])
        if d.size == 0:
            continue
        if np.all(d == d[0]):  # no spread to resample (one question, or the same difference on each)
            low = high = float(d[0])
        else:
            ci = bootstrap((d,), np.mean, confidence_level=0.95, n_resamples=n_resamples, method="percentile",
                           random_state=np.random.default_rng(seed)).confidence_interval
            low, high = float(ci.low), float(ci.high)
        out.append(PairedDifference(m, int(d.size), float(d.mean()), low, high))
    return out


def format_difference(p: PairedDifference) -> str:
    """``+6.0 [-2.0, +15.0]`` in percent points, ``*`` when settled (see :attr:`PairedDifference.settled`)."""
    return f"{100 * p.mean:+.1f} [{100 * p.low:+.1f}, {100 * p.high:+.1f}]{' *' if p.settled else ''}"


def format_cell(p: PairedDifference, n_row: int) -> str:
    """:func:`format_difference`, with the questions it pairs when fewer than the row's ``n``
    (recall pairs only the questions with gold paragraphs: 82 of 2Wiki's 100)."""
    return format_difference(p) + (f" (n = {p.n})" if p.n < n_row else "")
