"""Recall of MIGRES's first Knowledge Filter pass against its passage threshold (no LLM call).

For every question of the dev files with supporting paragraphs (each file's paragraphs pooled
as its corpus), this retrieves the question's top k (dense and hybrid), scores passages and
sentences with the shipped evaluator, and replays ``filter_knowledge`` for each threshold
(passage and sentence threshold equal, as by default): passages under the threshold are
dropped, a survivor keeps the sentences at or over it (or stays whole when it outscores all
of them), and the best ``max_passages`` go on. Printed per file, retrieval mode and threshold:
the recall of the gold paragraphs among the kept passages, their count, their characters and
the questions where nothing survives (those go to knowledge prompting).

    python bench/migres_filter_recall.py > bench/results/migres_filter_recall.txt
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragraphs.datasets import load_dataset, pooled_passages  # noqa: E402
from ragraphs.evaluation.corpus import PooledCorpus  # noqa: E402
from ragraphs.nodes.migres import filter_doc, kept_text  # noqa: E402
from ragraphs.nodes.retrieve import search_many  # noqa: E402
from ragraphs.tools.embeddings import MiniLMEmbeddings  # noqa: E402
from ragraphs.tools.judges import load_default_judge  # noqa: E402
from ragraphs.tools.text import split_sentences  # noqa: E402


def kept_passages(cands, p_scores, sentences, s_scores, th, max_passages):
    """(id, passage score, kept characters) of what ``filter_knowledge`` hands on."""
    kept = []
    for p, sc, sl, scs in zip(cands, p_scores, sentences, s_scores):
        if sc < th:
            continue
        text, _ = kept_text(p["text"], sc, sl, scs, th)
        if text.strip():
            kept.append((p["id"], sc, len(text)))
    return sorted(kept, key=lambda x: -x[1])[:max_passages]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--datasets", default="hotpotqa,2wikimultihopqa,musique")
    ap.add_argument("--k", type=int, default=8, help="passages retrieved (MIGRESContext.k)")
    ap.add_argument("--max-passages", type=int, default=5)
    ap.add_argument("--thresholds", default="-1.01,-0.8,-0.6,-0.4,-0.2,0.0,0.08",
                    help="evaluator scale [-1, 1]; -1.01 keeps everything, 0.08 is the judge's own cut")
    args = ap.parse_args(argv)
    ths = [float(x) for x in args.thresholds.split(",")]
    emb = MiniLMEmbeddings(fast=True)
    ev = load_default_judge("evaluator")
    for ds in args.datasets.split(","):
        path = os.path.join(args.data_dir, f"{ds}.dev.jsonl")
        exs = [e for e in load_dataset(path, ds) if e.supporting]
        corpus = PooledCorpus(pooled_passages(load_dataset(path, ds)), emb, quiet=True)
        res: dict = {}
        for ex in exs:
            gold = {g["id"] for g in ex.supporting}
            for mode in ("dense", "hybrid"):
                cands = search_many(corpus, [ex.question], args.k, mode, 60)[0][: args.k]
                p_scores = [float(x) for x in ev.score_batch([(ex.question, filter_doc(p)) for p in cands])]
                sentences = [split_sentences(p["text"]) for p in cands]
                s_scores = [[float(x) for x in ev.score_batch([(ex.question, s) for s in sl])] if sl else []
                            for sl in sentences]
                for th in ths:
                    kept = kept_passages(cands, p_scores, sentences, s_scores, th, args.max_passages)
                    res.setdefault((mode, th), []).append(
                        (len(gold & {k[0] for k in kept}) / len(gold), len(kept), sum(k[2] for k in kept)))
        for (mode, th), xs in sorted(res.items()):
            a = np.array(xs)
            print(f"{ds} n={len(exs)} {mode} threshold {th}: recall {100 * a[:, 0].mean():.1f} docs {a[:, 1].mean():.2f} "
                  f"chars {a[:, 2].mean():.0f} nothing kept {int((a[:, 1] == 0).sum())}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
