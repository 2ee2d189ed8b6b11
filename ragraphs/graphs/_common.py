"""Helpers shared by the graph modules: timed nodes and the trace convention.

Every node returns a partial state update. It may include a ``"_trace"`` dict of details
(scores, routes, queries...); :func:`timed` pops it and appends one trace entry
``{"node", "elapsed_s", **details}`` to the state's ``trace``, so every run carries a
trace of every step with its time. Details are also sent as a custom stream event
(``stream_mode="custom"``) while the run goes on.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, Hashable, TypeVar

from langgraph.runtime import Runtime
from langgraph.typing import ContextT as C

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
    """Wrap ``fn(state, runtime)`` so that it records its time and details in ``trace``."""

    @functools.wraps(fn)
    def node(state: S, runtime: Runtime[C]) -> dict[str, Any]:
        t0 = time.perf_counter()
        update = dict(fn(state, runtime) or {})
        details = update.pop("_trace", None) or {}
        entry = {"node": name, "elapsed_s": round(time.perf_counter() - t0, 6), **details}
        update["trace"] = [entry]
        _emit(runtime, entry)
        return update

    # LangGraph injects `runtime` by the parameter's annotation
    node.__annotations__ = {"state": dict, "runtime": Runtime, "return": dict}
    return node


def routed(source: str, fn: Callable[..., str], path_map: Routes | None = None) -> Callable[..., str]:
    """Wrap a conditional edge's router so that its decision is a custom stream event too:
    ``{"event": "route", "node": source, "route": choice, "to": target}``.

    ``g.add_conditional_edges("evaluate", routed("evaluate", route_action, PATHS), PATHS)``
    makes ``--trace``, ``ragraphs replay --trace`` and Studio show every branch taken.
    """

    @functools.wraps(fn)  # the signature stays fn's, so LangGraph hands it the runtime if it asks
    def route(state: dict, *args: Any, **kwargs: Any) -> str:
        choice = fn(state, *args, **kwargs)
        try:
            from langgraph.config import get_stream_writer

            event = {"event": "route", "node": source, "route": choice}
            if path_map and isinstance(choice, str) and choice in path_map:
                event["to"] = path_map[choice]
            get_stream_writer()(event)
        except Exception:  # outside a graph run, or no stream: routing must never fail
            pass
        return choice

    return route
