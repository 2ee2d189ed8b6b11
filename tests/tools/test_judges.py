"""Judges: the shipped cross-encoder (ONNX int8), robustness, training end to end, CLI."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from ragraphs.errors import ConfigError, InputError
from ragraphs.tools import judges as J


@pytest.fixture(scope="module")
def shipped():
    return {name: J.load_default_judge(name) for name in J.JUDGES}


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
    # (one example, not a measurement: both the judges before and these score "Lyon is a city in
    # Brazil." about as high as "... in France."; the NLI role is measured on the dev files)
    e = nli.score_batch([(good, "Lyon is in France."), (good, "Lyon is in Spain.")])
    assert 0.0 <= e.min() and e.max() <= 1.0
    assert e[0] > e[1]
    p = pair.score_pairs([(q, good, bad)])
    assert p.shape == (1,) and 0.0 <= p[0] <= 1.0
    assert 0.0 <= pair.score_pair(q, good, good) <= 1.0
    for j in shipped.values():
        assert isinstance(j.threshold, float)
        assert 20_000_000 < j.n_params < 25_000_000  # MiniLM-L6 and a one-logit head
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
    assert J.auc_score(y, np.r_[sp, sn]) > 0.8


def test_pairs_run_side_by_side_score_as_alone(hotpot_examples):
    """Several pairs run one core each in parallel; each score equals the pair's score alone
    (all cores, one run) and with a single core."""
    from ragraphs.tools.judges.onnx import OnnxCrossEncoder

    pairs = [(ex.question, J.passage_text(p)) for ex in hotpot_examples[:3] for p in ex.paragraphs[:4]]
    model = OnnxCrossEncoder(J.weights_dir())
    together = model.predict(pairs)
    alone = np.array([model.predict([x])[0] for x in pairs])
    one_core = OnnxCrossEncoder(J.weights_dir(), threads=1).predict(pairs)
    assert together.shape == (len(pairs),) and together.dtype == np.float32
    np.testing.assert_allclose(together, alone, atol=1e-6)
    np.testing.assert_allclose(together, one_core, atol=1e-6)
    assert 0.0 < together.min() and together.max() < 1.0 and together.std() > 0.05
    assert model.predict([]).shape == (0,)


def test_batched_tokenization_gives_each_pair_its_own_ids(shipped, hotpot_examples):
    """One tokenizer call for many pairs and many triples: each gets the ids and the cut
    texts it gets alone, repeated questions and documents included."""
    from ragraphs.tools.judges.core import balanced_pair, balanced_pairs

    model = shipped["pair"].model
    tok = model.tokenizer
    ex = hotpot_examples[0]
    texts = [J.passage_text(p) for p in ex.paragraphs[:4]]
    long = texts[0] + " " + " ".join(texts) * 6  # past the model's 256 tokens
    pairs = [(ex.question, t) for t in texts] + [(ex.question, long), (long, ex.question)]
    for (a, b), feed in zip(pairs, model.feeds(pairs)):
        alone = tok(a, b, truncation="longest_first", max_length=model.max_length, return_tensors="np")
        assert set(feed) == {k for k in alone if k in model.inputs}
        for k, v in feed.items():
            np.testing.assert_array_equal(v, alone[k].astype(np.int64))
    assert len(model.feeds([(ex.question, long)])[0]["input_ids"][0]) == model.max_length
    triples = [(ex.question, d1, d2) for d1 in texts[:2] for d2 in texts + [long, ""]]
    assert balanced_pairs(tok, triples, 112) == [balanced_pair(tok, q, d1, d2, 112) for q, d1, d2 in triples]
    assert balanced_pairs(tok, [], 112) == [] and model.feeds([]) == []


def test_pair_texts_share_the_token_budget(shipped):
    """With a long d1, the model's 256 tokens end before d2 begins, so d2 cannot change the
    score; with ``max_tokens`` d1 and d2 share the room and each keeps its opening (title)."""
    from ragraphs.tools.judges.core import balanced_pair

    pair = shipped["pair"]
    tok = pair.model.tokenizer
    q = "Where was the director of The Zone born?"
    d1 = "The Zone (2017 film)\nThe Zone is a film directed by Jane Doe. " + "It was shot in a small town over a long summer. " * 40
    good = "Jane Doe\nJane Doe is a film director born in Montreal, Quebec."
    bad = "Danube\nThe Danube is the second-longest river in Europe."
    whole = pair.score_pairs([(q, d1, good), (q, d1, bad)])
    assert abs(float(whole[0]) - float(whole[1])) < 1e-6  # d2 was cut away entirely
    fitted = pair.score_pairs([(q, d1, good), (q, d1, bad)], max_tokens=112)
    assert abs(float(fitted[0]) - float(fitted[1])) > 1e-3
    first, second = balanced_pair(tok, pair.prefix + q, d1, good, 112)
    assert len(tok(first, second)["input_ids"]) <= 112
    assert second.startswith("The Zone (2017 film)") and "Jane Doe\nJane Doe is a film director" in second
    assert d1.startswith(second.split("\n[SEP]\n")[0])  # original characters, cut at a token's end
    # a short d1 leaves its share to d2; texts within the budget are read unchanged
    short = "Lyon\nLyon is a city in France."
    _, kept = balanced_pair(tok, q, short, d1, 112)
    assert kept.startswith(short + "\n[SEP]\n")
    assert balanced_pair(tok, q, short, good, 112) == (q, short + "\n[SEP]\n" + good)
    np.testing.assert_allclose(pair.score_pairs([(q, short, good)], max_tokens=112), pair.score_pairs([(q, short, good)]))
    # other judges read their texts their own way; 0 and None mean the model's max_length
    assert J.score_triples(pair, [(q, d1, good)], 0) == J.score_triples(pair, [(q, d1, good)], None)
    assert J.score_triples(pair, []) == []


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


def test_missing_and_corrupt_model_files_name_the_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        J.load_judge("evaluator", str(tmp_path / "nowhere" / "model"))
    d = tmp_path / "judge"
    shutil.copytree(J.weights_dir(), d)
    onnx = d / "onnx" / "model_qint8.onnx"
    onnx.write_bytes(b"not an onnx graph")
    with pytest.raises(ConfigError, match="model_qint8.onnx"):
        J.load_judge("evaluator", d)
    onnx.unlink()
    with pytest.raises(ConfigError, match="model_qint8.onnx"):
        J.load_judge("evaluator", d)
    shutil.copy(J.weights_dir() / "onnx" / "model_qint8.onnx", onnx)
    (d / "ragraphs_judge.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(ConfigError, match="ragraphs_judge.json"):
        J.load_judge("evaluator", d)
    (d / "ragraphs_judge.json").write_bytes((J.weights_dir() / "ragraphs_judge.json").read_bytes())
    tok = d / "tokenizer.json"
    tok.write_text("{bad", encoding="utf-8")  # blamed on the ONNX file before
    with pytest.raises(ConfigError, match="judge tokenizer could not be loaded from .*tokenizer.json"):
        J.load_judge("evaluator", d)
    tok.unlink()  # transformers built a five-token tokenizer: every word [UNK], garbage scores, no error
    with pytest.raises(ConfigError, match="judge model file missing: .*tokenizer.json"):
        J.load_judge("evaluator", d)
    with pytest.raises(ConfigError, match="unknown judge"):
        J.load_default_judge("oracle")
    with pytest.raises(ConfigError, match="unknown judge backend 'openvino'"):
        J.load_judge("evaluator", J.weights_dir(), backend="openvino")
    with pytest.raises(ConfigError, match="needs a model directory holding its ONNX file; some-cached-reranker"):
        J.load_judge("evaluator", "some-cached-reranker", backend="onnx")  # a name, not a directory


def test_a_users_cross_encoder_folder_with_a_corrupt_file_names_that_file(tmp_path):
    """A CrossEncoder folder of the user's (torch backend): cut weights or a broken config are
    named by file, not by the folder (the folder was named until 2026-11-30)."""
    from ragraphs.tools.judges.core import load_cross_encoder

    d = tmp_path / "reranker"
    d.mkdir()
    _tiny_bert(d, seed=3)
    weights = d / "model.safetensors"
    whole = weights.read_bytes()
    weights.write_bytes(whole[: len(whole) // 2])  # a download cut short
    with pytest.raises(ConfigError, match=r"could not be loaded from .*reranker[/\\]model\.safetensors"):
        load_cross_encoder(d, backend="torch")
    weights.write_bytes(whole)
    (d / "config.json").write_text("{cut", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"could not be loaded from .*reranker[/\\]config\.json"):
        load_cross_encoder(d, backend="torch")


def test_shipped_model_is_light_and_described():
    d = J.weights_dir()
    size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
    assert size < 30_000_000  # the int8 ONNX model and its tokenizer, no fp32 weights
    assert not (d / "model.safetensors").exists() and not (d / "onnx" / "model.onnx").exists()
    meta = json.loads((d / "ragraphs_judge.json").read_text())
    assert set(meta["roles"]) == set(J.JUDGES)
    assert meta["loss_curve"][-1][1] < meta["loss_curve"][0][1]  # it learned
    for role in J.JUDGES:
        assert meta["validation_int8"][role]["auc"] > 0.75


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


def test_more_negatives_per_positive_on_request(data_dir):
    """``neg_ratio`` gives that many negatives per positive; 1 is the balanced default, item for item."""
    import random

    rows = J._row_examples(str(data_dir / "hotpotqa.sample.jsonl"))
    assert J.evaluator_items(rows, random.Random(0), neg_ratio=1) == J.evaluator_items(rows, random.Random(0))
    assert J.pair_items(rows, random.Random(0), neg_ratio=1) == J.pair_items(rows, random.Random(0))
    for build in (J.evaluator_items, J.pair_items):
        items = build(rows, random.Random(0), neg_ratio=3)
        pos = sum(x.label for x in items)
        assert pos > 0 and len(items) - pos == 3 * pos
    sup = {(ex.question, J.passage_text(p)) for _r, ex in rows for p in ex.supporting}
    assert all((x.texts in sup) == bool(x.label) for x in J.evaluator_items(rows, random.Random(0), neg_ratio=3))


def test_pair_negatives_mined_from_the_second_stage(data_dir):
    """``--pair-mine-k``: each supporting paragraph brings the non-supporting paragraphs nearest
    to question + it (real MiniLM), paired with it as negatives; positives are untouched."""
    import random

    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.judges.baselines import _EmbeddingCache

    embed = _EmbeddingCache(MiniLMEmbeddings(fast=True)).encode
    rows = J._row_examples(str(data_dir / "hotpotqa.sample.jsonl"))
    exs = [ex for _r, ex in rows]
    mine = J.data._pair_miner(exs, embed, 3)
    for ex in exs[:5]:
        for d in ex.supporting:
            got = mine(ex, d)
            assert len(got) == 3 and not {p["id"] for p in got} & ex.supporting_ids
            qe = embed([f"{ex.question} {J.passage_text(d)[:1000]}"])[0]
            sims = [float(embed([J.passage_text(p)])[0] @ qe) for p in got]
            assert sims == sorted(sims, reverse=True)
    plain = J.pair_items(rows, random.Random(0), neg_ratio=2)
    mined = J.pair_items(rows, random.Random(0), neg_ratio=2, mine=mine)
    assert sum(x.label for x in mined) == sum(x.label for x in plain) > 0
    assert len(mined) == len(plain)  # still neg_ratio negatives per positive
    assert any(x.source.endswith("-mined") for x in mined)
    sup = {(ex.question, J.passage_text(p)) for ex in exs for p in ex.supporting}
    for x in mined:
        q, a, b = x.texts
        assert ((q, a) in sup and (q, b) in sup) == bool(x.label)
    assert J.build_items("pair", [str(data_dir / "hotpotqa.sample.jsonl")], embed=embed, mine_k=0) == \
        J.build_items("pair", [str(data_dir / "hotpotqa.sample.jsonl")])


def test_auc_and_metrics():
    y = np.array([1, 1, 0, 0])
    assert J.auc_score(y, np.array([0.9, 0.8, 0.1, 0.2])) == 1.0
    assert J.auc_score(y, np.array([0.5, 0.5, 0.5, 0.5])) == 0.5
    m = J.metrics_at(y, np.array([0.9, 0.3, 0.6, 0.1]), 0.5)
    assert m["accuracy"] == 0.5 and m["precision"] == 0.5 and m["recall"] == 0.5


# ---------------------------------------------------------------- training end to end
@pytest.mark.slow
def test_train_tiny_model_end_to_end(tmp_path, data_dir, monkeypatch, capsys):
    """The real trainer on a few real questions, then ONNX int8 export and loading."""
    from ragraphs.cli import main

    out = tmp_path / "j"
    rc = main(["train-judge", "--data", str(data_dir / "hotpotqa.sample.jsonl"), str(data_dir / "2wikimultihopqa.sample.jsonl"),
               "--out", str(out), "--limit", "6", "--max-length", "96", "--batch-size", "8", "--val-fraction", "0.3", "--neg-ratio", "2",
               "--seed", "1", "--json"])
    assert rc == 0
    said, err = capsys.readouterr()
    assert json.loads(said)["roles"] and "'loss'" not in err  # --json is quiet: the trainer's dicts were on stderr until 2026-12-03
    assert (out / "onnx" / "model_qint8.onnx").is_file() and not (out / "model.safetensors").exists()
    meta = json.loads((out / "ragraphs_judge.json").read_text())
    assert meta["train_items"] > 20 and meta["loss_curve"] and set(meta["thresholds"]) == set(J.JUDGES)
    for role in J.JUDGES:  # int8 agrees with fp32 on the held-out items
        assert meta["validation_int8"][role]["max_abs_diff_vs_fp32"] < 0.1
    # trained again into the same folder and stopped while the new judge is written: the judge
    # there stays whole (its files were deleted first, and a half-written one left, until 2026-12-03)
    import ragraphs.tools.judges.train as T

    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def stopped(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(T, "quantize_and_check", stopped)
        assert 130 == main(["train-judge", "--data", str(data_dir / "hotpotqa.sample.jsonl"),
                            str(data_dir / "2wikimultihopqa.sample.jsonl"), "--out", str(out), "--limit", "6",
              "--max-length", "64", "--batch-size", "8", "--val-fraction", "0.3", "--epochs", "0.2", "--json"])
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j"]  # nothing half-written beside it
    judge = J.load_judge("pair", out)
    s = judge.score_pairs([("q", "a", "b"), ("q", "c", "d")])
    assert s.shape == (2,) and np.all((0 <= s) & (s <= 1))
    rc = main(["judge-eval", "--judge", "evaluator", "--weights", str(out), "--data", str(data_dir / "musique.sample.jsonl"),
               "--limit", "4", "--baseline", "--no-timing", "--json"])
    assert rc == 0
    # a four-layer student of that judge (int8 only, so its weights are dequantized first): soft labels
    student = tmp_path / "s"
    rc = main(["train-judge", "--data", str(data_dir / "hotpotqa.sample.jsonl"), str(data_dir / "2wikimultihopqa.sample.jsonl"),
               "--out", str(student), "--limit", "6",
               "--max-length", "96", "--batch-size", "8", "--val-fraction", "0.3", "--seed", "1", "--json",
               "--teachers", str(out), "--temperature", "2", "--layers", "4"])
    assert rc == 0
    smeta = json.loads((student / "ragraphs_judge.json").read_text())
    assert smeta["config"]["teachers"] == [str(out)] and smeta["config"]["layers"] == 4
    assert smeta["n_params"] < meta["n_params"] - 3_000_000  # two of six layers gone (1.8 M parameters each)
    assert J.load_judge("evaluator", student).score_batch([("q", "a passage")]).shape == (1,)


def test_soft_labels_are_the_teachers_mean_logit_softened():
    """Distillation labels: sigmoid(mean logit / T), so T = 1 doubles T = 2's log-odds; the
    shipped judge (int8 only: dequantized) as both teachers keeps its own ranking."""
    from ragraphs.tools.judges.train import soft_labels

    pairs = [("relevance: who wrote Hamlet?", "Hamlet is a tragedy written by William Shakespeare around 1600."),
             ("relevance: who wrote Hamlet?", "Paris is the capital and largest city of France.")]
    teachers = [str(J.weights_dir())] * 2
    s1, s2 = soft_labels(teachers, pairs, 1.0), soft_labels(teachers, pairs, 2.0)
    assert np.all((0 < s2) & (s2 < 1)) and s2[0] > 0.5 > s2[1]
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    assert np.allclose(logit(s1), 2 * logit(s2), atol=1e-4)
    with pytest.raises(InputError, match="temperature"):
        soft_labels(teachers, pairs, 0.0)


def test_shipped_int8_weights_restore_to_a_trainable_model(tmp_path):
    """Only the int8 file ships; dequantized, it is a transformers model that scores as it does
    (within int8's error), so `train-judge --init` can continue from the shipped judges."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from ragraphs.tools.judges.onnx import OnnxCrossEncoder, int8_state_dict, restore_fp32

    src = J.weights_dir()
    state = int8_state_dict(src / "onnx" / "model_qint8.onnx")
    assert state["bert.encoder.layer.5.attention.self.query.weight"].shape == (384, 384)
    assert state["bert.encoder.layer.0.intermediate.dense.weight"].shape == (1536, 384)
    assert state["classifier.weight"].shape == (1, 384)
    out = restore_fp32(src, tmp_path / "fp32")
    model = AutoModelForSequenceClassification.from_pretrained(str(out), local_files_only=True).eval()
    tok = AutoTokenizer.from_pretrained(str(out), local_files_only=True)
    pairs = [("relevance: who wrote Hamlet?", "Hamlet is a tragedy written by William Shakespeare around 1600."),
             ("relevance: who wrote Hamlet?", "Paris is the capital and largest city of France."),
             ("entailment: Paris is in France.", "Paris is the capital and largest city of France."),
             ("entailment: Paris is in Spain.", "Paris is the capital and largest city of France.")]
    with torch.no_grad():
        fp32 = torch.sigmoid(model(**tok([a for a, _ in pairs], [b for _, b in pairs], padding=True,
                                         return_tensors="pt")).logits.reshape(-1)).numpy()
    int8 = OnnxCrossEncoder(src).predict(pairs)
    assert np.abs(fp32 - int8).max() < 0.15
    assert fp32[0] > fp32[1] and fp32[2] > fp32[3]
    with pytest.raises(FileNotFoundError, match="model_qint8.onnx"):
        restore_fp32(tmp_path / "nothing", tmp_path / "x")


def _tiny_bert(path, seed: int):
    """A random two-layer BERT classifier saved in ``path`` with the shipped tokenizer's files."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy2(J.weights_dir() / f, path / f)
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=30522, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, num_labels=1, max_position_embeddings=512)
    model = BertForSequenceClassification(cfg).eval()
    model.save_pretrained(str(path))
    return model


def test_export_int8_keeps_the_graph_fused_and_the_scores(tmp_path):
    """The export reads attention eagerly: no sdpa mask residue (IsNaN / Where) in the layers for
    onnxruntime to run on every pair, no offline-fused skip layer norm, every matrix product
    int8 with 7-bit weights, and the int8 scores follow the torch model's. The shipped file was
    written this way."""
    import onnx
    import torch
    from transformers import AutoTokenizer

    from ragraphs.tools.judges.onnx import INT8_FILE, OnnxCrossEncoder, export_int8

    src = J.weights_dir()
    model = _tiny_bert(tmp_path, seed=0)
    assert export_int8(tmp_path) == INT8_FILE
    for f in (tmp_path / INT8_FILE, src / INT8_FILE):
        graph = onnx.load(str(f)).graph
        nodes = graph.node
        in_layers = [n.name for n in nodes if "/encoder/" in n.name and n.op_type in ("IsNaN", "Where")]
        assert not in_layers, (f, in_layers[:3])  # (the mask is built once, outside the layers)
        ops = {n.op_type for n in nodes}
        # int8 matrix products; residual and layer norm left for onnxruntime (its offline-fused
        # SkipLayerNormalization was the slower kernel), bias + GELU fused
        assert {"MatMulInteger", "LayerNormalization", "BiasGelu"} <= ops and "SkipLayerNormalization" not in ops, f
        # 7-bit weights: an AVX2 CPU without VNNI adds two uint8 x int8 products in 16 bits,
        # which full-range weights overflow; within [-64, 64] every CPU computes the same scores
        init = {i.name: i for i in graph.initializer}
        weights = [onnx.numpy_helper.to_array(init[n.input[1]]) for n in nodes if n.op_type == "MatMulInteger"]
        assert weights and all(w.dtype == np.int8 and w.min() >= -64 and w.max() <= 64 for w in weights), f
    pairs = [("who wrote Hamlet?", "Hamlet is a tragedy written by William Shakespeare."),
             ("who wrote Hamlet?", "Paris is the capital of France."),
             ("a question " * 3, "a long passage " * 80)]
    tok = AutoTokenizer.from_pretrained(str(tmp_path))
    with torch.no_grad():
        ref = [torch.sigmoid(model(**tok(a, b, truncation=True, max_length=256, return_tensors="pt")).logits).item()
               for a, b in pairs]
    got = OnnxCrossEncoder(tmp_path).predict(pairs)
    assert np.abs(np.asarray(ref) - got).max() < 0.05


def test_last_layer_computes_the_first_position_only(tmp_path):
    """The classifier reads the first position only, so the export's last layer computes
    nothing else: the same logits as the whole model on a padded batch, fewer products in the
    graph, and every weight still under its own name in the int8 file (restore_fp32 reads them)."""
    import onnx
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    from ragraphs.tools.judges.onnx import INT8_FILE, export_int8, first_token_last_layer, int8_state_dict

    whole = _tiny_bert(tmp_path, seed=1)
    cut = BertForSequenceClassification.from_pretrained(str(tmp_path), attn_implementation="eager").eval()
    first_token_last_layer(cut)
    tok = AutoTokenizer.from_pretrained(str(tmp_path))
    batch = tok(["who wrote Hamlet?", "a question " * 3], ["Hamlet is a tragedy.", "a long passage " * 40],
                padding=True, truncation=True, max_length=256, return_tensors="pt")
    assert batch["attention_mask"][0].sum() < batch["attention_mask"][1].sum()  # the first pair is padded
    with torch.no_grad():
        assert torch.allclose(whole(**batch).logits, cut(**batch).logits, atol=1e-5)
    export_int8(tmp_path)
    model = onnx.load(str(tmp_path / INT8_FILE))
    products = [n for n in model.graph.node if n.op_type == "MatMul"]  # query x key, weights x value
    assert len(products) == 4  # two per layer, the last one's over the first position
    restored = int8_state_dict(tmp_path / INT8_FILE)
    linear = {k for k, v in whole.state_dict().items() if k.endswith(".weight") and v.dim() == 2}
    assert linear <= set(restored)
    assert np.abs(restored["bert.encoder.layer.1.attention.self.query.weight"]
                  - whole.state_dict()["bert.encoder.layer.1.attention.self.query.weight"].numpy()).max() < 0.05


def test_layers_of_different_feed_forward_widths_load_export_and_restore(tmp_path):
    """A judge cut narrower for speed may keep one layer's feed-forward whole (its config names
    each layer's width): it loads as a transformers model and as a CrossEncoder, exports to
    int8 with the same scores, and the weights of its int8 file fit the same widths again
    (``restore_fp32``'s path; the shipped file's own restore is tested above)."""
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    from ragraphs.tools.judges.onnx import INT8_FILE, OnnxCrossEncoder, export_int8, int8_state_dict
    from ragraphs.tools.judges.widths import ffn_widths, fit_ffn_widths, load_classifier, load_cross_encoder

    model = _tiny_bert(tmp_path, seed=2)
    assert ffn_widths(tmp_path) is None  # every layer as wide as the config says
    layer = model.bert.encoder.layer[0]
    narrow_in, narrow_out = torch.nn.Linear(64, 32), torch.nn.Linear(32, 64)
    with torch.no_grad():
        narrow_in.weight.copy_(layer.intermediate.dense.weight[:32])
        narrow_in.bias.copy_(layer.intermediate.dense.bias[:32])
        narrow_out.weight.copy_(layer.output.dense.weight[:, :32])
        narrow_out.bias.copy_(layer.output.dense.bias)
    layer.intermediate.dense, layer.output.dense = narrow_in, narrow_out
    model.config.intermediate_size, model.config.ffn_widths = 32, [32, 128]
    model.save_pretrained(str(tmp_path))
    assert ffn_widths(tmp_path) == [32, 128]
    tok = AutoTokenizer.from_pretrained(str(tmp_path))
    pairs = [("who wrote Hamlet?", "Hamlet is a tragedy written by William Shakespeare."),
             ("who wrote Hamlet?", "Paris is the capital of France.")]
    batch = tok([a for a, _ in pairs], [b for _, b in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        ref = torch.sigmoid(model(**batch).logits.reshape(-1)).numpy()
        loaded = load_classifier(tmp_path, local_files_only=True).eval()
        assert [l.intermediate.dense.out_features for l in loaded.bert.encoder.layer] == [32, 128]
        assert np.allclose(torch.sigmoid(loaded(**batch).logits.reshape(-1)).numpy(), ref, atol=1e-6)
    ce = load_cross_encoder(tmp_path, num_labels=1, device="cpu", local_files_only=True)
    assert np.allclose(ce.predict(pairs, show_progress_bar=False), ref, atol=1e-5)
    export_int8(tmp_path)
    assert np.abs(OnnxCrossEncoder(tmp_path).predict(pairs) - ref).max() < 0.05
    # restore_fp32's path: a model of the config, fitted to the int8 file's weights
    state = {k: torch.from_numpy(v) for k, v in int8_state_dict(tmp_path / INT8_FILE).items()}
    fresh = AutoModelForSequenceClassification.from_config(AutoConfig.from_pretrained(str(tmp_path)))
    fit_ffn_widths(fresh, state)
    assert [l.output.dense.weight.shape for l in fresh.bert.encoder.layer] == [(64, 32), (64, 128)]
    assert fresh.config.ffn_widths == [32, 128]
    with pytest.raises(ValueError, match="layer.1.intermediate"):  # weights of another depth
        fit_ffn_widths(fresh, {k: v for k, v in state.items() if "layer.1." not in k})


def test_cli_eval_shipped_judge_against_cosine(data_dir, capsys):
    from ragraphs.cli import main

    rc = main(["judge-eval", "--judge", "evaluator", "--data", str(data_dir / "hotpotqa.sample.jsonl"),
               "--json", "--baseline", "--limit", "10"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    for key in ("accuracy", "auc", "ms_per_pair", "baseline"):
        assert key in res
    assert res["n"] > 20 and res["auc"] > res["baseline"]["auc"]
    assert res["weights"] == "shipped"  # which judge was read (every train-judge folder has one name)


def test_cli_errors_are_one_line(tmp_path, capsys):
    from ragraphs.cli import main

    rc = main(["judge-eval", "--judge", "nli", "--data", str(tmp_path / "nope.jsonl")])
    err = capsys.readouterr().err
    assert rc != 0 and "no such data file" in err and len(err.strip().splitlines()) == 1
    rc = main(["judge-eval", "--judge", "nli", "--weights", str(tmp_path), "--data", __file__])
    err = capsys.readouterr().err
    assert rc != 0 and "config.json" in err and len(err.strip().splitlines()) == 1


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


@pytest.mark.parametrize("missing", ["datasets", "onnx"])
def test_training_without_the_training_extras_names_them(tmp_path, data_dir, monkeypatch, missing):
    """``train-judge`` on an install without ``[train]`` (``datasets`` or ``onnx`` missing): one line
    naming ``ragraphs[train]`` (a raw traceback until 2026-11-30; without ``onnx``, after the whole
    training, at the export, until 2026-12-03)."""
    import sys

    from ragraphs.tools.judges.train import train_judges

    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(ConfigError, match=r"training a judge needs the training extras .*ragraphs\[train\]"):
        train_judges([str(data_dir / "hotpotqa.sample.jsonl")], tmp_path / "out")


# ---------------------------------------------------------------- the commands' refusals
def test_a_judge_folder_serves_only_the_roles_it_was_trained_for(tmp_path):
    """A folder ``train-judge --judge evaluator`` wrote, asked for NLI: refused, naming the
    roles it holds (it scored as an untrained NLI judge until 2026-11-30)."""
    one = tmp_path / "evaluator-only"
    shutil.copytree(J.weights_dir(), one)
    meta = json.loads((one / "ragraphs_judge.json").read_text())
    (one / "ragraphs_judge.json").write_text(json.dumps({**meta, "roles": ["evaluator"]}))
    assert J.load_judge("evaluator", one).score_batch([("Who?", "Paris")]).shape == (1,)
    with pytest.raises(ConfigError, match=r"holds judges for evaluator, not for 'nli'"):
        J.load_judge("nli", one)


def test_train_judge_refuses_before_the_work(tmp_path, data_dir, capsys):
    """Each refused in one line before any training: a role the files hold no labels for (saved
    untrained with NaN metrics until 2026-11-30), a data path with '@' in a folder name (refused
    as missing), an --init folder that holds no judge (a traceback after the items were built),
    --layers beyond --init's layers (refused after the teachers had run)."""
    from ragraphs.cli import main

    at = tmp_path / "data@v2"
    at.mkdir()
    shutil.copy(data_dir / "popqa.sample.jsonl", at / "popqa.sample.jsonl")
    out = tmp_path / "j"
    rc = main(["train-judge", "--judge", "nli", "--data", str(at / "popqa.sample.jsonl"), "--out", str(out), "--limit", "4"])
    err = capsys.readouterr().err
    assert rc == 2 and "no labelled items for the nli judge" in err and "no such data file" not in err
    assert not (out / "ragraphs_judge.json").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    data = str(data_dir / "hotpotqa.sample.jsonl")
    rc = main(["train-judge", "--data", data, "--out", str(out), "--init", str(empty)])
    err = capsys.readouterr().err
    assert rc == 2 and "holds no judge: no config.json" in err and len(err.strip().splitlines()) == 1
    rc = main(["train-judge", "--data", data, "--out", str(out), "--init", str(J.weights_dir()), "--layers", "9"])
    err = capsys.readouterr().err
    assert rc == 2 and "--layers keeps the first N of the --init model's 6 layers, got 9" in err
    for opt, value, needle in (("--lr", "nan", "--lr a finite number, got nan"), ("--lr", "inf", "got inf"),
                               ("--temperature", "nan", "--temperature must be a finite number > 0, got nan")):
        rc = main(["train-judge", "--data", data, "--out", str(out), opt, value])  # nan: a traceback until 2026-12-01
        err = capsys.readouterr().err
        assert rc == 2 and needle in err and "Traceback" not in err, err
    # a teacher without a tokenizer (every word [UNK], one label for all) or with a damaged ONNX file
    # (a traceback after the items were built), both until 2026-12-01
    bad = tmp_path / "teacher"
    shutil.copytree(J.weights_dir(), bad)
    for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        (bad / f).unlink(missing_ok=True)
    rc = main(["train-judge", "--data", data, "--out", str(out), "--teachers", str(bad)])
    err = capsys.readouterr().err
    assert rc == 2 and f"--teachers: {bad} holds no tokenizer" in err, err
    shutil.copy(J.weights_dir() / "tokenizer.json", bad / "tokenizer.json")
    (bad / "onnx" / "model_qint8.onnx").write_bytes(b"not an onnx graph")
    rc = main(["train-judge", "--data", data, "--out", str(out), "--teachers", str(bad)])
    err = capsys.readouterr().err
    assert rc == 2 and "model_qint8.onnx cannot be read" in err and len(err.strip().splitlines()) == 1, err
    # numbers out of range and an option that changes nothing: refused before the work (until 2026-12-03
    # a traceback after the items were built, a judge that failed on texts past 512 tokens, or ignored)
    (tmp_path / "afile").write_text("x")
    evaluator_only = tmp_path / "evaluator-only"
    shutil.copytree(J.weights_dir(), evaluator_only)
    meta = json.loads((evaluator_only / "ragraphs_judge.json").read_text())
    (evaluator_only / "ragraphs_judge.json").write_text(json.dumps({**meta, "roles": ["evaluator"]}))
    for extra, needle in ((["--epochs", "nan"], "--epochs must be a finite number > 0, got nan"),
                          (["--epochs", "inf"], "--epochs must be a finite number > 0, got inf"),
                          (["--seed", "-5"], "--seed must be from 0 to 2**32 - 1, got -5"),
                          (["--max-length", "2048"], "--max-length must be from 16 to the model's 512 positions, got 2048"),
                          (["--temperature", "3"], "without --teachers it would change nothing"),
                          (["--out", str(tmp_path / "afile" / "j")], "afile is a file, not a folder"),
                          (["--judge", "evaluator", "pair", "--teachers", str(evaluator_only)],
                           f"--teachers: {evaluator_only} holds no judge for pair (trained for evaluator)")):
        rc = main(["train-judge", "--data", data, "--out", str(out), *extra])
        err = capsys.readouterr().err
        assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1, (extra, err)
    # a folder as --data: said so (it was "no such data file"), by calibrate-crag too
    rc = main(["calibrate-crag", "--data", str(tmp_path)])
    assert rc == 2 and "is a folder; give a data file" in capsys.readouterr().err
    for verb in ("train-judge", "judge-eval"):
        rc = main([verb, "--judge", "evaluator", "--data", str(tmp_path), *(["--out", str(out)] if verb == "train-judge" else [])])
        err = capsys.readouterr().err
        assert rc == 2 and "is a folder; give a data file" in err, err
    assert not (out / "ragraphs_judge.json").exists()


def test_train_judge_refuses_a_role_whose_validation_holds_one_class(tmp_path, data_dir, capsys):
    """Too few questions: the held-out items of a role are all of one label, and its cut cannot be
    fitted (saved as 0.5 with NaN metrics, exit 0, until 2026-12-01)."""
    from ragraphs.cli import main

    out = tmp_path / "j"
    rc = main(["train-judge", "--judge", "evaluator", "--data", str(data_dir / "hotpotqa.sample.jsonl"), "--limit", "6",
               "--mine-k", "0", "--val-fraction", "0.01", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "its cut cannot be fitted" in err and "--val-fraction" in err, err
    assert not (out / "ragraphs_judge.json").exists()


def test_a_cross_encoder_folder_without_a_tokenizer_is_refused(tmp_path):
    """A plain CrossEncoder folder (the torch backend) without its tokenizer loaded a tokenizer of
    a few tokens: every word [UNK] and one score for every pair, no error, until 2026-12-01."""
    from ragraphs.tools.judges.train import torch_weights

    plain = torch_weights(J.weights_dir(), tmp_path / "fp32")
    for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (plain / f).unlink(missing_ok=True)
    with pytest.raises(ConfigError, match=r"judge model file missing: .*tokenizer.json \(the folder holds no tokenizer"):
        J.load_judge("evaluator", plain, backend="torch")


def test_judge_eval_refuses_options_its_model_does_not_read(data_dir, capsys):
    from ragraphs.cli import main

    data = str(data_dir / "hotpotqa.sample.jsonl")
    for extra, needle in ((["--model", "cosine", "--baseline"], "--model cosine is that floor"),
                          (["--model", "cosine", "--weights", str(J.weights_dir())], "--weights is for --model trained"),
                          (["--llm", "openai:gpt-4o"], "--llm is for --model llm"),
                          (["--threshold", "nan"], "--threshold must be a finite number, got nan"),
                          # off the judge's scale: every item negative, exit 0, until 2026-12-03
                          (["--threshold", "5"], "--threshold for the evaluator judge is on its scale, from -1 to 1; got 5"),
                          (["--judge", "pair", "--threshold", "-0.5"], "for the pair judge is on its scale, from 0 to 1")):
        rc = main(["judge-eval", "--judge", "evaluator", "--data", data, "--limit", "2", *extra])
        err = capsys.readouterr().err
        assert rc == 2 and needle in err, err


def test_judge_eval_prints_the_best_threshold_and_its_accuracy(data_dir, capsys):
    from ragraphs.cli import main

    data = str(data_dir / "hotpotqa.sample.jsonl")
    assert main(["judge-eval", "--judge", "evaluator", "--data", data, "--limit", "4", "--no-timing", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert main(["judge-eval", "--judge", "evaluator", "--data", data, "--limit", "4", "--no-timing"]) == 0
    text = capsys.readouterr().out
    assert f"at the best threshold on these items, {res['best_threshold']:.3f}: {res['best_threshold_accuracy']:.3f}" in text
    assert "evaluator judge (ragraphs-minilm-cross-encoder, shipped)" in text


def test_calibrate_crag_refuses_a_negative_alpha(data_dir, capsys):
    from ragraphs.cli import main

    rc = main(["calibrate-crag", "--data", str(data_dir / "popqa.sample.jsonl"), "--alpha", "-5"])
    err = capsys.readouterr().err
    assert rc == 2 and "--alpha weighs the false positives: a number >= 0, got -5.0" in err


def test_the_warmup_share_reaches_either_transformers_as_a_share():
    """transformers 5 reads ``warmup_steps`` 0.1 as a share; transformers 4 as 0.1 steps (no
    warm-up), so there the share goes as ``warmup_ratio`` (the train extra allows either)."""
    import transformers

    from ragraphs.tools.judges.train import _warmup

    assert _warmup(0.1, "5.24.0") == {"warmup_steps": 0.1}
    assert _warmup(0.1, "4.57.1") == {"warmup_ratio": 0.1}
    assert _warmup(0.1) == _warmup(0.1, transformers.__version__)  # the installed one's


def test_a_trained_judges_metadata_keeps_the_versions_and_each_training_files_sha256(tmp_path, data_dir):
    """``ragraphs_judge.json`` kept only the training files' basenames: an edited file, or one
    trained by other library versions, read the same (until 2026-11-30). The builder that
    ``train_judges`` puts into it now adds the versions and each file's sha256 (a part
    ``FILE@K/N`` by its file's)."""
    import hashlib
    import shutil

    from ragraphs.tools.judges.train import training_provenance

    data = tmp_path / "hotpotqa.jsonl"
    shutil.copy(data_dir / "hotpotqa.sample.jsonl", data)
    sha = hashlib.sha256(data.read_bytes()).hexdigest()
    meta = training_provenance([f"{data}@0/2", str(data_dir / "popqa.sample.jsonl")])
    assert meta["train_file_sha256"][f"{data}@0/2"] == sha
    assert meta["train_file_sha256"][str(data_dir / "popqa.sample.jsonl")] == hashlib.sha256(
        (data_dir / "popqa.sample.jsonl").read_bytes()).hexdigest()
    assert {"ragraphs", "torch", "transformers", "sentence-transformers"} <= set(meta["versions"])
    data.write_text(data.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # edited: another hash
    assert training_provenance([str(data)])["train_file_sha256"][str(data)] != sha
    # two files of one name, keyed by the path as typed: both kept (by the basename, one was lost)
    (tmp_path / "b").mkdir()
    other = tmp_path / "b" / "hotpotqa.jsonl"
    shutil.copy(data_dir / "hotpotqa.sample.jsonl", other)
    both = training_provenance([str(data), str(other)])["train_file_sha256"]
    assert both == {str(data): hashlib.sha256(data.read_bytes()).hexdigest(), str(other): sha}


def test_judge_files_say_the_rows_they_leave_out(tmp_path, data_dir, capsys):
    """A broken line and a row with a question but no answer: ``judge-eval`` says each on stderr, as
    ``eval`` does, and measures the rest (both were dropped without a word until 2026-12-03)."""
    from ragraphs.cli import main

    rows = (data_dir / "hotpotqa.sample.jsonl").read_text().splitlines()[:3]
    bad = tmp_path / "mixed.jsonl"
    bad.write_text("\n".join([rows[0], "{not json", json.dumps({"question": "only a question"}), rows[1], rows[2]]) + "\n")
    assert main(["judge-eval", "--judge", "evaluator", "--data", str(bad), "--no-timing", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["n"] > 0
    assert f"{bad}:2: skipped broken line" in err
    assert f'{bad}: row 2 has a "question" but no "answer"' in err and err.count("only") == 0
