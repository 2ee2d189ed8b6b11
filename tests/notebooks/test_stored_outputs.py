"""The committed notebooks carry the outputs of a run (``notebooks/make_notebooks.py --execute``),
so that GitHub and JupyterLab show the drawing, the trace and the table without running them.
These read the files only; ``test_notebooks.py`` runs the notebooks."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from notebook_kernel import NOTEBOOKS, outputs_text

NAMES = ["vanilla", "none", "crag", "dr-rag", "erm4", "migres", "comparison"]


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_carries_the_outputs_of_a_whole_clean_run(name):
    import nbformat

    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    # every code cell ran, in order, once
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), name
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.get("output_type") == "error"], name
    assert not [o for o in outputs if o.get("name") == "stderr"], name  # no warning was stored
    text = outputs_text(nb)
    assert "3 questions, 30 passages in the corpus" in text
    if name == "comparison":
        assert "| method | EM | F1 | recall | llm_calls | seconds |" in text
        assert any("image/png" in (o.get("data") or {}) for o in outputs)
    else:
        assert "```mermaid" in text and " ms  {" in text and "answer: " in text
        assert "| question | gold | answer | EM | F1 | recall |" in text
    # nothing of the machine that ran them: none of its folders, no timing metadata
    raw = json.dumps(nb)
    machine = {str(NOTEBOOKS.parent), str(Path.home()), tempfile.gettempdir(), sys.prefix, sys.base_prefix}
    assert not [d for d in machine if len(d) > 1 and d in raw], name
    assert not any("execution" in c.metadata for c in code), name
