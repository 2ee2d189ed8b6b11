"""Ingest throughput: `ragraphs ingest` vs a plain sentence-transformers encode.

Usage:
    python bench/ingest_throughput.py DATA.jsonl [--repeat 2] [--json]

Measures, on the pooled paragraphs of a benchmark file (e.g. HotpotQA dev, 993 paragraphs):

1. baseline: `SentenceTransformer(all-MiniLM-L6-v2).encode(texts)` in float32, the library's
   defaults (batch 32), model already loaded;
2. ragraphs: the full ingest path (read + chunk + hash + int8 MiniLM embed + write to a
   fresh persistent Chroma store), model already loaded;
3. the quality cost of the int8 fast path: cosine between int8 and float32 vectors, and
   recall@k of the gold supporting paragraphs (dense retrieval over the pooled corpus)
   with each variant.

Both timed runs take the best of --repeat runs, in the same process, one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from ragraphs.datasets import load_dataset, pooled_passages
    from ragraphs.ingest import ingest
    from ragraphs.tools.embeddings import MiniLMEmbeddings, load_sentence_transformer
    from ragraphs.tools.vectorstore import ChromaCorpus, InMemoryCorpus

    examples = load_dataset(args.data)
    passages = pooled_passages(examples)
    texts = [f"{p['title']}. {p['text']}" for p in passages]
    n = len(texts)

    plain = load_sentence_transformer(fast=False)
    plain.encode(texts[:8])  # warm-up
    base_times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        exact = plain.encode(texts, normalize_embeddings=True)
        base_times.append(time.perf_counter() - t)
    base = min(base_times)

    fast_emb = MiniLMEmbeddings(fast=True)
    fast_emb.encode(texts[:8])  # load + warm-up
    ing_times = []
    for _ in range(args.repeat):
        d = tempfile.mkdtemp(prefix="ragraphs-bench-")
        try:
            corpus = ChromaCorpus(os.path.join(d, "chroma"), collection="bench", embeddings=fast_emb)
            t = time.perf_counter()
            rep = ingest([args.data], corpus, progress=False)
            ing_times.append(time.perf_counter() - t)
            assert rep.added == rep.passages, (rep.added, rep.passages)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    ing = min(ing_times)

    fast_vecs = fast_emb.encode(texts)
    cos = (fast_vecs * np.asarray(exact)).sum(axis=1)

    def recall(emb) -> float:
        corpus = InMemoryCorpus(passages, embeddings=emb)
        got, total = 0, 0
        qs = [ex.question for ex in examples if ex.supporting_ids]
        gold = [ex.supporting_ids for ex in examples if ex.supporting_ids]
        for hits, g in zip(corpus.search_many(qs, args.k), gold):
            got += len(g & {h["id"] for h in hits})
            total += len(g)
        return got / max(1, total)

    r_exact = recall(MiniLMEmbeddings(fast=False))
    r_fast = recall(fast_emb)
    out = {
        "passages": n,
        "baseline_encode_s": round(base, 2),
        "baseline_passages_per_s": round(n / base, 1),
        "ragraphs_ingest_s": round(ing, 2),
        "ragraphs_passages_per_s": round(n / ing, 1),
        "speedup": round(base / ing, 2),
        "int8_vs_fp32_cosine_mean": round(float(cos.mean()), 4),
        "int8_vs_fp32_cosine_min": round(float(cos.min()), 4),
        f"recall@{args.k}_fp32": round(r_exact, 4),
        f"recall@{args.k}_int8": round(r_fast, 4),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:28s} {v}")


if __name__ == "__main__":
    main()
