"""Calibrate ERM4's Retrieval Trigger (tau, at the paper's theta) on the 2Wiki dev file as a whole.

Reservoir: the supporting paragraphs of every dev question that lists similar questions
(``top_rank_questions``): the knowledge a good filter would have stored after answering them.
Queries: all those similar questions. A query *should be inside* the knowledge boundary when
it names an entity whose page is in the reservoir (a reservoir title occurs in it as whole
words, case-folded); otherwise it asks about something else and must go outside.

For each trigger (``title``: MiniLM cosine of query and title, the paper's S; ``evaluator``:
the cross-encoder evaluator on (query, "Title\\ncontent") for the ``--candidates`` entries
with the most similar titles) and theta, tau is swept and the inside decision is scored
against that label: precision (inside queries that name a stored entity), recall, F1 and the
share routed inside. Chosen tau: the highest recall with precision >= ``--min-precision``
(a query served from memory that it does not cover costs answers), ties to the larger tau.
No LLM involved; prints one JSON object per trigger and theta, then the choice.

    python bench/erm4_trigger_calibration.py \\
        ../shared/data/2wikimultihopqa.dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time

import numpy as np


def names_entity(question: str, titles: list[str]) -> bool:
    q = question.casefold()
    for t in titles:
        t = " ".join(t.split()).casefold()
        if len(t) >= 4 and re.search(r"(?<!\w)" + re.escape(t) + r"(?!\w)", q):
            return True
    return False


def sweep(y: np.ndarray, pops: dict[float, np.ndarray], theta: int) -> list[dict]:
    rows = []
    for tau, pop in sorted(pops.items()):
        inside = pop >= theta
        tp = float((inside & y).sum())
        p = tp / max(1.0, float(inside.sum()))
        r = tp / max(1.0, float(y.sum()))
        f = 2 * p * r / (p + r) if p + r else 0.0
        rows.append({"tau": round(tau, 3), "precision": round(p, 3), "recall": round(r, 3), "f1": round(f, 3),
                     "inside": round(float(inside.mean()), 3)})
    return rows


def choose(rows: list[dict], min_precision: float) -> dict | None:
    ok = [r for r in rows if r["precision"] >= min_precision and r["recall"] > 0]
    return max(ok, key=lambda r: (r["recall"], r["tau"])) if ok else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="2wikimultihopqa dev JSONL (rows with top_rank_questions)")
    ap.add_argument("--triggers", default="title,evaluator")
    ap.add_argument("--thetas", default="1,2,3")
    ap.add_argument("--candidates", type=int, default=10, help="evaluator trigger: entries pre-selected by title cosine")
    ap.add_argument("--min-precision", type=float, default=0.9)
    ap.add_argument("--per-question", type=int, default=0, help="similar questions used per dev question (0: all)")
    args = ap.parse_args(argv)

    from ragraphs.datasets import load_dataset
    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.judges import load_default_judge
    from ragraphs.tools.reservoir import Reservoir
    from ragraphs.tools.trigger import _text

    exs = [e for e in load_dataset(args.data, "2wikimultihopqa") if e.extra.get("top_rank_questions")]
    stored = {}
    for e in exs:
        for p in e.supporting:
            stored.setdefault(" ".join(p["title"].split()).casefold(), p)
    titles = [p["title"] for p in stored.values()]
    per = args.per_question or None
    queries = [q for e in exs for q in [s for s in e.extra["top_rank_questions"] if s.strip() and s.strip() != e.question.strip()][:per]]
    y = np.array([names_entity(q, titles) for q in queries])
    emb = MiniLMEmbeddings()
    res = Reservoir(tempfile.mkdtemp(prefix="erm4-cal-") + "/r.sqlite3", embeddings=emb)
    res.add(list(stored.values()))
    keys, sims = res.title_similarities(queries)
    head = {"questions": len(exs), "reservoir_entries": res.count(), "queries": len(queries),
            "should_be_inside": int(y.sum())}
    print(json.dumps(head), flush=True)
    choices = {}
    for how in [t for t in args.triggers.split(",") if t]:
        t0 = time.time()
        if how == "title":
            grid = np.round(np.arange(0.30, 1.0001, 0.025), 3)
            scores = np.sort(sims, axis=1)[:, ::-1]  # all titles, best first
        else:
            judge = load_default_judge("evaluator")
            m = args.candidates
            top = np.argsort(-sims, axis=1, kind="stable")[:, :m]
            pairs, shape = [], []
            for q, idx in zip(queries, top):
                ents = res.entries_for([keys[i] for i in idx])
                pairs += [(q, _text(p)) for p in ents]
                shape.append(len(ents))
            flat = np.asarray(judge.score_batch(pairs), dtype=np.float32)
            scores = np.full((len(queries), m), -np.inf, dtype=np.float32)
            o = 0
            for i, n in enumerate(shape):
                scores[i, :n] = np.sort(flat[o:o + n])[::-1]
                o += n
            grid = np.round(np.arange(-0.9, 1.0001, 0.05), 3)
        pops = {float(t): (scores >= t).sum(axis=1) for t in grid}
        for theta in [int(x) for x in args.thetas.split(",") if x]:
            rows = sweep(y, pops, theta)
            pick = choose(rows, args.min_precision)
            best_f1 = max(rows, key=lambda r: (r["f1"], r["tau"]))
            choices[(how, theta)] = pick
            print(json.dumps({"trigger": how, "theta": theta, "seconds": round(time.time() - t0, 1),
                              "chosen": pick, "best_f1": best_f1, "curve": rows}), flush=True)
    print(json.dumps({"choices": {f"{h}@theta{t}": c for (h, t), c in choices.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
