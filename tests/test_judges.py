"""Compact judges: shipped weights, robustness, training end to end, CLI."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from ragraphs.errors import ConfigError
from ragraphs.tools import judges as J


@pytest.fixture(scope="module")
def enc(minilm):
    return minilm


@pytest.fixture(scope="module")
def shipped(enc):
    return {name: J.load_default_judge(name, embeddings=enc) for name in J.JUDGES}


# ---------------------------------------------------------------- interface and ranges
def test_shipped_judges_interface_and_ranges(shipped):
    ev, nli, pair = shipped["evaluator"], shipped["nli"], shipped["pair"]
    q = "In what country is the city of Lyon?"
    good = "Lyon\nLyon is the third-largest city of France, at the confluence of the Rhone and the Saone."
    bad = "Danube\nThe Danube is the second-longest river in Europe, flowing through Vienna and Budapest."
    s = ev.score_batch([(q, good), (q, bad)])
    assert s.shape == (2,) and s.dtype == np.float32
    assert -1.0 <= s.min() and s.max() <= 1.0
    assert s[0] > s[1]
    assert abs(ev.score(q, good) - float(s[0])) < 1e-5
    # nli: premise (passage) first, hypothesis second
    e = nli.score_batch([(good, "Lyon is a city in France."), (good, "Lyon is a city in Brazil.")])
    assert 0.0 <= e.min() and e.max() <= 1.0
    assert e[0] > e[1]
    p = pair.score_pairs([(q, good, bad)])
    assert p.shape == (1,) and 0.0 <= p[0] <= 1.0
    assert 0.0 <= pair.score_pair(q, good, good) <= 1.0
    for j in shipped.values():
        assert isinstance(j.threshold, float)
        assert j.n_params < 25_000_000
    assert ev.score_batch([]).shape == (0,)
    assert pair.score_pairs([]).shape == (0,)


def test_shipped_evaluator_separates_real_pairs(shipped, hotpot_examples):
    """Supporting paragraphs of real HotpotQA questions outscore their distractors on average."""
    ev = shipped["evaluator"]
    pos, neg = [], []
    for ex in hotpot_examples[:8]:
        for p in ex.paragraphs:
            (pos if p["meta"]["supporting"] else neg).append((ex.question, J.passage_text(p)))
    sp, sn = ev.score_batch(pos), ev.score_batch(neg)
    y = np.r_[np.ones(len(sp)), np.zeros(len(sn))]
    assert J.auc_score(y, np.r_[sp, sn]) > 0.75


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "passage",
    ["", "   ", "x" * 50_000, ("Lyon est une ville de France. " * 2000), "東京は日本の首都です。", "\x00\x01 ??? \u202e", None],
)
def test_bad_input_gives_a_score(shipped, passage):
    q = "What is the capital of Japan?"
    s = shipped["evaluator"].score(q, passage)
    assert np.isfinite(s) and -1.0 <= s <= 1.0
    e = shipped["nli"].score(passage, "Tokyo is the capital of Japan.")
    assert np.isfinite(e) and 0.0 <= e <= 1.0
    e2 = shipped["nli"].score("Tokyo is the capital of Japan.", passage)
    assert np.isfinite(e2)
    p = shipped["pair"].score_pair(q, passage, "Tokyo\nTokyo is the capital of Japan.")
    assert np.isfinite(p) and 0.0 <= p <= 1.0
    assert np.isfinite(shipped["evaluator"].score("", passage))


def test_missing_and_corrupt_weights_name_the_file(tmp_path, enc):
    with pytest.raises(ConfigError, match=str(tmp_path / "evaluator.npz")):
        J.load_judge("evaluator", tmp_path, embeddings=enc)
    src = J.weights_dir()
    for ext in (".npz", ".json"):
        shutil.copy(src / f"evaluator{ext}", tmp_path / f"evaluator{ext}")
    (tmp_path / "evaluator.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(ConfigError, match="corrupt.*evaluator.npz"):
        J.load_judge("evaluator", tmp_path, embeddings=enc)
    shutil.copy(src / "evaluator.npz", tmp_path / "evaluator.npz")
    (tmp_path / "evaluator.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(ConfigError, match="evaluator.json"):
        J.load_judge("evaluator", tmp_path, embeddings=enc)
    with pytest.raises(ConfigError, match="unknown judge"):
        J.load_default_judge("oracle")


def test_weights_are_small():
    for name in J.JUDGES:
        f = J.weights_dir() / f"{name}.npz"
        assert f.stat().st_size < 3_000_000
        meta = json.loads(f.with_suffix(".json").read_text())
        assert meta["judge"] == name and meta["feature_version"] == J.FEATURE_VERSION


# ---------------------------------------------------------------- data and metrics
def test_pairs_come_from_labels_and_are_balanced(data_dir):
    import random

    rows = J._row_examples(str(data_dir / "hotpotqa.sample.jsonl"))
    items = J.evaluator_items(rows, random.Random(0))
    labels = [x.label for x in items]
    assert labels.count(1) == labels.count(0) > 0
    sup = {(ex.question, J.passage_text(p)) for _r, ex in rows for p in ex.supporting}
    assert all((x.texts in sup) == bool(x.label) for x in items)
    pairs = J.pair_items(rows, random.Random(0))
    assert sum(x.label for x in pairs) * 2 == len(pairs)
    for x in pairs:
        q, a, b = x.texts
        both = (q, a) in sup and (q, b) in sup
        assert both == bool(x.label)
    nli = J.nli_items(J._row_examples(str(data_dir / "2wikimultihopqa.sample.jsonl")), random.Random(0))
    assert nli and sum(x.label for x in nli) * 2 == len(nli)
    assert all(x.texts[0].startswith("The ") for x in nli if x.label)


def test_auc_and_metrics():
    y = np.array([1, 1, 0, 0])
    assert J.auc_score(y, np.array([0.9, 0.8, 0.1, 0.2])) == 1.0
    assert J.auc_score(y, np.array([0.5, 0.5, 0.5, 0.5])) == 0.5
    m = J.metrics_at(y, np.array([0.9, 0.3, 0.6, 0.1]), 0.5)
    assert m["accuracy"] == 0.5 and m["precision"] == 0.5 and m["recall"] == 0.5


# ---------------------------------------------------------------- training end to end
def test_train_tiny_judge_beats_chance_on_held_apart_pairs(tmp_path, data_dir, enc):
    cfg = J.TrainConfig(hidden=8, epochs=120, seed=3)
    meta = J.train_judge("evaluator", [str(data_dir / "hotpotqa.sample.jsonl")], tmp_path, cfg=cfg, embeddings=enc)
    assert (tmp_path / "evaluator.npz").is_file() and meta["n_params"] > 0
    judge = J.load_judge("evaluator", tmp_path, embeddings=enc)
    # held apart: another dataset's questions, never seen in training
    res = J.evaluate_judge("evaluator", judge, [str(data_dir / "2wikimultihopqa.sample.jsonl")], timing=False)
    assert res["n"] >= 40
    assert res["auc"] > 0.7
    assert res["accuracy"] > 0.6


def test_training_is_deterministic():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 12)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    cfg = J.TrainConfig(hidden=4, epochs=300, lr=1e-2, seed=7)
    h1, _ = J.fit_head(x[:150], y[:150], cfg, x[150:], y[150:])
    h2, _ = J.fit_head(x[:150], y[:150], cfg, x[150:], y[150:])
    for k, v in h1.arrays().items():
        assert np.array_equal(v, h2.arrays()[k])
    assert J.auc_score(y[150:], h1.prob(x[150:])) > 0.85


# ---------------------------------------------------------------- CLI
def test_cli_train_and_eval(tmp_path, data_dir, capsys):
    from ragraphs.cli import main

    out = tmp_path / "w"
    rc = main(["train-judge", "--judge", "pair", "--data", str(data_dir / "hotpotqa.sample.jsonl"),
               str(data_dir / "2wikimultihopqa.sample.jsonl"), "--out", str(out), "--epochs", "60", "--hidden", "4", "--limit", "10", "--json"])
    assert rc == 0
    meta = json.loads(capsys.readouterr().out)
    assert meta["judge"] == "pair" and (out / "pair.npz").is_file()
    rc = main(["judge-eval", "--judge", "pair", "--weights", str(out), "--data", str(data_dir / "musique.sample.jsonl"),
               "--json", "--no-timing", "--baseline", "--limit", "8"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert 0.0 <= res["accuracy"] <= 1.0 and res["n"] > 0 and "baseline" in res


def test_cli_errors_are_one_line(tmp_path, capsys):
    from ragraphs.cli import main

    rc = main(["judge-eval", "--judge", "nli", "--data", str(tmp_path / "nope.jsonl")])
    err = capsys.readouterr().err
    assert rc != 0 and "no such data file" in err and len(err.strip().splitlines()) == 1
    rc = main(["judge-eval", "--judge", "nli", "--weights", str(tmp_path), "--data", __file__])
    err = capsys.readouterr().err
    assert rc != 0 and "nli.npz" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- LLM-prompted judge
def test_llm_judge_maps_answers_to_ranges():
    from ragraphs.tools.llm import FakeAnswerChat

    ev = J.LLMJudge(FakeAnswerChat(responses=[" Yes", "no", "maybe"]), "evaluator")
    assert list(ev.score_batch([("q", "d")] * 3)) == [1.0, -1.0, 0.0]
    nli = J.LLMJudge(FakeAnswerChat(responses=["entailment", "neutral"]), "nli")
    assert list(nli.score_batch([("p", "h")] * 2)) == [1.0, 0.0]
    pair = J.LLMJudge(FakeAnswerChat(responses=["yes"]), "pair")
    assert pair.score_pair("q", "a", "b") == 1.0 and pair.calls == 1
    assert "exact information to answer the question" in ev.llm.prompts[0]
