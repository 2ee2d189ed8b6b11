"""bench/rescore.py: stored answers scored again with the current metrics, in place."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _eval_folder(tmp_path: Path) -> Path:
    """An `eval --out` folder with one run whose scores were written by an older metric."""
    run = tmp_path / "out" / "runs" / "2wikimultihopqa" / "erm4"
    run.mkdir(parents=True)
    stale = {"id": "a", "gold": ["Breaking Dawn \u2013 Part 2"], "prediction": "Breaking Dawn - Part 2",
             "em": 0.0, "f1": 0.8, "acc": 0.0}
    kept = {"id": "b", "gold": ["no"], "prediction": "No.", "em": 1.0, "f1": 1.0, "acc": 1.0}
    unscored = {"id": "c", "gold": ["x"], "prediction": "x"}  # a copy that keeps no scores stays so
    lines = [json.dumps(stale) + "\n", json.dumps(kept, indent=None, separators=(",", ":")) + "\n",
             "{cut by a cra\n", json.dumps(unscored) + "\n"]
    (run / "results.jsonl").write_text("".join(lines), encoding="utf-8")
    summary = {"label": "erm4", "dataset": "2wikimultihopqa", "n": 3, "em": 0.3333, "f1": 0.6, "acc": 0.3333}
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    other = {"label": "vanilla", "dataset": "2wikimultihopqa", "n": 3, "em": 0.0, "f1": 0.0, "acc": 0.0}
    (tmp_path / "out" / "summary.json").write_text(json.dumps([other, summary]), encoding="utf-8")
    return tmp_path / "out"


def _rescore(*args: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "rescore.py"), *args], capture_output=True,
                          text=True, cwd=ROOT, check=True)
    return done.stdout


def test_rescore_updates_records_and_both_summaries(tmp_path):
    out = _eval_folder(tmp_path)
    run = out / "runs" / "2wikimultihopqa" / "erm4"
    before = (run / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)

    printed = _rescore(str(tmp_path), "--dry-run")
    assert "1 record(s) changed" in printed and "em 0.0 -> 1.0" in printed
    assert (run / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True) == before  # dry run

    _rescore(str(tmp_path))
    after = (run / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(after[0])
    assert (first["em"], first["f1"], first["acc"]) == (1.0, 1.0, 1.0)
    assert after[1:] == before[1:]  # unchanged records, a cut line and an unscored copy keep their bytes
    run_summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert (run_summary["em"], run_summary["acc"]) == (1.0, 1.0)  # the mean over the scored records, as eval's
    runs = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert runs[1]["em"] == 1.0 and runs[0]["em"] == 0.0  # only the same run's entry

    assert "0 record(s) changed" in _rescore(str(tmp_path))  # a second pass finds nothing


def test_rescore_leaves_a_summary_that_covers_other_questions(tmp_path):
    out = _eval_folder(tmp_path)
    run = out / "runs" / "2wikimultihopqa" / "erm4"
    (run / "summary.json").write_text(json.dumps({"label": "erm4", "n": 30, "em": 0.1}), encoding="utf-8")
    printed = _rescore(str(tmp_path))
    assert "left as it was: it covers 30 questions, the file 3" in printed
    assert json.loads((run / "summary.json").read_text(encoding="utf-8"))["em"] == 0.1
