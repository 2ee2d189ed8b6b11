"""``ragraphs chat``: a conversation with a method in the terminal, one answer per line read.

Each line read from standard input is a user message; the chat graph (:mod:`ragraphs.graphs.chat`)
answers it with the method and prints the answer, then its sources. An empty line is skipped;
end of input (Ctrl-D), ``exit`` or ``quit`` ends the conversation. ``--thread ID`` keeps the
conversation in the checkpointer, so the same command later goes on with it. ``--follow-up
rewrite`` has the LLM rewrite each later message into a question that stands alone first.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import uuid
from dataclasses import fields
from typing import Any, cast

from langchain_core.runnables import RunnableConfig

from ..errors import ConfigError, InputError, RagraphsError, redact
from ..sources import escape_controls
from .ask import validate_question
from .common import (add_run_args, add_store_args, make_components, refuse_clashes, refuse_missing_web, shown_answer, store_from_env,
                     keeps_no_passage, shown_sources, warn_if_empty, NO_PASSAGES)

ENDS = {"exit", "quit", ":q", "/exit", "/quit", "/q"}
HELP = ("Each line is a question for the method; the conversation is kept (with --thread, in the checkpointer). "
        "exit, /quit or Ctrl-D ends; Ctrl-C drops the line being typed or the answer under way; /help shows this.")


def chat_context(method: str, values: dict):
    """The chat graph's settings for ``method`` and the ``values`` given (``--llm``, ``--k``,
    ``--follow-up``, ``--set``...): the shared and the chat's own at the top, the method's own
    under ``settings``."""
    from ..settings import ChatContext

    from ..settings import RAGContext

    values = {k: v for k, v in values.items() if v is not None}
    shared = {f.name for f in fields(ChatContext)} - {"method", "settings"}
    chat_only = shared - {f.name for f in fields(RAGContext)}
    # a shared setting given on the command line also goes under `settings`, so that it holds
    # even where it equals the shared default and the method's own default differs (--k 4 for MIGRES)
    return ChatContext(method=cast(Any, method), **{k: v for k, v in values.items() if k in shared},
                       settings={k: v for k, v in values.items() if k not in chat_only})


def cmd_chat(args: argparse.Namespace) -> int:
    from ..graphs import method_names

    if args.method not in method_names():
        raise ConfigError(f"unknown method {args.method!r}; choose from {', '.join(method_names())}")
    if args.checkpointer and not args.thread:
        raise ConfigError("--checkpointer keeps a chat under a --thread ID; give one, or leave --checkpointer out")
    values, ctx, settings = _chat_settings(args)
    store_from_env(args)  # RAGRAPHS_STORE_URL / RAGRAPHS_COLLECTION, as the server's graphs read them
    components = make_components(args, create_collection=False)  # a mistyped --store or --collection is an error, not a new store
    warn_if_empty(components, args.method)
    graph, config, thread = _chat_graph(args, components, values)
    earlier = len((graph.get_state(config).values or {}).get("messages") or [])
    components.warm_up(settings)
    interactive = sys.stdin.isatty()
    if interactive or earlier:
        _banner(args, thread, earlier, interactive)
    _prepare_input(interactive)
    failed = 0  # the exit code: the last failed turn's (each is reported and the conversation goes on)
    while True:
        line = _read_line(interactive)
        if line is None:
            continue
        if not line or line.strip().lower() in ENDS:
            return failed
        if not line.strip():
            continue
        if line.strip().startswith("/"):  # a command, never a question for the LLM
            failed = _slash_command(line) or failed
            continue
        try:
            question = validate_question(line)
        except InputError as e:  # one bad line is reported; the conversation goes on
            print(f"ragraphs: error: {e}", file=sys.stderr, flush=True)
            failed = e.exit_code
            continue
        out, code = _turn(graph, question, config, ctx, interactive)
        if out is not None:
            _print_turn(args, thread, question, out)
        failed = code or failed


def _chat_settings(args: argparse.Namespace) -> tuple[dict, Any, Any]:
    """The values given (options, then ``--set``), the chat's context and the method's, every
    name and value checked before any model loads."""
    from ..graphs.chat import method_context
    from ..settings import parse_settings, settings_for

    # the options given, then --set (until 2026-11-30 an option not given replaced --set follow_up=...)
    options = {"follow_up": args.follow_up, "history_turns": args.history_turns}
    typed = parse_settings(args.set)
    sets = settings_for(args.method, typed)
    refuse_clashes({"llm": args.llm, "k": args.k, "retrieval": args.retrieval, **options}, typed, args.method)
    values = {"llm": args.llm, "k": args.k, "retrieval": args.retrieval,
              **{k: v for k, v in options.items() if v is not None}, **sets}
    ctx = chat_context(args.method, values)
    settings = method_context(ctx)  # names and values checked here, before any model loads
    if "history_turns" in values and ctx.follow_up != "rewrite":  # read by the rewrite alone (ignored until 2026-12-03)
        given = "--history-turns" if args.history_turns is not None else "--set history_turns"
        raise ConfigError(f"{given} is read only by --follow-up rewrite (the earlier turns the rewrite reads); "
                          f"add --follow-up rewrite or drop {given}")
    refuse_missing_web(settings)
    return values, ctx, settings


def _chat_graph(args: argparse.Namespace, components: Any, values: dict) -> tuple[Any, RunnableConfig, str]:
    """The chat graph over its checkpointer, the run's config and the thread's id: ``--thread``
    in the checkpointer (its metadata names the chat and its settings, for ``ragraphs
    history``), else in memory for as long as the command runs."""
    from ..graphs.chat import build_chat_graph

    if args.thread:
        from ..checkpoint import cli_spec, open_checkpointer
        from .threads import CHAT, check_thread_method, store_of, thread_config

        saver, thread = open_checkpointer(cli_spec(args.checkpointer)), args.thread
        check_thread_method(saver, thread, CHAT)
        config = cast(RunnableConfig, thread_config(thread, CHAT, {"method": args.method, **values}, store_of(args)))
    else:
        from langgraph.checkpoint.memory import InMemorySaver

        from ..checkpoint import strict_serde

        saver, thread = InMemorySaver(serde=strict_serde()), f"chat-{uuid.uuid4().hex[:8]}"
        config = RunnableConfig(configurable={"thread_id": thread})
    return build_chat_graph(components, checkpointer=saver), config, thread


def _prepare_input(interactive: bool) -> None:
    if interactive:
        try:  # line editing and history for input(), where the platform has them
            importlib.import_module("readline")
        except ImportError:  # pragma: no cover
            pass
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:  # bytes that are not UTF-8 (a latin-1 file piped in) read as U+FFFD, not a traceback
        reconfigure(errors="replace")


def _read_line(interactive: bool) -> str | None:
    """The next line with its line break; "" at the end of input (Ctrl-D); None when Ctrl-C
    dropped the line being typed (it ended the chat until 2026-11-30)."""
    try:
        return input("you> ") + "\n" if interactive else sys.stdin.readline()
    except EOFError:  # Ctrl-D
        return ""
    except KeyboardInterrupt:
        if not interactive:
            raise
        print(file=sys.stderr, flush=True)
        return None


def _banner(args: argparse.Namespace, thread: str, earlier: int, interactive: bool) -> None:
    """The chat's first line: its method, its thread (a chat kept in memory names none: its id
    named nothing `history` could read until 2026-12-03) and how it ends."""
    where = f"thread {thread}" if args.thread else "kept in memory (--thread ID keeps it)"
    print(f"chat with {args.method}, {where}" + (f" ({earlier} earlier messages)" if earlier else "")
          + ("; exit or Ctrl-D ends" if interactive else ""), file=sys.stderr)


def _slash_command(line: str) -> int:
    """A /command: /help answers; any other is refused (exit code 2, as a refused question)."""
    if line.strip().lower() in ("/help", "/?"):
        print(HELP, flush=True)
        return 0
    # counted as a failed turn, as a refused question is (a piped batch exited 0 until 2026-12-01)
    word = line.split()[0]
    known = word.lower() in ("/help", "/?") or word.lower() in ENDS  # "/help me" was an "unknown command '/help'"
    print(f"ragraphs: error: {word} takes nothing after it; give it alone" if known
          else f"ragraphs: error: unknown command {word!r}; /help lists them", file=sys.stderr, flush=True)
    return InputError.exit_code


def _turn(graph: Any, question: str, config: RunnableConfig, ctx: Any, interactive: bool) -> tuple[dict | None, int]:
    """One turn: the chat graph's final state and 0, or None and the exit code of a turn that
    failed (the model server down...: one error line, and the conversation goes on) or was
    interrupted (Ctrl-C drops the answer under way)."""
    try:
        return graph.invoke(cast(Any, {"messages": [("user", question)]}), config, context=ctx), 0
    except KeyboardInterrupt:
        if not interactive:
            raise
        print("(interrupted)", file=sys.stderr, flush=True)
        return None, 0
    except Exception as e:
        from .main import _user_cause

        cause = e if isinstance(e, RagraphsError) else _user_cause(e)
        if cause is None:
            raise
        print(f"ragraphs: error: {redact(str(cause))}", file=sys.stderr, flush=True)
        return None, cause.exit_code


def _print_turn(args: argparse.Namespace, thread: str, question: str, out: dict) -> None:
    """The answer, how a follow-up was read and its sources; with ``--json`` one line."""
    reply, passages = out["messages"][-1], out.get("passages") or []
    read_as = out.get("question") or question
    if args.json:
        # without --thread the conversation is kept in memory only: no id `history` could read
        print(json.dumps({"thread": thread if args.thread else None, "question": question, "read_as": read_as, "answer": reply.content,
                          # the AI message's own list: with their address, file and page (since 2026-12-02)
                          "passages": reply.response_metadata.get("passages") or [],
                          "llm_calls": reply.response_metadata.get("llm_calls", 0)}, default=str), flush=True)
        return
    print(shown_answer(str(reply.content), args.quiet), flush=True)
    if read_as != question and not args.quiet:
        print(f"  read as: {escape_controls(read_as)}", flush=True)
    if passages and not args.quiet:
        print(f"  sources: {shown_sources(passages)}", flush=True)
    elif keeps_no_passage(args.method, passages, args.quiet):  # said since 2026-12-02, as ask says it
        print(f"  sources: {NO_PASSAGES}", flush=True)


def register(sub) -> None:
    from ..graphs import method_names

    p = sub.add_parser("chat", help="a conversation with a method: each line read is answered (Ctrl-D ends)")
    p.add_argument("--method", default="vanilla", help=f"one of: {', '.join(method_names())} (default vanilla)")
    add_store_args(p)
    add_run_args(p)
    p.add_argument("--thread", metavar="ID", help="keep the conversation in the checkpointer under this id, to go on later")
    p.add_argument("--checkpointer", metavar="PATH|URL", default=None, help="SQLite file or PostgreSQL URL for --thread (default $RAGRAPHS_CHECKPOINTER, else "
                   "$RAGRAPHS_HOME/checkpoints.sqlite)")
    p.add_argument("--follow-up", choices=["alone", "rewrite"], default=None,
                   help="alone (default): each message answered as written; rewrite: the LLM first rewrites a later "
                        "message into a question that stands alone")
    p.add_argument("--history-turns", type=int, metavar="N", default=None,
                   help="with --follow-up rewrite: the earlier turns the rewrite reads (default 3)")
    p.add_argument("--json", action="store_true", help="one JSON line per answer")
    p.add_argument("--quiet", action="store_true", help="print the answers only")
    p.set_defaults(func=cmd_chat)
