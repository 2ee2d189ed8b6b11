"""LangChain retrievers and search tools as web search backends.

:class:`LangChainWebSearch` wraps a retriever that searches the web (``TavilySearchAPIRetriever``,
``WikipediaRetriever``, ...), :class:`LangChainToolWebSearch` a search tool (``TavilySearch``,
``DuckDuckGoSearchResults``, ``SearxSearchResults``, a ``@tool`` of your own, an ``async`` one
too), whose output :func:`tool_results` reads; :func:`ragraphs.tools.websearch.as_web_search`
wraps either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langgraph.errors import GraphBubbleUp

from ..state.types import Passage, make_passage
from .aio import run_to_end


class WebSearchError(Exception):
    """A web search backend failed (network, timeout, bad response)."""


def _web_passage(title: str, text: str, url: str, engine: str, rank: int) -> Passage:
    return make_passage(" ".join((title or "").split()), " ".join((text or "").split()), "web", url=url, engine=engine, rank=rank)


def result_key(p: Passage) -> str:
    """What makes two web results the same: the page's address (without its ``#fragment`` and last
    ``/``), else the passage's id."""
    return str((p.get("meta") or {}).get("url") or "").split("#", 1)[0].rstrip("/") or str(p.get("id") or "")


def distinct(results: list[Passage]) -> list[Passage]:
    """``results`` without the copies of an earlier one (:func:`result_key`), in their order."""
    seen: set[str] = set()
    out = []
    for p in results:
        if result_key(p) not in seen:
            seen.add(result_key(p))
            out.append(p)
    return out


def _web_url(item: Mapping, keys: tuple[str, ...]) -> str:
    """The first of ``keys`` whose value is an http(s) address, "" for none."""
    return next((str(item[key]) for key in keys if str(item.get(key) or "").startswith(("http://", "https://"))), "")


class LangChainWebSearch:
    """A LangChain retriever as a :class:`WebSearch`: its first ``k`` documents become web
    passages (title from the metadata's ``title``, else the URL). A document whose metadata
    ``url`` or ``source`` is an http(s) address keeps it in ``meta["url"]``, so the methods fetch
    the page as they do for the other backends (``fetch_pages=false`` keeps the retriever's text)."""

    def __init__(self, retriever: Any, name: str | None = None):
        self.inner = retriever
        self.name = name or type(retriever).__name__

    def search(self, query: str, k: int = 5) -> list[Passage]:
        try:
            docs = list(self.inner.invoke(query))
        except GraphBubbleUp:  # an interrupt() inside the backend pauses the run; it is no failure
            raise
        except Exception as e:  # the retriever's own network or API errors
            raise WebSearchError(f"{self.name} failed: {type(e).__name__}: {e}") from e
        out = []
        for rank, d in enumerate(docs[: max(0, int(k))]):
            md = d.metadata or {}
            url = _web_url(md, ("url", "source"))
            out.append(_web_passage(str(md.get("title") or url), d.page_content or "", url, self.name, rank))
        return out


# the keys search tools give a result's address and text under (SearXNG and DuckDuckGo's
# "link" and "snippet", Tavily's "url" and "content", ddgs' "href" and "body")
_URL_KEYS = ("link", "url", "href", "source")
_TEXT_KEYS = ("snippet", "content", "body", "text", "page_content", "description")


def tool_results(output: Any) -> list[dict]:
    """A search tool's output as rows of ``title``, ``url`` and ``text``, in the tool's order.

    Read: a list of results (mappings or ``Document``s); a mapping with a ``results`` list
    (Tavily's form); either as JSON text or as a Python literal (``SearxSearchResults`` returns
    ``str(list)``). Any other text is one result without a title or address (a tool that
    answers in prose, such as ``DuckDuckGoSearchRun``)."""
    if isinstance(output, str):
        return _text_results(output.strip())
    if isinstance(output, Mapping):
        inner = output.get("results")
        return tool_results(inner) if isinstance(inner, list) else tool_results([output])
    if hasattr(output, "page_content"):  # a Document
        return tool_results([{**(getattr(output, "metadata", None) or {}), "page_content": output.page_content}])
    if not isinstance(output, (list, tuple)):
        return tool_results(str(output)) if output is not None else []
    rows = []
    for item in output:
        if isinstance(item, str) or hasattr(item, "page_content"):
            rows.extend(tool_results(item))
        elif isinstance(item, Mapping):
            url = _web_url(item, _URL_KEYS)
            text = next((str(item[key]) for key in _TEXT_KEYS if str(item.get(key) or "").strip()), "")
            if text or url:
                rows.append({"title": str(item.get("title") or ""), "url": url, "text": text})
    return rows


def _text_results(text: str) -> list[dict]:
    """A tool's text output: results as JSON or a Python literal, else one result of prose."""
    if text[:1] in "[{":
        import ast

        for read in (json.loads, ast.literal_eval):
            try:
                return tool_results(read(text))
            except (ValueError, SyntaxError, RecursionError, MemoryError):
                continue
    return [{"title": "", "url": "", "text": text}] if text else []


def _invoke(tool: Any, arg: Any) -> Any:
    """``tool.invoke(arg)``; a tool with a coroutine and no function (a ``@tool async def``, which
    ``invoke`` refuses: it never searched until 2026-12-03) through ``ainvoke`` on an event loop of
    its own, in a thread of its own when this one runs a loop (a notebook, an async app)."""
    if getattr(tool, "coroutine", None) is None or getattr(tool, "func", "") is not None:
        return tool.invoke(arg)
    return run_to_end(lambda: tool.ainvoke(arg))


def _has_artifact(tool: Any) -> bool:
    return getattr(tool, "response_format", None) == "content_and_artifact"


def _artifact_or_content(tool: Any, query: str) -> Any:
    """A ``content_and_artifact`` tool's results: its artifact (``DuckDuckGoSearchResults``'
    raw results, each with its ``link``), which a plain ``invoke`` leaves out for a text that
    names no address in a form :func:`tool_results` reads; its content when there is none."""
    names = list(getattr(tool, "args", None) or {}) or ["query"]
    msg = _invoke(tool, {"name": getattr(tool, "name", "search"), "args": {names[0]: query}, "id": "ragraphs-web",
                         "type": "tool_call"})
    artifact = getattr(msg, "artifact", None)
    return artifact if isinstance(artifact, (list, tuple, Mapping)) and artifact else getattr(msg, "content", msg)


class LangChainToolWebSearch:
    """A LangChain search tool as a :class:`WebSearch`: the tool is invoked with the query (an
    ``async`` tool awaited), and the first ``k`` results of its output (read by
    :func:`tool_results`) become web passages; those with an address keep it in
    ``meta["url"]``, so the methods fetch the page as they do for the other backends. How many
    results the tool returns is the tool's own setting (``max_results``, ``num_results``)."""

    def __init__(self, tool: Any, name: str | None = None):
        self.inner = tool
        self.name = name or str(getattr(tool, "name", "") or type(tool).__name__)

    def search(self, query: str, k: int = 5) -> list[Passage]:
        try:
            output = _invoke(self.inner, query) if not _has_artifact(self.inner) else _artifact_or_content(self.inner, query)
        except GraphBubbleUp:  # an interrupt() inside the backend pauses the run; it is no failure
            raise
        except Exception as e:  # the tool's own network or API errors
            raise WebSearchError(f"{self.name} failed: {type(e).__name__}: {e}") from e
        rows = tool_results(output)[: max(0, int(k))]
        return [_web_passage(r["title"] or r["url"], r["text"], r["url"], self.name, rank) for rank, r in enumerate(rows)]
