"""Scores of each run split by whether the offline web snapshot holds results for the question.

    python bench/web_coverage.py DIR --web ../shared/data/popqa.web.dev.jsonl [--ref LABEL]

Reads DIR/runs/<dataset>/<label>/results.jsonl (``ragraphs eval --out DIR``) and prints, for
every run, EM / F1 / accuracy on the questions whose text the snapshot lists (its searches were
made for them) and on the others, whose web searches only find other questions' pages. A
method that reads the web (CRAG's Incorrect and Ambiguous routes) can only gain on the first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from paired import runs as find_runs  # noqa: E402

from ragraphs.evaluation.paired import format_difference, paired_differences  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--web", required=True, help="the offline web snapshot (JSONL rows with a question)")
    ap.add_argument("--ref", default=None, help="a run label to pair every other run of its dataset with")
    a = ap.parse_args()
    with open(a.web, encoding="utf-8") as fh:
        covered = {" ".join(json.loads(line)["question"].split()) for line in fh if line.strip()}
    runs = {key: [r for r in recs.values() if not r.get("error")] for key, recs in find_runs([a.dir]).items()}
    extra = f" | EM / F1 / acc minus {a.ref}" if a.ref else ""
    print("| dataset | run | questions | n | EM | F1 | acc" + extra + " |")
    print("| --- | --- | --- | --- | --- | --- | ---" + (" | ---" if a.ref else "") + " |")
    for (dataset, label), recs in runs.items():
        ref = runs.get((dataset, a.ref)) if a.ref and label != a.ref else None
        for name, want in (("in the snapshot", True), ("not in it", False)):
            sub = [r for r in recs if (" ".join(r["question"].split()) in covered) == want]
            if not sub:
                continue
            cells = " | ".join(f"{100 * sum(r[k] for r in sub) / len(sub):.1f}" for k in ("em", "f1", "acc"))
            if a.ref:
                diffs = paired_differences({r["id"]: r for r in sub}, {r["id"]: r for r in ref}) if ref else []
                cells += " | " + (" / ".join(format_difference(d) for d in diffs) if diffs else "-")
            print(f"| {dataset} | {label} | {name} | {len(sub)} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
