"""The notebooks run top to bottom offline on the embedded defaults (executed with nbclient)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
METHOD_NOTEBOOKS = ["vanilla", "none", "crag", "dr-rag", "erm4", "migres"]


def test_one_notebook_per_method_and_a_comparison_are_up_to_date():
    sys.path.insert(0, str(NOTEBOOKS))
    try:
        import make_notebooks
    finally:
        sys.path.remove(str(NOTEBOOKS))
    from ragraphs.graphs import METHODS

    assert set(make_notebooks.METHODS) == set(METHODS) == set(METHOD_NOTEBOOKS)
    import nbformat

    for name, spec in make_notebooks.METHODS.items():
        on_disk = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        fresh = make_notebooks.method_notebook(name, spec)
        # the committed notebook is the generator's (regenerate with notebooks/make_notebooks.py)
        assert [c.source for c in on_disk.cells] == [c.source for c in fresh.cells], name
    assert (NOTEBOOKS / "comparison.ipynb").exists()


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """One kernel on this interpreter (whatever `python` is on PATH) for every notebook of the
    session, as a user's Jupyter keeps one per server: the models load once. Each notebook
    starts with ``%reset -f``, so no variable of an earlier notebook is left for it to lean on."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    base = tmp_path_factory.mktemp("notebooks")
    kdir = base / "kernels" / "ragraphs-test"
    kdir.mkdir(parents=True)
    (kdir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "ragraphs test",
                "language": "python",
            }
        )
    )
    ksm = KernelSpecManager(kernel_dirs=[str(base / "kernels")])
    km = KernelManager(kernel_name="ragraphs-test", kernel_spec_manager=ksm)
    env = {**os.environ, "RAGRAPHS_HOME": str(base / "home")}
    km.start_kernel(cwd=str(base), env=env)
    try:
        yield km
    finally:
        km.shutdown_kernel(now=True)


def _execute(name: str, km):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    run = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%reset -f"), *nb.cells], metadata=nb.metadata)
    client = NotebookClient(run, km=km, timeout=900, allow_errors=False)
    try:
        client.execute()
    finally:
        if client.kc is not None:
            client.kc.stop_channels()
    nb.cells = run.cells[1:]
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream":
                text.append(out["text"])
            for v in (out.get("data") or {}).values():
                text.append(v if isinstance(v, str) else "")
    return nb, "\n".join(text)


@pytest.mark.parametrize("name", METHOD_NOTEBOOKS)
def test_method_notebook_runs(name, kernel):
    nb, text = _execute(name, kernel)
    assert "questions, " in text and "passages in the corpus" in text
    assert "```mermaid" in text and "graph TD;" in text  # the drawing
    assert " ms  {" in text  # the traced run's node_trace lines
    assert "| question | gold | answer | EM | F1 | recall |" in text  # the evaluation table
    assert "answer: " in text


def test_comparison_notebook_runs(kernel):
    nb, text = _execute("comparison", kernel)
    assert "| method | EM | F1 | recall | llm_calls | seconds |" in text
    for m in METHOD_NOTEBOOKS:
        assert f"| {m} |" in text
    assert any("image/png" in (o.get("data") or {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
