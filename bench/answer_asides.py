"""What cutting an answer at its aside (``cut_asides``, ragraphs.prompts.cut_aside) does to runs
made without it: the same predictions, cut, scored again and paired with themselves.

    python bench/answer_asides.py runs/ans26 runs/mq7 [--metrics em,f1,acc]

Reads every run under the given ``ragraphs eval --out`` directories (their results.jsonl),
applies ``cut_aside`` to each prediction and scores it against the same gold answers. Prints,
per run, how many predictions changed, EM / F1 / accuracy before -> after, and the paired
difference with a 95% bootstrap interval (``ragraphs.evaluation.paired``); a last row pools every
run. Only runs made with ``--set cut_asides=false`` (or before the setting existed) hold the
answers as the model wrote them. A replay, not a run: MIGRES's reader shortens a
sentence-long answer with one more LLM call, and a cut answer may no longer need it, so its
replay is close to a real run, not the same.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from paired import cli_runs  # noqa: E402

from ragraphs.evaluation.metrics import answer_scores  # noqa: E402
from ragraphs.evaluation.paired import format_difference, paired_differences  # noqa: E402
from ragraphs.prompts import cut_aside  # noqa: E402


def replay(records: dict[str, dict]) -> tuple[dict[str, dict], dict[str, dict], int]:
    """(records scored as they are, records with each prediction cut, predictions changed);
    questions with no gold answer or an error are left out."""
    before, after, changed = {}, {}, 0
    for i, r in records.items():
        if r.get("error") or r.get("gold") in (None, "", []):
            continue
        pred = r.get("prediction") or ""
        cut = cut_aside(pred)
        changed += cut != pred
        before[i] = {"id": i, **answer_scores(pred, r["gold"])}
        after[i] = {"id": i, **answer_scores(cut, r["gold"])}
    return before, after, changed


def _mean(recs: dict[str, dict], m: str) -> float:
    vals = [float(r[m]) for r in recs.values() if r.get(m) is not None]
    return 100 * sum(vals) / len(vals) if vals else float("nan")


def main() -> None:
    a, metrics, found = cli_runs(__doc__, ref=False)
    names = " / ".join(metrics)
    print(f"| dataset | run | n | changed | {names} before -> after | "
          + " | ".join(f"{m} difference [95% CI]" for m in metrics) + " |")
    print("| --- | --- | --- | --- | --- |" + " --- |" * len(metrics))
    all_before, all_after, all_changed = {}, {}, 0
    for (ds, label), recs in sorted(found.items()):
        before, after, changed = replay(recs)
        if not before:
            continue
        all_changed += changed
        all_before.update({f"{ds}/{label}/{i}": {**r, "id": f"{ds}/{label}/{i}"} for i, r in before.items()})
        all_after.update({f"{ds}/{label}/{i}": {**r, "id": f"{ds}/{label}/{i}"} for i, r in after.items()})
        _row(ds, label, before, after, changed, metrics, a)
    if len(found) > 1:
        _row("all", "pooled", all_before, all_after, all_changed, metrics, a)
    print("\n* the interval excludes 0. Percent points; each run paired with itself, cut.")


def _row(ds, label, before, after, changed, metrics, a) -> None:
    diffs = {p.metric: p for p in paired_differences(after, before, metrics=metrics, seed=a.seed,
                                                     n_resamples=a.n_resamples)}
    scores = " / ".join(f"{_mean(before, m):.1f}" for m in metrics) + " -> " + " / ".join(
        f"{_mean(after, m):.1f}" for m in metrics)
    cells = [format_difference(diffs[m]) if m in diffs else "-" for m in metrics]
    print(f"| {ds} | {label} | {len(before)} | {changed} | {scores} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
