"""Two ERM4 eval runs of the same questions, question by question: do they answer alike and
hand the reader the same passages from the same places (``memory`` or the corpus)?

Written to compare the reservoir's two backends (``--set reservoir=store`` against the SQLite
file), but it reads any two ``ragraphs eval --out`` directories of one method:

    python bench/erm4_reservoir_parity.py runs/file runs/store [--json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os


def records(out_dir: str) -> dict[str, dict]:
    """The run's per-question records by id (the one results file under ``out_dir``)."""
    files = glob.glob(os.path.join(out_dir, "runs", "*", "*", "results.jsonl"))
    if len(files) != 1:
        raise SystemExit(f"{out_dir}: expected one results.jsonl under runs/*/*/, found {len(files)}")
    with open(files[0], encoding="utf-8") as fh:
        return {r["id"]: r for r in map(json.loads, fh)}


def placed(r: dict) -> list[tuple[str, str]]:
    return [(p.get("title", ""), p.get("source", "")) for p in r.get("passages") or []]


def compare(a: dict[str, dict], b: dict[str, dict]) -> dict:
    ids = [i for i in a if i in b]
    mean = lambda rs, k: round(100 * sum(r.get(k) or 0 for r in rs) / max(1, len(rs)), 1)  # noqa: E731
    from_memory = lambda rs: sum(any(s == "memory" for _, s in placed(r)) for r in rs)  # noqa: E731
    ra, rb = [a[i] for i in ids], [b[i] for i in ids]
    return {
        "n": len(ids),
        "same_answer": sum(a[i].get("prediction") == b[i].get("prediction") for i in ids),
        "same_passages_and_sources": sum(placed(a[i]) == placed(b[i]) for i in ids),
        "questions_with_memory_passages": [from_memory(ra), from_memory(rb)],
        "memory_passages": [sum(s == "memory" for r in rs for _, s in placed(r)) for rs in (ra, rb)],
        **{k: [mean(ra, k), mean(rb, k)] for k in ("em", "f1", "acc")},
        "differing_ids": [i for i in ids if placed(a[i]) != placed(b[i]) or a[i].get("prediction") != b[i].get("prediction")],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    res = compare(records(args.a), records(args.b))
    if args.json:
        print(json.dumps(res))
        return
    for k, v in res.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
