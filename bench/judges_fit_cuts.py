"""Fit the cuts the methods read by default (``judge.threshold``) on the dev files as a whole.

For each role, the n-weighted mean of each multi-hop dev file's best-accuracy cut (HotpotQA,
2Wiki, MuSiQue; PopQA is left to CRAG's own calibration) from the ``judge-eval --json``
results in RESULTS_DIR. The cuts fitted during training (on held-out questions of the
training files) are kept under ``thresholds_validation``.

A judge that trained on the dev files themselves gets cross-fitted cuts instead: the rows of
judges of the same recipe, each trained with one half of the dev files and read on the other
(``--crossfit``: every RESULTS_DIR's rows pooled, n-weighted); the cuts fitted on its own dev
scores, which it trained on, are kept under ``thresholds_dev_in_sample``.

Usage: python bench/judges_fit_cuts.py RESULTS_DIR JUDGES_DIR/ragraphs_judge.json [--dry-run]
       python bench/judges_fit_cuts.py --crossfit RESULTS_DIR [RESULTS_DIR ...] JUDGES_DIR/ragraphs_judge.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MULTIHOP = ("hotpotqa", "2wikimultihopqa", "musique")


def fit(*results_dirs: Path) -> dict[str, float]:
    cuts: dict[str, float] = {}
    for role in ("evaluator", "pair", "nli"):
        got = []
        for results_dir, name in ((d, n) for d in results_dirs for n in MULTIHOP):
            f = results_dir / f"{role}.{name}.json"
            if f.is_file():
                r = json.loads(f.read_text(encoding="utf-8"))
                got.append((r["n"], r["best_threshold"]))
        if got:
            # on each judge's own scale (the evaluator's is [-1, 1], as the methods read it)
            cuts[role] = round(sum(n * t for n, t in got) / sum(n for n, _ in got), 4)
    return cuts


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--crossfit":
        return _crossfit([a for a in argv[1:] if a != "--dry-run"], "--dry-run" in argv)
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
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


def _crossfit(args: list[str], dry_run: bool) -> int:
    if len(args) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    cuts = fit(*(Path(a) for a in args[:-1]))
    print(json.dumps(cuts))
    if dry_run:
        return 0
    meta_path = Path(args[-1])
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    # the in-sample cuts are kept from the first run: run again (on a judge whose thresholds are
    # the cross-fitted ones already) it wrote those over them until 2026-11-30
    meta.setdefault("thresholds_dev_in_sample", {**meta["thresholds"]})
    meta["thresholds"] = {**meta["thresholds"], **cuts}
    meta["thresholds_note"] = ("defaults read by the methods: cross-fitted on the dev files (each HotpotQA, 2Wiki and "
                               "MuSiQue dev half's best-accuracy cut, n-weighted, read by a judge of this recipe trained "
                               "with the other half: bench/judges_fit_cuts.py --crossfit), since this judge trained on the "
                               "whole dev files; thresholds_dev_in_sample: the same fit on its own dev scores (in training); "
                               "thresholds_validation: fitted on held-out questions of the training files")
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
