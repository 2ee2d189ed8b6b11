"""The README's pictures of the graphs are LangGraph's own drawings of the compiled graphs."""

from __future__ import annotations

import re

from ragraphs.graphs import method_names
from ragraphs.graphs.draw import README, mermaid, redraw


def test_every_method_has_a_picture_in_the_readme():
    text = README.read_text(encoding="utf-8")
    missing = [m for m in method_names() if f"<!-- graph:{m} -->\n```mermaid\n" not in text]
    assert not missing, f"README.md has no picture for {missing}; add a block and run python -m ragraphs.graphs.draw"


def test_readme_pictures_match_the_compiled_graphs():
    text = README.read_text(encoding="utf-8")
    assert redraw(text) == text, "README.md's graph pictures are out of date: run python -m ragraphs.graphs.draw"


def test_a_picture_shows_the_graph_nodes_and_named_routes():
    crag = mermaid("crag")
    nodes = set(re.findall(r"^\t(\w+)\(\1\)$", crag, re.M))
    assert nodes == {"start", "retrieve", "rerank", "evaluate", "refine", "rewrite", "web_search", "refine_web", "generate"}
    # conditional edges are dotted and carry their route's name
    assert "evaluate -. &nbsp;incorrect&nbsp; .-> rewrite;" in crag
    assert "main_judge -. &nbsp;guard&nbsp; .-> final_answer;" in mermaid("migres")
    # routes that share a target are all named on its edge (LangGraph's drawing names one: CRAG's
    # Correct and DR-RAG's qdc were on no picture until 2026-12-03)
    assert "evaluate -. &nbsp;correct / ambiguous&nbsp; .-> refine;" in crag
    assert "second_stage -. &nbsp;qdc / cis&nbsp; .-> qdc_select;" in mermaid("dr-rag")


def test_redraw_replaces_only_the_marked_blocks():
    stale = "intro\n<!-- graph:vanilla -->\n```mermaid\nold\n```\n<!-- /graph:vanilla -->\noutro\n<!-- graph:nope -->x<!-- /graph:nope -->"
    new = redraw(stale)
    assert new.startswith("intro\n<!-- graph:vanilla -->\n```mermaid\n") and "__start__ --> start;" in new and "start --> retrieve;" in new and "generate --> __end__;" in new
    assert new.endswith("\noutro\n<!-- graph:nope -->x<!-- /graph:nope -->") and "old" not in new


def test_the_redraw_outside_a_checkout_is_one_error_line(tmp_path, capsys):
    """``python -m ragraphs.graphs.draw`` where no README stands (an installed wheel): argparse's
    error naming the file and ``--readme`` (a ``FileNotFoundError`` traceback until 2026-12-03)."""
    import pytest

    from ragraphs.graphs.draw import main

    with pytest.raises(SystemExit) as e:
        main(["--readme", str(tmp_path / "README.md"), "--check"])
    assert e.value.code == 2 and "run it in a checkout of ragraphs, or give --readme FILE" in capsys.readouterr().err
