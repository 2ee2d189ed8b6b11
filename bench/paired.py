"""Is a method's gain over a reference more than the sample? Paired bootstrap over questions.

    python bench/paired.py runs/full runs/m100/musique [--ref vanilla] [--metrics em,f1,acc] [--by-subset]

Reads the per-question records (DIR/**/runs/<dataset>/<label>/results.jsonl, the last record
of a question wins) of every run under the given directories, pairs each run with the
reference run of the same dataset on the questions both answered, and prints the mean
per-question difference of each metric with a 95% percentile bootstrap interval
(``ragraphs.evaluation.paired``: scipy.stats.bootstrap, seeded). An interval that holds 0
means the sample does not settle the sign of the difference. `ragraphs eval --compare ...
--out DIR` puts the same table in its report; this script pairs runs made by separate
commands. ``--by-subset`` also pairs each subset of a file on its own (the records' ``subset``:
``nq`` and ``trivia`` in the NQ + TriviaQA file).
"""

from __future__ import annotations

import argparse
import glob
import os

from ragraphs.evaluation.paired import format_difference, paired_differences
from ragraphs.evaluation.records import read_results


def runs(dirs: list[str]) -> dict[tuple[str, str], dict[str, dict]]:
    """(dataset, label) -> records by question id; a later directory overrides an earlier one."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "**", "runs", "*", "*", "results.jsonl"), recursive=True)):
            label_dir = os.path.dirname(path)
            key = (os.path.basename(os.path.dirname(label_dir)), os.path.basename(label_dir))
            recs = read_results(path)
            if recs:
                out[key] = recs
    return out


def cli_runs(doc: str, ref: bool = True) -> tuple[argparse.Namespace, list[str], dict]:
    """The command line shared by the scripts that read runs: (arguments, metrics, runs found)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", help="`ragraphs eval --out` directories")
    if ref:
        ap.add_argument("--ref", default="vanilla", help="label of the reference run (default vanilla)")
    ap.add_argument("--metrics", default="em,f1,acc")
    ap.add_argument("--n-resamples", type=int, default=9999)
    ap.add_argument("--seed", type=int, default=0)
    if ref:
        ap.add_argument("--by-subset", action="store_true", help="also pair each subset of a file on its own")
    a = ap.parse_args()
    found = runs(a.dirs)
    if not found:
        raise SystemExit(f"no results.jsonl under {', '.join(a.dirs)}")
    return a, [m.strip() for m in a.metrics.split(",") if m.strip()], found


def main() -> None:
    a, metrics, found = cli_runs(__doc__)
    head = " | ".join(f"{m} difference [95% CI]" for m in metrics)
    print(f"| dataset | run | n (paired) | {head} |")
    print("| --- | --- | --- |" + " --- |" * len(metrics))
    for (ds, label), recs in sorted(found.items()):
        ref = found.get((ds, a.ref))
        if ref is None or label == a.ref:
            continue
        subsets = sorted({str(r.get("subset")) for r in recs.values()}) if a.by_subset else []
        for sub in [None] + (subsets if len(subsets) > 1 else []):
            part = recs if sub is None else {i: r for i, r in recs.items() if str(r.get("subset")) == sub}
            diffs = {p.metric: p for p in paired_differences(part, ref, metrics=metrics, seed=a.seed,
                                                             n_resamples=a.n_resamples)}
            n = max((p.n for p in diffs.values()), default=0)
            cells = [format_difference(diffs[m]) if m in diffs else "-" for m in metrics]
            print(f"| {ds if sub is None else ds + ' / ' + sub} | {label} | {n} | " + " | ".join(cells) + " |")
    print(f"\n* the interval excludes 0. Reference: {a.ref}; percent points; paired by question id.")


if __name__ == "__main__":
    main()
