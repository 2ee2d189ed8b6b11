"""Continue the shipped judges' pair role with a ranking objective (#15): CFS keeps the *best*
partner of each static document, so train the pair classifier to put the gold partner first
among the candidates the second stage hands it, instead of classifying random pairs.

For every training question and every supporting paragraph d*, one group per gold partner g:
(q, d* [SEP] g) against (q, d* [SEP] n) for the ``--negatives`` non-supporting paragraphs of the
file nearest (MiniLM cosine) to q + d* (what DR-RAG's second stage retrieves), each text cut
as CFS reads it (``pair_tokens`` shared by d* and the candidate). Loss: sentence-transformers'
``MultipleNegativesRankingLoss`` for cross-encoders (softmax over the group's sigmoid scores;
one in-batch negative). Starts from the shipped int8 weights (dequantized), writes an int8
judges directory with the shipped description (its cuts are refitted afterwards by
``bench/judges_fit_cuts.py`` on the dev files' ``judge-eval`` rows).

Usage:
    python bench/pair_rank_train.py OUT --data ../shared/data/train/*.jsonl [--negatives 7]
        [--epochs 1] [--lr 2e-5] [--batch-size 8] [--pair-tokens 96] [--max-groups N] [--keep-torch]
    python bench/pair_rank_train.py --rank JUDGES_DIR --data ../shared/data/*.dev.jsonl
        (the same groups built from other files, read by a judges directory: top-1 accuracy and
        mean reciprocal rank of the gold partner among its 1 + negatives candidates, per file;
        a directory holding model.safetensors is read in fp32 by torch)
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def minilm():
    """MiniLM's encoder, loaded once per process, for mining the negatives."""
    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.judges.baselines import _EmbeddingCache

    return _EmbeddingCache(MiniLMEmbeddings(fast=True), 10**7).encode


def groups(files, negatives: int, pair_tokens: int, tok, seed: int, embed=None):
    from ragraphs.tools.judges.core import PREFIX, balanced_pairs, clean, passage_text
    from ragraphs.tools.judges.data import _pair_miner, _row_examples

    embed = embed or minilm()
    rows = []
    for f in files:
        exs = [ex for _r, ex in _row_examples(f)]
        mine = _pair_miner(exs, embed, negatives)
        n0 = len(rows)
        for ex in exs:
            sup = list(ex.supporting)
            if len(sup) < 2:
                continue
            q = PREFIX["pair"] + clean(ex.question, 600)
            for d in sup:
                negs = mine(ex, d)
                if len(negs) < negatives:
                    continue
                dt = clean(passage_text(d), 1000)
                for g in sup:
                    if g["id"] == d["id"]:
                        continue
                    cands = [g] + negs
                    texts = balanced_pairs(tok, [(q, dt, clean(passage_text(c), 1000)) for c in cands], pair_tokens)
                    rows.append([q] + [t[1] for t in texts])
        print(f"{Path(f).name}: {len(rows) - n0} groups", file=sys.stderr, flush=True)
    random.Random(seed).shuffle(rows)
    return rows


def rank(judges_dir: str, files, negatives: int, pair_tokens: int) -> dict:
    import numpy as np

    from ragraphs.tools.judges import load_judge

    torch_weights = judges_dir != "shipped" and (Path(judges_dir) / "model.safetensors").is_file()
    judge = load_judge("pair", None if judges_dir == "shipped" else judges_dir, backend="torch" if torch_weights else None)
    embed = minilm()
    out = {}
    for f in files:
        rows = groups([f], negatives, pair_tokens, judge.model.tokenizer, 0, embed)
        top1, rr = [], []
        for r in rows:
            s = judge._probs([(r[0], t) for t in r[1:]])
            pos = int((s[1:] >= s[0]).sum())  # candidates scored at or above the gold partner
            top1.append(pos == 0)
            rr.append(1.0 / (pos + 1))
        out[Path(f).name] = {"groups": len(rows), "top1": round(float(np.mean(top1)), 4), "mrr": round(float(np.mean(rr)), 4)}
        print(Path(f).name, out[Path(f).name], flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?")
    ap.add_argument("--rank", metavar="JUDGES_DIR", help="read the groups of --data with these judges (or 'shipped')")
    ap.add_argument("--data", nargs="+", required=True)
    ap.add_argument("--init", default=None, help="judges directory to continue (default: the shipped ones)")
    ap.add_argument("--negatives", type=int, default=7)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--pair-tokens", type=int, default=96)
    ap.add_argument("--max-groups", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-torch", action="store_true", help="keep the fp32 weights beside the int8 file")
    a = ap.parse_args(argv)
    if a.rank:
        print(json.dumps(rank(a.rank, a.data, a.negatives, a.pair_tokens)))
        return 0
    if not a.out:
        ap.error("OUT is needed to train")

    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import MultipleNegativesRankingLoss

    from ragraphs.tools.judges.core import weights_dir
    from ragraphs.tools.judges.onnx import export_int8, restore_fp32

    torch.manual_seed(a.seed)
    t0 = time.perf_counter()
    src = Path(a.init) if a.init else weights_dir()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    init = restore_fp32(src, out / "_init")
    model = CrossEncoder(str(init), num_labels=1, max_length=256, device="cpu", local_files_only=True)
    rows = groups(a.data, a.negatives, a.pair_tokens, model.tokenizer, a.seed)
    if a.max_groups:
        rows = rows[: a.max_groups]
    cols = ["anchor", "positive"] + [f"negative_{i}" for i in range(1, a.negatives + 1)]
    ds = Dataset.from_dict({c: [r[i] for r in rows] for i, c in enumerate(cols)})
    print(f"{len(ds)} groups of 1 + {a.negatives}; built in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    steps = max(1, int(-(-len(ds) // a.batch_size) * a.epochs))
    args = CrossEncoderTrainingArguments(
        output_dir=str(out / "_train"), num_train_epochs=a.epochs, per_device_train_batch_size=a.batch_size,
        learning_rate=a.lr, warmup_steps=0.1, weight_decay=0.01, seed=a.seed, data_seed=a.seed,
        logging_steps=max(1, min(20, steps // 10)), report_to="none", disable_tqdm=False, use_cpu=True,
        dataloader_num_workers=0, save_strategy="no",
    )
    loss = MultipleNegativesRankingLoss(model, num_negatives=1)
    trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=ds, loss=loss)
    t1 = time.perf_counter()
    trainer.train()
    secs = time.perf_counter() - t1
    curve = [[int(h["step"]), round(float(h["loss"]), 4)] for h in trainer.state.log_history if "loss" in h]
    model.save(str(out))
    meta = json.loads((src / "ragraphs_judge.json").read_text(encoding="utf-8"))
    meta["pair_rank"] = {"init": str(src.name if a.init else "shipped"), "files": [Path(f).name for f in a.data],
                         "groups": len(ds), "negatives": a.negatives, "epochs": a.epochs, "lr": a.lr,
                         "batch_size": a.batch_size, "pair_tokens": a.pair_tokens, "steps": int(trainer.state.global_step),
                         "seconds": round(secs, 1), "loss_curve": curve}
    (out / "ragraphs_judge.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    meta["onnx_file"] = export_int8(out, 256)
    (out / "ragraphs_judge.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    for f in ("onnx/model.onnx",) if a.keep_torch else ("model.safetensors", "onnx/model.onnx"):
        (out / f).unlink(missing_ok=True)
    (out / "README.md").unlink(missing_ok=True)  # sentence-transformers' model card
    shutil.rmtree(out / "_init", ignore_errors=True)
    shutil.rmtree(out / "_train", ignore_errors=True)
    print(f"trained {len(ds)} groups in {secs:.0f} s, loss {curve[0][1] if curve else '?'} -> "
          f"{curve[-1][1] if curve else '?'}; wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
