"""Every ``ragraphs`` command written in the README, the docs and the bench result notes is one
the command line accepts: its verb and every option exist, with a value where one is needed.

The commands are read from the Markdown code blocks (``$ `` prompts and ``\\`` continuations
included) and parsed by the real parser; nothing runs. A command written as a template
(``[--limit N]``, ``{a,b}``, ``...``, a bare placeholder such as ``PATH``) is left out; a shell
variable set earlier in its block is written out, any other stands for one value.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from conftest import DOC_FILES, ROOT
from ragraphs.cli.main import build_parser

TEMPLATE = re.compile(r"[\[\]{}|]|\.\.\.|^(PATH|FILE|DIR|N|K|METHOD|ID|STEP|QUESTION)$")


ASSIGNMENT = re.compile(r"""(\w+)=("[^"]*"|'[^']*'|[^;\s]+)""")


def documented_commands(path: Path) -> list[tuple[int, str]]:
    """(line number, command) for each ``ragraphs`` command in the file's code blocks, with
    each shell variable the block sets before it (``NEW="--set upper=0.93"``) written out."""
    found: list[tuple[int, str]] = []
    in_block, start, pending = False, 0, ""
    values: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            in_block, pending, values = not in_block, "", {}
            continue
        if not in_block:
            continue
        text = line.strip()
        if pending:
            text = pending + " " + text
        else:
            text = text[2:] if text.startswith("$ ") else text
            if not text.startswith("ragraphs "):
                assigned = ASSIGNMENT.findall(text)
                if assigned and re.fullmatch(r"(\s*\w+=(\"[^\"]*\"|'[^']*'|[^;\s]+)\s*;?)+", text):
                    values.update((k, v.strip("\"'")) for k, v in assigned)
                continue
            start = n
        if text.endswith("\\"):  # continued on the next line
            pending = text[:-1].rstrip()
            continue
        for name, value in values.items():
            text = re.sub(r"\$\{?" + name + r"\b\}?", lambda _m, v=value: v, text)
        found.append((start, text))
        pending = ""
    return found


def _runnable(argv: list[str]) -> bool:
    return not any(TEMPLATE.search(a) for a in argv)


def _cases() -> list:
    cases = []
    for path in DOC_FILES:
        for n, cmd in documented_commands(path):
            argv = shlex.split(cmd, comments=True)
            if _runnable(argv):
                cases.append(pytest.param(argv, id=f"{path.relative_to(ROOT)}:{n}"))
    return cases


CASES = _cases()


def test_the_docs_hold_commands_to_check():
    assert len(CASES) >= 80  # README alone writes dozens; a reader that found none would pass everything
    assert any(argv[1] == "eval" for argv in (c.values[0] for c in CASES))


@pytest.mark.parametrize("argv", CASES)
def test_a_documented_command_parses(argv):
    args = ["X" if re.fullmatch(r"\$\w+", a) else a for a in argv[1:]]  # a shell variable: some value
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            build_parser().parse_args(args)
    except SystemExit as e:  # a variable the block never sets, standing for options, fails here too
        assert not e.code, f"{shlex.join(argv)}\n{err.getvalue()}"
