"""Helpers shared by the graph modules: timed nodes and the trace convention.

Every node returns a partial state update. It may include a ``"_trace"`` dict of details
(scores, routes, queries...); :func:`timed` pops it and appends one trace entry
``{"node", "elapsed_s", **details}`` to the state's ``trace``, so every run carries a
trace of every step with its time. Details are also sent as a custom stream event
(``stream_mode="custom"``) while the run goes on.
"""

from __future__ import annotations

import functools
import inspect
import time
from typing import Any, Callable, Hashable, Iterable, TypeVar, cast

import typing_extensions as tx
from langgraph.runtime import Runtime
from langgraph.types import Overwrite
from langgraph.typing import ContextT as C

from ..setting_values import refuse_other_settings
from ..state.types import Node

S = TypeVar("S")

Routes = dict[Hashable, str]
"""A conditional edge's path map: each route the router may return -> the node it leads to."""


def _emit(runtime: Any, entry: dict) -> None:
    writer = getattr(runtime, "stream_writer", None)
    if writer is None:
        return
    try:
        writer({"event": "node_trace", **entry})
    except Exception:  # a stream writer must never break a run
        pass


def timed(name: str, fn: Node[S, C]) -> Node[S, C]:
    """Wrap ``fn(state, runtime)`` so that it records its time and details in ``trace``; an
    ``async def`` node stays one (it runs under ``ainvoke`` / ``astream``)."""

    def finish(update: dict[str, Any], t0: float, runtime: Runtime[C]) -> dict[str, Any]:
        details = update.pop("_trace", None) or {}
        entry = {"node": name, "elapsed_s": round(time.perf_counter() - t0, 6), **details}
        update["trace"] = [entry]
        _emit(runtime, entry)
        return update

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def anode(state: S, runtime: Runtime[C]) -> dict[str, Any]:
            t0 = time.perf_counter()
            return finish(dict(await fn(state, runtime) or {}), t0, runtime)

        anode.__annotations__ = {"state": dict, "runtime": Runtime, "return": dict}
        return cast(Node[S, C], anode)

    @functools.wraps(fn)
    def node(state: S, runtime: Runtime[C]) -> dict[str, Any]:
        t0 = time.perf_counter()
        return finish(dict(fn(state, runtime) or {}), t0, runtime)

    # LangGraph injects `runtime` by the parameter's annotation
    node.__annotations__ = {"state": dict, "runtime": Runtime, "return": dict}
    return node


def _channels(schema: type) -> dict[str, tuple[Any, Callable | None]]:
    """Each key of a state TypedDict -> (its empty value, its reducer or None)."""
    empty_of = {list: list, dict: dict, int: int, float: float, bool: bool, str: str, set: set,
                frozenset: frozenset, tuple: tuple}
    out: dict[str, tuple[Any, Callable | None]] = {}
    for key, hint in tx.get_type_hints(schema, include_extras=True).items():
        if tx.get_origin(hint) in (tx.NotRequired, tx.Required):
            hint = tx.get_args(hint)[0]
        reducer = None
        if tx.get_origin(hint) is tx.Annotated:
            reducer = next((m for m in reversed(hint.__metadata__) if callable(m)), None)
            hint = tx.get_args(hint)[0]
        base = tx.get_origin(hint) or hint
        make = empty_of.get(base) or (base if isinstance(base, type) else None)
        try:  # a type of a user's state key (Counter, a class of their own): its empty instance
            empty = make() if make else None
        except Exception:
            empty = None
        out[key] = (empty, reducer)
    return out


RUN_QUESTION_CHARS = 500


def _marked(update: dict[str, Any], question: str) -> dict[str, Any]:
    """The run's first trace entry names the question the run began with (``asked``, its first
    500 characters): a loop going back to the first node checks it."""
    entries = update.get("trace")
    if isinstance(entries, list) and entries and isinstance(entries[0], dict):
        update["trace"] = [{**entries[0], "asked": question}, *entries[1:]]
    return update


def starts_a_run(
    name: str, fn: Node[S, C], schema: type, *, inputs: Iterable[str] = ("question",),
    loops_from: Iterable[str] = (), settings: type | None = None,
) -> Node[S, C]:
    """:func:`timed`, for the node a run starts with: a new question asked on a thread that
    already holds a run (a checkpointer's ``thread_id`` used again, Studio's next input on the
    same thread, ``ragraphs ask --thread`` twice) starts from its input alone.

    Without this the earlier run's values stay in the thread's state and its reducers add the
    new run to them: the passages, the LLM calls, the token counts and the trace of both
    questions together. Here the node reads the input keys only, and every other key the
    state holds is set back to its empty value (``Overwrite`` past its reducer), with the node's
    own update applied on top. A node the graph loops back to (MIGRES's ``retrieve``) names its
    loop's predecessors in ``loops_from``: reached from one of those, it is the same run going on.

    With ``settings`` (the graph's settings class) the run's context is checked first: another
    method's settings class is a :class:`ConfigError` naming both. The nodes' own reading
    (``context_of``) takes a subclass for its base, as the shared nodes must (vanilla's
    ``generate`` reads ``RAGContext`` inside a CRAG run), so without this the baselines ran
    with ``DRRAGContext``'s defaults, hybrid retrieval and all.
    """
    node = timed(name, fn)
    channels = _channels(schema)
    keep, looped = frozenset(inputs), frozenset(loops_from)

    @functools.wraps(fn)
    def first(state: S, runtime: Runtime[C]) -> dict[str, Any]:
        if settings is not None:
            refuse_other_settings(getattr(runtime, "context", None), settings)
        held: dict = dict(state)  # type: ignore[call-overload]
        trace = held.get("trace") or []
        asked = str(held.get("question") or "")[:RUN_QUESTION_CHARS]
        # the loop going on: reached from its predecessor, in the run this question began (a run
        # cut short inside its loop, then a new question on the thread, is a new run)
        if trace and trace[-1].get("node") in looped and trace[0].get("asked") == asked:
            return node(state, runtime)
        if not trace:  # a fresh thread
            return _marked(node(state, runtime), asked)
        update = _marked(node({k: v for k, v in held.items() if k in keep}, runtime), asked)  # type: ignore[arg-type]
        out: dict[str, Any] = {}
        for key in held:
            if key in keep or key in update or key not in channels:
                continue
            empty, reducer = channels[key]
            out[key] = Overwrite(empty) if reducer else empty
        for key, value in update.items():
            empty, reducer = channels.get(key, (None, None))
            out[key] = Overwrite(reducer(empty, value)) if reducer else value
        return out

    first.__annotations__ = {"state": dict, "runtime": Runtime, "return": dict}
    return first


def routed(source: str, fn: Callable[..., str], path_map: Routes | None = None) -> Callable[..., str]:
    """Wrap a conditional edge's router so that its decision is a custom stream event too:
    ``{"event": "route", "node": source, "route": choice, "to": target}``.

    ``g.add_conditional_edges("evaluate", routed("evaluate", route_action, PATHS), PATHS)``
    makes ``--trace``, ``ragraphs replay --trace`` and Studio show every branch taken.
    """

    def tell(choice: Any) -> None:
        try:
            from langgraph.config import get_stream_writer

            event = {"event": "route", "node": source, "route": choice}
            if path_map and isinstance(choice, str) and choice in path_map:
                event["to"] = path_map[choice]
            get_stream_writer()(event)
        except Exception:  # outside a graph run, or no stream: routing must never fail
            pass

    if inspect.iscoroutinefunction(fn):  # an async router stays one
        @functools.wraps(fn)
        async def aroute(state: dict, *args: Any, **kwargs: Any) -> str:
            choice = await fn(state, *args, **kwargs)
            tell(choice)
            return choice

        return cast(Callable[..., str], aroute)

    @functools.wraps(fn)  # the signature stays fn's, so LangGraph hands it the runtime if it asks
    def route(state: dict, *args: Any, **kwargs: Any) -> str:
        choice = fn(state, *args, **kwargs)
        tell(choice)
        return choice

    return route
