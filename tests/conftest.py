"""Shared fixtures. Real-stack fixtures load each heavy model once per test session."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own RAGRAPHS_HOME so no test touches ~/.ragraphs."""
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path / "home"))


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def run_cli(args, env: dict[str, str | None]) -> CliResult:
    """Run the real ``ragraphs`` entry point (``ragraphs.cli.main``) in this process with
    ``env`` set for the one run (``None`` unsets a variable); the environment is restored
    after it and the models it loads stay loaded for the next test. Tests of what only a
    separate process shows (the exit of a killed child, library output at import, bytes that
    are not UTF-8 in argv) start ``python -m ragraphs`` instead."""
    from ragraphs.cli import main

    saved = dict(os.environ)
    out, err = io.StringIO(), io.StringIO()
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:  # argparse's usage errors
                code = e.code if isinstance(e.code, int) else 2
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return CliResult(int(code or 0), out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    """``cli(*args, **env)``: :func:`run_cli` with keyword environment variables."""
    return lambda *args, **env: run_cli(args, env)


@pytest.fixture(scope="session")
def minilm():
    from ragraphs.tools.embeddings import MiniLMEmbeddings

    return MiniLMEmbeddings()


@pytest.fixture(scope="session")
def gemma():
    from ragraphs.tools.llm import make_llm

    return make_llm("gemma", max_tokens=32)


@pytest.fixture(scope="session")
def hotpot_examples():
    from ragraphs.datasets import load_dataset

    return load_dataset(str(DATA / "hotpotqa.sample.jsonl"), "hotpotqa")


def stop_process(proc) -> None:
    """Stop a server started by a test: terminate, then kill if it lingers."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def port() -> int:
    return free_port()


PYTHON = sys.executable
