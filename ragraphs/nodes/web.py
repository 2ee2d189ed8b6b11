"""The web search a run uses, for the methods that search the web (CRAG, ERM4): the graph's
own backend (``Components(web_search=...)``), else the one the run's ``web`` setting names,
else ``RAGRAPHS_WEB``; each named backend built once per components, spec and timeout."""

from __future__ import annotations

import os
import threading
from typing import Any

from ..components import Components

_BACKEND_LOCK = threading.Lock()


def web_spec(ctx: Any) -> str:
    """The run's web search spec: the ``web`` setting, else ``RAGRAPHS_WEB``; "" for none."""
    # a blank setting is "use RAGRAPHS_WEB", as the settings check and make_web_search read it (until
    # 2026-11-30 a whitespace-only one ran with no web search)
    spec = (getattr(ctx, "web", "") or "").strip() or os.environ.get("RAGRAPHS_WEB", "").strip()
    return "" if spec.lower() in ("none", "off") else spec


def no_web(c: Components, ctx: Any) -> bool:
    """Whether the run has no web search at all (no backend given, ``web`` and ``RAGRAPHS_WEB`` unset or none)."""
    return c.web_search is None and not web_spec(ctx)


MAX_BACKENDS = 8  # web backends kept per Components


def web_backend(c: Components, ctx: Any) -> tuple[Any, str]:
    """(backend, description): ``c.web_search`` if given, else the context/env spec, built once
    per spec and ``web_timeout`` (keyed by the spec alone until 2026-11-30, so a later run on
    the same components kept the first run's timeout; an offline snapshot, which has no timeout,
    by its spec alone), at most :data:`MAX_BACKENDS` of them."""
    if c.web_search is not None:
        return c.web_search, getattr(c.web_search, "name", type(c.web_search).__name__)
    from ..tools.websearch import make_web_search

    spec = web_spec(ctx)
    if not spec:
        return None, "none"
    timeout = float(getattr(ctx, "web_timeout", 10.0))
    # an offline snapshot has no timeout: one index a spec, however many timeouts the runs give
    key = spec if spec.strip().lower().startswith("offline:") else (spec, timeout)
    return _kept(c, "web_backends", key, lambda: make_web_search(spec, timeout=timeout)), spec


def _kept(c: Components, name: str, key: Any, build: Any) -> Any:
    """``build()``'s result, made once per components and ``key`` (in ``c.extra[name]``), at most
    :data:`MAX_BACKENDS` kept: a server whose clients set many timeouts drops the oldest."""
    with _BACKEND_LOCK:
        cache = c.extra.setdefault(name, {})
        if key not in cache:
            while len(cache) >= MAX_BACKENDS:
                cache.pop(next(iter(cache)))
            cache[key] = build()
        return cache[key]


def page_fetcher(c: Components, ctx: Any) -> Any:
    """The fetcher of web result pages (CRAG's, ERM4's): ``c.extra["fetcher"]``, else one built
    from the run's ``fetch_timeout``, ``fetch_max_bytes`` and ``fetch_allow_private``, once per
    components and settings (until 2026-12-01 one per search, and ERM4's ignored the size cap)."""
    given = c.extra.get("fetcher")
    if given is not None:
        return given
    from ..tools.fetch import PageFetcher

    key = (float(ctx.fetch_timeout), int(ctx.fetch_max_bytes), bool(ctx.fetch_allow_private))
    return _kept(c, "fetchers", key, lambda: PageFetcher(timeout=key[0], max_bytes=key[1], allow_private=key[2]))
