"""``ragraphs ingest PATH...``: add files to the vector store (idempotent)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from typing import Any

from ..errors import ConfigError, InputError, check_folder_place
from ..tools.text import CHUNK_WORDS
from .common import add_store_args, store_from_env


def _check_store_place(store: str, paths: list[str]) -> None:
    """The store's folder is none of the documents' folders (a subfolder is: the walk skips a
    store), nor a folder of other files: Chroma writes its files there, and a documents folder holding a store is skipped by
    every later ingest (`ask`'s advice for a missing store led there until 2026-11-30)."""
    from ..sources import is_url
    from ..tools.chroma_open import holds_other_files

    where = os.path.realpath(store)
    for p in paths:
        if is_url(p) or not os.path.isdir(p):
            continue
        folder = os.path.realpath(p)
        if where == folder:  # a store in a subfolder is fine: the walk skips it
            raise InputError(f"--store {store} is the folder being ingested: the store's files would sit among the "
                             "documents; give the store a folder of its own, e.g. --store "
                             f"{os.path.join(folder, 'ragraphs-store')}")
    if holds_other_files(store):
        raise InputError(f"--store {store} is a folder of other files, not a store: give a new folder (ingest makes it) "
                         "or an existing store")


def _first_missing(path: str) -> str | None:
    """The outermost folder of ``path`` that does not exist yet (Chroma makes them all), or None."""
    path, top = os.path.abspath(path), None
    while not os.path.lexists(path):
        path, top = os.path.dirname(path), path
    return top


def _new_or_empty(store: str | None) -> tuple[str | None, str | None]:
    """The outermost folder of the store this run makes, and the store when it is an empty folder
    already there (each None where it is not)."""
    made = _first_missing(store) if store else None
    return made, store if store and not made and os.path.isdir(store) and not os.listdir(store) else None


def _leave_no_store(made: str | None, empty: str | None) -> str | None:
    """An ingest that stored nothing leaves no empty store (until 2026-12-02; in an empty folder of
    the user's until 2026-12-03): the folders it ``made`` go, an ``empty`` one is emptied again.
    Returns the store folder, or None when neither."""
    if made:
        shutil.rmtree(made, ignore_errors=True)
        return made
    if not empty:
        return None
    for entry in os.listdir(empty):
        full = os.path.join(empty, entry)
        if os.path.isdir(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            os.remove(full)
    return empty


def _refuse_bad_input(args: argparse.Namespace) -> None:
    """An :class:`InputError` for a path that is not there, or a store folder placed where
    ingest would read it; before any store opens."""
    from ..sources import is_url

    for p in args.paths:
        if not is_url(p) and not os.path.exists(p):
            raise InputError(f"no such file or directory: {p}")
    if args.store and not args.store_url:
        check_folder_place(args.store, "--store")
        _check_store_place(args.store, args.paths)


def _print_notes(report: Any, paths: list[str]) -> None:
    """What was skipped and why, the first 20 warnings, and a walk that found no file, on stderr."""
    for msg in report.skipped_dirs + report.skipped_files:
        print(f"skipped: {msg}", file=sys.stderr)
    for msg in report.warnings[:20]:
        print(f"warning: {msg}", file=sys.stderr)
    if len(report.warnings) > 20:
        print(f"warning: ... and {len(report.warnings) - 20} more warnings", file=sys.stderr)
    if not report.files and not report.skipped_files and not report.skipped_dirs:
        print(f"warning: no files found in {', '.join(paths)}", file=sys.stderr)


def _summary(report: Any, total: int) -> dict[str, Any]:
    """The run's summary (what ``--json`` prints)."""
    return {
        "files": report.files,
        "passages": report.passages,
        "added": report.added,
        "already_present": report.passages - report.added,
        "removed": report.removed,
        "removed_gone": report.removed_gone,
        "skipped_files": len(report.skipped_files),
        "skipped_dirs": len(report.skipped_dirs),
        "skipped": report.skipped_files + report.skipped_dirs,  # "PATH: why" each (stderr only until 2026-12-01)
        "seconds": round(report.seconds, 2),
        "passages_per_s": round(report.passages / report.seconds if report.seconds else 0.0, 1),
        "store_total": total,
    }


def _summary_line(summary: dict[str, Any], seconds: float, unmade: str | None, store: str | None) -> str:
    """The summary as one line for a person (``seconds`` unrounded)."""
    s = summary
    rate = s["passages"] / seconds if seconds else 0.0
    return (
        f"ingested {s['files']} file(s): {s['passages']} passages, {s['added']} new, {s['already_present']} already present, "
        + (f"{s['removed']} of earlier versions removed, " if s["removed"] else "")
        + (f"{s['removed_gone']} of files gone removed, " if s["removed_gone"] else "")
        + f"{s['skipped_files']} file(s) skipped"
        + (f" and {s['skipped_dirs']} folder(s)" if s["skipped_dirs"] else "") + " "
        f"in {seconds:.1f}s ({rate:.1f} passages/s); "
        + (f"no store made at {store}" if unmade else f"store now holds {s['store_total']}")
    )


def cmd_ingest(args: argparse.Namespace) -> int:
    from ..ingest import ingest
    from ..settings import default_store_path
    from ..tools.embeddings import MiniLMEmbeddings
    from ..tools.vectorstore import ChromaCorpus

    store_from_env(args)  # RAGRAPHS_STORE_URL / RAGRAPHS_COLLECTION, as the server's graphs read them
    if args.chunk_words is not None and args.chunk_words < 1:
        raise InputError(f"--chunk-words must be at least 1, got {args.chunk_words}")
    if args.remove:
        return _remove(args)
    _refuse_bad_input(args)
    store = None if args.store_url else (args.store or default_store_path())
    made, empty = _new_or_empty(store)
    corpus = ChromaCorpus(
        store,
        url=args.store_url,
        collection=args.collection,
        # without --exact the store's own encoder: a store built with --exact is read and added to with
        # it (refused, naming no option, until 2026-11-30); a new store gets the int8 one
        embeddings=MiniLMEmbeddings(fast=False) if args.exact else None,
    )
    report = ingest(args.paths, corpus, max_words=args.chunk_words or CHUNK_WORDS, progress=not args.quiet,
                    replace=not args.keep_old, sync=args.sync)
    _print_notes(report, args.paths)
    unmade = _leave_no_store(made, empty) if not report.passages else None
    total = 0 if unmade else corpus.count()
    summary = _summary(report, total)
    print(json.dumps(summary) if args.json else _summary_line(summary, report.seconds, unmade, store))
    return 0 if report.files or not (report.skipped_files or report.skipped_dirs) else 1


def _remove(args: argparse.Namespace) -> int:
    """``ingest --remove``: the passages of these files, folders or pages out of an existing store."""
    from ..sources import is_url
    from ..ingest_remove import refuse_blank, remove_sources
    from ..settings import default_store_path
    from ..tools.vectorstore import ChromaCorpus

    clash = [f for f, on in (("--sync", args.sync), ("--keep-old", args.keep_old), ("--exact", args.exact),
                             ("--chunk-words", args.chunk_words is not None)) if on]
    if clash:
        raise ConfigError(f"--remove reads no files, so {', '.join(clash)} would change nothing; drop it")
    refuse_blank(args.paths)  # before the store opens
    if args.store and not args.store_url:
        check_folder_place(args.store, "--store")
    corpus = ChromaCorpus(None if args.store_url else (args.store or default_store_path()), url=args.store_url,
                          collection=args.collection, create=False)
    found = remove_sources(corpus, args.paths)
    missed = [p for p, ids in found.items() if not ids]
    for p in missed:
        why = (" (a page that redirected, ingested before 2026-12-03, is stored under the address it led to)" if is_url(p) else
               " (a benchmark file's paragraphs carry no path: remove its collection instead)"
               if p.lower().endswith((".jsonl", ".json")) else "")
        print(f"warning: nothing in the store came from {p}{why}", file=sys.stderr)
    total = len(set().union(*found.values()))
    counts = {p: len(ids) for p, ids in found.items()}
    if args.json:
        print(json.dumps({"removed": total, "by_path": counts, "store_total": corpus.count()}))
    else:
        print(f"removed {total} passage(s) of {len(counts) - len(missed)} of {len(counts)} path(s); "
              f"store now holds {corpus.count()}")
    return 1 if missed else 0


def register(sub) -> None:
    p = sub.add_parser("ingest", help="add files to the vector store (idempotent)")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files or directories (.txt .md .html .pdf .docx .ipynb .jsonl, benchmark files; any other file "
                        "that is not binary is read as plain text), "
                        "or http(s) addresses of pages (HTML, text, PDF)")
    add_store_args(p)
    p.add_argument("--chunk-words", type=int, default=None,  # None: not given (--remove refuses it given)
                   help=f"words per chunk (default {CHUNK_WORDS}, which fits the encoder's 256 tokens in plain prose; "
                        "a chunk that runs past them, as code and tables may, is cut again until it fits)")
    p.add_argument("--exact", action="store_true", help="float32 encoder instead of the int8 fast path (use for the whole store)")
    p.add_argument("--keep-old", action="store_true",
                   help="keep the passages of an earlier version of a file or page ingested again "
                        "(by default they are removed once the new ones are stored)")
    p.add_argument("--sync", action="store_true",
                   help="also remove the passages of files ingested from the folders named that are no longer "
                        "in them (deleted, moved, or in a folder the walk leaves out)")
    p.add_argument("--remove", action="store_true",
                   help="take the passages ingested from these files, folders or pages out of the store instead "
                        "(nothing is read: a file may be gone already); exit 1 if a path matched nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_ingest)
