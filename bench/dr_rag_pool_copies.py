"""Copies of a gold paragraph in a pooled corpus: how much of a recall drop is another file's
version of the same paragraph?

HotpotQA, 2Wiki and MuSiQue are built from Wikipedia dumps of different years, and MuSiQue
reuses single-hop questions of the other two. Pooled, a gold paragraph can have a near copy
under another id (the same page title, most of the same words, a few edited). Recall counts a
passage as gold when its id or its text matches (``evaluation.metrics.passage_matches``), so
such a copy fed to the LLM counts as a miss although it says the same thing.

For each missed gold paragraph of a run, this looks at the passages fed for the same question:
a *copy* has the gold's page title and shares at least ``--overlap`` of the gold's word types
(``|gold words & passage words| / |gold words|``); a *same page* passage has the title only.
It prints recall as counted, and recall with copies counted as found (both the mean over
questions, as ``ragraphs eval`` reports recall).

    python bench/dr_rag_pool_copies.py RUN_DIR/results.jsonl DATA_FILE [--overlap 0.6] [--json OUT] [--pool FILE ...]

With ``--pool`` (the files the run pooled), it also counts where the fed passages that are not
gold come from: the data file itself or a pooled file.
"""

from __future__ import annotations

import argparse
import json

from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.evaluation.metrics import _title  # the title form recall's matching reads
from ragraphs.tools.titles import words


def _words(text: str) -> set[str]:
    return set(words(text))


def sources(data_path: str, pool: list[str]) -> dict[str, str]:
    """Passage id -> the first of the data file and the pooled files that holds it."""
    where: dict[str, str] = {}
    for path in [data_path, *pool]:
        for p in pooled_passages(load_dataset(path)):
            where.setdefault(p["id"], path.rsplit("/", 1)[-1])
    return where


def analyse(results_path: str, data_path: str, overlap: float = 0.6, pool: list[str] | None = None) -> dict:
    examples = {ex.id: ex for ex in load_dataset(data_path)}
    where = sources(data_path, pool) if pool else {}
    from_file: dict[str, int] = {}
    n_gold = found = copies = same_page = 0
    questions = 0
    per_q: list[tuple[float, float]] = []  # (recall as counted, with copies) per question
    examples_of_copies = []
    with open(results_path, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            ex = examples.get(r["id"])
            if ex is None or not r.get("n_gold"):
                continue
            questions += 1
            got = set(r.get("gold_found") or [])
            gold = [p for p in ex.paragraphs if p["id"] in set(ex.supporting_ids)]
            fed = [p for p in r.get("passages") or [] if not p.get("gold")]
            for p in fed if where else []:
                f = where.get(p.get("id"), "?")
                from_file[f] = from_file.get(f, 0) + 1
            q_found = q_copies = 0
            for g in gold:
                n_gold += 1
                if g["id"] in got:
                    found += 1
                    q_found += 1
                    continue
                gw = _words(g["text"])
                same = [p for p in fed if _title(p.get("title")) == _title(g["title"])]
                copy = next((p for p in same if gw and len(gw & _words(p.get("text"))) / len(gw) >= overlap), None)
                if copy is not None:
                    copies += 1
                    q_copies += 1
                    if len(examples_of_copies) < 5:
                        examples_of_copies.append({"question": ex.question, "title": g["title"],
                                                   "gold": g["text"][:160], "fed": (copy.get("text") or "")[:160]})
                elif same:
                    same_page += 1
            if gold:
                per_q.append((q_found / len(gold), (q_found + q_copies) / len(gold)))
    return {
        "questions": questions, "gold": n_gold,
        "recall": round(100 * sum(a for a, _ in per_q) / len(per_q), 1) if per_q else None,
        "copies_fed": copies, "same_page_fed": same_page,
        "recall_copies_counted": round(100 * sum(b for _, b in per_q) / len(per_q), 1) if per_q else None,
        "overlap": overlap, "fed_not_gold_from": dict(sorted(from_file.items(), key=lambda kv: -kv[1])),
        "examples": examples_of_copies,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("data")
    ap.add_argument("--overlap", type=float, default=0.6)
    ap.add_argument("--json", default=None, metavar="OUT")
    ap.add_argument("--pool", nargs="*", default=[], metavar="FILE", help="the files the run pooled")
    a = ap.parse_args()
    out = analyse(a.results, a.data, a.overlap, a.pool)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    print(json.dumps({k: v for k, v in out.items() if k != "examples"}))


if __name__ == "__main__":
    main()
