"""The older form of :func:`~ragraphs.graphs._common.start_at`: ``starts_a_run`` wraps a
graph's first node and resets a reused thread's earlier run inside it. Kept for graphs written
with it; new graphs call ``start_at``."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Iterable, cast

import typing_extensions as tx
from langgraph.runtime import Runtime
from langgraph.typing import ContextT as C

from ..setting_values import RUN_SETTINGS, recorded_settings, refuse_other_settings
from ..settings import context_of
from ..state.types import Node
from ._common import RUN_QUESTION_CHARS, S, _channels, _no_run_settings, _reset, state_dict, timed


def _marked(update: dict[str, Any], question: str) -> dict[str, Any]:
    """The run's first trace entry names the question the run began with (``asked``, its first
    500 characters): a loop going back to the first node checks it."""
    entries = update.get("trace")
    if isinstance(entries, list) and entries and isinstance(entries[0], dict):
        update["trace"] = [{**entries[0], "asked": question}, *entries[1:]]
    return update



@tx.overload
def starts_a_run(
    name: str, fn: Node[S, C], schema: type, *, inputs: Iterable[str] = ("question",),
    loops_from: Iterable[str] = (), settings: type | None = None,
) -> Node[S, C]: ...
@tx.overload
def starts_a_run(
    name: str, fn: Callable[..., Any], schema: type, *, inputs: Iterable[str] = ("question",),
    loops_from: Iterable[str] = (), settings: type | None = None,
) -> Node[Any, Any]: ...


def starts_a_run(
    name: str, fn: Callable[..., Any], schema: type, *, inputs: Iterable[str] = ("question",),
    loops_from: Iterable[str] = (), settings: type | None = None,
) -> Any:
    """The older form of :func:`start_at`, kept for graphs written with it: :func:`timed`, for
    the node a run starts with, which on a thread that already holds a run reads the input keys
    only and sets every other key back to its empty value (``Overwrite``), with its own update on
    top. The reset is written with the node's update, so until that node finishes (and for
    good if it raises, or while it waits on ``interrupt()``) the thread's state holds the new
    question beside the earlier run's answer, passages and counters. A node the graph loops
    back to names its loop's predecessors in ``loops_from``: reached from one of those, in the
    run its question began, it is the same run going on (the same question asked again after a
    run stopped inside its loop goes on with that run).

    With ``settings`` (the graph's settings class) the run's context is checked first: another
    method's settings class is a :class:`ConfigError` naming both. The nodes' own reading
    (``context_of``) takes a subclass for its base, as the shared nodes must (vanilla's
    ``generate`` reads ``RAGContext`` inside a CRAG run), so without this the baselines ran
    with ``DRRAGContext``'s defaults, hybrid retrieval and all.
    """
    node = timed(name, fn)
    channels = _channels(schema)
    if settings is not None and RUN_SETTINGS not in channels:
        _no_run_settings(f"starts_a_run({name!r}, ..., settings=...)", schema)
    keep, looped = frozenset(inputs), frozenset(loops_from)

    def begin(state: Any, runtime: Any) -> tuple[str, Any, str, dict]:
        """How this call goes: "on" (the loop going on: as it is), "fresh" (a new thread) or
        "new" (a new question on a thread that holds a run), with the state the node reads."""
        if settings is not None:
            refuse_other_settings(getattr(runtime, "context", None), settings)
        held: dict = state_dict(state)
        trace = held.get("trace") or []
        asked = str(held.get("question") or "")[:RUN_QUESTION_CHARS]
        # the loop going on: reached from its predecessor, in the run this question began (a run
        # cut short inside its loop, then a new question on the thread, is a new run)
        if trace and trace[-1].get("node") in looped and trace[0].get("asked") == asked:
            return "on", state, asked, held
        if not trace:
            return "fresh", state, asked, held
        return "new", {k: v for k, v in held.items() if k in keep}, asked, held

    def end(how: str, result: Any, asked: str, held: dict, runtime: Any) -> Any:
        if how == "on" or not isinstance(result, dict):  # a Command passes as the node gave it
            return result
        update = _marked(result, asked)
        if settings is not None:  # what the routers read where LangGraph gives them no runtime
            update[RUN_SETTINGS] = recorded_settings(context_of(runtime, settings))
        if how == "fresh":
            return update
        entries = update.get("trace")
        if isinstance(entries, list) and entries and isinstance(entries[0], dict):  # `--trace` says so
            update["trace"] = [{**entries[0], "earlier_run_reset": True}, *entries[1:]]
        return _reset(held, keep, update, channels)

    if inspect.iscoroutinefunction(fn):  # an async first node stays one (it failed until 2026-11-30)
        @functools.wraps(fn)
        async def afirst(state: Any, runtime: Runtime[Any]) -> Any:
            how, read, asked, held = begin(state, runtime)
            return end(how, await cast(Any, node)(read, runtime), asked, held, runtime)

        del afirst.__wrapped__
        afirst.__annotations__ = {"state": dict, "runtime": Runtime, "return": dict}
        return afirst

    @functools.wraps(fn)
    def first(state: Any, runtime: Runtime[Any]) -> Any:
        how, read, asked, held = begin(state, runtime)
        return end(how, node(read, runtime), asked, held, runtime)

    del first.__wrapped__
    first.__annotations__ = {"state": dict, "runtime": Runtime, "return": dict}
    return first
