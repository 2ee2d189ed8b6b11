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


ROOT = Path(__file__).resolve().parents[1]
# the Markdown a user reads: its commands and Python blocks are checked (tests/cli/test_documented_commands.py,
# tests/test_documented_python.py) and its links lead somewhere (tests/test_documented_links.py)
DOC_FILES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "bench" / "results").glob("*/README.md"))]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own RAGRAPHS_HOME so no test touches ~/.ragraphs, and no server's
    checkpointer, store or web search set in the shell reaches a test."""
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path / "home"))
    for name in ("RAGRAPHS_CHECKPOINTER", "RAGRAPHS_STORE_URL", "RAGRAPHS_COLLECTION"):
        monkeypatch.delenv(name, raising=False)


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


def main_captured(capsys, *argv) -> tuple[int, str, str]:
    """``ragraphs.cli.main(argv)`` in this process under pytest's ``capsys``: (exit code,
    stdout, stderr) of this one call."""
    from ragraphs.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


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


@pytest.fixture(scope="module")
def example():
    """``example("custom_method")``: that program of ``examples/`` as a module, with the folder
    on the path while the test module runs (tests/examples/)."""
    import importlib

    folder = str(Path(__file__).resolve().parents[1] / "examples")
    sys.path.insert(0, folder)
    try:
        yield importlib.import_module
    finally:
        sys.path.remove(folder)


@pytest.fixture(scope="session")
def hotpot_examples():
    from ragraphs.datasets import load_dataset

    return load_dataset(str(DATA / "hotpotqa.sample.jsonl"), "hotpotqa")


_LAST_USER: dict[str, str] = {}  # fixture -> node id of the last scheduled test that uses it
_CLOSE: dict[str, contextlib.ExitStack] = {}


@pytest.fixture(scope="session")
def langgraph_server(tmp_path_factory, minilm):
    """One real ``langgraph dev`` on 127.0.0.1 for the session's Studio and ``eval --server``
    tests (``tests/servers.py``): it starts once, its models load once, and it stops right
    after the last test that uses it."""
    from servers import shared_langgraph_server

    with contextlib.ExitStack() as stack:
        served = stack.enter_context(shared_langgraph_server(tmp_path_factory, minilm))
        _CLOSE["langgraph_server"] = stack
        yield served


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    for name, last in _LAST_USER.items():
        if item.nodeid == last and name in _CLOSE:
            _CLOSE.pop(name).close()


def _scheduled_notebooks(items) -> list[str]:
    """The notebooks that the selected notebook tests check, in the order they run."""
    names = []
    for item in items:
        if "notebook_runs" in getattr(item, "fixturenames", ()):
            name = item.callspec.params.get("name") if hasattr(item, "callspec") else "comparison"
            if name not in names:
                names.append(name)
    return names


_NOTEBOOK_RUNS = []


def pytest_collection_modifyitems(session, config, items):
    """The fast tests first, while the notebooks execute in the background (they need one core
    for a minute or so, and these tests leave it idle); then the real-stack tests (``slow``);
    the notebook tests last. Within each group, the collection order."""
    def group(item) -> int:
        if "notebook_runs" in getattr(item, "fixturenames", ()):
            return 2
        return 1 if item.get_closest_marker("slow") else 0

    items.sort(key=group)


def pytest_collection_finish(session):
    """Start the notebooks' kernel and their execution now, in the background (see
    ``tests/notebook_kernel.py``); the notebook tests wait for their results."""
    for item in session.items:
        if "langgraph_server" in getattr(item, "fixturenames", ()):
            _LAST_USER["langgraph_server"] = item.nodeid
    names = _scheduled_notebooks(session.items)
    if names:
        from notebook_kernel import NotebookRuns

        _NOTEBOOK_RUNS.append(NotebookRuns(names).start())


def pytest_sessionfinish(session, exitstatus):
    while _NOTEBOOK_RUNS:
        _NOTEBOOK_RUNS.pop().close()


@pytest.fixture(scope="session")
def notebook_runs():
    if not _NOTEBOOK_RUNS:
        pytest.fail("the notebooks were not started at collection (pytest_collection_finish)")
    return _NOTEBOOK_RUNS[0]


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
