"""The evaluator's score plus w x the MiniLM cosine: does the bi-encoder add what the cross-encoder misses?

    python bench/judges_cosine_mix.py JUDGES_DIR [--part 0/2] [--weights 0,0.5,1,2,3,4,6,8]

The items are those ``ragraphs judge-eval --judge evaluator`` builds from each dev file's part
(the stable hash split; give the part the judge did not train on). For each weight w it prints,
per file, the ROC AUC and the best-cut accuracy of ``evaluator + w * cosine``. The evaluator
scores on [-1, 1], the cosine on about [0, 0.8]. w = 0 is the evaluator alone. Best-cut accuracy
fits the cut on the same items, so it flatters every row alike.
"""

from __future__ import annotations

import argparse

from sklearn.metrics import roc_auc_score

from judges_dev_items import add_arguments, dev_items  # the same directory

from ragraphs.tools.embeddings import MiniLMEmbeddings
from ragraphs.tools.judges import baseline_judge, load_judge
from ragraphs.tools.judges.metrics import best_threshold, judge_scores


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--weights", default="0,0.5,1,2,3,4,6,8")
    a = ap.parse_args(argv)
    judge = load_judge("evaluator", a.judges)
    emb = MiniLMEmbeddings()
    cosine = baseline_judge("evaluator", emb)
    scored = {}
    for f, items, y in dev_items("evaluator", a, emb.encode):
        scored[f] = (y, judge_scores("evaluator", judge, items, 32), judge_scores("evaluator", cosine, items, 32))
    files = list(scored)
    print("| w | " + " | ".join(f"{f} (n = {len(scored[f][0])}): AUC / best-cut accuracy" for f in files) + " |")
    print("| --- |" + " --- |" * len(files))
    for w in map(float, a.weights.split(",")):
        cells = []
        for f in files:
            y, s, c = scored[f]
            z = s + w * c
            acc = float(((z >= best_threshold(y, z)) == y).mean())
            cells.append(f"{roc_auc_score(y, z):.3f} / {100 * acc:.1f}%")
        print(f"| {w:g} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
