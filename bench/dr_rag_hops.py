"""Where DR-RAG's recall goes on MuSiQue, by the question's number of hops.

    python bench/dr_rag_hops.py runs/cct/400/musique [runs/other ...]

MuSiQue's ids name each question's shape (``2hop``, ``3hop1``, ``3hop2``, ``4hop1``,
``4hop2``, ``4hop3``: two to four supporting paragraphs, chained or branching). For every
``ragraphs eval --retrieval-only`` (or answering) run under the given ``--out`` directories
whose records carry ``stage_recall``, this prints, per shape, the number of questions and the
mean recall of the gold paragraphs among each stage's documents (``first_stage``: its
candidates; ``second_stage``: the candidates it gathered for every static document; the
last stage: what the LLM reads). Read beside the issue #15 target (recall@4 >= 80): which
shapes a two-stage cascade cannot reach.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from paired import runs  # noqa: E402


def shape(qid: str) -> str:
    """``2hop``, ``3hop1``, ...: the part of a MuSiQue id before ``__`` (else ``other``)."""
    head, sep, _ = str(qid).partition("__")
    return head if sep and "hop" in head else "other"


def by_shape(records: dict[str, dict]) -> tuple[list[str], dict[str, dict[str, list[float]]]]:
    """(stage names in order, shape -> stage -> recalls) over the records with gold."""
    stages: list[str] = []
    table: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records.values():
        if r.get("recall") is None or r.get("error"):
            continue
        sr = r.get("stage_recall") or {}
        for s in sr:
            if s not in stages:
                stages.append(s)
        row = table[shape(r["id"])]
        for s, v in sr.items():
            if v is not None:
                row[s].append(float(v))
        row["final"].append(float(r["recall"]))
    return stages, table


def print_table(d: str, ds: str, label: str, recs: dict[str, dict]) -> None:
    stages, table = by_shape(recs)
    cols = [s for s in stages if s != "generate"] + ["final"]
    print(f"\n{d}: {ds} / {label}\n")
    print("| shape | n | " + " | ".join(f"recall: {c}" for c in cols) + " |")
    print("| --- | --- |" + " --- |" * len(cols))
    everyone: dict[str, list[float]] = defaultdict(list)
    for sh in sorted(table):
        row = table[sh]
        cells = []
        for c in cols:
            vals = row.get(c) or []
            everyone[c] += vals
            cells.append(f"{100 * sum(vals) / len(vals):.1f}" if vals else "-")
        print(f"| {sh} | {len(row['final'])} | " + " | ".join(cells) + " |")
    mean = [f"{100 * sum(everyone[c]) / len(everyone[c]):.1f}" if everyone[c] else "-" for c in cols]
    print(f"| all | {len(everyone['final'])} | " + " | ".join(mean) + " |")


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        raise SystemExit(__doc__)
    for d in sys.argv[1:]:  # each directory on its own: one label in two directories is two runs
        found = runs([d])
        if not found:
            raise SystemExit(f"no results.jsonl under {d}")
        for (ds, label), recs in sorted(found.items()):
            print_table(d, ds, label, recs)


if __name__ == "__main__":
    main()
