"""The package's type annotations hold, and a user's type checker reads them (``py.typed``).

mypy runs as a user would run it: from the repository root with the configuration in
``pyproject.toml`` (``[tool.mypy]``), over the package and over a small program that uses the
public API.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # a cold mypy run reads langgraph and langchain-core: about a minute


def _mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    cache = Path(tempfile.gettempdir()) / "ragraphs-test-mypy-cache"  # not in the repository; warm between runs
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900)


def test_the_package_type_checks():
    run = _mypy()  # the files and settings of [tool.mypy]
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout  # the package and examples/ (a method of your own included)


def test_the_package_ships_its_types_marker():
    assert (ROOT / "ragraphs" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # in the wheel's package data


USER_PROGRAM = '''
from ragraphs import Components
from ragraphs.graphs.crag import build_crag_graph
from ragraphs.settings import CRAGContext, DRRAGContext

graph = build_crag_graph(Components())
reveal_type(graph)
out = graph.invoke({"question": "Who wrote Hamlet?"}, context=CRAGContext(upper=0.5))
bad = CRAGContext(upper="high")
also_bad = DRRAGContext(k2="ten")
misspelled = graph.invoke({"questoin": "Who wrote Hamlet?"})
'''


def test_a_users_program_sees_typed_graphs_and_settings(tmp_path):
    """The program in a folder of its own, as a user's is: mypy finds the installed package
    (the Makefile's editable install is one it follows; setuptools' default hid it: every name
    from ragraphs was Any)."""
    prog = tmp_path / "user_program.py"
    prog.write_text(USER_PROGRAM, encoding="utf-8")
    run = _mypy("--no-error-summary", str(prog), cwd=tmp_path)
    lines = run.stdout.splitlines()
    revealed = [ln for ln in lines if ":7: note: Revealed type is" in ln]
    assert revealed, run.stdout + run.stderr
    # the compiled graph carries the method's state, settings, input and output types
    for name in ("CompiledStateGraph[", "ragraphs.state.crag.CRAGState", "ragraphs.settings.CRAGContext",
                 "ragraphs.state.base.RAGInput", "ragraphs.state.crag.CRAGOutput"):
        assert name in revealed[0], revealed[0]
    errors = [ln for ln in lines if ": error:" in ln]
    # a setting of the wrong kind and an input without its question are caught before anything
    # runs; the right ones pass
    assert len(errors) == 3, run.stdout
    assert ':9: error: Argument "upper" to "CRAGContext" has incompatible type "str"; expected "float"' in errors[0]
    assert ':10: error: Argument "k2" to "DRRAGContext" has incompatible type "str"; expected "int"' in errors[1]
    assert ':11: error: No overload variant of "invoke"' in errors[2]


NODE_FORMS = '''
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import Command

from langgraph.graph import StateGraph

from ragraphs.graphs import start_at, starts_a_run, timed
from ragraphs.settings import RAGContext
from ragraphs.state import RAGState


async def first(state: RAGState, runtime: Runtime[RAGContext]) -> dict[str, Any]:
    return {"answer": "x"}


def with_config(state: RAGState, config: RunnableConfig) -> dict[str, Any]:
    return {"answer": "x"}


def routes(state: RAGState) -> Command:
    return Command(update={"answer": "x"}, goto="b")


nodes = [starts_a_run("a", first, RAGState), timed("b", with_config), timed("c", routes)]
g = StateGraph(RAGState, context_schema=RAGContext)
g.add_node("first", timed("first", first))
start_at(g, "first", settings=RAGContext)
'''


def test_langgraphs_node_forms_type_check_under_the_helpers(tmp_path):
    """docs/extending.md: an async node, ``node(state, config)``, ``node(state)`` returning a
    ``Command`` are taken by ``timed``, ``start_at`` and ``starts_a_run`` at run time, and by a user's mypy
    (each was an arg-type error until 2026-11-30)."""
    prog = tmp_path / "node_forms.py"
    prog.write_text(NODE_FORMS, encoding="utf-8")
    run = _mypy("--no-error-summary", str(prog), cwd=tmp_path)
    assert run.returncode == 0 and ": error:" not in run.stdout, run.stdout + run.stderr
