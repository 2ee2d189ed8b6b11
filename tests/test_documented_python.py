"""Every Python block in the README, the docs and the bench result notes is valid Python, and
each name it imports from ragraphs exists (the API the docs show is the API that ships)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re

import pytest

from conftest import DOC_FILES, ROOT


def _blocks() -> list:
    found = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text[: m.start()].count("\n") + 1
            found.append(pytest.param(m.group(1), id=f"{path.relative_to(ROOT)}:{line}"))
    return found


BLOCKS = _blocks()


def test_the_docs_hold_python_to_check():
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("code", BLOCKS)
def test_a_documented_python_block_is_valid_and_imports_what_exists(code):
    tree = ast.parse(code)  # a SyntaxError fails the test with the line
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ragraphs":
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name) or importlib.util.find_spec(f"{node.module}.{alias.name}"), (
                    f"{node.module} has no {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "ragraphs":
                    importlib.import_module(alias.name)
