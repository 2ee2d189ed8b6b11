"""A user's own cross-encoder as a judge: how it is found (a folder, a cached ``org/name``),
refused (a sentence-embedding model), read (whatever its head gives: probabilities, raw logits,
two labels) and run (its own length, ``RAGRAPHS_JUDGE_THREADS``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from ragraphs.errors import ConfigError
from ragraphs.tools import judges as J
from ragraphs.tools.judges.core import load_cross_encoder

PAIRS = [("Who wrote Hamlet?", "Hamlet is a tragedy written by William Shakespeare around 1600."),
         ("Who wrote Hamlet?", "Paris is the capital and largest city of France."),
         ("Who wrote Hamlet?", "A banana is an elongated, edible fruit.")]


def _reranker(path, *, labels: int, activation: str | None, max_length: int = 512):
    """A small random BERT saved as a sentence-transformers CrossEncoder: ``labels`` outputs
    (two: ``irrelevant`` / ``relevant``, as a two-label re-ranker names them), its own
    activation (None: sentence-transformers' default) and its own maximum length."""
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertConfig, BertForSequenceClassification

    raw = path.parent / (path.name + "_hf")
    raw.mkdir()
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy2(J.weights_dir() / f, raw / f)
    torch.manual_seed(7)
    names = {0: "irrelevant", 1: "relevant"} if labels == 2 else {0: "LABEL_0"}
    cfg = BertConfig(vocab_size=30522, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, num_labels=labels, max_position_embeddings=512,
                     id2label=names, label2id={v: k for k, v in names.items()})
    model = BertForSequenceClassification(cfg).eval()
    with torch.no_grad():  # logits of a few units, as a trained head gives, not a random one's ~0
        model.classifier.weight.mul_(300.0)
    model.save_pretrained(str(raw))
    fn = {"identity": torch.nn.Identity(), None: None}[activation]
    ce = CrossEncoder(str(raw), num_labels=labels, max_length=max_length, device="cpu", local_files_only=True,
                      activation_fn=fn)
    ce.save(str(path))
    return ce


def test_raw_logits_and_two_labels_are_read_as_probabilities(tmp_path):
    """A re-ranker whose activation is Identity (raw scores, as many ship) and a two-label one
    (raw logits) score in [-1, 1] spread as their logits are, not pinned to -1 / 1 (every raw
    score under 0 read -1 until 2026-11-30, so re-ranking kept the retrieval order)."""
    ident = _reranker(tmp_path / "identity", labels=1, activation="identity")
    logits = np.asarray(ident.predict(PAIRS), dtype=np.float64).reshape(-1)
    got = J.load_judge("evaluator", str(tmp_path / "identity")).score_batch(PAIRS)
    want = 2.0 / (1.0 + np.exp(-logits)) - 1.0
    assert logits.min() < 0.0 or logits.max() > 1.0  # what was clipped to the ends
    assert np.allclose(got, want, atol=1e-5) and np.all(np.abs(got) < 1.0)

    two = _reranker(tmp_path / "two", labels=2, activation=None)
    raw = np.asarray(two.predict(PAIRS, activation_fn=__import__("torch").nn.Identity()), dtype=np.float64)
    p_relevant = np.exp(raw[:, 1]) / np.exp(raw).sum(axis=1)
    got2 = J.load_judge("evaluator", str(tmp_path / "two")).score_batch(PAIRS)
    assert raw.min() < 0.0 or raw.max() > 1.0
    assert np.allclose(got2, 2.0 * p_relevant - 1.0, atol=1e-5)


def test_a_two_label_model_exported_to_onnx_is_read_as_the_torch_judge_reads_it(tmp_path):
    """Review of 2026-12-01: the ONNX predictor took the last logit through a sigmoid, the torch
    judge a softmax at the relevant label; a user's two-label re-ranker exported to the ONNX layout
    scored other values than the same model in torch. Now both read P(relevant) one way."""
    from ragraphs.tools.judges.onnx import OnnxCrossEncoder, export_fp32, positive_label

    folder = tmp_path / "two"
    _reranker(folder, labels=2, activation=None)
    (folder / "onnx").mkdir()
    export_fp32(folder, folder / "onnx" / "model.onnx")
    torch_p = J.core.probabilities(load_cross_encoder(str(folder), backend="torch")[0], PAIRS)
    onnx = OnnxCrossEncoder(folder, file_name="onnx/model.onnx", threads=1)
    onnx_p = J.core.probabilities(onnx, PAIRS)
    assert onnx.id2label == {"0": "irrelevant", "1": "relevant"}
    assert np.allclose(onnx_p, torch_p, atol=1e-4)
    last = np.array([onnx._logits(onnx.session, f)[-1] for f in onnx.feeds(PAIRS)])
    assert not np.allclose(1.0 / (1.0 + np.exp(-last)), torch_p, atol=1e-2)  # the old reading
    # the label rule: the relevant / entailment label wherever it stands, else the last
    assert positive_label({0: "entailment", 1: "neutral", 2: "contradiction"}, 3) == 0
    assert positive_label({0: "relevant", 1: "not_relevant"}, 2) == 0 and positive_label({}, 2) == 1


def test_a_sentence_embedding_folder_is_refused_by_name():
    """The packaged MiniLM bi-encoder given as the re-ranker loaded with a new random head and
    scored noise around the cut until 2026-11-30."""
    from ragraphs.components import Components
    from ragraphs.tools.embeddings import minilm_path

    with pytest.raises(ConfigError, match=r"is not a cross-encoder: its config\.json names BertModel"):
        J.load_judge("evaluator", minilm_path())
    with pytest.raises(ConfigError, match="is not a cross-encoder"):
        Components(judges={"evaluator": str(minilm_path())}).judge("evaluator")


def test_a_users_reranker_keeps_its_own_length(tmp_path):
    """A 512-token re-ranker read 256 tokens until 2026-11-30; ragraphs' judges keep the length
    they were trained with."""
    _reranker(tmp_path / "long", labels=1, activation=None, max_length=512)
    model, _ = load_cross_encoder(tmp_path / "long", backend="torch")
    assert model.max_length == 512
    shipped, meta = load_cross_encoder(J.weights_dir())
    assert shipped.max_length == meta["max_length"]


def test_judge_threads_come_from_the_environment(monkeypatch):
    """The judges took every core whatever was set until 2026-11-30 (``RAGRAPHS_LLM_THREADS``
    reaches the LLM only)."""
    monkeypatch.delenv("RAGRAPHS_JUDGE_THREADS", raising=False)
    every, _ = load_cross_encoder(J.weights_dir())
    monkeypatch.setenv("RAGRAPHS_JUDGE_THREADS", "1")
    one, _ = load_cross_encoder(J.weights_dir())
    assert one is not every and one._cores == 1 and one._solo is None
    assert np.allclose(one.predict(PAIRS), every.predict(PAIRS), atol=1e-6)
    for bad in ("0", "two"):
        monkeypatch.setenv("RAGRAPHS_JUDGE_THREADS", bad)
        with pytest.raises(ConfigError, match=f"RAGRAPHS_JUDGE_THREADS must be a positive integer, got '{bad}'"):
            load_cross_encoder(J.weights_dir())


def test_a_cached_org_name_loads_from_the_local_cache(tmp_path):
    """``org/name`` was refused as a missing folder until 2026-11-30, though the README offers a
    cached model name; a cached sentence-embedding model is refused as a folder of one is. A
    separate process: the cache's place is read when the hub library loads."""
    _reranker(tmp_path / "model", labels=1, activation=None)
    snap = tmp_path / "hf" / "hub" / "models--me--tiny-reranker" / "snapshots" / "0123abc"
    shutil.copytree(tmp_path / "model", snap)
    (snap.parent.parent / "refs").mkdir()
    (snap.parent.parent / "refs" / "main").write_text("0123abc", encoding="utf-8")
    from ragraphs.tools.embeddings import minilm_path

    bi = tmp_path / "hf" / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2"
    shutil.copytree(minilm_path(), bi / "snapshots" / "0123abc")
    (bi / "refs").mkdir()
    (bi / "refs" / "main").write_text("0123abc", encoding="utf-8")
    code = ("import json; from ragraphs.tools import judges as J\n"
            "from ragraphs.errors import ConfigError\n"
            "s = J.load_judge('evaluator', 'me/tiny-reranker').score_batch([('who wrote Hamlet?', 'Shakespeare')])\n"
            "said = []\n"
            "for name in ('me/not-cached', 'sentence-transformers/all-MiniLM-L6-v2'):\n"
            "    try:\n        J.load_judge('evaluator', name)\n        said.append('')\n"
            "    except ConfigError as e:\n        said.append(str(e))\n"
            "print(json.dumps({'score': float(s[0]), 'miss': said[0], 'bi': said[1]}))\n")
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert -1.0 < got["score"] < 1.0
    assert "'me/not-cached': no such folder, and no model of that name in the local Hugging Face cache" in got["miss"]
    assert "is not a cross-encoder: its config.json names BertModel" in got["bi"]  # a cached bi-encoder too


def test_judge_eval_json_names_files_without_items_on_stderr(capsys):
    from pathlib import Path

    from ragraphs.cli import main

    data = Path(__file__).resolve().parents[1] / "data"
    rc = main(["judge-eval", "--judge", "nli", "--data", str(data / "2wikimultihopqa.sample.jsonl"),
               str(data / "odqa.sample.jsonl"), "--limit", "3", "--no-timing", "--json"])
    out = capsys.readouterr()
    assert rc == 0 and json.loads(out.out)["files_without_items"] == ["odqa.sample.jsonl"]
    assert "warning: odqa.sample.jsonl: no labelled items for the nli judge; left out" in out.err


def test_with_pair_judge_swaps_the_pair_role_that_components_load(tmp_path, monkeypatch):
    """``bench/with_pair_judge.py DIR ...`` measures the pair classifier in DIR: the pair judge a
    run's ``Components`` load comes from DIR, the evaluator stays the default one. It replaced
    a name nothing read after 2026-11-29, and ran the shipped pair judge without a word."""
    import importlib.util
    from pathlib import Path

    from ragraphs.components import Components
    from ragraphs.tools.judges import core

    mine = tmp_path / "mine"
    shutil.copytree(J.weights_dir(), mine)
    meta = json.loads((mine / "ragraphs_judge.json").read_text(encoding="utf-8"))
    (mine / "ragraphs_judge.json").write_text(json.dumps({**meta, "name": "mine"}), encoding="utf-8")
    monkeypatch.setattr(core, "load_default_judge", core.load_default_judge)  # restored after the test
    monkeypatch.setattr(J, "load_default_judge", J.load_default_judge)
    script = Path(__file__).resolve().parents[2] / "bench" / "with_pair_judge.py"
    spec = importlib.util.spec_from_file_location("with_pair_judge", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.use_pair_judge(str(mine))
    c = Components()
    assert c.judge("pair").name == "mine"
    assert c.judge("evaluator").name == meta["name"] != "mine"
