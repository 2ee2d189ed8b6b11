"""Web search behind one small interface.

``WebSearch.search(query, k) -> list[Passage]`` (passages with ``source="web"``). Backends:

- :class:`OfflineCorpusSearch`: BM25 over a JSONL of pages (``{title, text}`` rows, or the
  PopQA web snapshot's ``{question, results: [{title, text}]}`` rows) so the web path works
  with no network.
- :class:`SearxngSearch`: a SearXNG instance's JSON API (``/search?q=...&format=json``),
  for self-hosted search.
- :class:`DuckDuckGoSearch`: DuckDuckGo through the ``ddgs`` package (needs the internet).
- :class:`LangChainWebSearch`: any LangChain retriever that searches the web
  (``TavilySearchAPIRetriever``, ``WikipediaRetriever``, ...); :class:`LangChainToolWebSearch`:
  any LangChain search tool (``TavilySearch``, ``DuckDuckGoSearchResults``,
  ``SearxSearchResults``, a ``@tool`` of your own); :func:`as_web_search` wraps either, given as
  ``Components(web_search=...)``.

Results that carry a URL keep it in ``meta["url"]``; the methods fetch those pages with
:class:`ragraphs.tools.fetch.PageFetcher`. :func:`make_web_search` builds a backend from a
spec string (``offline:PATH[,PATH]``, ``searxng:URL``, ``ddg``, ``none``), the form used by
``RAGRAPHS_WEB`` and the CLI.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import itertools
import json
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Callable, Protocol, runtime_checkable
from urllib.parse import urlencode, urlsplit

from ..errors import ConfigError, InputError
from ..state.types import Passage, make_passage
from .bm25 import BM25Index
from .web_tools import (  # noqa: F401  (importable from here as before)
    LangChainToolWebSearch, LangChainWebSearch, WebSearchError, _web_passage, result_key, tool_results)


@runtime_checkable
class WebSearch(Protocol):
    name: str

    def search(self, query: str, k: int = 5) -> list[Passage]: ...


_OWN = frozenset(("title", "text", "source", "score", "id"))


class OfflineCorpusSearch:
    """BM25 search over pages stored in JSONL files: the offline stand-in for a web engine."""

    name = "offline"

    def __init__(self, paths: list[str] | str | None = None, passages: list[Passage] | None = None):
        from ..datasets import iter_rows

        pages: dict[str, Passage] = {}
        for p in passages or []:  # given pages are the snapshot too: never fetched
            pages.setdefault(p["id"], {**p, "source": "web", "meta": {**(p.get("meta") or {}), "offline": True}})
        files = [paths] if isinstance(paths, str) else list(paths or [])
        read = 0
        for path in files:
            no_text: list[Mapping] = []  # pages of the file without a "text", said once (left out silently until 2026-12-03)
            for row in iter_rows(path):
                read += 1
                results = row.get("results")
                items = results if isinstance(results, list) else [row]
                for r in items:
                    if not isinstance(r, Mapping):  # a page given as a bare string, a number...
                        print(f"{path}: skipped a result that is not an object", file=sys.stderr)
                        continue
                    text = " ".join(str(r.get("text") or "").split())
                    if text:
                        # `offline`: the stored text is the page; no fetch goes to the address
                        p = make_passage(str(r.get("title") or ""), text, "web", url=str(r.get("url") or ""), offline=True)
                        pages.setdefault(p["id"], p)
                    else:
                        no_text.append(r)
            if no_text and pages:  # with no page at all, the error below says it
                keys = ", ".join(map(repr, list(no_text[0])[:6])) or "none"
                print(f"{path}: left out {len(no_text)} page(s) with no \"text\" (the first one's keys: {keys})", file=sys.stderr)
        if not pages:  # "the offline web corpus is empty" named no file until 2026-12-01 (a benchmark file given as --web)
            where = ", ".join(map(str, files)) or "the given pages"
            raise InputError(f"the offline web corpus is empty: {where} holds no page with text ({read} row(s) read); "
                             'a row is a page {"title", "text", "url"} or a question with its results '
                             '{"question", "results": [{"title", "text", "url"}, ...]}')
        self.index = BM25Index(list(pages.values()))

    def search(self, query: str, k: int = 5) -> list[Passage]:
        return [{**p, "source": "web"} for p in self.index.search(query, k)]


MAX_RESULTS = 1000  # read at most this many items of one backend answer


def usable_results(raw: Any, source: str = "web") -> tuple[list[Passage], int]:
    """The well-formed passages among what a web search backend returned, and how many
    items were dropped as malformed.

    A backend may be anyone's code: its answer is checked before a node reads it. An item
    is kept when it is a mapping with string ``text`` that is not blank, or with a page URL
    (``meta["url"]``, fetched later); its title becomes a string, its ``meta`` a dict whose
    ``url`` (if any) is a string, its id a string (else the content hash). An answer that
    is not a list of items at all raises :class:`WebSearchError`.
    """
    if raw is None:
        return [], 0
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
        raise WebSearchError(f"the web search returned a {type(raw).__name__}, not a list of results")
    items = list(itertools.islice(raw, MAX_RESULTS))
    out = [p for p in map(lambda item: _usable(item, source), items) if p is not None]
    return out, len(items) - len(out)


def _usable(item: Any, source: str) -> Passage | None:
    """One item of a backend's answer as a passage, None when it is malformed."""
    if not isinstance(item, Mapping):
        return None
    text = item.get("text")
    text = "" if text is None else text
    meta_in = item.get("meta")
    # a LangChain document's metadata ("source": "wikipedia", "score") must not clash with the passage's own fields
    meta = {str(k): v for k, v in meta_in.items() if str(k) not in _OWN} if isinstance(meta_in, Mapping) else {}
    if "url" in meta and not isinstance(meta["url"], str):
        del meta["url"]
    if not isinstance(text, str) or not (text.strip() or meta.get("url")):
        return None
    title = item.get("title")
    title = title if isinstance(title, str) else ("" if title is None else str(title))
    pid, score = item.get("id"), item.get("score")
    return make_passage(title, text, source,
                        float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
                        id=pid if isinstance(pid, str) and pid.strip() else None, **meta)


def call_with_timeout(fn: Callable, timeout: float, *args: Any) -> Any:
    """Run ``fn(*args)`` in a worker thread; raise TimeoutError after ``timeout`` seconds.

    A backend that ignores its own timeouts is left to finish in the background; the run
    goes on without it.
    """
    ex = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="web-search")
    # the caller's context goes with it: LangChain's run config (callbacks, a LangGraph
    # interrupt()'s place) was missing in the worker until 2026-11-30
    fut = ex.submit(contextvars.copy_context().run, fn, *args)
    try:
        return fut.result(timeout=timeout)
    except cf.TimeoutError as e:
        raise TimeoutError(f"timed out after {timeout:g}s") from e
    finally:
        ex.shutdown(wait=False, cancel_futures=True)


def search_checked(backend: Any, query: str, k: int, timeout: float) -> tuple[list[Passage], int]:
    """``backend.search(query, k)`` within ``timeout`` seconds (reading a lazy answer
    included), checked by :func:`usable_results`: the usable passages and the number of
    malformed items dropped. Raises on failure or timeout; callers record it and go on."""
    return call_with_timeout(lambda: usable_results(backend.search(query, k)), timeout)


def is_wikipedia(url: str) -> bool:
    host = (urlsplit(url or "").hostname or "").lower()
    return host == "wikipedia.org" or host.endswith(".wikipedia.org")


def prefer_wikipedia(results: list[Passage]) -> list[Passage]:
    """Wikipedia pages first (as in the CRAG paper), otherwise the engine's order."""
    return sorted(results, key=lambda p: 0 if is_wikipedia((p.get("meta") or {}).get("url", "")) else 1)


class SearxngSearch:
    """SearXNG's JSON API: ``GET {base_url}/search?q=QUERY&format=json``.

    The instance is configured by the user, so it may live on a private address (the
    pages it returns are fetched with the fetcher's own address checks). The instance must
    have the ``json`` format enabled in its settings.
    """

    name = "searxng"

    def __init__(self, base_url: str, *, timeout: float = 8.0, max_bytes: int = 2_000_000, language: str | None = None):
        from ..web_specs import web_spec_error

        problem = web_spec_error(f"searxng:{base_url or ''}")  # a user name or password refused, not shown
        if problem:
            raise ConfigError(problem)
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.max_bytes = int(max_bytes)
        self.language = language

    def search(self, query: str, k: int = 5) -> list[Passage]:
        from .fetch import FetchError, PageFetcher, codec_name

        params = {"q": query, "format": "json"}
        if self.language:
            params["language"] = self.language
        url = f"{self.base_url}/search?{urlencode(params)}"
        fetcher = PageFetcher(timeout=self.timeout, max_bytes=self.max_bytes, allow_private=True)
        try:
            final, status, _ctype, charset, body, truncated = fetcher.get_with_charset(url, accept="application/json")
        except FetchError as e:
            raise WebSearchError(f"SearXNG search failed: {e}") from e
        if status >= 400:
            hint = {403: " (is format=json enabled in its settings.yml?)", 429: " (rate limited: its limiter refused the search)"}
            raise WebSearchError(f"SearXNG returned HTTP {status}{hint.get(status, '')}")
        if truncated:
            raise WebSearchError("SearXNG response larger than the size cap")
        # a BOM, then the declared charset, else JSON's own UTF-8/16/32 reading of the bytes (UTF-8 always,
        # a BOM or UTF-16 answer refused and a declared Latin-1 one garbled, until 2026-12-03)
        name = codec_name(charset, body)
        try:
            data = json.loads(body.decode(name, "replace") if name else body)
        except ValueError as e:
            raise WebSearchError(f"SearXNG returned non-JSON data: {e}") from e
        if not isinstance(data, dict) or not isinstance(data.get("results") or [], list):
            raise WebSearchError(f"SearXNG returned JSON without a 'results' list (got {type(data).__name__}); is this a SearXNG /search endpoint?")
        out: list[Passage] = []
        seen: set[str] = set()
        for r in data.get("results") or []:
            if not isinstance(r, dict):
                continue
            link = str(r.get("url") or "")
            text = str(r.get("content") or "")
            title = str(r.get("title") or "")
            if not (text or link):
                continue
            p = _web_passage(title, text, link, self.name, len(out))
            if result_key(p) in seen:  # a copy counts once toward k (3 copies of a page left 2 fewer pages until 2026-12-03)
                continue
            seen.add(result_key(p))
            out.append(p)
            if len(out) >= k:
                break
        return out


class DuckDuckGoSearch:
    """DuckDuckGo text search through the ``ddgs`` package (for people online).

    ``client`` is the ``ddgs.DDGS`` object to ask (default: a new one per search, with this
    backend's timeout); its ``text()`` rows (``title``, ``href``, ``body``) become web
    passages in the engine's order.
    """

    name = "ddg"

    def __init__(self, *, timeout: float = 8.0, region: str = "us-en", backend: str = "auto", client: Any = None):
        self.timeout = float(timeout)
        self.region = region
        self.backend = backend
        self.client = client

    def _client(self) -> Any:
        if self.client is not None:
            return self.client
        try:
            from ddgs import DDGS
        except ImportError as e:
            raise ConfigError("the DuckDuckGo backend needs the 'ddgs' package (pip install ddgs)") from e
        return DDGS(timeout=int(max(1, self.timeout)))

    def search(self, query: str, k: int = 5) -> list[Passage]:
        client = self._client()
        try:
            rows = client.text(query, region=self.region, max_results=k, backend=self.backend)
        except Exception as e:  # network errors, rate limits, ddgs' "no results" exception
            if type(e).__name__ == "DDGSException" and "no results" in str(e).lower():
                return []
            raise WebSearchError(f"DuckDuckGo search failed: {type(e).__name__}: {e}") from e
        out: list[Passage] = []
        for r in rows or []:
            if not isinstance(r, Mapping):
                continue
            link = str(r.get("href") or r.get("url") or "")
            body = str(r.get("body") or "")
            if not (body.strip() or link):
                continue
            out.append(_web_passage(str(r.get("title") or ""), body, link, self.name, len(out)))
            if len(out) >= k:
                break
        return out


def as_web_search(backend: Any) -> Any:
    """``backend`` as a :class:`WebSearch`: itself when it has ``search(query, k)``, a LangChain
    retriever wrapped in :class:`LangChainWebSearch`, a LangChain tool in
    :class:`LangChainToolWebSearch`, ``None`` for none; a :class:`ConfigError` naming its type
    otherwise."""
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import BaseTool

    if isinstance(backend, BaseRetriever):
        return LangChainWebSearch(backend)
    if isinstance(backend, BaseTool):
        return LangChainToolWebSearch(backend)
    if backend is None or callable(getattr(backend, "search", None)):
        return backend
    raise ConfigError("web_search must be a LangChain retriever, a LangChain tool or have search(query, k); "
                      f"got {type(backend).__name__}")


def make_web_search(spec: str | None, **kw: Any) -> Any:
    """A backend from a spec: ``offline:PATH[,PATH...]`` | ``searxng:URL`` | ``ddg`` | ``none``.

    ``None`` or an empty spec reads ``RAGRAPHS_WEB``, as the ``web`` setting's default ``""``
    does in the graphs (an empty spec returned ``None`` until 2026-11-30); returns ``None`` when
    no backend is set (``none`` / ``off``, or nothing in either place).
    """
    from ..web_specs import offline_web_error, web_spec_error

    spec = (spec or "").strip() or os.environ.get("RAGRAPHS_WEB", "").strip()
    if not spec or spec.lower() in ("none", "off"):
        return None
    problem = web_spec_error(spec) or offline_web_error(spec)
    if problem:
        raise ConfigError(problem)
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    if kind == "offline":
        return OfflineCorpusSearch([os.path.expanduser(p.strip()) for p in arg.split(",") if p.strip()])
    if kind == "searxng":
        return SearxngSearch(arg, **{k: v for k, v in kw.items() if k in ("timeout", "max_bytes", "language")})
    return DuckDuckGoSearch(**{k: v for k, v in kw.items() if k in ("timeout", "region", "backend")})  # ddg
