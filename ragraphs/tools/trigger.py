"""ERM4's Retrieval Trigger over a reservoir (paper section 3.4): the SQLite
:class:`~ragraphs.tools.reservoir.Reservoir` or a LangGraph store's
:class:`~ragraphs.tools.store_reservoir.StoreReservoir`.

Pop(q) = the number of reservoir entries that match query ``q`` at threshold ``tau``; the
query is inside the knowledge boundary when Pop(q) >= theta. Two ways to match:

- ``"title"`` (the paper's S): cosine similarity of the query and the entry's *title*
  (MiniLM by default);
- ``"evaluator"``: the cross-encoder evaluator's relevance score in [-1, 1] for (query,
  "Title\\ncontent"), computed for the ``candidates`` entries whose titles are most similar
  to the query (the cosine pre-selects, the cross-encoder decides).

Both return, per query, (popularity, the up to ``k`` matching entries, best first, each with
its match ``score``).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import ConfigError
from ..state.types import Passage, with_score

TRIGGERS = ("title", "evaluator")


def _text(p: Passage) -> str:
    title = (p.get("title") or "").strip()
    text = " ".join((p.get("text") or "").split())
    return f"{title}\n{text}" if title else text


def trigger_lookup(
    reservoir: Any,
    queries: Sequence[str],
    tau: float,
    k: int,
    *,
    how: str = "title",
    judge: Any = None,
    candidates: int = 10,
) -> list[tuple[int, list[Passage]]]:
    """Per query: (Pop(q) at ``tau``, up to ``k`` matching entries, best first)."""
    if how == "title":
        return reservoir.lookup(queries, tau, k)
    if how != "evaluator":
        raise ConfigError(f"unknown trigger {how!r}; choose {' or '.join(TRIGGERS)}")
    if judge is None:
        raise ConfigError("the evaluator trigger needs a judge (c.judge('evaluator'))")
    out: list[tuple[int, list[Passage]]] = []
    for q, entries in zip(queries, reservoir.nearest(queries, max(1, int(candidates)))):
        if not entries:
            out.append((0, []))
            continue
        scores = np.asarray(judge.score_batch([(q, _text(p)) for p in entries]), dtype=np.float32)
        hits = [(with_score(p, float(s)), float(s)) for p, s in zip(entries, scores) if float(s) >= tau]
        hits.sort(key=lambda x: -x[1])
        out.append((len(hits), [p for p, _ in hits[: max(0, int(k))]]))
    return out
