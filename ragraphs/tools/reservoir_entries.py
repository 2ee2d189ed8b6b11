"""The Memory Knowledge Reservoir's entries, as both reservoirs (the SQLite file of
:mod:`ragraphs.tools.reservoir` and the LangGraph store of :mod:`ragraphs.tools.store_reservoir`)
key and return them."""

from __future__ import annotations

from typing import Iterable

from ..state.types import Passage, make_passage


def title_key(title: str) -> str:
    """The identity of a title: case-folded, white space collapsed."""
    return " ".join((title or "").split()).casefold()


def latest_by_title(passages: Iterable[Passage]) -> tuple[dict[str, Passage], int]:
    """The pairs to store by title key (the last of a title wins) and how many lacked a title or text."""
    latest: dict[str, Passage] = {}
    skipped = 0
    for p in passages:
        k = title_key(p.get("title") or "")
        if not k or not (p.get("text") or "").strip():
            skipped += 1
            continue
        latest.pop(k, None)  # keep insertion order of the newest
        latest[k] = p
    return latest, skipped


def memory_passage(title: str, content: str, source: str, score: float | None = None) -> Passage:
    """A reservoir entry as a passage: ``source`` "memory", its origin kept in ``meta``."""
    return make_passage(title, content, "memory", score, origin=source or "")
