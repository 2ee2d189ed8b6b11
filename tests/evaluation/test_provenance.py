"""What a results folder records of where its answers came from, and the resumes it refuses:
the sha256 of the data, ``--pool`` and ``--web`` files and of a judge folder's
``ragraphs_judge.json`` (guarded), the ``provenance`` block (informational)."""

import hashlib
import json
import os
import shutil

import pytest

from fakes import ConstJudge, HashEmbeddings
from ragraphs.cli import main
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.errors import ConfigError
from ragraphs.evaluation.runner import RunSpec, run_spec
from ragraphs.tools.judges import weights_dir
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.tools.vectorstore import InMemoryCorpus


def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _edit_first_gold(path: str) -> None:
    """The file's first question with another gold answer (the same path, the same ids)."""
    lines = open(path, encoding="utf-8").read().splitlines()
    row = json.loads(lines[0])
    row["answer"] = "something else entirely"
    lines[0] = json.dumps(row)
    open(path, "w", encoding="utf-8").write("\n".join(lines) + "\n")


def test_a_resume_over_an_edited_data_or_pool_file_is_refused(tmp_path, data_dir, capsys):
    """The records hold scores against the file's gold: a file edited at the same path was
    resumed over, its old records kept against the old gold (until 2026-11-30 only the path
    was compared). ``config.json`` records each file's sha256; a folder without them resumes."""
    data = str(tmp_path / "hotpotqa.jsonl")
    pool = str(tmp_path / "pool.jsonl")
    shutil.copy(data_dir / "hotpotqa.sample.jsonl", data)
    shutil.copy(data_dir / "musique.sample.jsonl", pool)
    out = str(tmp_path / "out")
    argv = ["eval", "--method", "vanilla", "--data", data, "--pool", pool, "--limit", "2", "--llm", "fake:yes",
            "--out", out, "--quiet", "--json"]
    assert main(argv) == 0
    capsys.readouterr()
    run = os.path.join(out, "runs", "hotpotqa", RunSpec("vanilla", llm="fake:yes").label)
    cfg = json.load(open(os.path.join(run, "config.json")))
    assert cfg["data_sha256"] == {os.path.abspath(data): _sha(data), os.path.abspath(pool): _sha(pool)}
    assert main(argv) == 0  # the same files: resumes
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["resumed"] == 2

    _edit_first_gold(data)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"holds results of another version of {os.path.abspath(data)} (its sha256 differs" in err
    assert "use another --out or --fresh" in err
    assert main(argv + ["--fresh"]) == 0  # starts over, against the new gold
    capsys.readouterr()
    _edit_first_gold(pool)  # a pooled file's passages are what the questions retrieve from
    open(pool, "a", encoding="utf-8").write(open(str(data_dir / "musique.sample.jsonl"), encoding="utf-8").readline())
    assert main(argv) == 2
    assert f"another version of {os.path.abspath(pool)}" in capsys.readouterr().err
    # a folder written before the hashes were recorded resumes as before
    cfg = json.load(open(os.path.join(run, "config.json")))
    cfg.pop("data_sha256")
    json.dump(cfg, open(os.path.join(run, "config.json"), "w"))
    assert main(argv) == 0


def test_config_and_summary_record_the_runs_provenance(tmp_path, data_dir, monkeypatch):
    """``config.json`` and ``summary.json`` say which versions, model file, judges, settings and
    thread counts made the answers; the summary's other keys stay as they were."""
    monkeypatch.setenv("RAGRAPHS_LLM_THREADS", "1")
    monkeypatch.setenv("RAGRAPHS_LLM_CONTEXTS", "2")
    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR", raising=False)
    hotpot = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=InMemoryCorpus(pooled_passages(hotpot), embeddings=HashEmbeddings(256, "strip")))
    out = str(tmp_path / "run")
    summary, _ = run_spec(RunSpec("vanilla", k=2), hotpot[:1], comps, out_dir=out, progress=False)
    cfg = json.load(open(os.path.join(out, "config.json")))
    saved = json.load(open(os.path.join(out, "summary.json")))
    for prov in (cfg["provenance"], saved["provenance"], summary["provenance"]):
        assert prov["versions"]["ragraphs"] and prov["versions"]["langgraph"] and prov["versions"]["langchain-core"]
        assert prov["settings"]["k"] == 2 and prov["settings"]["llm"] == "gemma" and "rerank" in prov["settings"]
        assert prov["llm"]["file"] == "gemma-3-270m-q4_k_m.gguf" and prov["llm"]["bytes"] > 100_000_000
        assert prov["environment"]["RAGRAPHS_LLM_THREADS"] == "1" and prov["environment"]["RAGRAPHS_LLM_CONTEXTS"] == "2"
        shipped = prov["judges"]["shipped"]
        assert shipped["roles"] == ["evaluator", "pair", "nli"] and shipped["name"]
        assert shipped["sha256"] == _sha(weights_dir() / "ragraphs_judge.json")
    assert cfg["judge_sha256"] == {}  # guarded only where the run loads a judge: vanilla without rerank=evaluator loads none
    assert {"method", "label", "n", "em", "f1", "acc", "recall", "errors", "resumed", "corpus_passages"} <= set(saved)


def test_a_resume_with_an_edited_judge_folder_is_refused(tmp_path, data_dir, monkeypatch):
    """A copy of a judge folder edited in place (other thresholds) is another judge under the
    same ``RAGRAPHS_JUDGES_DIR``: the sha256 of its ``ragraphs_judge.json`` is guarded; versions
    and thread counts are not (a resume under another ``RAGRAPHS_LLM_THREADS`` goes on)."""
    judges = tmp_path / "judges"
    judges.mkdir()
    shutil.copy(weights_dir() / "ragraphs_judge.json", judges / "ragraphs_judge.json")
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", str(judges))
    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    monkeypatch.setenv("RAGRAPHS_WEB", "none")
    hotpot = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=InMemoryCorpus(pooled_passages(hotpot), embeddings=HashEmbeddings(256, "strip")),
                       judges={"evaluator": ConstJudge(0.9)})
    out = str(tmp_path / "run")
    spec = RunSpec("crag", k=2)
    run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)
    monkeypatch.setenv("RAGRAPHS_LLM_THREADS", "3")  # informational only
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["resumed"] == 1
    old = _sha(judges / "ragraphs_judge.json")
    meta = json.loads((judges / "ragraphs_judge.json").read_text(encoding="utf-8"))
    meta["thresholds"] = {**(meta.get("thresholds") or {}), "evaluator": 0.5}
    (judges / "ragraphs_judge.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ConfigError, match=f"holds answers of judges with another ragraphs_judge.json "
                                          f"\\(sha256 RAGRAPHS_JUDGES_DIR={old[:12]}, not RAGRAPHS_JUDGES_DIR="):
        run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, resume=False, progress=False)[0]["resumed"] == 0


def test_a_calibrate_crag_report_records_every_argument_and_the_judge_file(tmp_path, data_dir, capsys, monkeypatch):
    """``calibrate-crag --out``: the report lacked ``--alpha``, ``--retrieval``, ``--limit``,
    ``--lower``, ``--dataset`` and the bootstrap count, and named the judge by its ``name``,
    which every ``train-judge`` output shares (until 2026-11-30); it now keeps every argument,
    the judge's folder and the sha256 of its ``ragraphs_judge.json``."""
    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR", raising=False)
    out = tmp_path / "cal.json"
    data = str(data_dir / "popqa.sample.jsonl")
    argv = ["calibrate-crag", "--data", data, "--dataset", "popqa", "--limit", "6", "--retrieval", "bm25", "--alpha", "0.5",
            "--lower", "rule", "--misses", "withheld", "--bootstrap", "7", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    report = json.loads(out.read_text(encoding="utf-8"))
    args = report["args"]
    assert (args["data"], args["dataset"], args["limit"], args["retrieval"], args["alpha"], args["lower"],
            args["bootstrap"], args["k"], args["unit"], args["judge"]) == (data, "popqa", 6, "bm25", 0.5, "rule", 7, 4,
                                                                          "question", "default")
    assert "func" not in args
    src = report["judge_source"]
    assert src["variable"] == "shipped" and src["folder"] == os.path.abspath(str(weights_dir()))
    assert src["sha256"] == _sha(weights_dir() / "ragraphs_judge.json") and "evaluator" in src["roles"]
    assert report["versions"]["ragraphs"]
