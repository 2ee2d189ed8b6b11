"""The notebooks run top to bottom offline on the embedded defaults (executed with nbclient in
one kernel, started with the session: ``tests/notebook_kernel.py``)."""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.slow

from notebook_kernel import NOTEBOOKS
from ragraphs.graphs import METHODS

# one notebook per method the package registers (a method added to METHODS needs its entry in
# notebooks/make_notebooks.py and its committed notebook: docs/extending.md)
METHOD_NOTEBOOKS = list(METHODS)


def test_one_notebook_per_method_and_a_comparison_are_up_to_date():
    sys.path.insert(0, str(NOTEBOOKS))
    try:
        import make_notebooks
    finally:
        sys.path.remove(str(NOTEBOOKS))
    assert {"vanilla", "none", "crag", "dr-rag", "erm4", "migres"} <= set(METHODS)
    assert set(make_notebooks.METHODS) == set(METHODS)
    import nbformat

    for name, spec in make_notebooks.METHODS.items():
        on_disk = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        fresh = make_notebooks.method_notebook(name, spec)
        # the committed notebook is the generator's (regenerate with notebooks/make_notebooks.py)
        assert [c.source for c in on_disk.cells] == [c.source for c in fresh.cells], name
    on_disk = nbformat.read(NOTEBOOKS / "comparison.ipynb", as_version=4)
    assert [c.source for c in on_disk.cells] == [c.source for c in make_notebooks.comparison_notebook().cells]


@pytest.mark.parametrize("name", METHOD_NOTEBOOKS)
def test_method_notebook_runs(name, notebook_runs):
    nb, text = notebook_runs.result(name)
    assert "questions, " in text and "passages in the corpus" in text
    assert "```mermaid" in text and "graph TD;" in text  # the drawing
    assert " ms  {" in text  # the traced run's node_trace lines
    assert "| question | gold | answer | EM | F1 | recall |" in text  # the evaluation table
    assert "answer: " in text
    # no warning reaches the notebook (transformers' tqdm.auto import warns in a kernel without ipywidgets)
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("name") == "stderr"], name


def test_comparison_notebook_runs(notebook_runs):
    nb, text = notebook_runs.result("comparison")
    assert "| method | EM | F1 | recall | llm_calls | seconds |" in text
    for m in METHOD_NOTEBOOKS:
        assert f"| {m} |" in text
    assert any("image/png" in (o.get("data") or {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
