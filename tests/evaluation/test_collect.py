"""``bench/collect.py``: the README's tables from the summaries `ragraphs eval --out` leaves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _summary(root: Path, dataset: str, label: str, **summary) -> None:
    run = root / "runs" / dataset / label
    run.mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps({"label": label, "dataset": dataset, **summary}), encoding="utf-8")


def test_the_recall_table_names_the_settings_a_run_resolved(tmp_path):
    """A DR-RAG run that left ``retrieval``, ``k`` and ``strategy`` to their defaults ran hybrid,
    cfs, k 4 (its ``provenance`` records the resolved settings): its row says so; it read 'dense',
    'default' and '-' until 2026-12-02. A summary with no provenance says 'default'."""
    resolved = {"retrieval": "hybrid", "k": 4, "strategy": "cfs"}
    _summary(tmp_path, "hotpotqa", "dr-rag", method="dr-rag", retrieval_only=True, recall=0.955, docs_avg=4.0,
             retrieval=None, k=None, strategy=None, provenance={"settings": resolved})
    _summary(tmp_path, "musique", "dr-rag-k2", method="dr-rag", retrieval_only=True, recall=0.5, docs_avg=2.0,
             retrieval="bm25", k=2, strategy="sm", provenance={"settings": resolved})
    _summary(tmp_path, "hotpotqa", "old", method="dr-rag", retrieval_only=True, recall=0.7, docs_avg=3.0)
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "collect.py"), str(tmp_path), "--recall"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    rows = [line for line in out if line.startswith("| ") and not line.startswith(("| k ", "| ---"))]
    assert rows == ["| default | default | dr-rag | - | 70.0 | 3.0 | - | - |",
                    "| 2 | bm25 | dr-rag | sm | - | - | 50.0 | 2.0 |",  # what the command set wins
                    "| 4 | hybrid | dr-rag | cfs | 95.5 | 4.0 | - | - |"]
