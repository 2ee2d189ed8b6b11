"""Precompute (once) the MiniLM embeddings of every judge text in the given benchmark files.

    python bench/judges_embed_cache.py --cache /tmp/judges_emb.npz FILES...

Only speeds up repeated training/evaluation runs; results are identical without it.
"""
import argparse
import random
import sys
import time

from ragraphs.tools import judges as J

ap = argparse.ArgumentParser()
ap.add_argument("--cache", required=True)
ap.add_argument("files", nargs="+")
a = ap.parse_args()
enc = J.CachedMiniLM(a.cache)
for f in a.files:
    t = time.time()
    rows = J._row_examples(f)
    texts = set()
    for row, ex in rows:
        texts.add(ex.question)
        for p in ex.paragraphs:
            texts.add(J.passage_text(p))
        for s, r, o, p in J._facts(row, ex):
            texts.add(J.passage_text(p))
    texts = sorted(texts)
    for i in range(0, len(texts), 512):
        enc.encode(texts[i : i + 512])
        enc.save()
    print(f, len(texts), f"{time.time() - t:.0f}s", flush=True, file=sys.stderr)
