"""Step-by-step debugging verbs: ``ragraphs history ID`` and ``ragraphs replay ID``.

``ragraphs ask --thread ID`` persists every checkpoint of a run (one per super-step) in a
checkpointer (default: the SQLite file ``$RAGRAPHS_HOME/checkpoints.sqlite``; ``--checkpointer``
takes another file or a ``postgresql://`` URL). The run's method, settings and store are
kept in the checkpoints' metadata, so that

- ``ragraphs history ID`` lists the checkpoints node by node (what ran, its time, the
  details it reported: scores, routes, queries; what runs next), and
- ``ragraphs replay ID --from STEP`` rebuilds the same graph and re-runs it from the
  checkpoint at ``STEP`` (LangGraph time travel: a fork of the thread; the old branch stays
  in the history). Without ``--from`` it continues an unfinished run (e.g. one that was
  killed) from its latest checkpoint. ``--set KEY=VALUE`` changes a setting for the replay.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
from typing import Any

from ..checkpoint import cli_spec, describe, open_checkpointer
from ..errors import ConfigError, InputError
from ..sources import escape_controls
from .common import make_components, shown_answer, stream_run
from .threads import (CHAT, META_METHOD, META_STORE, _loads, _records_settings, check_thread_method, infer_method,
                      reads_noted, store_of, stored_context, thread_config)

__all__ = ["check_thread_method", "infer_method", "load_history", "open_checkpointer", "register", "store_of", "thread_config"]

def _checkpoints_only():
    """Components for a graph that only reads a thread's checkpoints: compiling a graph reads
    the parts its nodes name (LangGraph looks for subgraphs among them), and the default
    components would open, or make, the default store and load MiniLM for it (``history``
    made an empty store, and ``replay`` then answered from it, until 2026-11-30)."""
    from ..components import Components

    class CheckpointsOnly(Components):
        retriever = None
        embeddings = None

    return CheckpointsOnly()


def _graph_for(thread_id: str, saver, method: str | None, components=None, where: str = ""):
    """Build the thread's graph over ``saver`` (``where``: the checkpointer as a user reads it,
    for the error of a thread it lacks); returns (graph, method, metadata). Without
    ``components`` the graph only reads the thread's checkpoints (no store, no model)."""
    from ..graphs import build_graph, method_names

    components = components if components is not None else _checkpoints_only()
    meta = _latest_metadata(saver, thread_id, where)
    # runs made by ragraphs carry their method; runs made on a LangGraph server carry the
    # graph id (the same names, see langgraph.json)
    recorded = meta.get(META_METHOD) or (meta.get("graph_id") if meta.get("graph_id") in {*method_names(), CHAT} else None)
    if method and recorded and method != recorded:  # --method is for threads that did not record theirs
        raise InputError(f"thread {thread_id!r} holds runs of method {recorded!r}, not {method!r}; leave --method out")
    method = method or recorded
    if method == CHAT:  # a conversation of `ragraphs chat` or the server's chat graph
        from ..graphs.chat import build_chat_graph

        return build_chat_graph(components, checkpointer=saver), CHAT, meta
    method = method or _method_from_trace(saver, thread_id)
    if method not in method_names():
        raise ConfigError(f"thread {thread_id!r} ran method {method!r}, which is not available here")
    return build_graph(method, components, checkpointer=saver), method, meta


def _latest_metadata(saver, thread_id: str, where: str) -> dict:
    """The metadata of the thread's latest checkpoint; a thread the saver lacks, or cannot read,
    is an error naming it."""
    try:
        tup = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    except (ValueError, TypeError, sqlite3.DatabaseError) as e:  # damaged, or a foreign table of that name
        raise ConfigError(f"cannot read the checkpoints of thread {thread_id!r}: {type(e).__name__}: {e}") from e
    if tup is None:
        raise InputError(f"no checkpoints for thread {thread_id!r}" + (f" in {where}" if where else ""))
    return dict(tup.metadata or {})


def _method_from_trace(saver, thread_id: str) -> str:
    """The method a thread that did not record its own ran, told from the nodes its traces and
    branches name."""
    seen: set[str] = set()
    traced = False
    for tup in saver.list({"configurable": {"thread_id": thread_id}}):
        if _nested(tup):
            continue
        for entry in (tup.checkpoint.get("channel_values") or {}).get("trace") or []:
            if isinstance(entry, dict) and entry.get("node"):
                seen.add(entry["node"])
                traced = True
        seen.update(k for k in (tup.checkpoint.get("channel_versions") or {}) if k.startswith("branch:to:"))
    if not traced:  # another LangGraph app's thread: node names alone matched any retrieve -> generate graph
        raise ConfigError(f"thread {thread_id!r} holds no ragraphs trace: not a ragraphs run, or one that "
                          "recorded nothing; pass --method if it is one")
    method = infer_method({s.removeprefix("branch:to:") for s in seen} - {"__start__"})
    if not method:
        raise ConfigError(f"cannot tell which method thread {thread_id!r} ran; pass --method")
    return method


def load_history(graph, thread_id: str) -> list[dict]:
    """The thread's checkpoints, oldest first, each as a dict: ``step``, ``checkpoint_id``,
    ``parent_id``, ``source``, ``ran`` (the trace entries written since the parent
    checkpoint: node, time, details), ``next`` (nodes to run), ``answer``, ``config``."""
    try:
        snaps = list(graph.get_state_history({"configurable": {"thread_id": thread_id}}))
    except _UNREADABLE as e:  # a damaged checkpoint: one line, not a traceback
        raise _unreadable(thread_id, e) from e
    return _history_rows(snaps)


async def aload_history(graph, thread_id: str) -> list[dict]:
    """:func:`load_history` for async code: the rows read through ``aget_state_history``, as
    an async checkpointer (``ragraphs.checkpoint.open_async_checkpointer``) needs from inside
    the event loop."""
    try:
        snaps = [s async for s in graph.aget_state_history({"configurable": {"thread_id": thread_id}})]
    except _UNREADABLE as e:
        raise _unreadable(thread_id, e) from e
    return _history_rows(snaps)


_UNREADABLE = (ValueError, TypeError, sqlite3.DatabaseError, asyncio.InvalidStateError)


def _unreadable(thread_id: str, e: BaseException) -> ConfigError:
    if isinstance(e, asyncio.InvalidStateError):  # a sync read of an async saver inside its event loop
        return ConfigError(f"cannot read the checkpoints of thread {thread_id!r} from inside the event loop with an "
                           "async checkpointer: use await ragraphs.cli.debug.aload_history(graph, thread_id)")
    return ConfigError(f"cannot read the checkpoints of thread {thread_id!r}: {type(e).__name__}: {e}")


def _history_rows(snaps: list) -> list[dict]:
    snaps.reverse()
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in snaps}
    rows = []
    for s in snaps:
        cid = s.config["configurable"]["checkpoint_id"]
        pid = (s.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        trace = list((s.values or {}).get("trace") or [])
        parent = by_id.get(pid) if pid else None
        earlier = list((parent.values or {}).get("trace") or []) if parent is not None else []
        # a new question on the thread starts its trace afresh (graphs._common.start_at)
        before = len(earlier) if trace[: len(earlier)] == earlier else 0
        rows.append(
            {
                "step": (s.metadata or {}).get("step"),
                "checkpoint_id": cid,
                "parent_id": pid,
                "source": (s.metadata or {}).get("source"),
                "created_at": s.created_at,
                "ran": trace[before:],
                "next": list(s.next),
                "answer": (s.values or {}).get("answer", _last_message(s.values, "ai")),
                "question": (s.values or {}).get("question", _last_message(s.values, "human")),
                "config": s.config,
                "metadata": dict(s.metadata or {}),  # the run settings this checkpoint's run had
            }
        )
    return rows


def _last_message(values: dict | None, kind: str) -> str | None:
    """A chat thread's last message of ``kind`` (``human`` or ``ai``) as text, or None."""
    from ..tools.text import message_text

    for m in reversed((values or {}).get("messages") or []):
        if getattr(m, "type", None) == kind:
            return message_text(m.content)
    return None


def _details(entry: dict) -> str:
    d = {k: v for k, v in entry.items() if k not in ("node", "elapsed_s")}
    return json.dumps(d, default=str) if d else ""


def print_history(rows: list[dict], *, full: bool = False, out=None) -> None:
    out = out if out is not None else sys.stdout  # looked up per call: callers may redirect it
    prev = None
    prev_source = None
    asked = next((r["question"] for r in rows if r.get("question")), None)  # the header's question
    for r in rows:
        if prev is not None and r["parent_id"] and r["parent_id"] != prev:
            print(f"  -- branch from checkpoint {r['parent_id']} (a replay) --", file=out)
        prev = r["checkpoint_id"]
        head = f"step {r['step']:>3}  {r['checkpoint_id']}  {r['source'] or '':6}"
        ran = r["ran"]
        if not ran:
            print(f"{head}  {_no_trace_line(r, prev_source)}", file=out)
        prev_source = r["source"]
        if r.get("question") and r["question"] != asked:  # a later question asked on the same thread
            asked = r["question"]
            print(f"{'':12}question: {escape_controls(str(asked))}", file=out)
        for i, e in enumerate(ran):
            lead = head if i == 0 else " " * len(head)
            print(f"{lead}  ran {e.get('node')} ({float(e.get('elapsed_s', 0)) * 1000:.0f} ms)", file=out)
            det = _details(e)
            if det:
                print(f"{'':12}details: {det if full else det[:400]}", file=out)
        print(f"{'':12}next: {', '.join(r['next']) if r['next'] else '(end)'}", file=out)
        if not r["next"] and r["answer"] is not None:
            print(f"{'':12}answer: {escape_controls(str(r['answer']))}", file=out)


def _no_trace_line(row: dict, prev_source: str | None) -> str:
    """What a checkpoint that wrote no trace entry is: the input, a fork, an edit, the start."""
    said = {"input": "input received", "fork": "fork: a copy of its parent, where a replay starts",
            "update": "state edited (update_state)"}.get(row["source"])
    if said:
        return said
    return "ran __start__ (input written to the state)" if row["step"] == 0 or prev_source == "input" else "(no trace entry)"


def _nested(tup: Any) -> bool:
    """A checkpoint of a graph run inside the thread's own (a method's, left by a chat turn or a
    tool call that stopped early): not the thread's step."""
    return bool((tup.config.get("configurable") or {}).get("checkpoint_ns"))


# ---------------------------------------------------------------- verbs
def thread_contexts(saver, thread_id: str, method: str) -> list[dict[str, Any]]:
    """The distinct run settings a thread's checkpoints record, oldest first (a replay with
    ``--set``, a chat turn with other options: each run keeps its own)."""
    seen: list[dict[str, Any]] = []
    for tup in reversed(list(saver.list({"configurable": {"thread_id": thread_id}}))):
        if _nested(tup):
            continue
        meta = dict(tup.metadata or {})
        if not _records_settings(meta):
            continue
        ctx = stored_context(meta, method)
        if ctx not in seen:  # a run with the defaults ({}) is a run's settings too
            seen.append(ctx)
    return seen


def cmd_history(args: argparse.Namespace) -> int:
    args.checkpointer = cli_spec(args.checkpointer)
    saver = open_checkpointer(args.checkpointer, must_exist=True)
    graph, method, meta = _graph_for(args.thread_id, saver, args.method, where=describe(args.checkpointer))
    rows = load_history(graph, args.thread_id)
    contexts = thread_contexts(saver, args.thread_id, method)
    if args.json:
        print(
            json.dumps(
                {
                    "thread_id": args.thread_id,
                    "method": method,
                    "context": stored_context(meta, method),  # the latest run's
                    "contexts": contexts,  # every run's, oldest first
                    "checkpoints": [{k: v for k, v in r.items() if k not in ("config", "metadata")} for r in rows],
                },
                default=str,
            )
        )
        return 0
    ctx = stored_context(meta, method)
    print(f"thread {args.thread_id}: method {method}; {len(rows)} checkpoints in {describe(args.checkpointer)}")
    question = next((r["question"] for r in rows if r.get("question")), None)
    if question:
        print(f"question: {escape_controls(str(question))}")
    if ctx:  # a thread whose runs had other settings says which are the latest run's (until
        # 2026-11-30 the latest run's read as the whole thread's)
        label = ("settings" if len(contexts) <= 1 else
                 f"settings of the latest run (the thread's runs had {len(contexts)} different ones; --json lists them)")
        print(f"{label}: " + ", ".join(f"{k}={v}" for k, v in ctx.items()))
    print_history(rows, full=args.full)
    return 0


def _select(rows: list[dict], wanted: str) -> dict:
    """The checkpoint for ``--from``: a step number (refused when the thread's branches share it)
    or a checkpoint id (or a unique prefix of one)."""
    w = wanted.strip()
    try:
        step = int(w)
    except ValueError:
        hits = [r for r in rows if r["checkpoint_id"].startswith(w)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise InputError(f"--from {w!r} is no checkpoint of this thread (nor a step number); "
                             "`ragraphs history THREAD` lists its checkpoints")
        raise InputError(f"--from {w!r} matches {len(hits)} checkpoints; give a step number or a longer id")
    hits = [r for r in rows if r["step"] == step]
    if not hits:
        steps = sorted({r["step"] for r in rows if r["step"] is not None})
        raise InputError(f"no checkpoint at step {step}; steps: {', '.join(map(str, steps))}")
    if len(hits) > 1:  # a replayed thread holds a branch per replay: the newest was taken silently until 2026-11-30
        which = "; ".join(f"{r['checkpoint_id']} (next: {', '.join(r.get('next') or []) or 'end'})" for r in hits)
        raise InputError(f"step {step} is on {len(hits)} branches of this thread (each replay makes one): {which}; "
                         "give --from the checkpoint id (a unique prefix will do)")
    return hits[0]


def _picked_run(args: argparse.Namespace, rows: list[dict], meta: dict) -> tuple[dict | None, dict]:
    """``--from STEP``'s checkpoint and the metadata of its run (its settings and store, not the
    latest run's); without ``--from``, None and the latest run's metadata."""
    if args.from_step is None:
        return None, meta
    picked = _select(rows, args.from_step)
    if not picked["next"]:
        raise InputError(f"checkpoint {picked['checkpoint_id']} ends its run (nothing to re-run); give --from an "
                         "earlier step (see `ragraphs history`)")
    if _records_settings(picked["metadata"]):
        return picked, picked["metadata"]
    # an update_state checkpoint records none: the settings its state kept (see _replay_settings); the latest run's store
    return picked, {k: v for k, v in meta.items() if k == META_STORE}


def _replay_store(args: argparse.Namespace, meta: dict) -> argparse.Namespace:
    """The store the run read (``--store``, ``--store-url`` and ``--collection`` win)."""
    store = _loads(meta.get(META_STORE))
    if not store:  # a run made on a LangGraph server: its store, as the server was told of it
        from ..components import server_store

        store = server_store()
        if not (args.store or args.store_url or store.get("store_url")):  # its "no store at ..." advice said to ingest
            print(f"warning: thread {args.thread_id!r} names no store (a LangGraph server's run) and RAGRAPHS_STORE_URL "
                  "is not set: the local default store is searched; give --store-url (or set RAGRAPHS_STORE_URL) "
                  "as the server had it", file=sys.stderr)
    return argparse.Namespace(
        store=args.store or store.get("store"),
        store_url=args.store_url or store.get("store_url"),
        collection=args.collection or store.get("collection") or "ragraphs",
    )


def _replay_settings(args: argparse.Namespace, graph, start: dict, meta: dict, method: str, sets: dict) -> dict:
    """The run's recorded settings with ``--set`` over them."""
    recorded = stored_context(meta, method) if _records_settings(meta) else None
    if recorded is None:  # a thread made from Python without ragraphs' metadata: the settings its state kept
        from ..setting_values import RUN_SETTINGS

        recorded = (graph.get_state(start["config"]).values or {}).get(RUN_SETTINGS) or {}
        if recorded and not args.json:
            print("settings: the thread's checkpoints record none; using those its state kept (run_settings)",
                  file=sys.stderr)
    return {**recorded, **sets}


def _print_replay(args: argparse.Namespace, method: str, start: dict, res: Any, head: str) -> None:
    final, ran = res.final, res.ran
    if args.json:
        print(json.dumps({"thread_id": args.thread_id, "method": method, "from_step": start["step"],
                          "from_checkpoint": start["checkpoint_id"], "checkpoint_id": head,
                          "answer": final.get("answer", ""), "ran": ran, "events": res.events,
                          "llm_calls": final.get("llm_calls", 0)}, default=str))
        return
    print(shown_answer(str(final.get("answer") or ""), args.quiet))
    if not args.quiet:
        steps = ", ".join(f"{e.get('node')} {float(e.get('elapsed_s', 0)) * 1000:.0f} ms" for e in ran)
        print(f"\nre-ran: {steps or '(nothing)'}; new head {head}")


def cmd_replay(args: argparse.Namespace) -> int:
    from ..graphs import get_context_class
    from ..settings import check_setting_names, context_from, parse_settings

    args.checkpointer = cli_spec(args.checkpointer)
    saver = open_checkpointer(args.checkpointer, must_exist=True)
    # a first pass without components only reads the thread's metadata
    first, method, meta = _graph_for(args.thread_id, saver, args.method, where=describe(args.checkpointer))
    if method == CHAT:
        raise InputError(f"thread {args.thread_id!r} is a chat; go on with it with `ragraphs chat --thread "
                         f"{args.thread_id}` (`ragraphs history` shows its turns)")
    rows = load_history(first, args.thread_id)  # the checkpoints, read once (any graph of the thread reads them alike)
    picked, meta = _picked_run(args, rows, meta)
    ns = _replay_store(args, meta)
    components = make_components(ns, create_collection=False)
    graph, method, _ = _graph_for(args.thread_id, saver, method, components)
    sets = parse_settings(args.set)
    check_setting_names(get_context_class(method), sets, method)
    start = picked or rows[-1]
    if picked is None and not start["next"]:
        print(f"thread {args.thread_id} is complete (answer: {start['answer']!r}); "
              "use --from STEP to re-run from a checkpoint (see `ragraphs history`)", file=sys.stderr)
        if args.json:
            print(json.dumps({"thread_id": args.thread_id, "method": method, "answer": start["answer"], "ran": []}))
        return 0
    values = _replay_settings(args, graph, start, meta, method, sets)
    ctx = context_from(get_context_class(method), values)
    # keep the method and settings in the new branch's checkpoints too
    cfg = {
        "configurable": dict(start["config"]["configurable"]),
        "metadata": thread_config(args.thread_id, method, values, ns.__dict__)["metadata"],
    }
    if method != "none":  # the store and MiniLM opened before the clock, as `ask` does (warm_up warms a built one)
        try:
            components.retriever
        except (ConfigError, InputError):  # a replay after the retrieval may need no store: a node that does says so
            if args.store or args.store_url or args.collection:  # one named here: refused before the replay's fork
                raise  # is written (a dead branch that every later plain `replay ID` resumed, until 2026-12-03)
    if not args.json:
        print(f"replaying thread {args.thread_id} ({method}) from step {start['step']} "
              f"[{start['checkpoint_id']}]; next: {', '.join(start['next']) or '(end)'}", file=sys.stderr)
    load_s = components.warm_up(ctx)  # so that the re-run nodes' times are their own, not the loading
    if args.trace:
        print(f"--- models loaded before the run ({load_s * 1000:.0f} ms)", file=sys.stderr)
    ctx, read = reads_noted(ctx, sets)
    res = stream_run(graph, None, cfg, ctx, trace=args.trace)
    head = graph.get_state({"configurable": {"thread_id": args.thread_id}}).config["configurable"]["checkpoint_id"]
    _print_replay(args, method, start, res, head)
    unread = sorted(k for k in sets if k not in read)
    if unread:  # said nothing until 2026-12-02 (night): the replay ran as without them
        it = "it" if len(unread) == 1 else "them"
        print(f"warning: --set {', '.join(unread)}: no node that re-ran read {it}, so {it} changed nothing: the node "
              f"that reads {it} ran before step {start['step']}, or is not on this run's route "
              "(`ragraphs history` lists the steps; --from an earlier one re-runs more)", file=sys.stderr)
    return 0


def register(sub) -> None:
    """Add ``history`` and ``replay`` to the ``ragraphs`` command line."""
    default = "$RAGRAPHS_HOME/checkpoints.sqlite"

    p = sub.add_parser("history", help="list a thread's checkpoints node by node (runs made with ask --thread)")
    p.add_argument("thread_id", metavar="ID", help="the thread id given to `ragraphs ask --thread`")
    p.add_argument("--checkpointer", metavar="PATH|URL", default=None, help=f"SQLite file or PostgreSQL URL (default $RAGRAPHS_CHECKPOINTER, else {default})")
    p.add_argument("--method", default=None, help="the thread's method, if it was not recorded")
    p.add_argument("--full", action="store_true", help="do not shorten the details")
    p.add_argument("--json", action="store_true", help="machine-readable history")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("replay", help="re-run a thread from a checkpoint (time travel), or resume an unfinished run")
    p.add_argument("thread_id", metavar="ID")
    p.add_argument(
        "--from", dest="from_step", metavar="STEP",
        help="step number or checkpoint id from `ragraphs history` (default: continue from the latest checkpoint)",
    )
    p.add_argument("--checkpointer", metavar="PATH|URL", default=None, help=f"SQLite file or PostgreSQL URL (default $RAGRAPHS_CHECKPOINTER, else {default})")
    p.add_argument("--method", default=None, help="the thread's method, if it was not recorded")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a run setting for the replay")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--store", metavar="DIR", default=None, help="Chroma directory (default: the one the thread used)")
    where.add_argument("--store-url", metavar="URL", default=None, help="Chroma server (default: the one the thread used)")
    p.add_argument("--collection", default=None, help="collection (default: the one the thread used)")
    p.add_argument("--trace", action="store_true", help="print every node's update and every custom event")
    p.add_argument("--json", action="store_true", help="machine-readable result")
    p.add_argument("--quiet", action="store_true", help="print the answer only")
    p.set_defaults(func=cmd_replay)

