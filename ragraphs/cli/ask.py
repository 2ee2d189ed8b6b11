"""``ragraphs ask``, ``ragraphs demo`` and ``ragraphs methods``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import ConfigError, InputError
from ..sources import escape_controls
from ..state.types import passage_place
from .common import (add_run_args, add_store_args, make_components, refuse_clashes, refuse_missing_web, shown_answer,
                     store_from_env, stream_run, keeps_no_passage, warn_if_empty, NO_PASSAGES)


def validate_question(q: str | None) -> str:
    if q is None or not q.strip():
        raise InputError("the question is empty")
    if "\x00" in q:
        raise InputError("the question contains NUL bytes")
    return repair_text(q).strip()


def repair_text(text: str) -> str:
    """Text that is valid Unicode: bytes that were not UTF-8 (which Python keeps in ``argv``
    as lone surrogates, and which the tokenizer refuses) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:  # argv's undecodable bytes (surrogateescape): recover the bytes, decode leniently
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # other lone surrogates
        return text.encode("utf-8", "replace").decode("utf-8")


def run_graph(
    method: str,
    question: str,
    components,
    context: Any,
    *,
    trace: bool = False,
    config: dict | None = None,
    checkpointer=None,
) -> dict:
    """Run one method on one question with its built ``context``: the final state plus
    ``node_times`` and ``wall_s`` (every node timed; ``trace`` streams each update to stderr
    as it happens)."""
    from ..graphs import build_graph

    graph = build_graph(method, components, checkpointer=checkpointer)
    res = stream_run(graph, {"question": question}, config, context, trace=trace)
    return {**res.final, "node_times": res.node_times, "wall_s": res.wall_s}


# the shared settings only retrieval reads: the no-retrieval baseline has them (its settings are
# the shared class) and ignores them
NONE_IGNORES = frozenset({"k", "retrieval", "rerank", "rerank_depth", "link_question", "link_depth", "max_passage_chars"})


def cmd_ask(args: argparse.Namespace) -> int:
    from ..graphs import method_context, method_names
    from ..settings import parse_settings, settings_for

    question = validate_question(args.question)
    if args.method not in method_names():
        raise ConfigError(f"unknown method {args.method!r}; choose from {', '.join(method_names())}")
    options = {"llm": args.llm, "k": args.k, "retrieval": args.retrieval}  # None: not given
    typed = parse_settings(args.set)
    sets = settings_for(args.method, typed)
    retrieval_only = getattr(args, "retrieval_only", False) or None  # a switch: only given or not
    refuse_clashes({**options, "skip_generation": retrieval_only}, typed, args.method,
                   flags={"skip_generation": "--retrieval-only"})
    ctx_values = {**{k: v for k, v in options.items() if v is not None}, **sets}
    if ctx_values.get("skip_generation") is True:  # the switch by its setting's name (a "no answer" line until 2026-12-03)
        args.retrieval_only = True
    if getattr(args, "retrieval_only", False):
        if args.method == "none":
            raise ConfigError("--retrieval-only (skip_generation): method 'none' answers without retrieving; "
                              "choose a method that retrieves")
        ctx_values["skip_generation"] = True
    unread = sorted(k for k in ctx_values if k in NONE_IGNORES) if args.method == "none" else []
    if unread:  # taken without a word until 2026-11-30
        verb = "changes" if len(unread) == 1 else "change"
        print(f"warning: method 'none' retrieves nothing, so {', '.join(unread)} {verb} nothing", file=sys.stderr)
    ctx = method_context(args.method, ctx_values)  # a bad name or value fails here, before the store opens
    refuse_missing_web(ctx)
    if getattr(args, "checkpointer", None) and not getattr(args, "thread", None):
        raise ConfigError("--checkpointer keeps a run under a --thread ID; give one, or leave --checkpointer out")
    store_from_env(args)  # RAGRAPHS_STORE_URL / RAGRAPHS_COLLECTION, as the server's graphs read them
    components = make_components(args, create_collection=False)  # a mistyped --store or --collection is an error, not a new store
    warn_if_empty(components, args.method)
    config = None
    checkpointer = None
    if getattr(args, "thread", None):
        from ..checkpoint import cli_spec, open_checkpointer
        from .threads import check_thread_method, store_of, thread_config

        checkpointer = open_checkpointer(cli_spec(args.checkpointer))
        check_thread_method(checkpointer, args.thread, args.method)
        # the method, settings and store go into the checkpoints' metadata (for history/replay)
        config = thread_config(args.thread, args.method, ctx_values, store_of(args))
    load_s = components.warm_up(ctx)  # so that the first node's time is its own, not the loading
    if args.trace:
        print(f"--- models loaded before the run ({load_s * 1000:.0f} ms)", file=sys.stderr)
    result = run_graph(
        args.method, question, components, ctx, trace=args.trace, config=config, checkpointer=checkpointer
    )
    if args.json:
        print(json.dumps(_json_result(args, question, result, load_s), default=str))
    else:
        _print_result(args, result, load_s)
    return 0


def _json_result(args: argparse.Namespace, question: str, result: dict, load_s: float) -> dict:
    """``ask --json``'s object: the answer, the passages whole, the counts and times."""
    return {
        "method": args.method,
        "question": question,
        "answer": result.get("answer", ""),
        "retrieval_only": bool(getattr(args, "retrieval_only", False)),
        "passages": [{**{k: p.get(k) for k in ("id", "title", "text", "source", "score")}, "meta": p.get("meta") or {}}
                     for p in result.get("passages") or []],
        "llm_calls": result.get("llm_calls", 0),
        "parse_failures": result.get("parse_failures", 0),  # decisions read leniently, repaired or failed
        "web_calls": result.get("web_calls", 0),
        # why the run's web search failed, as the warning line says (only deep in "trace" until 2026-12-03)
        "web_error": result.get("web_error") if result.get("web_error") not in ("", "no web search configured") else None,
        "input_tokens": result.get("input_tokens", 0),
        "output_tokens": result.get("output_tokens", 0),
        "node_times": {k: round(v, 4) for k, v in result["node_times"].items()},
        "wall_s": round(result["wall_s"], 4),
        "load_s": round(load_s, 4),
        "trace": result.get("trace", []),
    }


def _print_result(args: argparse.Namespace, result: dict, load_s: float) -> None:
    """The answer, the passages (whole with ``--retrieval-only``, else their start) and the
    calls and times; ``--quiet``: the answer only."""
    passages = result.get("passages") or []
    retrieval_only = bool(getattr(args, "retrieval_only", False))
    if result.get("web_error") not in (None, "", "no web search configured"):  # CRAG lost the web it was given: say why
        print(f"warning: {result['web_error']}", file=sys.stderr)
    if not retrieval_only:
        print(shown_answer(result.get("answer", ""), args.quiet))
    if retrieval_only and not passages:
        print("no passages", file=sys.stderr)
    if not retrieval_only and keeps_no_passage(args.method, passages, args.quiet):
        print(f"\npassages: {NO_PASSAGES}")  # a bare answer read as a retrieved one until 2026-12-02
    if passages and (retrieval_only or not args.quiet):
        print("passages:" if retrieval_only else "\npassages:")
        for i, p in enumerate(passages, 1):
            sc = p.get("score")
            txt = escape_controls(" ".join(p["text"].split()))  # a document's escape sequence shown, not run
            where = escape_controls(passage_place(p))
            print(f"  [{i}] {escape_controls(str(p['title']))} ({p.get('source')}{'' if sc is None else f', {sc:.3f}'}"
                  f"{f', {where}' if where else ''}): " + (txt if retrieval_only else txt[:160]))
    if not args.quiet:
        times = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result["node_times"].items())
        print(f"\nllm calls: {result.get('llm_calls', 0)}; {times}; total {result['wall_s']:.2f}s"
              f" (models loaded in {load_s:.2f}s before)")


def cmd_demo(args: argparse.Namespace) -> int:
    """Ingest the bundled sample corpus into a store and answer a question with vanilla RAG."""
    from importlib import resources

    from ..settings import data_dir
    from .ingest import cmd_ingest

    from .ingest import register as register_ingest

    from ..graphs import method_names

    if args.method not in method_names():  # before the ingest, not after it
        raise ConfigError(f"unknown method {args.method!r}; choose from {', '.join(method_names())}")
    validate_question(args.question)
    if args.llm:  # a spec it cannot build refused before the ingest, not after it (until 2026-12-03)
        from ..tools.llm import make_llm

        make_llm(args.llm)  # (kept: the run's model is this one, loaded once)
    sample = str(resources.files("ragraphs") / "data" / "sample")
    store = args.store or str(data_dir() / "demo-chroma")
    # the two commands' own parsers fill every option's default
    print(f"$ ragraphs ingest {sample} --store {store} --collection demo")
    cmd_ingest(parse_command(register_ingest, ["ingest", sample, "--store", store, "--collection", "demo"]))
    q = args.question
    print(f'\n$ ragraphs ask "{q}" --method {args.method} --store {store} --collection demo')
    argv = ["ask", q, "--method", args.method, "--store", store, "--collection", "demo", "--k", "4", "--retrieval", "dense"]
    return cmd_ask(parse_command(register, argv + (["--llm", args.llm] if args.llm else [])))


def parse_command(register_fn: Any, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed by the parser ``register_fn`` adds (``ask``, ``ingest``, ...), so a command
    run from another one gets every option, defaults included."""
    parser = argparse.ArgumentParser(prog="ragraphs")
    register_fn(parser.add_subparsers())
    return parser.parse_args(argv)


def cmd_methods(args: argparse.Namespace) -> int:
    """Every method's setting names; with a method, each setting's default, kind and
    description (``--json``: the same as a list of objects)."""
    from dataclasses import fields

    from ..graphs import METHODS, get_context_class, method_names
    from ..settings import describe_settings

    method = getattr(args, "method", None)
    if not method:
        names = {name: [f.name for f in fields(get_context_class(name))] for name in METHODS}
        if getattr(args, "json", False):
            print(json.dumps(names, indent=1))
            return 0
        for name, settings in names.items():
            print(f"{name}: settings " + ", ".join(settings))
        print("\n`ragraphs methods METHOD` shows each setting's default, kind and description "
              "(`ragraphs methods chat`: the chat graph's)")
        return 0
    if method == "chat":  # the chat graph's own settings: not a method, but the same kind of table
        from ..settings import ChatContext

        cls: type = ChatContext
        head = "chat: the chat graph's run settings (ragraphs chat; Studio: the chat graph's context)"
    elif method in method_names():
        cls = get_context_class(method)
        head = f"{method}: run settings (ragraphs ask/eval --set KEY=VALUE; Studio: the run's context)"
    else:
        raise ConfigError(f"unknown method {method!r}; choose from {', '.join(method_names())} (or chat)")
    rows = describe_settings(cls)
    if getattr(args, "json", False):
        print(json.dumps(rows, indent=1, default=str))
        return 0
    print(head + "\n")
    for r in rows:
        print(f"  {r['name']} = {json.dumps(r['default'], default=str)}  ({r['kind']})")
        if r["description"]:
            print(f"      {r['description']}")
    return 0


def register(sub) -> None:
    from ..graphs import method_names

    p = sub.add_parser("ask", help="answer a question with a method")
    p.add_argument("question")
    p.add_argument("--method", default="vanilla", help=f"one of: {', '.join(method_names())} (default vanilla)")
    add_store_args(p)
    add_run_args(p)
    p.add_argument("--trace", action="store_true", help="print every node's update as it happens, with timing")
    p.add_argument("--json", action="store_true", help="machine-readable result")
    p.add_argument("--quiet", action="store_true", help="print the answer only")
    p.add_argument("--retrieval-only", action="store_true",
                   help="print the passages the method would hand its LLM, whole, without asking it for the answer "
                        "(the calls on the way to them are made: CRAG's rewrite, ERM4's Rewriter+, MIGRES's loop)")
    p.add_argument("--thread", metavar="ID", help="persist the run's checkpoints under this thread id")
    p.add_argument("--checkpointer", metavar="PATH|URL", default=None, help="SQLite file or PostgreSQL URL for --thread (default $RAGRAPHS_CHECKPOINTER, else "
                   "$RAGRAPHS_HOME/checkpoints.sqlite)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("demo", help="ingest the bundled sample corpus and answer a question")
    p.add_argument("--question", default="Who replaced the manager of the Aston Villa that began at Leeds United?")
    p.add_argument("--method", default="vanilla")
    p.add_argument("--llm", default=None)
    p.add_argument("--store", default=None)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("methods", help="list the methods and their run settings")
    p.add_argument("method", nargs="?", help="show this method's settings with their defaults and descriptions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_methods)
