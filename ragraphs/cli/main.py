"""The ``ragraphs`` parser and dispatch.

Verbs come from one module per group (:data:`COMMANDS`: ``ingest``; ``ask``, ``demo``,
``methods``; ``chat``; ``history``, ``replay``; ``calibrate-crag``; ``eval``; ``train-judge``,
``judge-eval``), each with ``register(subparsers)``. User mistakes print one line
``ragraphs: error: ...`` and exit non-zero, without a traceback (``RAGRAPHS_DEBUG=1`` shows
it). Output is quiet by default (no library logs, load reports or warnings); ``--verbose``
or ``RAGRAPHS_DEBUG=1`` brings them back.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any

from ..errors import InputError, RagraphsError, redact

# modules with ``register(subparsers)``; missing optional ones are skipped
COMMANDS = [
    "ragraphs.cli.ingest",
    "ragraphs.cli.ask",
    "ragraphs.cli.chat",
    "ragraphs.evaluation.cli",
    "ragraphs.tools.judges_cli",
    "ragraphs.cli.calibrate",
    "ragraphs.cli.debug",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


# the libraries whose versions a bug report needs, by distribution name
REPORTED = ("langgraph", "langchain-core", "llama-cpp-python", "sentence-transformers", "transformers", "torch",
            "onnxruntime", "chromadb")


def versions() -> str:
    """``ragraphs X`` and a line each for Python and the libraries of :data:`REPORTED`
    (``not installed`` for one that is missing), read from the installed metadata."""
    import platform
    from importlib import metadata

    from .. import __version__

    lines = [f"ragraphs {__version__}", f"  python {platform.python_version()} ({platform.system()} {platform.machine()})"]
    for dist in REPORTED:
        try:
            lines.append(f"  {dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            lines.append(f"  {dist} not installed")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ragraphs", description="Advanced RAG methods as LangGraph graphs, offline by default.",
                     formatter_class=argparse.RawDescriptionHelpFormatter)  # keeps --version's lines
    parser.add_argument(
        "--verbose", action="store_true", help="show the libraries' logs, load reports and warnings (also RAGRAPHS_DEBUG=1)"
    )
    parser.add_argument("--version", action="version", version=versions(),
                        help="print the versions of ragraphs, Python and the libraries it runs on (for a bug report)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in COMMANDS:
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name and mod.startswith(e.name):
                continue
            raise
        m.register(sub)
    for p in sub.choices.values():  # `ragraphs VERB --verbose` too
        if "--verbose" not in p._option_string_actions:
            p.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def utf8_pipes() -> None:
    """Text piped or redirected is UTF-8 where the platform's default is another code page
    (Windows' cp1252: a passage or answer outside it ended ``ask ... > out.txt`` with a
    UnicodeEncodeError, and a UTF-8 question file piped into ``chat`` was misread, until
    2026-11-30). ``PYTHONIOENCODING``, when set, wins; a terminal keeps its own."""
    import codecs

    if os.environ.get("PYTHONIOENCODING"):
        return
    streams: tuple[tuple[Any, str], ...] = ((sys.stdout, "backslashreplace"), (sys.stdin, "replace"))
    for stream, errors in streams:
        try:
            if stream is None or stream.isatty() or codecs.lookup(stream.encoding or "utf-8").name == "utf-8":
                continue
            stream.reconfigure(encoding="utf-8", errors=errors)
        except (AttributeError, LookupError, ValueError, OSError):  # a stream of the caller's (a test's capture)
            continue


# options that name a file, folder, store, thread, server, model or method: blank is no name
NAMED_VALUES = ("out", "corpus", "store", "store_url", "collection", "thread", "server", "compare", "method", "llm",
                "checkpointer", "weights", "init")


def refuse_blank(args: argparse.Namespace) -> None:
    """An option given a blank value (``--out "$OUT"`` with the variable unset): refused by name.
    Until 2026-12-01 it read as "not given": eval ran and kept nothing, ``--thread ""`` kept no
    checkpoint, ``--method ,`` ran vanilla."""
    for dest in NAMED_VALUES:
        value = getattr(args, dest, None)
        if isinstance(value, str) and not value.replace(",", " ").strip():
            raise InputError(f"--{dest.replace('_', '-')} is blank (an unset shell variable?); give a value or leave it out")


# options (and ingest's PATHs) that name a file or folder: a leading ~ is the home folder
PATH_VALUES = ("out", "corpus", "store", "checkpointer", "weights", "init", "data", "pool", "web", "teachers", "paths")


def expand_home(args: argparse.Namespace) -> None:
    """A leading ``~`` in a path option read as the shell reads it unquoted: ``--store=~/x``
    (which no shell expands) is the home folder's ``x``, not a folder ``./~/x`` (made until
    2026-12-03, while ``--checkpointer=~/x`` was expanded)."""
    def home(v: Any) -> Any:
        return os.path.expanduser(v) if isinstance(v, str) and v.startswith("~") else v

    for dest in PATH_VALUES:
        value = getattr(args, dest, None)
        if value:
            setattr(args, dest, [home(v) for v in value] if isinstance(value, list) else home(value))


def main(argv: list[str] | None = None) -> int:
    from .. import quiet
    from ..tools.env import flag

    debug = flag("RAGRAPHS_DEBUG")
    if debug:  # the traceback a debug run ends with, its secrets masked (a server's echo of the key was shown
        sys.excepthook = _redacted_traceback  # whole until 2026-12-03)
    try:
        # inside: a bad variable read while the verbs load (RAGRAPHS_LOCKED_SETTINGS) is one line too
        args = build_parser().parse_args(argv)
        refuse_blank(args)
        expand_home(args)
        utf8_pipes()
        with quiet.output(verbose=bool(args.verbose) or quiet.is_verbose()):
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


def _redacted_traceback(kind: type[BaseException], value: BaseException, tb: Any) -> None:
    import traceback

    sys.stderr.write(redact("".join(traceback.format_exception(kind, value, tb))))


def _user_cause(exc: BaseException) -> RagraphsError | None:
    """A RagraphsError wrapped somewhere in the exception chain (e.g. by the graph runtime)."""
    seen = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, RagraphsError):
            return e
        e = e.__cause__ or e.__context__
    return None
