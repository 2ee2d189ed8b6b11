"""Score stored answers again with the package's current answer metrics, in place.

    python bench/rescore.py bench/results [DIR ...] [--dry-run]
    python bench/rescore.py --answers bench/results/X/answers.jsonl=../shared/data/popqa.dev.jsonl

The second form re-scores an ``answers.jsonl`` copy (its records keep no gold: the gold comes
from the benchmark file by question id) and the ``METHOD.summary.json`` files beside it.

For every ``results.jsonl`` under the given directories (``ragraphs eval --out`` folders and
the copies kept in ``bench/results``), each record's ``em``, ``f1`` and ``acc`` are computed
again from its ``prediction`` and ``gold`` (a record that keeps no scores is left alone) (``ragraphs.evaluation.metrics.answer_scores``);
only records whose scores change are rewritten, the others keep their bytes. A ``summary.json``
beside the file gets the new means when it covers exactly the file's records (its ``n`` equals
their count), and so does the eval's own ``OUT/summary.json`` (its list of runs); otherwise the
run's summary is named as left as it was. Nothing is run again: the answers, the
calls and the times stay those of the run. Prints each changed record and each refreshed
summary (old -> new, percent), so a table built from these files can be built again
(``bench/collect.py``, ``bench/paired.py``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os

from ragraphs.evaluation.metrics import answer_scores, mean

_KEYS = ("em", "f1", "acc")


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 6)  # as the eval's summaries keep them


def _refresh_eval_summary(results: str, run: dict) -> None:
    """The eval's own ``OUT/summary.json`` (the list of its runs, OUT/runs/<dataset>/<label>/
    holding ``results``) takes the run's new means too."""
    out = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(results))))
    path = os.path.join(out, "summary.json")
    if os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(results)))) != "runs" or not os.path.isfile(path):
        return
    with open(path, encoding="utf-8") as fh:
        runs = json.load(fh)
    if not isinstance(runs, list):
        return
    hit = False
    for entry in runs:
        if isinstance(entry, dict) and entry.get("label") == run.get("label") and entry.get("dataset") == run.get("dataset"):
            entry.update({k: run.get(k) for k in (*_KEYS, "by_subset") if k in run})
            hit = True
    if hit:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(runs, fh, indent=1)


def rescore_file(path: str, dry_run: bool = False, golds: dict | None = None) -> tuple[int, list[str]]:
    """(records changed, lines to print) for one results file; with ``golds`` (id -> gold
    answers, from the benchmark file) for an ``answers.jsonl`` copy, whose records keep no gold."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.readlines()
    out, notes, changed, records = [], [], 0, {}
    for line in lines:
        try:
            r = json.loads(line)
        except ValueError:
            out.append(line)  # a line cut by a crash stays as it was
            continue
        gold = r.get("gold") if isinstance(r, dict) else None
        if isinstance(r, dict) and not gold and golds is not None:
            gold = golds.get(str(r.get("id")))
        if isinstance(r, dict) and "prediction" in r and gold and all(k in r for k in _KEYS):
            new = answer_scores(r.get("prediction"), gold)
            if any(r.get(k) != new[k] for k in _KEYS):
                notes.append(f"  {r.get('id')}: " + ", ".join(f"{k} {r.get(k)} -> {new[k]}" for k in _KEYS if r.get(k) != new[k]))
                r.update(new)
                line = json.dumps(r, ensure_ascii=False) + "\n"
                changed += 1
        if isinstance(r, dict) and "id" in r:
            records[str(r["id"])] = r
        out.append(line)
    if changed and not dry_run:
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(out)
    if golds is not None:  # an answers copy: each method's records, its METHOD.summary.json beside it
        if changed:
            notes += _refresh_method_summaries(path, out, dry_run)
        return changed, notes
    summary = os.path.join(os.path.dirname(path), "summary.json")
    if changed and os.path.isfile(summary):
        with open(summary, encoding="utf-8") as fh:
            s = json.load(fh)
        if isinstance(s, dict) and s.get("n") == len(records):
            new_s = {k: _r(mean(r.get(k) for r in records.values())) for k in _KEYS}
            notes.append("  summary: " + ", ".join(f"{k} {100 * (s.get(k) or 0):.1f} -> {100 * (new_s[k] or 0):.1f}"
                                                    for k in _KEYS if s.get(k) != new_s[k]))
            for sub, row in (s.get("by_subset") or {}).items():
                rs = [r for r in records.values() if str(r.get("subset")) == sub]
                row.update({k: _r(mean(r.get(k) for r in rs)) for k in _KEYS})
            s.update(new_s)
            if not dry_run:
                with open(summary, "w", encoding="utf-8") as fh:
                    json.dump(s, fh, indent=1)
                _refresh_eval_summary(path, s)
        else:
            notes.append(f"  summary.json left as it was: it covers {s.get('n') if isinstance(s, dict) else '?'} "
                         f"questions, the file {len(records)}")
    return changed, notes


def _refresh_method_summaries(path: str, lines: list[str], dry_run: bool) -> list[str]:
    """Each ``METHOD.summary.json`` beside an answers copy (``PREFIX.METHOD.summary.json`` beside
    ``PREFIX.answers.jsonl``) takes its method's new means when it covers exactly its records."""
    by_method: dict[str, list[dict]] = {}
    for line in lines:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("method"):
            by_method.setdefault(str(r["method"]), []).append(r)
    base = os.path.basename(path)
    prefix = base[: -len("answers.jsonl")] if base.endswith("answers.jsonl") else ""
    notes = []
    for method, rs in by_method.items():
        summary = os.path.join(os.path.dirname(path), f"{prefix}{method}.summary.json")
        if not os.path.isfile(summary):
            continue
        with open(summary, encoding="utf-8") as fh:
            s = json.load(fh)
        if not (isinstance(s, dict) and s.get("n") == len(rs)):
            notes.append(f"  {os.path.basename(summary)} left as it was: it covers {s.get('n')} questions, the file {len(rs)}")
            continue
        new_s = {k: _r(mean(r.get(k) for r in rs)) for k in _KEYS}
        moved = [k for k in _KEYS if s.get(k) != new_s[k]]
        if moved:
            notes.append(f"  {os.path.basename(summary)}: " + ", ".join(
                f"{k} {100 * (s.get(k) or 0):.2f} -> {100 * (new_s[k] or 0):.2f}" for k in moved))
            s.update(new_s)
            if not dry_run:
                with open(summary, "w", encoding="utf-8") as fh:
                    json.dump(s, fh, indent=1)
    return notes


def _golds(data: str) -> dict:
    from ragraphs.datasets import load_dataset

    return {str(ex.id): ex.answers for ex in load_dataset(data, warn=lambda m: None)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--answers", action="append", default=[], metavar="FILE=DATA",
                    help="an answers.jsonl copy (no gold in its records) and the benchmark file its golds come from")
    ap.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    a = ap.parse_args()
    files = sorted({p for d in a.dirs for p in glob.glob(os.path.join(d, "**", "results.jsonl"), recursive=True)})
    copies = [tuple(spec.split("=", 1)) for spec in a.answers]
    if any(len(c) != 2 for c in copies):
        raise SystemExit("--answers takes FILE=DATA")
    if not files and not copies:
        raise SystemExit(f"no results.jsonl under {', '.join(a.dirs) or 'no folder'} and no --answers")
    total = 0
    for path, golds in [(f, None) for f in files] + [(f, _golds(d)) for f, d in copies]:
        changed, notes = rescore_file(path, a.dry_run, golds)
        if changed:
            total += changed
            print(f"{path}: {changed} record(s)")
            print("\n".join(notes))
    print(f"{total} record(s) changed in {len(files) + len(copies)} file(s){' (dry run)' if a.dry_run else ''}")


if __name__ == "__main__":
    main()
