"""``ragraphs --version``: the versions a bug report needs, from one source."""

from __future__ import annotations

from importlib import metadata

import pytest

import ragraphs
from ragraphs.cli import main
from ragraphs.cli.main import REPORTED


def test_version_prints_ragraphs_python_and_each_library_a_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"ragraphs {ragraphs.__version__}"
    assert lines[1].startswith("  python 3.")
    assert lines[2:] == [f"  {dist} {metadata.version(dist)}" for dist in REPORTED]


def test_the_installed_version_is_the_packages_own():
    # pyproject.toml reads it from ragraphs.__version__ (dynamic), so the two cannot drift
    assert metadata.version("ragraphs") == ragraphs.__version__
