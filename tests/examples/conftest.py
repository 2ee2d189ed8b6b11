"""The example programs of ``examples/``, imported as modules by their tests."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def example():
    """``example("custom_method")``: that program's module, with ``examples/`` on the path
    while the test module runs."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        yield importlib.import_module
    finally:
        sys.path.remove(str(EXAMPLES))
