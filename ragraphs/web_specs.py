"""Checks of a web search spec (the ``web`` setting, ``$RAGRAPHS_WEB``): its form, then, on the
machine that runs the graph, its offline files. Read by the settings check and by the web search
tools; no backend is opened here."""

from __future__ import annotations

import os
from typing import Any


def web_spec_error(spec: Any) -> str | None:
    """What is wrong with a web search spec's form (the backend itself is opened when used):
    empty (``$RAGRAPHS_WEB``), ``none`` / ``off``, ``ddg``, ``offline:PATH[,PATH...]``,
    ``searxng:URL``."""
    if not str(spec or "").strip() and os.environ.get("RAGRAPHS_WEB", "").strip():
        problem = web_spec_error(os.environ["RAGRAPHS_WEB"])
        return f"{problem} (from RAGRAPHS_WEB)" if problem else None
    kind, colon, arg = str(spec or "").strip().partition(":")
    kind = kind.lower()
    if kind in ("", "none", "off", "ddg", "duckduckgo") and not colon:
        return None
    if kind == "searxng" and arg.strip():
        from urllib.parse import urlsplit

        u = urlsplit(arg.strip())
        if "@" in u.netloc:  # accepted, then refused by the fetcher at each search, until 2026-12-03; the URL not shown
            return ("a SearXNG URL with a user name or password is refused: it would be written into traces, "
                    "checkpoints and eval files; give its address without them (a local proxy can add the login)")
        if u.scheme not in ("http", "https") or not u.hostname:
            return f"bad SearXNG URL {arg.strip()!r}: use searxng:http(s)://host[:port][/path]"
        return None
    if kind == "offline" and any(p.strip() for p in arg.split(",")):
        return None  # the files are the machine's that runs the graph (a server's): offline_web_error
    if kind in ("offline", "searxng"):
        return f"{kind} web search needs {'a path: offline:/path/pages.jsonl' if kind == 'offline' else 'a URL: searxng:http://127.0.0.1:8888'}"
    return f"unknown web search {spec!r}: use offline:PATH, searxng:URL, ddg or none"


def offline_web_error(spec: Any) -> str | None:
    """What is wrong with the files of an ``offline:`` web spec (``~`` read as the home folder;
    empty: ``$RAGRAPHS_WEB``) on this machine: the command line checks it before a local run. A
    missing file failed only at the first search, which CRAG and ERM4 answer past without the
    web, so a run of ``offline:~/pages.jsonl`` (``~`` not expanded until 2026-12-01) had none."""
    spec = str(spec or "").strip() or os.environ.get("RAGRAPHS_WEB", "").strip()
    kind, _, arg = spec.partition(":")
    if kind.strip().lower() != "offline":
        return None
    for p in (os.path.expanduser(p.strip()) for p in arg.split(",") if p.strip()):
        if not os.path.isfile(p):
            return f"offline web corpus {'is a folder, not a JSONL file' if os.path.isdir(p) else 'not found'}: {p}"
    return None
