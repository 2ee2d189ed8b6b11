"""``ragraphs eval`` end to end on the real stack: Gemma 3 270M GGUF and MiniLM, real questions."""

import json
import os

import pytest

from ragraphs.cli import main

pytestmark = pytest.mark.slow


def test_eval_two_methods_on_real_questions(tmp_path, data_dir, capsys):
    out = tmp_path / "out"
    argv = [
        "eval", "--compare", "none,vanilla", "--dataset", "popqa", "--data", str(data_dir / "popqa.sample.jsonl"),
        "--limit", "2", "--k", "2", "--out", str(out), "--json", "--quiet",
    ]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert res["dataset"] == "popqa" and res["n"] == 2
    runs = {r["method"]: r for r in res["runs"]}
    assert set(runs) == {"none", "vanilla"}
    for r in runs.values():
        assert r["n"] == 2 and r["errors"] == 0
        assert r["llm_calls_avg"] == 1.0 and r["input_tokens_avg"] > 20
        for key in ("em", "f1", "acc"):
            assert 0.0 <= r[key] <= 1.0
        assert r["latency_s_avg"] > 0
        # the time outside the nodes (LangGraph's own work) is reported, a share of the wall time
        # (how small it is is a benchmark's business: `ragraphs eval` reports it per run)
        assert 0.0 <= r["overhead_pct"] < 100.0 and r["overhead_s_avg"] >= 0.0
    v, n = runs["vanilla"], runs["none"]
    assert v["docs_avg"] == 2 and set(v["node_s_avg"]) == {"start", "retrieve", "generate"}
    assert n["docs_avg"] == 0 and n["recall"] == 0.0 and set(n["node_s_avg"]) == {"start", "generate"}
    # MiniLM over the pooled PopQA pages finds at least one gold page of the two questions
    assert v["recall"] >= 0.25
    assert v["input_tokens_avg"] > n["input_tokens_avg"] + 100  # the passages are in the prompt
    recs = [json.loads(line) for line in open(out / "runs" / "popqa" / "vanilla-k2" / "results.jsonl")]
    assert len(recs) == 2
    for r in recs:
        assert isinstance(r["prediction"], str) and r["prediction"].strip()
        assert len(r["passages"]) == 2 and all(p["text"] for p in r["passages"])
        assert r["gold"] and r["node_s"]["generate"] > 0
    # the pooled corpus's vectors were cached for the next evaluation of this file
    cache = os.path.join(os.environ["RAGRAPHS_HOME"], "eval-cache")
    assert any(f.endswith(".npy") for f in os.listdir(cache))
    assert (out / "report.md").exists() and (out / "plots" / "node_times.png").exists()
    # the report compares each run with vanilla question by question
    report = (out / "report.md").read_text()
    assert "## Against vanilla-k2, question by question" in report
    section = report.split("## Against vanilla-k2, question by question", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith("| none-k2 | 2 | "))
    assert row.count("[") == 4  # EM, F1, acc and recall, each with its interval
    assert "*" not in row  # two questions settle nothing
    # and draws it: each run's differences with their intervals beside a line at 0
    assert "![Against the reference, question by question](plots/paired.png)" in report
    assert (out / "plots" / "paired.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
