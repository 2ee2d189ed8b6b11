"""A method of one's own from ragraphs' parts (examples/custom_method.py, docs/extending.md)."""

from __future__ import annotations

import pytest

from ragraphs.errors import ConfigError


@pytest.fixture(scope="module")
def method(example):
    return example("custom_method")


def test_the_new_settings_are_checked_like_the_packages(method):
    assert method.FilteredContext().keep_above is None
    with pytest.raises(ConfigError, match="keep_above"):
        method.FilteredContext(keep_above="high")


def test_the_graph_has_the_new_node_and_its_routes(method):
    from ragraphs.components import Components

    g = method.build_filtered_graph(Components())  # nothing is loaded until a run needs it
    nodes = set(g.get_graph().nodes)
    assert {"retrieve", "judge_filter", "generate", "answer_alone"} <= nodes
    edges = {(e.source, e.target) for e in g.get_graph().edges}
    assert ("judge_filter", "generate") in edges and ("judge_filter", "answer_alone") in edges


@pytest.mark.slow
def test_the_real_judge_keeps_or_drops_and_the_route_follows(method, gemma, minilm):
    from ragraphs.components import Components

    store = method.sample_store(minilm, n_questions=5)
    graph = method.build_filtered_graph(Components(llm=gemma, embeddings=minilm, vectorstore=store))
    q = "Steven Covey, the father of Sean Covey, wrote what similar sounding title to The 7 Habits of Highly Effective Teens?"
    ctx = dict(max_new_tokens=16)

    out = graph.invoke({"question": q}, context=method.FilteredContext(**ctx))
    steps = [s["node"] for s in out["trace"]]
    assert steps == ["start", "retrieve", "judge_filter", "generate"]
    judged = out["trace"][2]
    assert len(judged["scores"]) == 4  # the k = 4 retrieved passages, each scored
    kept = [s for s in judged["scores"] if s > judged["cut"]]
    assert judged["kept"] == len(kept) == len(out["passages"]) >= 1
    assert "7 Habits" in " ".join(p["title"] for p in out["passages"])
    assert out["answer"] and out["llm_calls"] == 1

    # a cut nothing passes: no passage reaches the LLM, which answers alone
    none = graph.invoke({"question": q}, context=method.FilteredContext(keep_above=1.0, **ctx))
    assert [s["node"] for s in none["trace"]] == ["start", "retrieve", "judge_filter", "answer_alone"]
    assert none["passages"] == [] and none["llm_calls"] == 1
    assert none["trace"][2]["scores"] == judged["scores"]  # the same judge, the same scores


@pytest.mark.slow
def test_the_program_answers_with_and_without_passages(method, capsys):
    """``python examples/custom_method.py QUESTION [--keep-above 1.0]`` as its docstring runs it:
    the answer on stdout, the nodes and the passages kept on stderr."""
    q = "Steven Covey, the father of Sean Covey, wrote what similar sounding title to The 7 Habits of Highly Effective Teens?"
    assert method.main([q]) == 0
    out, err = capsys.readouterr()
    assert out.strip()
    assert [line.split()[0] for line in err.splitlines()[:4]] == ["start", "retrieve", "judge_filter", "generate"]
    assert "passages kept: [" in err and "7 Habits" in err
    assert method.main([q, "--keep-above", "1.0"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() and "answer_alone" in err and "passages kept: []" in err


def test_an_empty_question_is_refused_before_the_models_load(method, capsys):
    """``python examples/custom_method.py ""``: a usage error at once (a traceback after 27 s of
    loading models until 2026-12-03)."""
    with pytest.raises(SystemExit) as e:
        method.main(["  "])
    assert e.value.code == 2 and "the question is empty" in capsys.readouterr().err
