"""Tables of bench/results/embed_per_text/README.md, from the files beside this script.

    python bench/results/embed_per_text/table.py
"""

import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
DATASET = {"hotpotqa": "hotpotqa", "hotpotqa.train": "hotpotqa", "2wikimultihopqa": "2wikimultihopqa",
           "2wikimultihopqa.train": "2wikimultihopqa", "musique": "musique", "musique.train": "musique",
           "musique.extra.train": "musique"}


def rows(name):
    return [json.loads(line) for line in open(HERE / name)]


def recall_tables():
    per = defaultdict(dict)  # (strategy, file, id) -> side -> (found, n_gold)
    for r in rows("dr_rag_questions.jsonl"):
        if r["n_gold"]:
            per[(r["strategy"], r["file"], r["id"])][r["side"]] = (r["found"], r["n_gold"])
    print("| strategy | questions | n with gold | before | after | after minus before | the same, gold paragraphs pooled | questions up / down |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for strategy in ("sm", "cfs"):
        for label, keep in [("dev files", lambda f: "." not in f), ("training files", lambda f: "." in f), ("all", lambda f: True)]:
            for ds in ("hotpotqa", "2wikimultihopqa", "musique"):
                got = {k: v for k, v in per.items() if k[0] == strategy and DATASET[k[1]] == ds and keep(k[1])}
                b = sum(v["before"][0] for v in got.values())
                a = sum(v["after"][0] for v in got.values())
                tot = sum(v["before"][1] for v in got.values())
                up = sum(v["after"][0] > v["before"][0] for v in got.values())
                down = sum(v["after"][0] < v["before"][0] for v in got.values())
                mb = 100 * sum(v["before"][0] / v["before"][1] for v in got.values()) / len(got)
                ma = 100 * sum(v["after"][0] / v["after"][1] for v in got.values()) / len(got)
                print(f"| {strategy.upper()} | {ds}, {label} | {len(got)} | {mb:.1f} | {ma:.1f} | {ma - mb:+.1f} | "
                      f"{100 * b / tot:.1f} -> {100 * a / tot:.1f} ({100 * (a - b) / tot:+.1f}) | {up} / {down} |")


def order_table():
    by = defaultdict(dict)
    for r in rows("order_questions.jsonl"):
        by[(r["side"], r["id"])][r["order"]] = r
    print("\n| code | questions | fed passages differ (file order vs reversed) | answers differ | F1 file order / reversed |")
    print("| --- | --- | --- | --- | --- |")
    for side in ("before", "after"):
        got = [v for k, v in by.items() if k[0] == side]
        fed = sum(v["fwd"]["fed"] != v["rev"]["fed"] for v in got)
        ans = sum(v["fwd"]["prediction"] != v["rev"]["prediction"] for v in got)
        f1 = [100 * sum(v[o]["f1"] for v in got) / len(got) for o in ("fwd", "rev")]
        print(f"| {side} | {len(got)} | {fed} | {ans} | {f1[0]:.1f} / {f1[1]:.1f} |")


if __name__ == "__main__":
    recall_tables()
    order_table()
