"""Where a passage came from, as the store keeps it: a file's path as text and a page's
address. Ingest writes these into each passage's ``meta["path"]``; replacing a changed file,
``--sync`` and ``ingest --remove`` match on them. Also the walk that finds the files."""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Iterator


def _as_text(path: str, errors: str) -> str:
    """``path`` as it is when it is UTF-8, else its bytes decoded with ``errors``."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", errors)


# the control characters (C0 but the tab, DEL, C1) as ``\xNN``; the second table keeps line breaks
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7f, *range(0x80, 0xa0)) if c != 0x09}
_CONTROLS_BUT_LINES = {c: v for c, v in _CONTROLS.items() if c != 0x0a}


def escape_controls(text: str, lines: bool = False) -> str:
    """``text`` with its control characters written as ``\\xNN`` (the tab kept, and line breaks
    where ``lines``): a document, file name or answer printed to a terminal shows an escape
    sequence's bytes instead of recolouring, retitling or clearing the terminal (until 2026-12-03
    they reached it raw), and a file name with a line break in it stays one line."""
    return text.translate(_CONTROLS_BUT_LINES if lines else _CONTROLS)


def name_text(name: str) -> str:
    """A file name (or a title made of one) as text to keep: one that is not UTF-8 (a Latin-1 file
    name, one from a Windows zip) reads with U+FFFD in place of its bytes; its surrogate escapes
    failed the embedder and lost the whole ingest until 2026-11-30."""
    return _as_text(name, "replace")


def printable_path(path: str) -> str:
    """A file path or name as text to show: :func:`name_text`, a control character in it as ``\\xNN``."""
    return escape_controls(name_text(path))


def path_text(path: str) -> str:
    """A file's absolute path as the text its passages keep: bytes that are not UTF-8 written as
    ``\\xNN``, so two such names stay two paths. With U+FFFD (until 2026-11-30, night)
    ``caf\\xe9.txt`` and ``caf\\xe8.txt`` were one path, and replacing or removing one removed the
    other's passages; a store made before keeps the old spelling until ``ingest --sync``."""
    return _as_text(os.path.abspath(path), "backslashreplace")


def is_url(path: str) -> bool:
    """An http(s) address (the scheme in any case: ``HTTP://Host/page`` is one)."""
    return path[:8].lower().startswith(("http://", "https://"))


def page_address(url: str) -> str:
    """The address a page's passages keep: without its ``#fragment`` (never sent to the server),
    scheme and host in lower case, so ``page#a`` and ``HTTP://Host/page`` are the page ingested
    before, not another copy of it (until 2026-11-30)."""
    from urllib.parse import urldefrag, urlsplit, urlunsplit

    parts = urlsplit(urldefrag(url)[0])
    netloc = parts.netloc if "@" in parts.netloc else parts.netloc.lower()  # a user name keeps its case
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, ""))


def page_spellings(url: str) -> list[str]:
    """The addresses one page may be stored under: ``page_address``, and for a site's root both
    ``http://host`` and ``http://host/`` (one page; ingest keeps the spelling it was given)."""
    from urllib.parse import urlsplit

    first = page_address(url)
    parts = urlsplit(first)
    if parts.path in ("", "/") and not parts.query:
        root = f"{parts.scheme}://{parts.netloc}"
        return [first, root if first != root else root + "/"]
    return [first]


def path_list(paths: Any) -> list[str]:
    """``paths`` as a list of path strings: one ``str`` or ``os.PathLike`` is one path (a string was
    read letter by letter, and a ``pathlib.Path`` failed with a TypeError, until 2026-12-01)."""
    return [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]


# folders a walk never enters: they hold no documents, only what a program wrote
NOT_DOCUMENTS = {"__pycache__": "Python's bytecode cache", "node_modules": "JavaScript packages"}


def not_documents(path: str) -> str | None:
    """Why the folder ``path`` holds no documents to ingest (a vector store, a virtual
    environment, a package cache), or None for an ordinary folder."""
    name = os.path.basename(os.path.normpath(path))
    if name in NOT_DOCUMENTS:
        return NOT_DOCUMENTS[name]
    if os.path.isfile(os.path.join(path, "chroma.sqlite3")):
        return "a Chroma store (ragraphs ingest writes there)"
    if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        return "a Python virtual environment"
    return None


def iter_files(paths: Iterable[str], skipped_dir: Callable[[str], None] | None = None,
               unreadable: Callable[[str], None] | None = None) -> Iterator[str]:
    """The files of ``paths``, directories walked in name order. Hidden files and folders are
    left out, and so is every folder :func:`not_documents` names: ``skipped_dir`` hears of each
    of those (``"PATH: why"``), and of a folder that cannot be listed (``unreadable`` gets its
    path: a sync must not take its files for gone) or a link to a folder (not followed)."""
    def cannot_list(e: OSError) -> None:
        where = str(e.filename or "?")
        if skipped_dir is not None:
            skipped_dir(f"{where}{os.sep}: cannot be read: {e.strerror or e}")
        if unreadable is not None:
            unreadable(os.path.abspath(where))

    def keep(d: str) -> bool:
        why = not_documents(d)
        if why is not None and skipped_dir is not None:
            skipped_dir(f"{d}{os.sep}: {why}, not documents")
        return why is None

    for p in paths:
        if os.path.isdir(p):
            if not keep(p):
                continue
            for root, dirs, files in os.walk(p, onerror=cannot_list):
                linked = [d for d in dirs if os.path.islink(os.path.join(root, d)) and not d.startswith(".")]
                for d in linked:  # os.walk does not follow them: said, not silent (until 2026-11-30)
                    if skipped_dir is not None:
                        skipped_dir(f"{os.path.join(root, d)}{os.sep}: a link to a folder, not followed (name the folder itself)")
                    if unreadable is not None:  # what was ingested through the link stays under --sync
                        unreadable(os.path.abspath(os.path.join(root, d)))
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in linked and keep(os.path.join(root, d)))
                for f in sorted(files):
                    if not f.startswith("."):
                        yield os.path.join(root, f)
        else:
            yield p


def one_name_per_file(files: list[str]) -> dict[str, str]:
    """For each of ``files`` that names a file met under another name too (a link to it, a hard
    link, a folder named twice), the name it is read as: the first that leads there through no
    link, else the first."""
    names: dict[tuple[int, int], list[str]] = {}
    for f in files:
        try:
            st = os.stat(f)
        except OSError:  # a broken link, a URL: told or read as it is
            continue
        names.setdefault((st.st_dev, st.st_ino), []).append(f)
    out: dict[str, str] = {}
    for same in names.values():
        if len(same) > 1:
            direct = [f for f in same if os.path.realpath(f) == os.path.abspath(f)]
            out.update(dict.fromkeys(same, (direct or same)[0]))
    return out
