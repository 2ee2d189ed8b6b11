"""The pair classifier read in both orders: C(q, d1, d2), C(q, d2, d1) and their mean.

    python bench/judges_pair_swap.py JUDGES_DIR [--cut 0.5114] [--part 0/2] [--files hotpotqa,2wikimultihopqa,musique]

The pair items are those ``ragraphs judge-eval --judge pair`` builds from each dev file's part
(the stable hash split; give the part the judge did not train on). For each file it prints,
for one order, the other and the mean of both: accuracy at ``--cut``, accuracy at the best cut
on these items, and ROC AUC. Reading both orders doubles the classifier's time.
"""

from __future__ import annotations

import argparse
import dataclasses

from sklearn.metrics import roc_auc_score

from judges_dev_items import add_arguments, dev_items  # the same directory

from ragraphs.tools.embeddings import MiniLMEmbeddings
from ragraphs.tools.judges import load_judge
from ragraphs.tools.judges.metrics import best_threshold, judge_scores


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--cut", type=float, default=0.5114, help="the accuracy cut (default: the shipped pair cut)")
    a = ap.parse_args(argv)
    judge = load_judge("pair", a.judges)
    emb = MiniLMEmbeddings()
    print("| file | n | order | accuracy at the cut | best-cut accuracy | AUC |")
    print("| --- | --- | --- | --- | --- | --- |")
    for f, items, y in dev_items("pair", a, emb.encode):
        one = judge_scores("pair", judge, items, 32)
        swapped = [dataclasses.replace(x, texts=(x.texts[0], x.texts[2], x.texts[1])) for x in items]
        other = judge_scores("pair", judge, swapped, 32)
        for name, s in (("as built", one), ("swapped", other), ("mean of both", (one + other) / 2)):
            print(f"| {f} | {len(items)} | {name} | {100 * ((s >= a.cut) == y).mean():.1f} | "
                  f"{100 * ((s >= best_threshold(y, s)) == y).mean():.1f} | {roc_auc_score(y, s):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
