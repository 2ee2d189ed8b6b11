"""DR-RAG retrieval recall (the paper's Table 5) on pooled benchmark corpora.

For each data file, every question's paragraphs are pooled into one corpus; each question
runs through the DR-RAG graph with ``skip_generation`` (no LLM call) and we measure the
recall of its gold supporting paragraphs among the documents handed to the LLM
(``passages``) and how many documents that was. Questions without gold paragraphs are
left out of the averages (18 of the 100 2Wiki dev rows carry no paragraphs).

    python bench/dr_rag_recall.py                                  # the whole table
    python bench/dr_rag_recall.py --datasets hotpotqa --ks 4 --strategies sm,cfs \\
        --retrieval dense --second-retrieval bm25 --threshold 0.6,0.7

Rows: ``bm25`` is SM with BM25 retrieval (the paper's BM25 row); ``sm``, ``qdc``, ``cis``,
``cfs`` use ``--retrieval`` (default: DRRAGContext's). The pair classifier is
``c.judge("pair")`` (the shipped default); ``--judge cosine`` forces the cosine baseline.
Embeddings are cached per text inside the process (MiniLMEmbeddings' own cache; raise
``RAGRAPHS_EMBED_CACHE`` above its 50,000 default for the larger sweeps), and the pooled corpus vectors on disk
(``ragraphs.evaluation.corpus.PooledCorpus`` when present), so sweeps are cheap. Queries
are embedded exactly as the graph sends them (one question per call): the int8 MiniLM's
vectors depend slightly on the batch they are computed in (cosine ~0.97 between a query
embedded alone and inside a padded batch), which moves recall by a few points.
"""

from __future__ import annotations

import argparse
import itertools
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
from ragraphs.errors import RagraphsError  # noqa: E402
from ragraphs.graphs.dr_rag import DRRAGContext, build_dr_rag_graph  # noqa: E402
from ragraphs.tools.embeddings import MiniLMEmbeddings  # noqa: E402
from ragraphs.tools.llm import FakeAnswerChat  # noqa: E402

DATASETS = ("hotpotqa", "2wikimultihopqa", "musique")
NAMES = {"hotpotqa": "HotpotQA", "2wikimultihopqa": "2Wiki", "musique": "MuSiQue"}
# the paper's Table 5 (recall %, docs) for reference
PAPER = {
    ("musique", 3): {"bm25": (37.57, 3.00), "sm": (58.31, 3.00), "qdc": (58.44, 3.00), "cis": (57.42, 2.82), "cfs": (66.45, 2.95)},
    ("hotpotqa", 3): {"bm25": (64.67, 3.00), "sm": (80.33, 3.00), "qdc": (86.12, 3.00), "cis": (79.80, 2.74), "cfs": (88.89, 2.89)},
    ("2wikimultihopqa", 3): {"bm25": (57.46, 3.00), "sm": (74.34, 3.00), "qdc": (74.48, 3.00), "cis": (74.34, 2.60), "cfs": (87.81, 2.83)},
    ("musique", 4): {"bm25": (43.52, 4.00), "sm": (66.20, 4.00), "qdc": (70.30, 4.00), "cis": (66.45, 3.61), "cfs": (73.83, 3.82)},
    ("hotpotqa", 4): {"bm25": (70.72, 4.00), "sm": (85.57, 4.00), "qdc": (90.20, 4.00), "cis": (88.37, 3.43), "cfs": (92.28, 3.75)},
    ("2wikimultihopqa", 4): {"bm25": (63.95, 4.00), "sm": (80.05, 4.00), "qdc": (89.89, 4.00), "cis": (89.71, 3.03), "cfs": (94.13, 3.41)},
    ("musique", 6): {"bm25": (51.69, 6.00), "sm": (76.78, 6.00), "qdc": (79.46, 6.00), "cis": (77.13, 5.23), "cfs": (83.01, 5.69)},
    ("hotpotqa", 6): {"bm25": (79.93, 6.00), "sm": (92.59, 6.00), "qdc": (94.00, 6.00), "cis": (93.24, 4.72), "cfs": (96.27, 5.35)},
    ("2wikimultihopqa", 6): {"bm25": (73.95, 6.00), "sm": (88.83, 6.00), "qdc": (95.04, 6.00), "cis": (94.79, 3.72), "cfs": (98.04, 4.63)},
}


def make_corpus(passages, emb):
    try:
        from ragraphs.evaluation.corpus import PooledCorpus

        return PooledCorpus(passages, emb)
    except ImportError:
        from ragraphs.tools.vectorstore import InMemoryCorpus

        return InMemoryCorpus(passages, emb)


def recall_of(passages, gold) -> float | None:
    try:
        from ragraphs.evaluation.metrics import retrieval_recall

        return retrieval_recall(passages, gold)
    except ImportError:
        if not gold:
            return None
        ids = {p["id"] for p in passages}
        return sum(g["id"] in ids for g in gold) / len(gold)


def pair_judge(kind: str, emb):
    if kind == "cosine":
        from ragraphs.tools.judges import CosinePairJudge

        return CosinePairJudge(emb)
    from ragraphs.tools.judges import load_default_judge

    try:
        return load_default_judge("pair", embeddings=emb)
    except RagraphsError as e:
        from ragraphs.tools.judges import CosinePairJudge

        print(f"note: default pair judge unavailable ({e}); using the cosine baseline", file=sys.stderr)
        return CosinePairJudge(emb)


def run_rows(graph, examples, settings: dict) -> dict:
    ctx = DRRAGContext(skip_generation=True, **settings)
    recalls, docs, calls = [], [], 0
    t0 = time.perf_counter()
    for ex in examples:
        if not ex.supporting:
            continue
        out = graph.invoke({"question": ex.question}, context=ctx)
        ps = out.get("passages") or []
        recalls.append(recall_of(ps, ex.supporting))
        docs.append(len(ps))
        calls += int(out.get("llm_calls") or 0)
    return {
        "recall": 100.0 * float(np.mean(recalls)) if recalls else None,
        "docs": float(np.mean(docs)) if docs else None,
        "n": len(recalls),
        "llm_calls": calls,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--ks", default="3,4,6")
    ap.add_argument("--strategies", default="bm25,sm,qdc,cis,cfs")
    ap.add_argument("--retrieval", default=None, help="first stage (default: DRRAGContext's)")
    ap.add_argument("--second-retrieval", default=None, help="second stage (default: DRRAGContext's)")
    ap.add_argument("--k1", type=int, default=None)
    ap.add_argument("--k2", type=int, default=None)
    ap.add_argument("--threshold", default=None, help="pair threshold(s), comma-separated: a sweep")
    ap.add_argument("--judge", choices=["default", "cosine"], default="default")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        # on a shared CPU, torch's default thread pool makes each single-query encode
        # ~25x slower (measured: 2.8 s vs 0.11 s per query on 2 busy cores)
        torch.set_num_threads(args.threads)

    emb = MiniLMEmbeddings()  # caches each text's vector in the process (RAGRAPHS_EMBED_CACHE)
    judge = pair_judge(args.judge, emb)
    judge_name = getattr(judge, "name", type(judge).__name__)
    thresholds = [None] if args.threshold is None else [float(t) for t in args.threshold.split(",")]
    results = []
    for ds in args.datasets.split(","):
        path = os.path.join(args.data_dir, f"{ds}.dev.jsonl")
        examples = load_dataset(path, ds, limit=args.limit)
        corpus = make_corpus(pooled_passages(examples), emb)
        c = Components(llm=FakeAnswerChat(responses=["-"]), retriever=corpus, embeddings=emb, judges={"pair": judge})
        graph = build_dr_rag_graph(c)
        firsts = (args.retrieval or "").split(",")
        seconds = (args.second_retrieval or "").split(",")
        ks = [int(x) for x in args.ks.split(",")]
        for k, m1, m2, strat in itertools.product(ks, firsts, seconds, args.strategies.split(",")):
            if strat in ("bm25", "sm") and (m2 != seconds[0] or (strat == "bm25" and m1 != firsts[0])):
                continue  # one-stage rows do not depend on the second-stage mode
            for th in thresholds if strat in ("cis", "cfs") else [None]:
                s: dict = {"k": k, "strategy": "sm" if strat == "bm25" else strat}
                if strat == "bm25":
                    s["retrieval"] = "bm25"
                elif m1:
                    s["retrieval"] = m1
                if m2 and strat not in ("bm25", "sm"):
                    s["second_retrieval"] = m2
                for key in ("k1", "k2"):
                    if getattr(args, key) is not None:
                        s[key] = getattr(args, key)
                if th is not None:
                    s["pair_threshold"] = th
                r = run_rows(graph, examples, s)
                row = {"dataset": ds, "row": strat, "settings": s, "judge": judge_name, "corpus": corpus.count(), **r}
                paper = PAPER.get((ds, k), {}).get(strat)
                row["paper"] = paper
                results.append(row)
                ptxt = f"  paper {paper[0]:.2f} / {paper[1]:.2f}" if paper else ""
                modes = f"{s.get('retrieval', '-')}/{s.get('second_retrieval', '-')}"
                print(
                    f"{NAMES.get(ds, ds):9s} k={k} {strat:5s} {modes:13s} th={th if th is not None else '-':<5} "
                    f"recall {r['recall']:6.2f}  docs {r['docs']:.2f}  (n={r['n']}, {r['seconds']}s){ptxt}",
                    flush=True,
                )
    print()
    print(markdown_table(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"judge": judge_name, "results": results}, fh, indent=1)
    return 0


def markdown_table(results: list[dict]) -> str:
    dss = list(dict.fromkeys(r["dataset"] for r in results))
    lines = ["| k | strategy | " + " | ".join(f"{NAMES.get(d, d)} recall (docs)" for d in dss) + " |"]
    lines.append("|---|---|" + "---|" * len(dss))
    def key(r):
        s = r["settings"]
        return (s["k"], r["row"], s.get("retrieval"), s.get("second_retrieval"), s.get("pair_threshold"))

    keys = list(dict.fromkeys(key(r) for r in results))
    for kk in keys:
        k, row, m1, m2, th = kk
        cells = []
        for d in dss:
            m = [r for r in results if r["dataset"] == d and key(r) == kk]
            cells.append(f"{m[0]['recall']:.2f} ({m[0]['docs']:.2f})" if m else "")
        name = row + (f" {m1 or ''}/{m2 or ''}" if m1 or m2 else "") + (f" th={th}" if th is not None else "")
        lines.append(f"| {k} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
