"""The package's layers: imports flow one way, command line -> graphs -> nodes -> the rest.

docs/architecture.md states the rule; this test is what checks it in every checkout. Each
module's imports of ``ragraphs`` modules are read from its source (absolute and relative, at
module level or inside a function), and no module may import one of a higher layer.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ragraphs"

# Highest first. The package's own __init__ re-exports the base layer's Components only, so it
# sits with the base layer: a graph re-exported there would make every `from ragraphs import`
# of a lower module an upward import, which is what this test is for.
ENTRY, GRAPHS, NODES, BASE = 3, 2, 1, 0
LAYER_NAMES = {ENTRY: "command line / evaluation", GRAPHS: "graphs",
               NODES: "nodes", BASE: "state, tools, settings, prompts, ..."}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return BASE
    first = parts[1]
    if first in ("cli", "evaluation", "__main__"):
        return ENTRY
    return {"graphs": GRAPHS, "nodes": NODES}.get(first, BASE)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The package modules ``path`` imports, each resolved to the longest module name that exists
    (``from ragraphs.tools import llm`` names ``ragraphs.tools.llm``)."""
    here = module_name(path)
    package = here.split(".") if path.name == "__init__.py" else here.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            names = [target] + [f"{target}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != here and name.split(".")[0] == "ragraphs":
                found.add(name)
    return found


@functools.cache
def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    known = set(paths)
    return {name: imported_modules(path, known) for name, path in paths.items()}


def test_the_layers_are_what_the_architecture_doc_names():
    assert layer("ragraphs.cli.ask") == ENTRY
    assert layer("ragraphs.evaluation.runner") == ENTRY
    assert layer("ragraphs.graphs.crag") == GRAPHS
    assert layer("ragraphs.nodes.crag") == NODES
    for name in ("ragraphs.state.crag", "ragraphs.tools.llm", "ragraphs.settings", "ragraphs.prompts"):
        assert layer(name) == BASE
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "a node never imports a graph module" in doc


def test_the_reader_sees_relative_and_absolute_imports():
    graph = import_graph()
    # graphs/crag.py imports its nodes; nodes/crag.py imports tools; cli imports graphs
    assert any(m.startswith("ragraphs.nodes") for m in graph["ragraphs.graphs.crag"])
    assert any(m.startswith("ragraphs.tools") for m in graph["ragraphs.nodes.crag"])
    assert any(m.startswith("ragraphs.graphs") for m in graph["ragraphs.cli.ask"])


def test_no_module_imports_a_higher_layer():
    graph = import_graph()
    upward = [
        f"{module} ({LAYER_NAMES[layer(module)]}) imports {m} ({LAYER_NAMES[layer(m)]})"
        for module in sorted(graph) for m in sorted(graph[module]) if layer(m) > layer(module)
    ]
    assert len(graph) > 80  # every module was read
    assert not upward, "\n".join(upward)


def test_no_import_cycles_between_modules():
    graph = import_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for nxt in sorted(graph.get(module, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_module_is_over_450_lines():
    """A module past this size holds more than one concern: split it (docs/architecture.md)."""
    long = {module_name(p): n for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, long


def test_every_name_the_bench_scripts_and_examples_import_from_the_package_exists():
    """A bench script or an example that imports a name the package no longer has fails only
    when someone runs it (``bench/migres_reader_replay.py`` imported a pattern moved to
    ``nodes/migres_parsing.py``, until 2026-11-30); this reads their imports and looks each up."""
    import importlib

    root = PACKAGE.parent
    missing = []
    for path in sorted([*root.glob("bench/*.py"), *root.glob("examples/*.py"), *root.glob("notebooks/*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ragraphs"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if not hasattr(module, alias.name):
                        try:
                            importlib.import_module(f"{node.module}.{alias.name}")
                        except ImportError:
                            missing.append(f"{path.relative_to(root)}: {node.module}.{alias.name}")
    assert not missing, missing


def test_the_graphs_load_without_the_measuring_libraries():
    """A user's app or a LangGraph server loading the graphs pays for no scikit-learn, SciPy or
    pandas: the judges' metrics import them when they measure (ERM4's and MIGRES's graphs
    pulled in all three, about 900 modules and 2 s, until 2026-11-30)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import ragraphs.graphs.crag, ragraphs.graphs.dr_rag, ragraphs.graphs.erm4, ragraphs.graphs.migres\n"
            "import ragraphs.tools.judges\n"
            "print(sorted(m for m in ('sklearn', 'scipy', 'pandas', 'torch') if m in sys.modules))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
