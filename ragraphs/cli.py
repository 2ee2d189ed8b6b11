"""The ``ragraphs`` command line.

Verbs: ``ingest``, ``ask``, ``demo``, ``methods``, plus the verbs registered by other
modules (see :data:`EXTRA_COMMANDS`). User mistakes print one line ``ragraphs: error: ...``
and exit non-zero, without a traceback (``RAGRAPHS_DEBUG=1`` shows it).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from typing import Any

from .errors import ConfigError, InputError, RagraphsError, redact

# modules with ``register(subparsers)`` adding more verbs; missing ones are skipped
EXTRA_COMMANDS = [
    "ragraphs.evaluation.cli",
    "ragraphs.tools.judges_cli",
    "ragraphs.graphs.crag_cli",
    "ragraphs.debug_cli",
]


def _add_store_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="DIR", help="Chroma directory (default: $RAGRAPHS_HOME/chroma, ~/.ragraphs/chroma)")
    p.add_argument("--store-url", metavar="URL", help="use a Chroma server instead, e.g. http://127.0.0.1:8000")
    p.add_argument("--collection", default="ragraphs", help="collection name (default: ragraphs)")


def make_components(args: argparse.Namespace, **kw: Any):
    from .components import Components

    return Components(
        store_path=getattr(args, "store", None),
        store_url=getattr(args, "store_url", None),
        collection=getattr(args, "collection", None) or "ragraphs",
        **kw,
    )


# ---------------------------------------------------------------- ingest
def cmd_ingest(args: argparse.Namespace) -> int:
    from .ingest import ingest
    from .tools.embeddings import MiniLMEmbeddings
    from .tools.vectorstore import ChromaCorpus
    from .settings import default_store_path

    for p in args.paths:
        if not os.path.exists(p):
            raise InputError(f"no such file or directory: {p}")
    corpus = ChromaCorpus(
        None if args.store_url else (args.store or default_store_path()),
        url=args.store_url,
        collection=args.collection,
        embeddings=MiniLMEmbeddings(fast=not args.exact),
    )
    report = ingest(args.paths, corpus, max_words=args.chunk_words, progress=not args.quiet)
    for msg in report.skipped_files:
        print(f"skipped: {msg}", file=sys.stderr)
    for msg in report.warnings[:20]:
        print(f"warning: {msg}", file=sys.stderr)
    rate = report.passages / report.seconds if report.seconds else 0.0
    summary = {
        "files": report.files,
        "passages": report.passages,
        "added": report.added,
        "already_present": report.passages - report.added,
        "skipped_files": len(report.skipped_files),
        "seconds": round(report.seconds, 2),
        "passages_per_s": round(rate, 1),
        "store_total": corpus.count(),
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"ingested {report.files} file(s): {report.passages} passages, {report.added} new, "
            f"{summary['already_present']} already present, {summary['skipped_files']} file(s) skipped "
            f"in {report.seconds:.1f}s ({rate:.1f} passages/s); store now holds {summary['store_total']}"
        )
    return 0 if report.files or not report.skipped_files else 1


# ---------------------------------------------------------------- ask
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
    context_values: dict[str, Any],
    *,
    trace_printer=None,
    config: dict | None = None,
    checkpointer=None,
) -> dict:
    """Run one method on one question; stream updates (for --trace) and time every node."""
    from .graphs import build_graph, get_context_class
    from .settings import context_from

    ctx = context_from(get_context_class(method), context_values)
    graph = build_graph(method, components, checkpointer=checkpointer)
    final: dict[str, Any] = {}
    node_times: dict[str, float] = {}
    t0 = time.perf_counter()
    cfg = dict(config or {})
    for mode, chunk in graph.stream(
        {"question": question}, cfg or None, context=ctx, stream_mode=["updates", "values", "custom"]
    ):
        if mode == "values":
            final = chunk
            continue
        if mode == "custom":
            # node_trace events repeat the updates' trace entries; show the others (routes, ...)
            if trace_printer and isinstance(chunk, dict) and chunk.get("event") != "node_trace":
                print(f"    event: {json.dumps(chunk, default=str)[:1000]}", file=sys.stderr)
            continue
        for node, update in (chunk or {}).items():
            if not isinstance(update, dict):
                continue
            for entry in update.get("trace") or []:
                node_times[entry["node"]] = node_times.get(entry["node"], 0.0) + float(entry.get("elapsed_s", 0.0))
            if trace_printer:
                trace_printer(node, update, time.perf_counter() - t0)
    wall = time.perf_counter() - t0
    return {**final, "node_times": node_times, "wall_s": wall}


def _print_trace(node: str, update: dict, at: float) -> None:
    entries = update.get("trace") or []
    took = sum(float(e.get("elapsed_s", 0)) for e in entries)
    shown = {k: v for k, v in update.items() if k not in ("trace",)}
    details = [{k: v for k, v in e.items() if k not in ("node", "elapsed_s")} for e in entries]
    print(f"--- [{at:7.2f}s] {node} ({took * 1000:.0f} ms)", file=sys.stderr)
    if details and any(details):
        print("    details: " + json.dumps(details[0] if len(details) == 1 else details, default=str)[:2000], file=sys.stderr)
    for k, v in shown.items():
        if k == "passages" and isinstance(v, list):
            for p in v:
                sc = p.get("score")
                print(f"    passage {p['id'][:8]} [{p.get('source')}] {'' if sc is None else f'{sc:.3f} '}{p['title'][:60]}", file=sys.stderr)
        else:
            print(f"    {k}: {json.dumps(v, default=str)[:500]}", file=sys.stderr)
    sys.stderr.flush()


def cmd_ask(args: argparse.Namespace) -> int:
    from .graphs import method_names

    question = validate_question(args.question)
    if args.method not in method_names():
        raise ConfigError(f"unknown method {args.method!r}; choose from {', '.join(method_names())}")
    components = make_components(args)
    ctx_values = {"llm": args.llm, "k": args.k, "retrieval": args.retrieval}
    for kv in args.set or []:
        key, eq, val = kv.partition("=")
        if not eq:
            raise InputError(f"--set expects KEY=VALUE, got {kv!r}")
        try:
            ctx_values[key] = json.loads(val)
        except ValueError:
            ctx_values[key] = val
    if args.method != "none":
        retr = components.retriever
        if hasattr(retr, "count") and retr.count() == 0:
            print("warning: the store is empty; run `ragraphs ingest PATH` first", file=sys.stderr)
    config = None
    checkpointer = None
    if getattr(args, "thread", None):
        from .debug_cli import open_checkpointer, store_of, thread_config

        checkpointer = open_checkpointer(args.checkpointer)
        # the method, settings and store go into the checkpoints' metadata (for history/replay)
        config = thread_config(args.thread, args.method, ctx_values, store_of(args))
    result = run_graph(
        args.method,
        question,
        components,
        ctx_values,
        trace_printer=_print_trace if args.trace else None,
        config=config,
        checkpointer=checkpointer,
    )
    passages = result.get("passages") or []
    if args.json:
        out = {
            "method": args.method,
            "question": question,
            "answer": result.get("answer", ""),
            "passages": [{k: p.get(k) for k in ("id", "title", "text", "source", "score")} for p in passages],
            "llm_calls": result.get("llm_calls", 0),
            "web_calls": result.get("web_calls", 0),
            "input_tokens": result.get("input_tokens", 0),
            "node_times": {k: round(v, 4) for k, v in result["node_times"].items()},
            "wall_s": round(result["wall_s"], 4),
            "trace": result.get("trace", []),
        }
        print(json.dumps(out, default=str))
    else:
        print(result.get("answer", ""))
        if passages and not args.quiet:
            print("\npassages:")
            for i, p in enumerate(passages, 1):
                sc = p.get("score")
                txt = " ".join(p["text"].split())
                print(f"  [{i}] {p['title']} ({p.get('source')}{'' if sc is None else f', {sc:.3f}'}): {txt[:160]}")
        if not args.quiet:
            times = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result["node_times"].items())
            print(f"\nllm calls: {result.get('llm_calls', 0)}; {times}; total {result['wall_s']:.2f}s")
    return 0


# ---------------------------------------------------------------- demo
def cmd_demo(args: argparse.Namespace) -> int:
    """Ingest the bundled sample corpus into a store and answer a question with vanilla RAG."""
    from importlib import resources

    from .settings import data_dir

    sample = str(resources.files("ragraphs") / "data" / "sample")
    store = args.store or str(data_dir() / "demo-chroma")
    ns = argparse.Namespace(
        paths=[sample], store=store, store_url=None, collection="demo", exact=False, chunk_words=180, quiet=False, json=False
    )
    print(f"$ ragraphs ingest {sample} --store {store} --collection demo")
    cmd_ingest(ns)
    q = args.question
    print(f'\n$ ragraphs ask "{q}" --method vanilla --store {store} --collection demo')
    ask = argparse.Namespace(
        question=q, method=args.method, store=store, store_url=None, collection="demo", llm=args.llm, k=4,
        retrieval="dense", set=None, trace=False, json=False, quiet=False, thread=None,
    )
    return cmd_ask(ask)


def cmd_methods(args: argparse.Namespace) -> int:
    from .graphs import METHODS, get_context_class
    from dataclasses import fields

    for name in METHODS:
        ctx = get_context_class(name)
        print(f"{name}: settings " + ", ".join(f"{f.name}" for f in fields(ctx)))
    return 0


# ---------------------------------------------------------------- main
class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from .graphs import method_names

    parser = _Parser(prog="ragraphs", description="Advanced RAG methods as LangGraph graphs, offline by default.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("ingest", help="add files to the vector store (idempotent)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories: .txt .md .html .jsonl, benchmark files")
    _add_store_args(p)
    p.add_argument("--chunk-words", type=int, default=180, help="words per chunk (default 180)")
    p.add_argument("--exact", action="store_true", help="float32 encoder instead of the int8 fast path (use for the whole store)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("ask", help="answer a question with a method")
    p.add_argument("question")
    p.add_argument("--method", default="vanilla", help=f"one of: {', '.join(method_names())} (default vanilla)")
    _add_store_args(p)
    p.add_argument("--llm", default=None, help="model spec: gemma (default) | llamacpp:PATH | openai:MODEL")
    p.add_argument("--k", type=int, default=None, help="passages per retrieval")
    p.add_argument("--retrieval", choices=["dense", "bm25", "hybrid"], default=None)
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="any run setting of the method's context")
    p.add_argument("--trace", action="store_true", help="print every node's update as it happens, with timing")
    p.add_argument("--json", action="store_true", help="machine-readable result")
    p.add_argument("--quiet", action="store_true", help="print the answer only")
    p.add_argument("--thread", metavar="ID", help="persist the run's checkpoints under this thread id")
    p.add_argument("--checkpointer", metavar="PATH|URL", default=None, help="SQLite file or PostgreSQL URL for --thread")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("demo", help="ingest the bundled sample corpus and answer a question")
    p.add_argument("--question", default="Who replaced the manager of the Aston Villa that began at Leeds United?")
    p.add_argument("--method", default="vanilla")
    p.add_argument("--llm", default=None)
    p.add_argument("--store", default=None)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("methods", help="list the methods and their run settings")
    p.set_defaults(func=cmd_methods)

    for mod in EXTRA_COMMANDS:
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name and mod.startswith(e.name):
                continue
            raise
        m.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = os.environ.get("RAGRAPHS_DEBUG")
    try:
        return int(args.func(args) or 0)
    except RagraphsError as e:
        if debug:
            raise
        print(f"ragraphs: error: {redact(str(e))}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("ragraphs: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:
        cause = _user_cause(e)
        if cause is not None and not debug:
            print(f"ragraphs: error: {redact(str(cause))}", file=sys.stderr)
            return cause.exit_code
        raise


def _user_cause(e: BaseException):
    """A RagraphsError wrapped somewhere in the exception chain (e.g. by the graph runtime)."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, RagraphsError):
            return e
        e = e.__cause__ or e.__context__
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
