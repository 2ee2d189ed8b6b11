"""Pictures of the graphs: Mermaid diagrams drawn by LangGraph from the compiled graphs.

``python -m ragraphs.graphs.draw`` rewrites the README's diagram blocks, each one between
``<!-- graph:METHOD -->`` and ``<!-- /graph:METHOD -->``, with
``build_graph(METHOD).get_graph().draw_mermaid()``; ``--check`` only reports whether they
are current (exit 1 when not). ``tests/graphs/test_graph_pictures.py`` fails when a graph changed
and its picture was not redrawn.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from . import METHODS, build_graph

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"<!-- graph:(?P<name>[\w-]+) -->\n.*?<!-- /graph:(?P=name) -->", re.S)


def mermaid(method: str) -> str:
    """The method's compiled graph as Mermaid text (nothing heavy is loaded to build it)."""
    from ..components import Components

    return mermaid_of(build_graph(method, Components())).rstrip() + "\n"


def mermaid_of(graph: Any) -> str:
    """``graph.get_graph().draw_mermaid()`` with every route of a conditional edge named: LangGraph
    draws one edge per pair of nodes, labelled with one of the routes that lead there, so CRAG's
    Correct and DR-RAG's ``qdc`` were on no drawing (until 2026-12-03); here such an edge reads
    ``correct / ambiguous``."""
    text = graph.get_graph().draw_mermaid()
    for source, branches in getattr(getattr(graph, "builder", None), "branches", {}).items():
        for branch in branches.values():
            by_target: dict[str, list[str]] = {}
            for route, target in (branch.ends or {}).items():
                by_target.setdefault(str(target), []).append(str(route))
            for target, routes in by_target.items():
                if len(routes) > 1:
                    text = re.sub(rf"(\b{re.escape(source)} -\. &nbsp;)[^&]*(&nbsp; \.-> {re.escape(target)};)",
                                  lambda m: m.group(1) + " / ".join(routes) + m.group(2), text)
    return text


def block(method: str) -> str:
    return f"<!-- graph:{method} -->\n```mermaid\n{mermaid(method)}```\n<!-- /graph:{method} -->"


def redraw(text: str) -> str:
    """``text`` with every diagram block replaced by the current drawing of its graph."""

    def repl(m: re.Match) -> str:
        name = m.group("name")
        return block(name) if name in METHODS else m.group(0)

    return _BLOCK.sub(repl, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ragraphs.graphs.draw", description=__doc__.split("\n\n")[0])
    ap.add_argument("--readme", type=Path, default=README, help="the Markdown file to update (default: the README)")
    ap.add_argument("--check", action="store_true", help="only check that the pictures are current")
    args = ap.parse_args(argv)
    if not args.readme.is_file():  # an installed package has no README beside it (a traceback until 2026-12-03)
        ap.error(f"no file {args.readme}: run it in a checkout of ragraphs, or give --readme FILE")
    old = args.readme.read_text(encoding="utf-8")
    new = redraw(old)
    found = sorted(set(m.group("name") for m in _BLOCK.finditer(old)))
    if args.check:
        if new != old:
            print(f"{args.readme}: graph pictures are out of date; run python -m ragraphs.graphs.draw", file=sys.stderr)
            return 1
        print(f"{args.readme}: {len(found)} graph pictures current ({', '.join(found)})")
        return 0
    if new != old:
        args.readme.write_text(new, encoding="utf-8")
    print(f"{args.readme}: {'redrew' if new != old else 'already current:'} {', '.join(found) or 'no graph blocks'}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
