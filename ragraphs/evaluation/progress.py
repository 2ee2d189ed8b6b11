"""The progress bar of an evaluation run: tqdm, with the run's running means in its postfix."""

from __future__ import annotations

import sys
from typing import Iterable


class Progress:
    """A tqdm bar with the running metrics in its postfix (silent when disabled), kept as running
    sums (until 2026-12-03 recomputed over every record at each one: 27 s of bar for 8,000)."""

    def __init__(self, total: int, desc: str, enabled: bool, done: Iterable[dict] = ()):
        self.bar = None
        self._sums: dict[str, list[float]] = {k: [0.0, 0] for k in ("em", "f1", "acc", "recall", "s/q")}
        self._errs = 0
        for rec in done:
            self._count(rec)
        if enabled and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, file=sys.stderr, dynamic_ncols=True, leave=True)

    def _count(self, rec: dict) -> None:
        self._errs += bool(rec.get("error"))
        for key, v in [(k, rec.get(k)) for k in ("em", "f1", "acc", "recall")] + [
                ("s/q", None if rec.get("error") else rec.get("wall_s"))]:
            if v is not None:
                self._sums[key][0] += float(v)
                self._sums[key][1] += 1

    def update(self, rec: dict) -> None:
        self._count(rec)
        if self.bar is None:
            return
        post = {k: (f"{100 * t / n:.1f}" if k != "s/q" else f"{t / n:.2f}") for k, (t, n) in self._sums.items() if n}
        if self._errs:
            post["err"] = str(self._errs)
        self.bar.set_postfix(post, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
