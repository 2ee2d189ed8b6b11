"""Retune DR-RAG's settings that read the judges, through the graph itself.

Each configuration runs the real DR-RAG graph (``run_spec``, as ``ragraphs eval --retrieval-only``
does) on the whole dev files, each file's paragraphs pooled as its corpus. The judges' outputs
are memoised per input text, so a configuration that asks for a pair already scored costs no
model call: a grid of cuts and bonuses costs one pass of model calls per distinct input. The
recall is the graph's own; the milliseconds are not (memoised calls), so time comes from
``ragraphs eval`` with the chosen defaults.

    python bench/dr_rag_retune.py --grid default --out sweep.jsonl

``--grid`` names a list of configurations, each a dict of ``--set`` values: ``default`` (one
setting at a time), ``joint`` (the pair cut and both bonuses together) or a JSON list. Rows are
appended to ``--out`` as JSON lines (resumable: a configuration already there is skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragraphs.components import Components  # noqa: E402
from ragraphs.datasets import load_dataset, pooled_passages  # noqa: E402
from ragraphs.evaluation.corpus import PooledCorpus  # noqa: E402
from ragraphs.evaluation.runner import RunSpec, run_spec, unique_ids  # noqa: E402
from ragraphs.tools.embeddings import MiniLMEmbeddings  # noqa: E402
from ragraphs.tools.judges.core import CrossEncoderJudge  # noqa: E402

DATASETS = ("hotpotqa", "2wikimultihopqa", "musique")


def memoise_judges() -> dict:
    """Wrap the cross-encoder's forward pass in a cache keyed by its input texts (the
    judges are deterministic for one input); returns the counters."""
    cache: dict = {}
    stats = {"hits": 0, "misses": 0}
    probs = CrossEncoderJudge._probs

    def cached(self, pairs):
        keys = [(self.role, a, b) for a, b in pairs]
        todo = [i for i, k in enumerate(keys) if k not in cache]
        if todo:
            out = probs(self, [pairs[i] for i in todo])
            for i, v in zip(todo, out):
                cache[keys[i]] = float(v)
        stats["hits"] += len(keys) - len(todo)
        stats["misses"] += len(todo)
        return np.asarray([cache[k] for k in keys], dtype=np.float32)

    CrossEncoderJudge._probs = cached  # type: ignore[method-assign]
    return stats


def _grid(name: str) -> list[dict]:
    base: list[dict] = [{}]
    if name == "default":
        out = base + [{"pair_threshold": t} for t in (0.2, 0.3, 0.4, 0.55, 0.6, 0.7, 0.8)]
        out += [{"bridge_bonus": b} for b in (0.0, 0.05, 0.2, 0.3)]
        out += [{"link_bonus": b} for b in (0.0, 0.2, 0.4, 0.5)]
        out += [{"rerank": "evaluator"}, {"rerank": "evaluator", "rerank_depth": 20},
                {"rerank": "evaluator", "second_rerank": "none"}, {"rerank": "evaluator", "k1": 1},
                {"rerank": "evaluator", "k1": 3}, {"k1": 1}, {"k1": 3}]
        out += [{"strategy": "sm"}, {"strategy": "sm", "rerank": "evaluator"}]
        return out
    if name == "joint":  # the cut and both bonuses together, no re-ranker (the default grid's best)
        return [{"pair_threshold": t, "link_bonus": lb, "bridge_bonus": bb}
                for t in (0.3, 0.4805, 0.6, 0.7) for lb in (0.3, 0.5, 0.7, 1.0) for bb in (0.1, 0.2, 0.3)]
    if name.startswith("{") or name.startswith("["):
        v = json.loads(name)
        return v if isinstance(v, list) else [v]
    raise SystemExit(f"unknown grid {name!r}")


def report(path: str, split: str = "dev", top: int = 15) -> str:
    """The configurations run on every file of ``split``, best mean recall first, as Markdown."""
    by: dict = {}
    files: list = []
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if r.get("split", "dev") != split:
            continue
        if r["dataset"] not in files:
            files.append(r["dataset"])
        by.setdefault(json.dumps(r["settings"], sort_keys=True), {})[r["dataset"]] = 100 * r["recall"]
    rows = [(sum(v.values()) / len(v), k, v) for k, v in by.items() if len(v) == len(files)]
    rows.sort(key=lambda x: (-x[0], x[1]))
    keep = rows[:top] + [r for r in rows[top:] if r[1] == "{}"]  # the defaults of the time, wherever they rank
    out = [f"| settings ({split}) | " + " | ".join(files) + " | mean |", "| --- " * (len(files) + 2) + "|"]
    for mean, k, v in keep:
        out.append(f"| `{k}` | " + " | ".join(f"{v[f]:.1f}" for f in files) + f" | {mean:.1f} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--split", default="dev", help="reads DATA_DIR/<dataset>.<split>.jsonl (train: DATA_DIR/train/...)")
    ap.add_argument("--grid", default="default", help="'default' or a JSON dict / list of dicts of settings")
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--out", required=True, help="JSON lines, one per (configuration, dataset); appended")
    ap.add_argument("--report", action="store_true", help="print the table of --out (for --split) and stop")
    args = ap.parse_args(argv)
    if args.report:
        print(report(args.out, args.split))
        return 0
    import torch

    torch.set_num_threads(int(os.environ.get("RAGRAPHS_JUDGE_THREADS", "2")))
    stats = memoise_judges()
    done = set()
    if os.path.exists(args.out):
        for line in open(args.out, encoding="utf-8"):
            r = json.loads(line)
            done.add((r["dataset"], r.get("split", "dev"), json.dumps(r["settings"], sort_keys=True)))
    emb = MiniLMEmbeddings(fast=True)
    grid = _grid(args.grid)
    for ds in args.datasets.split(","):
        sub = "train" if args.split.endswith("train") else ""
        path = os.path.join(args.data_dir, sub, f"{ds}.{args.split}.jsonl")
        examples = unique_ids(load_dataset(path, ds))
        comps = Components(retriever=PooledCorpus(pooled_passages(examples), emb, quiet=True), embeddings=emb)
        for settings in grid:
            key = json.dumps(settings, sort_keys=True)
            if (ds, args.split, key) in done:
                continue
            s = dict(settings)
            strategy = s.pop("strategy", "cfs")
            spec = RunSpec(method="dr-rag", k=args.k, strategy=strategy, retrieval_only=True, settings=s)
            t0 = time.perf_counter()
            summary, _ = run_spec(spec, examples, comps, dataset=ds, data=path, out_dir=None, progress=False)
            row = {"dataset": ds, "split": args.split, "settings": settings, "n_with_gold": summary["n_with_gold"],
                   "recall": summary["recall"], "docs_avg": summary["docs_avg"],
                   "stages": {k: {"recall": v["recall"], "docs": v["docs"]} for k, v in summary["stages"].items()},
                   "wall_s": round(time.perf_counter() - t0, 1), "judge_calls_new": stats["misses"]}
            stats["misses"] = 0
            with open(args.out, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
            print(f"{ds:16s} recall@{args.k} {100 * row['recall']:5.1f} docs {row['docs_avg']:.2f} "
                  f"{row['wall_s']:6.1f}s {key}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
