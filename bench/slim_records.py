"""Copy a run's per-question records without what makes them large, for bench/results/.

    python bench/slim_records.py runs/s68 bench/results/migres_sentence_title

Each ``results.jsonl`` under the first folder (``**/runs/<dataset>/<label>/``) is written under
the second at the same relative path, each record keeping its question, gold, prediction,
scores, counts, how the run ended and times, and of its trace only the entries that say a
route (node and route); ``summary.json`` is copied as it is. The records' passages, per-node
times and full trace stay in the run's own folder.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil

KEEP = ("id", "subset", "question", "gold", "prediction", "em", "f1", "acc", "recall", "n_gold", "docs", "llm_calls",
        "web_calls", "input_tokens", "output_tokens", "iterations", "parse_failures", "guard_hit", "ended", "wall_s",
        "overhead_s", "error")


def slim(record: dict) -> dict:
    out = {k: record.get(k) for k in KEEP if k in record}
    out["trace"] = [{"node": e.get("node"), "route": e["route"]} for e in record.get("trace") or []
                    if isinstance(e, dict) and "route" in e]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    args = ap.parse_args()
    src, dst = os.path.realpath(args.src), os.path.realpath(args.dst)
    if src == dst or dst.startswith(src + os.sep) or src.startswith(dst + os.sep):
        raise SystemExit("give the slimmed copy a folder of its own: it would write over the records it reads")
    found = sorted(glob.glob(os.path.join(args.src, "**", "runs", "*", "*", "results.jsonl"), recursive=True))
    if not found:
        raise SystemExit(f"no results.jsonl under {args.src}")
    for path in found:
        rel = os.path.relpath(os.path.dirname(path), args.src)
        os.makedirs(os.path.join(args.dst, rel), exist_ok=True)
        with open(path, encoding="utf-8") as fh, open(os.path.join(args.dst, rel, "results.jsonl"), "w", encoding="utf-8") as out:
            for line in fh:
                if line.strip():
                    out.write(json.dumps(slim(json.loads(line)), ensure_ascii=False) + "\n")
        summary = os.path.join(os.path.dirname(path), "summary.json")
        if os.path.exists(summary):
            shutil.copy(summary, os.path.join(args.dst, rel, "summary.json"))
        print(os.path.join(args.dst, rel))


if __name__ == "__main__":
    main()
