"""Web search behind one small interface.

``WebSearch.search(query, k) -> list[Passage]`` (passages with ``source="web"``). Backends:

- :class:`OfflineCorpusSearch`: BM25 over a JSONL of pages (``{title, text}`` rows, or the
  PopQA web snapshot's ``{question, results: [{title, text}]}`` rows) so the web path works
  with no network.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..errors import InputError
from ..state.types import Passage, make_passage
from .bm25 import BM25Index


@runtime_checkable
class WebSearch(Protocol):
    name: str

    def search(self, query: str, k: int = 5) -> list[Passage]: ...


class OfflineCorpusSearch:
    """BM25 search over pages stored in JSONL files: the offline stand-in for a web engine."""

    name = "offline"

    def __init__(self, paths: list[str] | str | None = None, passages: list[Passage] | None = None):
        from ..datasets import iter_rows

        pages: dict[str, Passage] = {}
        for p in passages or []:
            pages.setdefault(p["id"], {**p, "source": "web"})
        for path in [paths] if isinstance(paths, str) else (paths or []):
            for row in iter_rows(path):
                items = row.get("results") if isinstance(row.get("results"), list) else [row]
                for r in items:
                    text = " ".join(str(r.get("text") or "").split())
                    if text:
                        p = make_passage(str(r.get("title") or ""), text, "web", url=str(r.get("url") or ""))
                        pages.setdefault(p["id"], p)
        if not pages:
            raise InputError("the offline web corpus is empty")
        self.index = BM25Index(list(pages.values()))

    def search(self, query: str, k: int = 5) -> list[Passage]:
        return [{**p, "source": "web"} for p in self.index.search(query, k)]
