"""Choose ERM4's Knowledge Filter judge role and threshold on whole dev files (no LLM).

For every question of each file, every paragraph of the question is scored by the judge:
``--role nli`` as (premise = "Title\\ntext", hypothesis = question), ``--role evaluator`` as
(question, "Title\\ntext"); the supporting paragraphs are the positives. Prints, per file
and pooled, the threshold with the best F1 and, there and at a few fixed thresholds, the
precision (share of kept instances that are gold supporting paragraphs), recall, kept
fraction and instances kept per question.

    python bench/erm4_filter_threshold.py --role evaluator \\
        ../shared/data/2wikimultihopqa.dev.jsonl ../shared/data/hotpotqa.dev.jsonl ../shared/data/musique.dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def prf(y: np.ndarray, s: np.ndarray, t: float, n_questions: int = 0) -> dict:
    pred = s >= t
    tp = float((pred & y).sum())
    p = tp / max(1.0, float(pred.sum()))
    r = tp / max(1.0, float(y.sum()))
    f = 2 * p * r / (p + r) if p + r else 0.0
    out = {"threshold": round(float(t), 4), "precision": round(p, 3), "recall": round(r, 3), "f1": round(f, 3),
           "kept": round(float(pred.mean()), 3)}
    if n_questions:
        out["kept_per_q"] = round(float(pred.sum()) / n_questions, 2)
    return out


def best(y: np.ndarray, s: np.ndarray, n_questions: int = 0) -> dict:
    cands = np.unique(np.round(s, 3))
    return max((prf(y, s, t, n_questions) for t in cands), key=lambda d: (d["f1"], -d["threshold"]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--judge", default="default", help="default (the shipped nli judge) or cosine (the baseline)")
    ap.add_argument("--role", default="nli", choices=("nli", "evaluator"), help="the judge role that filters")
    ap.add_argument("--fixed", default=None, help="thresholds to report (default: a grid on the role's scale)")
    args = ap.parse_args(argv)

    from ragraphs.datasets import load_dataset
    from ragraphs.nodes.erm4 import knowledge_text
    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.judges import CosineNLIJudge, load_default_judge

    emb = MiniLMEmbeddings()
    if args.judge == "cosine":
        judge = CosineNLIJudge(emb)
    else:
        judge = load_default_judge(args.role, embeddings=emb)
    fixed = [float(t) for t in (args.fixed or ("-0.5,-0.25,0,0.25,0.5,0.75" if args.role == "evaluator" else "0.1,0.25,0.5,0.75,0.9")).split(",")]
    ys, ss, nq = [], [], 0
    for path in args.files:
        exs = load_dataset(path)
        pairs, y = [], []
        for ex in exs:
            for p in ex.paragraphs:
                k = knowledge_text(p)
                pairs.append((ex.question, k) if args.role == "evaluator" and args.judge != "cosine" else (k, ex.question))
                y.append(bool((p.get("meta") or {}).get("supporting")))
        t0 = time.time()
        s = np.asarray(judge.score_batch(pairs), dtype=np.float32)
        y = np.asarray(y)
        ys.append(y)
        ss.append(s)
        nq += len(exs)
        out = {"file": path, "questions": len(exs), "pairs": len(pairs), "positives": int(y.sum()),
               "seconds": round(time.time() - t0, 1), "best_f1": best(y, s, len(exs)),
               "fixed": [prf(y, s, t, len(exs)) for t in fixed]}
        print(json.dumps(out), flush=True)
    y, s = np.concatenate(ys), np.concatenate(ss)
    print(json.dumps({"file": "pooled", "role": args.role, "judge": getattr(judge, "name", args.judge),
                      "questions": nq, "best_f1": best(y, s, nq), "fixed": [prf(y, s, t, nq) for t in fixed]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
