"""The Memory Knowledge Reservoir's entries, as both reservoirs (the SQLite file of
:mod:`ragraphs.tools.reservoir` and the LangGraph store of :mod:`ragraphs.tools.store_reservoir`)
key and return them."""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any, Iterable, Mapping

from ..state.types import WHERE_KEYS, Passage, make_passage, passage_where
from .text import text_key


def title_key(title: str) -> str:
    """The identity of a title: case-folded, white space collapsed."""
    return text_key(title)


_UNTITLED_WARNED = threading.Event()  # once per process


def _warn_untitled(n: int) -> None:
    """Once per process: a write whose pairs all lacked a title stored nothing (silently until
    2026-11-30, while ERM4's trace read as if they had been stored)."""
    if _UNTITLED_WARNED.is_set():
        return
    _UNTITLED_WARNED.set()
    warnings.warn(
        f"ERM4's memory stored none of {n} passage(s): the reservoir keys entries on titles, and these had "
        "no title (a document's metadata 'title', else the file or page its 'source' names); passages "
        "without one are not remembered", UserWarning, stacklevel=4)


def latest_by_title(passages: Iterable[Passage]) -> tuple[dict[str, Passage], int]:
    """The pairs to store by title key and how many lacked a title or text (a write where
    none had a title warns, once per process: nothing is remembered of it). Within one write the
    first pair of a title wins: ERM4 stores its filter's knowledge best first, and two chunks of
    one page share its title (the last, its worst-ranked chunk, won until 2026-11-30). A later
    write still replaces what an earlier one stored (the paper's "newer replaces older")."""
    latest: dict[str, Passage] = {}
    skipped = untitled = 0
    for p in passages:
        k = title_key(p.get("title") or "")
        untitled += not k
        if not k or not (p.get("text") or "").strip():
            skipped += 1
            continue
        latest.setdefault(k, p)
    if untitled and not latest:  # a passage without a title is not remembered: say so, once
        _warn_untitled(skipped)
    return latest, skipped


def memory_passage(title: str, content: str, source: str, score: float | None = None,
                   where: Mapping[str, Any] | None = None) -> Passage:
    """A reservoir entry as a passage: ``source`` "memory", its origin kept in ``meta`` with the
    address, file and page it was stored with (``where``: its ``url``, ``path``, ``page``; until
    2026-12-01 they were not stored, so an answer from memory cited no source)."""
    return make_passage(title, content, "memory", score, origin=source or "", **dict(where or {}))


def where_json(p: Passage) -> str:
    """The address, file and page of a passage to store, as JSON ("" when it has none)."""
    where = passage_where(p)
    return json.dumps(where, ensure_ascii=False, sort_keys=True, default=str) if where else ""


def where_of(stored: Any) -> dict[str, Any]:
    """The address, file and page stored with an entry (``where_json``'s text or a mapping)."""
    if isinstance(stored, Mapping):
        return {k: v for k, v in stored.items() if k in WHERE_KEYS}
    try:
        got = json.loads(stored) if stored else {}
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in got.items() if k in WHERE_KEYS} if isinstance(got, dict) else {}
