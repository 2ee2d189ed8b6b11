"""Is a method's gain over a reference more than the sample? Paired bootstrap over questions.

    python bench/paired.py runs/full runs/m100/musique [--ref vanilla] [--metrics em,f1,acc] [--by-subset] [--plot DIR]

Reads the per-question records (DIR/**/runs/<dataset>/<label>/results.jsonl, the last record
of a question wins; only the questions the run's last ``summary.json`` covers, when it names
them) of every run under the given directories, pairs each run with the reference run of the
same dataset (``--ref``: the run of that label, else of that method at the run's own k,
retrieval and LLM, as the report pairs them) on the questions both answered, and prints the mean
per-question difference of each metric with a 95% percentile bootstrap interval
(``ragraphs.evaluation.paired``: scipy.stats.bootstrap, seeded). An interval that holds 0
means the sample does not settle the sign of the difference. `ragraphs eval --compare ...
--out DIR` puts the same table in its report; this script pairs runs made by separate
commands. ``--by-subset`` also pairs each subset of a file on its own (the records' ``subset``:
``nq`` and ``trivia`` in the NQ + TriviaQA file), and ``--by-part N`` each part K of N of the
stable hash split that ``FILE@K/N`` selects (``ragraphs.datasets.part_of`` on id and question:
PopQA's half 1, which no judge trained on, is ``popqa / part 1 of 2``). A record that keeps no
scores (a slim copy in ``bench/results``: id, question, gold, prediction) is scored here with the
package's metrics, and the output says how many were. ``--plot DIR`` also
draws each dataset's differences (EM, F1, acc) with their intervals beside a line at 0, as
``DIR/paired_<dataset>.png`` (the plot ``ragraphs eval --compare`` puts in its report).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re

from ragraphs.datasets import part_of
from ragraphs.evaluation.paired import format_cell, paired_differences
from ragraphs.evaluation.metrics import answer_scores
from ragraphs.evaluation.records import read_results
from ragraphs.evaluation.report import plot_paired, references

ANSWER_KEYS = ("em", "f1", "acc")


SCORED_HERE = {"records": 0}  # how many records runs() scored from their prediction and gold


def _scored(rec: dict) -> dict:
    """A record as it was, or, when it keeps no answer score (a slim copy: id, question, gold,
    prediction), scored here with the package's metrics (``answer_scores``), as the eval scores;
    a failed question stays unscored. Until 2026-12-01 such copies paired 0 questions, each
    cell '-', without a word."""
    if any(m in rec for m in ANSWER_KEYS) or rec.get("error") or "prediction" not in rec or "gold" not in rec:
        return rec
    SCORED_HERE["records"] += 1
    return {**rec, **answer_scores(rec["prediction"], rec["gold"])}


SUMMARIES: dict[tuple[str, str], dict] = {}  # (dataset, label) -> the run's summary.json, where it has one
NOTES: list[str] = []  # what runs() read otherwise than a whole results.jsonl, one line each


def _last_run(label_dir: str, recs: dict[str, dict]) -> tuple[dict[str, dict], dict]:
    """(the records the run's last summary covers, that summary). A resumed run with a smaller
    ``--limit`` leaves more questions in ``results.jsonl`` than its report and ``summary.json``
    cover; the summary names its questions (``ids``, since 2026-12-02) and only those are paired,
    as the report paired them (this script paired every record until then). An older summary
    names none: all are paired, with a note when its count differs."""
    try:
        with open(os.path.join(label_dir, "summary.json"), encoding="utf-8") as fh:
            summary = json.load(fh)
    except (OSError, ValueError):
        return recs, {}
    if not isinstance(summary, dict):
        return recs, {}
    ids, n = summary.get("ids"), summary.get("n")
    if isinstance(ids, list):
        kept = {str(i): recs[str(i)] for i in ids if str(i) in recs}
        if len(kept) < len(recs):
            NOTES.append(f"{label_dir}: the {len(kept)} questions its last run covers (summary.json ids) are paired, "
                         f"not all {len(recs)} in results.jsonl")
        return kept, summary
    if isinstance(n, int) and n != len(recs):
        NOTES.append(f"{label_dir}: results.jsonl holds {len(recs)} questions, its summary.json (the last run) {n}, "
                     f"and names none: all {len(recs)} are paired")
    return recs, summary


def runs(dirs: list[str]) -> dict[tuple[str, str], dict[str, dict]]:
    """(dataset, label) -> records by question id (those the run's last summary covers). Folders
    of one dataset and label are pooled, as the parts of a file (``FILE@0/2``, ``FILE@1/2``, each
    in its own ``--out``) make one whole-file run; a question in two of them keeps the later
    folder's record. Until 2026-12-03 a later folder replaced an earlier one whole: half of a
    split file was dropped without a word. Each run's summary goes to :data:`SUMMARIES`."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    folders: dict[tuple[str, str], int] = {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "**", "runs", "*", "*", "results.jsonl"), recursive=True)):
            label_dir = os.path.dirname(path)
            key = (os.path.basename(os.path.dirname(label_dir)), os.path.basename(label_dir))
            recs, summary = _last_run(label_dir, {i: _scored(r) for i, r in read_results(path).items()})
            if recs:
                out[key] = {**out.get(key, {}), **recs}
                folders[key] = folders.get(key, 0) + 1
                SUMMARIES[key] = summary
    NOTES.extend(f"{ds} / {label}: the records of {n} folders pooled ({len(out[ds, label])} questions)"
                 for (ds, label), n in folders.items() if n > 1)
    return out


def cli_runs(doc: str, ref: bool = True) -> tuple[argparse.Namespace, list[str], dict]:
    """The command line shared by the scripts that read runs: (arguments, metrics, runs found)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", help="`ragraphs eval --out` directories")
    if ref:
        ap.add_argument("--ref", default="vanilla",
                        help="the reference: a run's label, else a method, whose run at each run's own k, retrieval "
                             "and LLM is its reference (default vanilla)")
    ap.add_argument("--metrics", default="em,f1,acc")
    ap.add_argument("--n-resamples", type=int, default=9999)
    ap.add_argument("--seed", type=int, default=0)
    if ref:
        ap.add_argument("--by-subset", action="store_true", help="also pair each subset of a file on its own")
        ap.add_argument("--by-part", type=int, default=0, metavar="N",
                        help="also pair each part K of N of the stable hash split (FILE@K/N) on its own")
        ap.add_argument("--plot", metavar="DIR", help="also draw each dataset's differences as DIR/paired_<dataset>.png")
    a = ap.parse_args()
    found = runs(a.dirs)
    if not found:
        raise SystemExit(f"no results.jsonl under {', '.join(a.dirs)}")
    return a, [m.strip() for m in a.metrics.split(",") if m.strip()], found


def _loader_id(record_id: str) -> str:
    """The id the loader gave: the eval renames a repeated id to ``ID#N``, and FILE@K/N hashes the
    loader's."""
    return re.sub(r"#\d+$", "", record_id)


def groups(ds: str, recs: dict[str, dict], by_subset: bool, by_part: int) -> list[tuple[str, dict[str, dict]]]:
    """(row name, records) to pair: the whole file, then each subset and each part asked for."""
    out = [(ds, recs)]
    subsets = sorted({str(r.get("subset")) for r in recs.values()}) if by_subset else []
    for sub in subsets if len(subsets) > 1 else []:
        out.append((f"{ds} / {sub}", {i: r for i, r in recs.items() if str(r.get("subset")) == sub}))
    for k in range(by_part if by_part > 1 else 0):
        out.append((f"{ds} / part {k} of {by_part}",
                    {i: r for i, r in recs.items() if part_of(f"{_loader_id(i)}\x1f{r.get('question', '')}", by_part) == k}))
    return out


def dataset_runs(ds: str, found: dict) -> list[dict]:
    """The summaries of a dataset's runs, each under its folder's label (``method``, ``k``,
    ``retrieval``, ``llm`` from its summary.json, where it has one)."""
    return [{**SUMMARIES.get((d, label), {}), "label": label, "dataset": ds} for d, label in sorted(found) if d == ds]


def main() -> None:
    a, metrics, found = cli_runs(__doc__)
    head = " | ".join(f"{m} difference [95% CI]" for m in metrics)
    print(f"| dataset | run | n (paired) | {head} |")
    print("| --- | --- | --- |" + " --- |" * len(metrics))
    for ds in sorted({d for d, _ in found}):
        summaries = dataset_runs(ds, found)
        # the run labelled --ref, else the runs of that method, each run against the one at its own
        # k, retrieval and LLM, as the report pairs them (one --ref label for all until 2026-12-02)
        own_ref = references(summaries, a.ref)
        if not own_ref and len(summaries) > 1:
            NOTES.append(f"{ds}: no run is labelled {a.ref!r} or of method {a.ref!r}, so nothing is paired "
                         f"(runs: {', '.join(s['label'] for s in summaries)}); --ref names the reference")
        for label, ref_label in own_ref.items():
            ref = found[(ds, ref_label)]
            name = label if ref_label == a.ref else f"{label} (against {ref_label})"
            for sub, part in groups(ds, found[(ds, label)], a.by_subset, a.by_part):
                diffs = {p.metric: p for p in paired_differences(part, ref, metrics=metrics, seed=a.seed,
                                                                 n_resamples=a.n_resamples)}
                n = max((p.n for p in diffs.values()), default=0)
                cells = [format_cell(diffs[m], n) if m in diffs else "-" for m in metrics]
                print(f"| {sub} | {name} | {n} | " + " | ".join(cells) + " |")
    print(f"\n* the interval excludes 0. Reference: {a.ref}; percent points; paired by question id.")
    if SCORED_HERE["records"]:
        print(f"{SCORED_HERE['records']} records kept no scores (em, f1, acc): scored here from their prediction and "
              "gold with ragraphs.evaluation.metrics.answer_scores.")
    for note in NOTES:
        print(note)
    if a.plot:
        os.makedirs(a.plot, exist_ok=True)
        for ds in sorted({ds for ds, _ in found}):
            summaries = dataset_runs(ds, found)
            records = {s["label"]: list(found[(ds, s["label"])].values()) for s in summaries}
            path = os.path.join(a.plot, f"paired_{ds}.png")
            if plot_paired(summaries, records, path, ref=a.ref):
                print(f"plot: {path}")


if __name__ == "__main__":
    main()
