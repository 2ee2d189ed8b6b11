"""Fit the cuts the methods read by default (``judge.threshold``) on the dev files as a whole.

For each role, the n-weighted mean of each multi-hop dev file's best-accuracy cut (HotpotQA,
2Wiki, MuSiQue; PopQA is left to CRAG's own calibration) from the ``judge-eval --json``
results in RESULTS_DIR. The cuts fitted during training (on held-out questions of the
training files) are kept under ``thresholds_validation``.

Usage: python bench/judges_fit_cuts.py RESULTS_DIR JUDGES_DIR/ragraphs_judge.json [--dry-run]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MULTIHOP = ("hotpotqa", "2wikimultihopqa", "musique")


def fit(results_dir: Path) -> dict[str, float]:
    cuts: dict[str, float] = {}
    for role in ("evaluator", "pair", "nli"):
        got = []
        for name in MULTIHOP:
            f = results_dir / f"{role}.{name}.json"
            if f.is_file():
                r = json.loads(f.read_text(encoding="utf-8"))
                got.append((r["n"], r["best_threshold"]))
        if got:
            # on each judge's own scale (the evaluator's is [-1, 1], as the methods read it)
            cuts[role] = round(sum(n * t for n, t in got) / sum(n for n, _ in got), 4)
    return cuts


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    cuts = fit(Path(argv[0]))
    print(json.dumps(cuts))
    if "--dry-run" in argv:
        return 0
    meta_path = Path(argv[1])
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if "thresholds_validation" not in meta:
        meta["thresholds_validation"] = dict(meta["thresholds"])
    meta["thresholds"] = {**meta["thresholds"], **cuts}
    meta["thresholds_note"] = ("defaults read by the methods: the n-weighted mean of each dev file's best-accuracy cut "
                               "(HotpotQA, 2Wiki, MuSiQue dev; bench/judges_fit_cuts.py); thresholds_validation: "
                               "fitted on held-out questions of the training files")
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
