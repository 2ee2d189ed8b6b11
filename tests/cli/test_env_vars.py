"""Environment variables as the command line reads them: a bad one is one line naming it, and
the switches (``RAGRAPHS_DEBUG``, ``RAGRAPHS_VERBOSE``) read ``0`` / ``false`` as off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _child(args, **env):
    e = {**os.environ, **env}
    for k in ("RAGRAPHS_DEBUG", "RAGRAPHS_VERBOSE"):
        if k not in env:
            e.pop(k, None)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=e, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["methods"]])
def test_a_misspelt_lock_list_is_one_line_on_every_command(argv):
    """A misspelt ``RAGRAPHS_LOCKED_SETTINGS`` ended every command, ``--version`` and
    ``--help`` too, with a traceback (the verbs' modules import the graphs, which check the
    list) until 2026-11-30; now the one line a config error prints, exit 2. The graphs still
    refuse to load with it (a server does not start)."""
    r = _child(["-m", "ragraphs", *argv], RAGRAPHS_LOCKED_SETTINGS="webb")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        "ragraphs: error: RAGRAPHS_LOCKED_SETTINGS names no setting 'webb' (did you mean 'web', 'web_k'?)"]
    r = _child(["-c", "import ragraphs.graphs"], RAGRAPHS_LOCKED_SETTINGS="webb")
    assert r.returncode != 0 and "names no setting 'webb'" in r.stderr


@pytest.mark.parametrize("value,on", [("", False), (" ", False), ("0", False), ("false", False), ("No", False),
                                      ("OFF", False), ("1", True), ("true", True), ("yes", True), ("on", True),
                                      ("2", True)])
def test_switches_read_0_and_false_as_off(monkeypatch, value, on):
    """``RAGRAPHS_DEBUG=0`` and ``RAGRAPHS_VERBOSE=0`` turned debugging and the libraries'
    output on (any non-empty value did) until 2026-11-30."""
    from ragraphs.quiet import is_verbose
    from ragraphs.tools.env import flag

    monkeypatch.setenv("RAGRAPHS_DEBUG", value)
    monkeypatch.delenv("RAGRAPHS_VERBOSE", raising=False)
    assert flag("RAGRAPHS_DEBUG") is on and is_verbose() is on
    monkeypatch.setenv("RAGRAPHS_VERBOSE", value)
    monkeypatch.delenv("RAGRAPHS_DEBUG")
    assert is_verbose() is on


def test_debug_0_keeps_the_one_line_error(cli):
    r = cli("ask", "   ", RAGRAPHS_DEBUG="0")
    assert r.returncode == 2 and r.stderr.strip() == "ragraphs: error: the question is empty"
    with pytest.raises(Exception, match="the question is empty"):
        cli("ask", "   ", RAGRAPHS_DEBUG="1")
