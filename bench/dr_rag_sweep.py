"""Sweep DR-RAG's cascade settings from one pass of model calls per question.

For each question of the dev files (each file's paragraphs pooled as its corpus) this scores,
once, everything any configuration of the grid can look at: the first-stage hybrid candidates
(each depth) with the evaluator, the second-stage lists of the top re-ranked documents with the
evaluator (against the question, and against q + d_i) and with the pair classifier; then it
replays the graph's selection (the node helpers ``forward_walk``, ``fill_budget``,
``qdc_select``) for every configuration without another model call. The numbers to report come
from ``ragraphs eval`` with the chosen defaults; this only picks them.

    python bench/dr_rag_sweep.py --json sweep.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragraphs.datasets import load_dataset, pooled_passages  # noqa: E402
from ragraphs.evaluation.corpus import PooledCorpus  # noqa: E402
from ragraphs.nodes.dr_rag import concat_query, judge_text  # noqa: E402
from ragraphs.nodes.dr_rag_select import fill_budget, forward_walk, qdc_select  # noqa: E402
from ragraphs.nodes.rerank import judge_scores  # noqa: E402
from ragraphs.nodes.retrieve import search_many  # noqa: E402
from ragraphs.tools.embeddings import MiniLMEmbeddings  # noqa: E402
from ragraphs.settings import DRRAGContext  # noqa: E402
from ragraphs.tools.judges import load_default_judge, score_triples  # noqa: E402

DATASETS = ("hotpotqa", "2wikimultihopqa", "musique")


def collect(corpus, ev, pj, question, depths, k1max, k2max, concat: bool, second_plain: bool = False):
    """Everything the grid needs for one question (model calls happen here only)."""
    qcache: dict = {}
    out: dict = {"first": {}, "second": {}}
    for d in depths:
        cands = search_many(corpus, [question], d, "hybrid", 60)[0][:d]
        judge_scores(ev, question, cands, qcache)
        out["first"][d] = cands
    for d in depths:
        for order in ("rerank", "none") if second_plain else ("rerank",):
            cands = out["first"][d]
            ranked = sorted(cands, key=lambda p: -qcache[p["id"]]) if order == "rerank" else cands
            for p in ranked[:k1max]:
                if p["id"] in out["second"]:
                    continue
                lst = search_many(corpus, [concat_query(question, p)], k2max, "hybrid", 60)[0]
                judge_scores(ev, question, lst, qcache)
                pair = score_triples(pj, [(question, judge_text(p), judge_text(x)) for x in lst], DRRAGContext().pair_tokens)
                cat = {}
                if concat:
                    judge_scores(ev, concat_query(question, p), lst, cat)
                out["second"][p["id"]] = {"list": lst, "pair": {x["id"]: float(s) for x, s in zip(lst, pair)}, "concat": cat}
    out["q"] = qcache
    return out


def pool_pick(first, second, score_of, th, k):
    """An alternative to Algorithm 1 (not in the graph): pool every d_i's candidates, score
    each by its best pair score with any d_i, and add the best accepted ones up to the budget
    (so one d_i may bring two partners and a d_i with none brings nothing)."""
    have = {p["id"] for p in first}
    best: dict = {}
    for p, lst in zip(first, second):
        for x in lst:
            if x["id"] not in have:
                s = score_of[(p["id"], x["id"])]
                if x["id"] not in best or s > best[x["id"]][1]:
                    best[x["id"]] = (x, s)
    ranked = sorted(best.values(), key=lambda xs: -xs[1])
    return [x for x, s in ranked if s >= th][: max(0, k - len(first))]


def select(data, cfg, k, gold=frozenset()):
    """The documents a configuration hands the LLM (replaying the graph's selection); ``gold``
    is read by the ``oracle`` pick only."""
    cands = data["first"][cfg["depth"]]
    q = data["q"]
    if cfg["rerank"]:
        cands = sorted(cands, key=lambda p: -q[p["id"]])
    if cfg["strategy"] == "sm":
        return cands[:k]
    first = cands[: cfg["k1"]]
    second = []
    for p in first:
        s = data["second"][p["id"]]
        lst = s["list"][: cfg["k2"]]
        if cfg["rerank"] and cfg["second_rerank"] == "question":
            lst = sorted(lst, key=lambda x: -q[x["id"]])
        elif cfg["rerank"] and cfg["second_rerank"] == "concat":
            lst = sorted(lst, key=lambda x: -s["concat"][x["id"]])
        second.append(lst)
    if cfg["strategy"] == "qdc":
        return first + qdc_select(first, second, k)
    w = cfg.get("mix", 0.0)  # weight of the evaluator's (q, d') probability mixed into the pair score
    score_of = {(p["id"], x["id"]): (1 - w) * data["second"][p["id"]]["pair"][x["id"]] + w * (q[x["id"]] + 1) / 2
                for p, lst in zip(first, second) for x in lst}
    if cfg["pick"] == "oracle":  # the gold candidate when the lists hold one: the ceiling of any pick
        score_of = {key: float(key[1] in gold) for key in score_of}
    if cfg["pick"] == "pool":
        added = pool_pick(first, second, score_of, cfg["th"], k)
    else:
        added, _ = forward_walk(first, second, score_of, cfg["th"], k, "best" if cfg["pick"] == "oracle" else cfg["pick"])
    filled = fill_budget(first + added, cands, k) if cfg["fill"] else []
    return first + added + filled


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--depths", default="20,30")
    ap.add_argument("--k1", default="1,2,3")
    ap.add_argument("--k2", default="5,10")
    ap.add_argument("--thresholds", default="0.05,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8")
    ap.add_argument("--mix", default="0", help="weights of the evaluator's score mixed into CFS's pair score")
    ap.add_argument("--oracle", action="store_true", help="also the rows whose pick knows the gold (a ceiling)")
    ap.add_argument("--no-concat", action="store_true", help="skip the q + d_i re-ranking (saves model calls)")
    ap.add_argument("--plain-second", action="store_true", help="also the two-stage rows without a re-ranker")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--scores", default=None,
                    help="pickle of the scored questions: read when it exists (no model call), else written")
    ap.add_argument("--print-all", action="store_true", help="every configuration, not only the best 25")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    depths = [int(x) for x in args.depths.split(",")]
    k1s, k2s = [int(x) for x in args.k1.split(",")], [int(x) for x in args.k2.split(",")]
    ths = [float(x) for x in args.thresholds.split(",")]
    mixes = [float(x) for x in args.mix.split(",")]
    key = {"depths": depths, "k1": max(k1s), "k2": max(k2s), "concat": not args.no_concat,
           "plain_second": args.plain_second, "limit": args.limit}
    per_ds: dict = {}
    if args.scores and os.path.exists(args.scores):
        with open(args.scores, "rb") as fh:
            saved = pickle.load(fh)
        if saved["key"] != key:
            raise SystemExit(f"--scores {args.scores} was collected with {saved['key']}, not {key}")
        per_ds = saved["rows"]
    else:
        emb = MiniLMEmbeddings(fast=True)
        ev, pj = load_default_judge("evaluator"), load_default_judge("pair")
        for ds in args.datasets.split(","):
            exs = [e for e in load_dataset(os.path.join(args.data_dir, f"{ds}.dev.jsonl"), ds, limit=args.limit) if e.supporting]
            corpus = PooledCorpus(pooled_passages(load_dataset(os.path.join(args.data_dir, f"{ds}.dev.jsonl"), ds)), emb, quiet=True)
            t0 = time.perf_counter()
            rows = []
            for i, ex in enumerate(exs):
                rows.append(([g["id"] for g in ex.supporting],
                             collect(corpus, ev, pj, ex.question, depths, max(k1s), max(k2s), not args.no_concat,
                                     args.plain_second)))
                if i % 10 == 9:
                    print(f"  {ds}: {i + 1}/{len(exs)} ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
            print(f"{ds}: {len(rows)} questions scored in {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
            per_ds[ds] = rows
        if args.scores:
            Path(args.scores).parent.mkdir(parents=True, exist_ok=True)
            with open(args.scores, "wb") as fh:
                pickle.dump({"key": key, "rows": per_ds}, fh)
    grid = []
    for rr, d in itertools.product((True, False), depths):
        grid.append({"strategy": "sm", "rerank": rr, "depth": d})
        if not rr and not args.plain_second:
            continue
        for k1, k2, sr in itertools.product(k1s, k2s, ("question", "concat", "none") if rr else ("none",)):
            if sr == "concat" and args.no_concat:
                continue
            base = {"rerank": rr, "depth": d, "k1": k1, "k2": k2, "second_rerank": sr}
            grid.append({"strategy": "qdc", **base})
            for th, pick, fill in itertools.product(ths, ("first", "best", "pool"), (True, False)):
                for w in mixes:
                    grid.append({"strategy": "cfs", **base, "th": th, "pick": pick, "fill": fill,
                                 **({"mix": w} if w else {})})
            if args.oracle:
                grid.append({"strategy": "cfs", **base, "th": 0.5, "pick": "oracle", "fill": True})
    results = []
    for cfg in grid:
        rec = {}
        for ds, rows in per_ds.items():
            r, n = [], []
            for gold_ids, data in rows:
                gold = set(gold_ids)
                ids = {p["id"] for p in select(data, cfg, args.k, gold)}
                r.append(len(gold & ids) / len(gold))
                n.append(len(ids))
            rec[ds] = (100 * float(np.mean(r)), float(np.mean(n)))
        results.append({"cfg": cfg, "recall": rec, "mean": float(np.mean([v[0] for v in rec.values()]))})
    results.sort(key=lambda x: -x["mean"])
    def show(x):
        cells = "  ".join(f"{ds[:8]} {v[0]:5.1f} ({v[1]:.2f})" for ds, v in x["recall"].items())
        return f"{x['mean']:5.1f}  {cells}  {json.dumps(x['cfg'])}"
    print("best 25:")
    for x in results if args.print_all else results[:25]:
        print(show(x))
    print("SM rows:")
    for x in results:
        if x["cfg"]["strategy"] == "sm":
            print(show(x))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
