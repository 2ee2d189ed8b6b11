"""A coroutine run to its end from synchronous code: the nodes are plain functions, and a
user's part (a ``@tool async def`` web search, a retriever over an async client) may be async only."""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextvars
from typing import Any, Callable, Coroutine, TypeVar

T = TypeVar("T")


def run_to_end(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``make()``'s coroutine run on an event loop of its own; in a thread of its own when this
    thread runs a loop already (a notebook, an async app), with this thread's context variables
    (the run's config and callbacks)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragraphs-async") as ex:
        return ex.submit(contextvars.copy_context().run, lambda: asyncio.run(make())).result()


def is_async(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine: an ``async def`` function (or a partial of one),
    or an object whose ``__call__`` is one, as LangGraph reads a node (until 2026-12-03 such an
    object under ``timed``/``routed`` was called as a sync node, its coroutine never awaited)."""
    import inspect

    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))
