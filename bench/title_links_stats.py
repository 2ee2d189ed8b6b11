"""How often a multi-hop question's gold paragraphs are named by title: in the question, and in
another gold paragraph of the same question; and how many titles of its corpus a paragraph
names. The statistics behind DR-RAG's title links (ragraphs/tools/titles.py).

    python bench/title_links_stats.py ../shared/data
    python bench/title_links_stats.py --hops ../shared/data/musique.dev.jsonl

``--hops`` reads a MuSiQue file's decompositions: for each hop of each question shape, how
often its gold paragraph is named by title in the question, in the previous hop's gold
paragraph, in any other gold paragraph, and how often it holds the previous hop's answer.
"""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter, defaultdict
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragraphs.datasets import load_dataset, pooled_passages  # noqa: E402
from ragraphs.tools.titles import TitleIndex  # noqa: E402


def hops(path: str) -> None:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    index = TitleIndex(pooled_passages(load_dataset(path, "musique")))
    counts: dict[tuple[str, int], Counter] = defaultdict(Counter)
    for row in rows:
        shape = row["id"].split("__")[0]
        paras, chain = row["paragraphs"], row["question_decomposition"]
        para = lambda d: paras[d["paragraph_support_idx"]]  # noqa: E731
        for j, hop in enumerate(chain):
            p, c = para(hop), counts[shape, j + 1]
            c["n"] += 1
            c["question"] += index.names(p["title"], row["question"])
            if j:
                before = chain[j - 1]
                c["previous"] += index.names(p["title"], para(before)["paragraph_text"])
                c["any"] += any(index.names(p["title"], para(o)["paragraph_text"]) for o in chain if o is not hop)
                c["answer"] += before["answer"].lower() in p["paragraph_text"].lower()
    print(f"{path}: gold paragraph of hop j, % named by title in ... / holding hop j-1's answer")
    print("| shape | hop | n | the question | hop j-1's paragraph | any other gold paragraph | hop j-1's answer in its text |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (shape, j), c in sorted(counts.items()):
        pct = lambda k: f"{100 * c[k] / c['n']:.0f}" if (j > 1 or k == "question") else "-"  # noqa: E731
        print(f"| {shape} | {j} | {c['n']} | {pct('question')} | {pct('previous')} | {pct('any')} | {pct('answer')} |")


def main(argv=None) -> int:
    argv = list(argv or sys.argv[1:])
    if argv and argv[0] == "--hops":
        for path in argv[1:]:
            hops(path)
        return 0
    data = (argv or ["../shared/data"])[0]
    print("| dataset | questions | gold paragraphs | named in the question | named in another gold paragraph | either | titles a paragraph names (mean) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for ds in ("hotpotqa", "2wikimultihopqa", "musique"):
        exs = load_dataset(os.path.join(data, f"{ds}.dev.jsonl"), ds)
        corpus = pooled_passages(exs)
        index = TitleIndex(corpus)
        n_q = n_gold = in_q = in_gold = either = 0
        for ex in exs:
            gold = ex.supporting
            if not gold:
                continue
            n_q += 1
            for g in gold:
                n_gold += 1
                a = index.names(g["title"], ex.question)
                b = any(index.names(g["title"], o["text"]) for o in gold if o["id"] != g["id"])
                in_q, in_gold, either = in_q + a, in_gold + b, either + (a or b)
        fan = statistics.mean(len(index.named_in(p["text"], exclude=[p["id"]])) for p in corpus)
        pct = lambda x: f"{100 * x / n_gold:.1f}%"  # noqa: E731
        print(f"| {ds} | {n_q} | {n_gold} | {pct(in_q)} | {pct(in_gold)} | {pct(either)} | {fan:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
