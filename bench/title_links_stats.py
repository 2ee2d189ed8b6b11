"""How often a multi-hop question's gold paragraphs are named by title: in the question, and in
another gold paragraph of the same question; and how many titles of its corpus a paragraph
names. The statistics behind DR-RAG's title links (ragraphs/tools/titles.py).

    python bench/title_links_stats.py ../shared/data
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragraphs.datasets import load_dataset, pooled_passages  # noqa: E402
from ragraphs.tools.titles import TitleIndex  # noqa: E402


def main(argv=None) -> int:
    data = (argv or sys.argv[1:] or ["../shared/data"])[0]
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
