"""Is a method's gain over a reference more than the sample? Paired bootstrap over questions.

    python bench/paired.py runs/full runs/m100/musique [--ref vanilla] [--metrics em,f1,acc]

Reads the per-question records (DIR/**/runs/<dataset>/<label>/results.jsonl, the last record
of a question wins) of every run under the given directories, pairs each run with the
reference run of the same dataset on the questions both answered, and prints the mean
per-question difference of each metric with a 95% percentile bootstrap interval
(scipy.stats.bootstrap, seeded). An interval that holds 0 means the sample does not settle
the sign of the difference.
"""

from __future__ import annotations

import argparse
import glob
import os

import numpy as np
from scipy.stats import bootstrap

from ragraphs.evaluation.records import read_results


def runs(dirs: list[str]) -> dict[tuple[str, str], dict[str, dict]]:
    """(dataset, label) -> records by question id; a later directory overrides an earlier one."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "**", "runs", "*", "*", "results.jsonl"), recursive=True)):
            label_dir = os.path.dirname(path)
            key = (os.path.basename(os.path.dirname(label_dir)), os.path.basename(label_dir))
            recs = {i: r for i, r in read_results(path).items() if not r.get("error")}
            if recs:
                out[key] = recs
    return out


def interval(diffs: np.ndarray, seed: int, n_resamples: int) -> tuple[float, float]:
    if np.all(diffs == diffs[0]):
        return float(diffs[0]), float(diffs[0])
    res = bootstrap((diffs,), np.mean, confidence_level=0.95, n_resamples=n_resamples, method="percentile",
                    random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", help="`ragraphs eval --out` directories")
    ap.add_argument("--ref", default="vanilla", help="label of the reference run (default vanilla)")
    ap.add_argument("--metrics", default="em,f1,acc")
    ap.add_argument("--n-resamples", type=int, default=9999)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    metrics = [m.strip() for m in a.metrics.split(",") if m.strip()]
    found = runs(a.dirs)
    if not found:
        raise SystemExit(f"no results.jsonl under {', '.join(a.dirs)}")
    head = " | ".join(f"{m} difference [95% CI]" for m in metrics)
    print(f"| dataset | run | n (paired) | {head} |")
    print("| --- | --- | --- |" + " --- |" * len(metrics))
    for (ds, label), recs in sorted(found.items()):
        ref = found.get((ds, a.ref))
        if ref is None or label == a.ref:
            continue
        ids = sorted(set(ref) & set(recs))
        cells = []
        for m in metrics:
            d = np.array([float(recs[i].get(m) or 0.0) - float(ref[i].get(m) or 0.0) for i in ids])
            lo, hi = interval(d, a.seed, a.n_resamples)
            mark = "" if lo <= 0 <= hi else " *"
            cells.append(f"{100 * d.mean():+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]{mark}")
        print(f"| {ds} | {label} | {len(ids)} | " + " | ".join(cells) + " |")
    print(f"\n* the interval excludes 0. Reference: {a.ref}; percent points; paired by question id.")


if __name__ == "__main__":
    main()
