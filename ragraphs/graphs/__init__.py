"""One module per method, each with ``build_<method>_graph(components)`` and a module-level
compiled ``graph`` for LangGraph Studio.

:func:`timed` (a node that records its time and details in ``trace``), :func:`start_at` (in
place of ``add_edge(START, first)``: the entry node each run begins at, so a new question on a
used thread starts afresh; :func:`starts_a_run` is its older form, kept for graphs written with it),
:func:`routed` (a router whose decision is a stream event) and :data:`Routes` (a path map) are
what every graph here is built with; a graph of your own uses them the same way (``docs/extending.md``).

:data:`METHODS` maps the CLI's method names to ``(module, builder, context class)``; the
modules are imported lazily so that ``ragraphs --help`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..setting_values import locked_settings
from ..settings import RAGContext
from ._common import Routes, routed, start_at, timed  # for graphs of your own (docs/extending.md)
from ._older_start import starts_a_run  # the older form of start_at

# a server's list of locked settings is checked when its graphs load: a misspelt name fails the
# start, not every run after it (each run's context checks it again)
locked_settings(RAGContext)

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from ..components import Components

# name -> (module path, builder function, context class path)
METHODS: dict[str, tuple[str, str, str]] = {
    "none": ("ragraphs.graphs.none", "build_none_graph", "ragraphs.settings:RAGContext"),
    "vanilla": ("ragraphs.graphs.vanilla", "build_vanilla_graph", "ragraphs.settings:RAGContext"),
    "crag": ("ragraphs.graphs.crag", "build_crag_graph", "ragraphs.settings:CRAGContext"),
    "dr-rag": ("ragraphs.graphs.dr_rag", "build_dr_rag_graph", "ragraphs.settings:DRRAGContext"),
    "erm4": ("ragraphs.graphs.erm4", "build_erm4_graph", "ragraphs.settings:ERM4Context"),
    "migres": ("ragraphs.graphs.migres", "build_migres_graph", "ragraphs.settings:MIGRESContext"),
}


__all__ = ["METHODS", "Routes", "available", "build_graph", "get_builder", "get_context_class", "method_context",
           "method_names", "routed", "start_at", "starts_a_run", "timed"]


def available(method: str) -> bool:
    """Whether the method's module exists in this installation."""
    import importlib.util

    return method in METHODS and importlib.util.find_spec(METHODS[method][0]) is not None


def method_names() -> list[str]:
    return [m for m in METHODS if available(m)]


def _check(method: str) -> None:
    if method not in METHODS or not available(method):
        raise ConfigError(f"unknown method {method!r}; choose from {', '.join(method_names())}")


def _resolve(path: str) -> Any:
    mod, _, attr = path.partition(":")
    return getattr(importlib.import_module(mod), attr)


def get_builder(method: str):
    _check(method)
    mod, fn, _ = METHODS[method]
    return getattr(importlib.import_module(mod), fn)


def get_context_class(method: str):
    _check(method)
    return _resolve(METHODS[method][2])


def method_context(method: str, values: dict[str, Any]) -> Any:
    """``method``'s run settings from ``values``: each name checked against its context class (a
    mistyped one gets the closest names), each value when the context is built."""
    from ..settings import check_setting_names, context_from

    cls = get_context_class(method)
    check_setting_names(cls, values, method)
    return context_from(cls, values, keep_none=True)


def build_graph(method: str, components: Components | None = None, **kwargs: Any) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The compiled graph of ``method`` (a name of :data:`METHODS`) over ``components`` (a
    :class:`~ragraphs.components.Components`, or None for the embedded defaults; anything else is
    a :class:`ConfigError`); ``kwargs`` go to its builder (``checkpointer=``).

    Its input is a dict: ``graph.invoke({"question": "..."}, context=...)``; ``invoke("...")``
    with the bare text fails in LangGraph (``InvalidUpdateError: Expected dict, got ...``)."""
    return get_builder(method)(components, **kwargs)
