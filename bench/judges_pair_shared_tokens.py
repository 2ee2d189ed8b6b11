"""Experiment (not shipped): continue the shipped judges on the pair role only, with the
pair inputs built as DR-RAG reads them (``pair_tokens``: the room shared by d1 and d2).

    python bench/judges_pair_shared_tokens.py OUT_DIR [LR]      # LR default 2e-5; about 8 min on 2 cores

Then ``ragraphs judge-eval --judge pair --weights OUT_DIR --pair-tokens 112 ...`` and DR-RAG
with ``RAGRAPHS_JUDGES_DIR=OUT_DIR`` (results: docs/judges_experiments.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from transformers import AutoTokenizer

from ragraphs.settings import DRRAGContext
from ragraphs.tools.judges import train as T
from ragraphs.tools.judges.core import PREFIX, balanced_pair, clean, weights_dir

TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "train"
FILES = ["2wikimultihopqa.extra.train.jsonl", "2wikimultihopqa.train.jsonl", "hotpotqa.extra.train.jsonl",
         "hotpotqa.retrieved.train.jsonl", "hotpotqa.train.jsonl", "musique.extra.train.jsonl", "musique.train.jsonl"]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    tok = AutoTokenizer.from_pretrained(str(weights_dir()), local_files_only=True)
    budget = DRRAGContext().pair_tokens
    plain = T.item_texts

    def item_texts(role, it):  # the pair items as DR-RAG reads them; the other roles as trained
        if role == "pair":
            q, d1, d2 = it.texts
            return balanced_pair(tok, PREFIX["pair"] + clean(q, 600), clean(d1, 1000), clean(d2, 1000), budget)
        return plain(role, it)

    T.item_texts = item_texts
    cfg = T.TrainConfig(roles=("pair",), epochs=1.0, lr=float(argv[1]) if len(argv) > 1 else 2e-5, warmup_ratio=0.05,
                        batch_size=16, max_length=256, neg_ratio=2, max_per_file={}, seed=0, threads=2,
                        init=str(weights_dir()))
    t = time.time()
    meta = T.train_judges([str(TRAIN / f) for f in FILES], argv[0], cfg, log=lambda m: print(m, flush=True))
    print("done in", round(time.time() - t), "s;", meta.get("validation_int8"), meta.get("thresholds"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
