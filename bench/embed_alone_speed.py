"""The int8 MiniLM reading each text alone against batches of 32 (bench/results/embed_per_text/).

    python bench/embed_alone_speed.py        # RAGRAPHS_EMBED_CACHE=0 is set here

Embeds the pooled paragraphs of the HotpotQA and MuSiQue dev files (longest first, 32 at a
time, as ``MiniLMEmbeddings.encode`` orders them) and their questions, twice, in turn:
``SentenceTransformer.encode`` with batches of 32 (the int8 embedder until 2026-11-29) and
``MiniLMEmbeddings(fast=True).encode`` (each text alone). Prints passages per second, ms per
question, and the largest difference between the alone vectors and the library's own
``encode(batch_size=1)``.
"""

import os
import sys
import time
from pathlib import Path

os.environ["RAGRAPHS_EMBED_CACHE"] = "0"

import numpy as np  # noqa: E402
import torch  # noqa: E402

from ragraphs.datasets import load_dataset  # noqa: E402
from ragraphs.tools.embeddings import MiniLMEmbeddings, load_sentence_transformer  # noqa: E402

DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    emb = MiniLMEmbeddings(fast=True)
    model = load_sentence_transformer(True)
    for d in ("hotpotqa", "musique"):
        exs = load_dataset(str(DATA / f"{d}.dev.jsonl"), d)
        texts = sorted({p["title"] + ". " + p["text"] for ex in exs for p in ex.paragraphs}, key=len, reverse=True)
        qs = [ex.question for ex in exs]
        res: dict[str, list] = {}
        for _ in range(2):
            t = time.time()
            with torch.inference_mode():
                for s in range(0, len(texts), 32):
                    model.encode(texts[s : s + 32], batch_size=32, show_progress_bar=False)
            res.setdefault("passages/s, batch of 32", []).append(round(len(texts) / (time.time() - t), 1))
            t = time.time()
            vecs = emb.encode(texts)
            res.setdefault("passages/s, alone", []).append(round(len(texts) / (time.time() - t), 1))
            t = time.time()
            emb.encode(qs)
            res.setdefault("ms per question, alone", []).append(round(1000 * (time.time() - t) / len(qs), 2))
            t = time.time()
            with torch.inference_mode():
                model.encode(qs, batch_size=32, show_progress_bar=False)
            res.setdefault("ms per question, batch of 32", []).append(round(1000 * (time.time() - t) / len(qs), 2))
        ref = model.encode(texts[:200], batch_size=1, normalize_embeddings=True)
        print(d, len(texts), res, "max |alone - encode(batch_size=1)|:", float(np.abs(ref - vecs[:200]).max()), flush=True)


if __name__ == "__main__":
    main()
