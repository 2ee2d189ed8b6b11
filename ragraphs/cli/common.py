"""What the verbs share: store options, the components they name, and the one loop that
runs a graph, streams its updates (``--trace``) and collects the result."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..sources import escape_controls
from ..state.types import passage_place, written


def add_store_args(p: argparse.ArgumentParser) -> None:
    """``--store``, ``--store-url`` and ``--collection``; a command that takes them calls
    :func:`store_from_env` on its arguments before it opens the store."""
    where = p.add_mutually_exclusive_group()  # both given, --store was ignored until 2026-12-03
    where.add_argument("--store", metavar="DIR", help="Chroma directory (default: $RAGRAPHS_STORE_URL's server if set, "
                       "else $RAGRAPHS_HOME/chroma, ~/.ragraphs/chroma)")
    where.add_argument("--store-url", metavar="URL", help="use a Chroma server instead, e.g. http://127.0.0.1:8000 "
                       "(default: $RAGRAPHS_STORE_URL, unless --store is given)")
    p.add_argument("--collection", default=None, help="collection name (default: $RAGRAPHS_COLLECTION, else ragraphs)")


def store_from_env(args: argparse.Namespace) -> argparse.Namespace:
    """The store options a command did not get, from the variables a LangGraph server's graphs
    read (:func:`ragraphs.components.server_store`): ``--store-url`` from ``RAGRAPHS_STORE_URL``
    unless ``--store`` or ``--store-url`` is given, ``--collection`` from ``RAGRAPHS_COLLECTION``,
    else ``ragraphs``. ``args`` is changed in place and returned. Until 2026-11-30 ``ingest``,
    ``ask`` and ``chat`` read neither variable, so with them set the command line filled or read
    the embedded store while the server read the Chroma server."""
    from ..components import server_store

    env = server_store()
    if not getattr(args, "store", None) and not getattr(args, "store_url", None):
        args.store_url = env["store_url"]
    args.collection = getattr(args, "collection", None) or env["collection"] or "ragraphs"
    return args


def add_run_args(p: argparse.ArgumentParser) -> None:
    """The options that set a run's settings: ``--llm``, ``--k``, ``--retrieval`` and ``--set``."""
    p.add_argument("--llm", default=None, help="model spec: gemma (default) | llamacpp:PATH | openai:MODEL | openai-completion:MODEL | "
                   "fake:TEXT (answers TEXT: a dry run)")
    p.add_argument("--k", type=int, default=None, help="passages per retrieval")
    p.add_argument("--retrieval", choices=["dense", "bm25", "hybrid"], default=None)
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="any run setting of the method's context (METHOD.KEY: only when METHOD runs)")


def refuse_clashes(options: dict[str, Any], sets: dict[str, Any], method: str, flags: dict[str, str] | None = None) -> None:
    """A :class:`ConfigError` where a dedicated option (``--k 5``, ``--llm X``) and ``--set`` (``k=1``,
    ``llm=Y``, or ``METHOD.k=1`` for this ``method``) give one setting two values; until 2026-11-30
    the option was dropped without a word. ``options``: the options' values by setting name, None
    where not given; ``sets``: ``--set``'s as typed (the message quotes the key as typed);
    ``flags``: an option that is a switch, by setting name (``skip_generation``: ``--retrieval-only``)."""
    def shown(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v)

    def same(a: Any, b: Any) -> bool:  # 5 and 5.0 are one value, 1 and true are not
        return bool(a == b) and isinstance(a, bool) == isinstance(b, bool)

    for key, value in sets.items():
        scope, dot, name = key.rpartition(".")
        if dot and scope != method:
            continue
        given = options.get(name)
        if given is not None and not same(value, given):
            flag = (flags or {}).get(name) or f"--{name.replace('_', '-')} {shown(given)}"
            raise ConfigError(f"{flag} and --set {key}={shown(value)} give {name} two values; give one of them")


def refuse_missing_web(ctx: Any) -> None:
    """A :class:`ConfigError` before a local run of ``ctx`` whose ``offline:`` web files are not
    here (see :func:`ragraphs.setting_values.offline_web_error`); a run that searches no web
    (ERM4's ``external="corpus"``, a method without a ``web`` setting) is not refused. Elsewhere
    (Python, a server) a missing file is met at the first search: CRAG answers without the web,
    its trace saying why; ERM4 with ``external`` web fails the question."""
    from ..web_specs import offline_web_error

    spec = getattr(ctx, "web", None)
    if spec is None or getattr(ctx, "external", "web") == "corpus":
        return
    problem = offline_web_error(spec)
    if problem:
        raise ConfigError(f"run setting 'web': {problem}" + ("" if str(spec).strip() else " (from RAGRAPHS_WEB)"))


def make_components(args: argparse.Namespace, **kw: Any):
    from ..components import Components
    from ..errors import check_folder_place

    if getattr(args, "store", None) and not getattr(args, "store_url", None):
        check_folder_place(args.store, "--store")  # a file: not "no store at FILE; ingest ... makes one"

    return Components(
        store_path=getattr(args, "store", None),
        store_url=getattr(args, "store_url", None),
        collection=getattr(args, "collection", None) or "ragraphs",
        **kw,
    )


NO_ANSWER = "(no answer: the model gave none)"
NO_PASSAGES = "none kept; the answer is the model's own"  # ERM4's back-off, or judges that kept nothing


def warn_if_empty(components: Any, method: str) -> None:
    """A warning on stderr when the store the method would read holds nothing."""
    retr = components.retriever if method != "none" else None
    if retr is not None and hasattr(retr, "count") and retr.count() == 0:
        print("warning: the store is empty; run `ragraphs ingest PATH` first", file=sys.stderr)


def keeps_no_passage(method: str, passages: list, quiet: bool) -> bool:
    """Whether to say that an answer came with no passage (the no-retrieval baseline reads none by design)."""
    return not passages and not quiet and method != "none"


def shown_sources(passages: list) -> str:
    """``chat``'s sources line: each source once, in the order first read, with where it comes
    from (until 2026-12-02 each passage's title, so a file read twice was named twice and its
    path never)."""
    seen: dict[tuple[str, str], None] = {}
    for p in passages:
        seen.setdefault((escape_controls(str(p.get("title") or "(untitled)")), escape_controls(passage_place(p))), None)
    return "; ".join(f"{title} ({where})" if where else title for title, where in seen)


def shown_answer(answer: str, quiet: bool) -> str:
    """The answer as a person reads it: an empty one (the embedded model abstains by opening its
    answer with a line break) is said, not a blank line (until 2026-12-02); ``--quiet`` output
    stays the bare answer, for scripts. Its control characters are shown as ``\\xNN`` (an
    answer quoting a document's escape sequences reached the terminal raw until 2026-12-03)."""
    return escape_controls(answer, lines=True) if answer.strip() or quiet else NO_ANSWER


def print_trace(node: str, update: dict, at: float) -> None:
    """One node's update on stderr, as it happens (``--trace``)."""
    # a new question on a used thread: its entry node `start` sets the earlier run's keys back to empty
    # and says so in its trace entry (graphs._common.start_at); one line says so, in place of
    # every emptied key (until 2026-11-30 any reset value, on every run, read as one)
    fresh, took, shown, details = _trace_parts({k: written(v) for k, v in update.items()})
    print(f"--- [{at:7.2f}s] {node} ({took * 1000:.0f} ms)", file=sys.stderr)
    if fresh:
        print("    a new question on this thread: the earlier run's state set back to empty", file=sys.stderr)
    if details and any(details):
        print("    details: " + json.dumps(details[0] if len(details) == 1 else details, default=str)[:2000], file=sys.stderr)
    for k, v in shown.items():
        for line in _passage_lines(v) if k == "passages" and isinstance(v, list) else [f"{k}: {json.dumps(v, default=str)[:500]}"]:
            print(f"    {line}", file=sys.stderr)
    sys.stderr.flush()


def _trace_parts(update: dict) -> tuple[bool, float, dict, list[dict]]:
    """Of a node's update: whether it starts a new question on a used thread, its nodes' time,
    the keys to show (not those set back to empty then) and its trace entries' details."""
    entries = update.get("trace") or []
    fresh = any(isinstance(e, dict) and e.get("earlier_run_reset") for e in entries)
    took = sum(float(e.get("elapsed_s", 0)) for e in entries)
    shown = {k: v for k, v in update.items() if k not in ("trace",) and not (fresh and v in ("", [], {}, 0, False))}
    details = [{k: v for k, v in e.items() if k not in ("node", "elapsed_s", "earlier_run_reset")} for e in entries]
    return fresh, took, shown, details


def _passage_lines(passages: list) -> list[str]:
    """A trace's line per passage: its id's start, kind, score and title."""
    lines = []
    for p in passages:
        sc = p.get("score")
        lines.append(f"passage {p['id'][:8]} [{p.get('source')}] {'' if sc is None else f'{sc:.3f} '}{p['title'][:60]}")
    return lines


@dataclass
class RunResult:
    """What one streamed run gave: the final state, the trace entries of the nodes that ran
    (in order), the custom stream events, and the wall time."""

    final: dict[str, Any] = field(default_factory=dict)
    ran: list[dict] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def node_times(self) -> dict[str, float]:
        times: dict[str, float] = {}
        for e in self.ran:
            times[e["node"]] = times.get(e["node"], 0.0) + float(e.get("elapsed_s", 0.0))
        return times


def stream_run(graph, inputs: Any, config: dict | None, context: Any, *, trace: bool = False) -> RunResult:
    """Run ``graph`` on ``inputs`` (``None`` resumes the checkpoint ``config`` names), streaming
    updates, values and custom events; with ``trace`` every update and every custom event
    other than the node traces (routes, ...) is printed to stderr as it comes."""
    res = RunResult()
    t0 = time.perf_counter()
    # a node's events (its route, written by the edge after it) come before its update: each is
    # held and printed under the block of the node it names (or, naming none, the next node's);
    # printed as they came, a route showed under the node before (until 2026-12-01)
    held: list[Any] = []

    def show(events: list[Any]) -> None:
        for e in events:
            print(f"    event: {json.dumps(e, default=str)[:1000]}", file=sys.stderr)

    try:
        for mode, chunk in graph.stream(inputs, config or None, context=context, stream_mode=["updates", "values", "custom"]):
            if mode == "values":
                res.final = chunk
            elif mode == "custom":
                res.events.append(chunk)
                # node_trace events repeat the updates' trace entries; show the others
                if trace and (not isinstance(chunk, dict) or chunk.get("event") != "node_trace"):
                    held.append(chunk)
            else:
                for node, update in (chunk or {}).items():
                    if not isinstance(update, dict):
                        continue
                    res.ran.extend(written(update.get("trace")) or [])
                    if trace:
                        print_trace(node, update, time.perf_counter() - t0)
                        mine = [not isinstance(e, dict) or e.get("node") in (None, node) for e in held]
                        show([e for e, m in zip(held, mine) if m])
                        held = [e for e, m in zip(held, mine) if not m]
    finally:  # a node that raised: the events it sent explain it
        show(held)
    res.wall_s = time.perf_counter() - t0
    return res
