"""A persistent thread's record, shared by ``ask``, ``chat``, ``history`` and ``replay``: the
method, run settings and store kept in every checkpoint's metadata, and what they say about a
thread written elsewhere (a LangGraph server's run, a user's own code)."""

from __future__ import annotations

import argparse
import copy
import json
import os
from typing import Any, Iterable, cast

from ..errors import ConfigError, without_userinfo

__all__ = ["CHAT", "META_CONTEXT", "META_METHOD", "META_STORE", "check_thread_method", "infer_method", "reads_noted",
           "store_of", "stored_context", "thread_config"]

META_METHOD = "ragraphs_method"
META_CONTEXT = "ragraphs_context"
META_STORE = "ragraphs_store"
CHAT = "chat"  # the chat graph's threads: `ragraphs chat --thread`, or the server's "chat" graph


def thread_config(
    thread_id: str,
    method: str,
    context_values: dict[str, Any] | None = None,
    store: dict[str, Any] | None = None,
) -> dict:
    """The run config for a persistent thread: its id, plus the method, run settings and
    store in the metadata LangGraph writes into every checkpoint (strings only survive, so
    the dicts are stored as JSON)."""
    return {
        "configurable": {"thread_id": str(thread_id)},
        "metadata": {
            META_METHOD: method,
            META_CONTEXT: json.dumps({k: v for k, v in (context_values or {}).items() if v is not None}, default=str),
            META_STORE: json.dumps({k: v for k, v in (store or {}).items() if v is not None}),
        },
    }


def check_thread_method(saver, thread_id: str, method: str) -> None:
    """A :class:`ConfigError` when thread ``thread_id`` already holds runs of another method
    (or a chat): a thread is one graph's, and its history and replay read it with that graph."""
    tup = saver.get_tuple({"configurable": {"thread_id": str(thread_id)}})
    held = (tup.metadata or {}).get(META_METHOD) if tup is not None else None
    if held and held != method:
        what = "a chat" if held == CHAT else f"runs of method {held!r}"
        if held == CHAT:
            fix = f"give another --thread id (or `ragraphs chat --thread {thread_id}` to go on with it)"
        elif method == CHAT:  # no --method of the chat's matches another graph's thread
            fix = f"give the chat another --thread id (or `ragraphs ask QUESTION --thread {thread_id} --method {held}`)"
        else:
            fix = f"give another --thread id, or --method {held}"
        raise ConfigError(f"thread {thread_id!r} holds {what}; a thread is one graph's: {fix}")


def store_of(args: argparse.Namespace) -> dict[str, Any]:
    """The store a run read, for the thread's metadata: a folder as an absolute path, so that a
    replay from another directory reads the same one (it was kept as typed until 2026-11-30)."""
    store = getattr(args, "store", None)
    return {
        "store": os.path.abspath(store) if store else None,
        "store_url": without_userinfo(url) if (url := getattr(args, "store_url", None)) else None,  # no password kept
        "collection": getattr(args, "collection", None),
    }


def stored_context(meta: dict, method: str) -> dict[str, Any]:
    """The run settings recorded in a checkpoint's metadata: ragraphs' own JSON record, else
    (a run made on a LangGraph server) the metadata keys that are settings of the method."""
    if META_CONTEXT in meta:
        return _loads(meta.get(META_CONTEXT))
    from dataclasses import fields

    from ..graphs import get_context_class
    from ..settings import ChatContext

    names = {f.name for f in fields(ChatContext if method == CHAT else get_context_class(method))}
    return {k: v for k, v in meta.items() if k in names and isinstance(v, (str, int, float, bool))}


def _records_settings(meta: dict) -> bool:
    """Whether a checkpoint's metadata records its run's settings (ragraphs' record, or a
    LangGraph server's run, whose settings are metadata keys); an ``update_state`` or a plain
    LangGraph run records none."""
    return META_CONTEXT in meta or bool(meta.get("graph_id"))


def _loads(s: Any) -> dict:
    if isinstance(s, dict):
        return s
    try:
        v = json.loads(s or "{}")
        return v if isinstance(v, dict) else {}
    except (TypeError, ValueError):
        return {}


def infer_method(node_names: set[str]) -> str | None:
    """The method whose graph has every node seen in a thread (fallback for threads written
    without ragraphs metadata); the smallest such graph wins."""
    from ..graphs import build_graph, method_names

    best: tuple[int, str] | None = None
    for m in method_names():
        try:
            nodes = set(build_graph(m).nodes) - {"__start__"}
        except Exception:
            continue
        if node_names and node_names <= nodes and (best is None or len(nodes) < best[0]):
            best = (len(nodes), m)
    return best[1] if best else None


def reads_noted(ctx: Any, names: Iterable[str]) -> tuple[Any, set[str]]:
    """``ctx`` (a run's settings) as an instance of a subclass of its class that notes which of
    ``names`` are read, with the set it fills: the nodes read their settings off the run's
    context, so after a run the set holds those some node (or route) read. ``replay`` warns of a
    ``--set`` that no re-run node read."""
    watched, read = frozenset(names), set()
    base = type(ctx)

    def __getattribute__(self: Any, name: str) -> Any:
        if name in watched:
            read.add(name)
        return object.__getattribute__(self, name)

    noted = copy.copy(ctx)
    # `_watches`: the graphs take it for the class it watches (another of ragraphs' settings classes is refused)
    noted.__class__ = cast(Any, type(base))(base.__name__, (base,), {
        "__getattribute__": __getattribute__, "_watches": base, "__module__": base.__module__, "__qualname__": base.__qualname__})
    return noted, read
