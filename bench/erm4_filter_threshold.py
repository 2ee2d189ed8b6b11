"""Choose ERM4's Knowledge Filter threshold for an NLI judge on whole dev files (no LLM).

For every question of each file, every paragraph of the question is scored by the judge as
(premise = "Title\\ntext", hypothesis = question); the supporting paragraphs are the
positives. Prints, per file and pooled, the threshold with the best F1 and the precision,
recall and kept fraction there, plus the same at a few fixed thresholds.

    python bench/erm4_filter_threshold.py --judge cosine \\
        ../shared/data/2wikimultihopqa.dev.jsonl ../shared/data/hotpotqa.dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def prf(y: np.ndarray, s: np.ndarray, t: float) -> dict:
    pred = s >= t
    tp = float((pred & y).sum())
    p = tp / max(1.0, float(pred.sum()))
    r = tp / max(1.0, float(y.sum()))
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"threshold": round(float(t), 4), "precision": round(p, 3), "recall": round(r, 3), "f1": round(f, 3), "kept": round(float(pred.mean()), 3)}


def best(y: np.ndarray, s: np.ndarray) -> dict:
    cands = np.unique(np.round(s, 3))
    return max((prf(y, s, t) for t in cands), key=lambda d: (d["f1"], -d["threshold"]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--judge", default="default", help="default (the shipped nli judge) or cosine (the baseline)")
    ap.add_argument("--fixed", default="0.5,0.6,0.7,0.75,0.8")
    args = ap.parse_args(argv)

    from ragraphs.datasets import load_dataset
    from ragraphs.nodes.erm4 import knowledge_text
    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.judges import CosineNLIJudge, load_default_judge

    emb = MiniLMEmbeddings()
    judge = CosineNLIJudge(emb) if args.judge == "cosine" else load_default_judge("nli", embeddings=emb)
    ys, ss = [], []
    for path in args.files:
        exs = load_dataset(path)
        pairs, y = [], []
        for ex in exs:
            for p in ex.paragraphs:
                pairs.append((knowledge_text(p), ex.question))
                y.append(bool((p.get("meta") or {}).get("supporting")))
        t0 = time.time()
        s = np.asarray(judge.score_batch(pairs), dtype=np.float32)
        y = np.asarray(y)
        ys.append(y)
        ss.append(s)
        out = {"file": path, "questions": len(exs), "pairs": len(pairs), "positives": int(y.sum()),
               "seconds": round(time.time() - t0, 1), "best_f1": best(y, s),
               "fixed": [prf(y, s, float(t)) for t in args.fixed.split(",")]}
        print(json.dumps(out), flush=True)
    y, s = np.concatenate(ys), np.concatenate(ss)
    print(json.dumps({"file": "pooled", "judge": getattr(judge, "name", args.judge), "best_f1": best(y, s),
                      "fixed": [prf(y, s, float(t)) for t in args.fixed.split(",")]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
