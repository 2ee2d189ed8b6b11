"""``ragraphs ingest --remove PATH ...``: take out of a store what ingest put there from those
files, folders or pages, without reading them (a file may be gone already).

A file is matched by its absolute path, a page by its address (as ingest stored it: after
redirects, without its ``#fragment``; a site's root with or without its last ``/``), a folder
by every passage whose file lay under it. A path given through a symbolic link that ingest did
not take (or the other way round) is matched by where both lead. The paragraphs of a benchmark
file carry no path (their ids are the benchmark's), so a benchmark file matches nothing, and
removing its folder leaves them.
"""

from __future__ import annotations

import os
from typing import Iterable

from .errors import InputError
from .sources import is_url, not_documents, page_spellings, path_text


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(os.path.join(root, ""))


def refuse_blank(paths: Iterable[str]) -> None:
    """An :class:`InputError` for a blank path: ``abspath("")`` is the working folder, and all it
    holds would go (an unset variable in a script)."""
    if any(not p.strip() for p in paths):
        raise InputError("--remove: a blank path names the current folder (an unset variable?); give the path")


def source_ids(corpus, paths: Iterable[str]) -> dict[str, set[str]]:
    """For each of ``paths``, the ids of the stored passages ingest read from it (empty when
    none). ``corpus``: a store with ``ids_from`` and ``all_passages`` (a ChromaCorpus). A blank
    path is an :class:`InputError` (:func:`refuse_blank`)."""
    paths = list(paths)
    refuse_blank(paths)
    found: dict[str, set[str]] = {}
    stored: list[tuple[str, str]] | None = None  # (id, path) of every stored file passage, read once

    def stored_paths() -> list[tuple[str, str]]:
        nonlocal stored
        if stored is None:
            stored = [(p["id"], str((p.get("meta") or {}).get("path") or "")) for p in corpus.all_passages()]
            stored = [(i, sp) for i, sp in stored if sp and not is_url(sp)]
        return stored

    for path in paths:
        if is_url(path):
            spellings = page_spellings(path)  # stored under it, or led from it to another address (since 2026-12-03)
            found[path] = corpus.ids_from(spellings) | corpus.ids_from(spellings, key="asked")
            continue
        full = path_text(path)
        ids = set(corpus.ids_from(full))
        if not ids and not os.path.isfile(path):  # a folder, or a folder (or file) that is gone: by prefix
            ids = {i for i, sp in stored_paths() if _under(sp, full)}
        if not ids:  # a link on one side: where both lead
            real = os.path.realpath(full)
            ids = {i for i, sp in stored_paths() if _under(os.path.realpath(sp), real)}
        found[path] = ids
    return found


def remove_sources(corpus, paths: Iterable[str]) -> dict[str, set[str]]:
    """Delete the passages ingest read from ``paths``; returns the ids each path matched (a
    passage two paths name, a file and its folder, is under both)."""
    found = source_ids(corpus, paths)
    corpus.remove(sorted(set().union(*found.values())))
    return found


def gone_ids(corpus, paths: Iterable[str], walked: set[str], unwalked: Iterable[str] = ()) -> set[str]:
    """Ids of the stored passages whose file lay under one of the folders of ``paths`` and was
    not met by this walk; none under a folder the walk could not list (``unwalked``: a folder
    without permission, a mount away for a moment removed its files' passages until 2026-11-30),
    and none of a file still there outside the folders a walk leaves out (a hidden file named on
    its own, a file that could not be read this time: removed until 2026-12-01)."""
    roots = [os.path.join(path_text(p), "") for p in paths if not is_url(p) and os.path.isdir(p)]
    if not roots:
        return set()
    kept_under = [os.path.join(path_text(u), "") for u in unwalked]
    gone: set[str] = set()
    for p in corpus.all_passages():
        path = str((p.get("meta") or {}).get("path") or "")
        root = next((r for r in roots if path.startswith(r)), None) if path and not is_url(path) else None
        if root is None or path in walked or any(path.startswith(u) for u in kept_under):
            continue
        if not os.path.isfile(path) or _in_left_out_folder(path, root):
            gone.add(p["id"])
    return gone


def _in_left_out_folder(path: str, root: str) -> bool:
    """Whether ``path`` lies in a folder under ``root`` that a walk leaves out (hidden, or one
    :func:`~ragraphs.sources.not_documents` names)."""
    folder = root
    for part in os.path.relpath(os.path.dirname(path), root).split(os.sep):
        if part in ("", "."):
            continue
        folder = os.path.join(folder, part)
        if part.startswith(".") or not_documents(folder):
            return True
    return False
