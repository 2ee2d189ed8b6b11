"""``ragraphs ingest --remove PATH ...``: take out of a store what ingest put there from those
files, folders or pages, without reading them (a file may be gone already).

A file is matched by its absolute path, a page by its address (as ingest stored it: after
redirects, without its ``#fragment``), a folder by every passage whose file lay under it. The
paragraphs of a benchmark file carry no path (their ids are the benchmark's), so a benchmark
file matches nothing; ``ingest --remove`` says so for each path that matched nothing.
"""

from __future__ import annotations

import os
from typing import Iterable

from .ingest import is_url, page_address, printable_path


def source_ids(corpus, paths: Iterable[str]) -> dict[str, set[str]]:
    """For each of ``paths``, the ids of the stored passages ingest read from it (empty when
    none). ``corpus``: a store with ``ids_from`` and ``all_passages`` (a ChromaCorpus)."""
    found: dict[str, set[str]] = {}
    stored = None
    for path in paths:
        if is_url(path):
            found[path] = set(corpus.ids_from(page_address(path)))
            continue
        full = printable_path(os.path.abspath(path))
        ids = set(corpus.ids_from(full))
        if not ids and not os.path.isfile(path):  # a folder, or a folder (or file) that is gone: by prefix
            root = os.path.join(full, "")
            if stored is None:
                stored = corpus.all_passages()
            ids = {p["id"] for p in stored if str((p.get("meta") or {}).get("path") or "").startswith(root)}
        found[path] = ids
    return found


def remove_sources(corpus, paths: Iterable[str]) -> dict[str, int]:
    """Delete the passages ingest read from ``paths``; returns how many went, by path (a passage
    two paths name, a file and its folder, is counted under the first)."""
    found = source_ids(corpus, paths)
    taken: set[str] = set()
    counts: dict[str, int] = {}
    for path, ids in found.items():
        counts[path] = len(ids - taken)
        taken |= ids
    corpus.remove(sorted(taken))
    return counts
