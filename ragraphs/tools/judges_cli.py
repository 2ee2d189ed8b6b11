"""CLI verbs for the compact judges: ``ragraphs train-judge`` and ``ragraphs judge-eval``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..errors import ConfigError, InputError

JUDGE_CHOICES = ("evaluator", "pair", "nli")


def _check_files(files):
    if not files:
        raise InputError("give at least one data file with --data")
    from .judges import parse_data_spec

    for f in files:
        path = parse_data_spec(f)[0]
        if not os.path.isfile(path):
            raise InputError(f"no such data file: {path}")


def _encoder(args):
    from .embeddings import MiniLMEmbeddings
    from .judges import CachedMiniLM

    if getattr(args, "embedding_cache", None):
        return CachedMiniLM(args.embedding_cache)
    return MiniLMEmbeddings(fast=True)


def cmd_train_judge(args: argparse.Namespace) -> int:
    from .judges import TrainConfig, train_judge

    _check_files(args.data)
    if args.hidden < 0 or args.epochs < 1:
        raise ConfigError("--hidden must be >= 0 and --epochs >= 1")
    if not 0.0 < args.val_fraction < 1.0:
        raise ConfigError("--val-fraction must be between 0 and 1")
    cfg = TrainConfig(hidden=args.hidden, epochs=args.epochs, lr=args.lr, weight_decay=args.weight_decay,
                      seed=args.seed, val_fraction=args.val_fraction)
    enc = _encoder(args)
    log = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    meta = train_judge(args.judge, args.data, args.out, cfg=cfg, limit=args.limit, embeddings=enc, log=log)
    if hasattr(enc, "save"):
        enc.save()
    if args.json:
        print(json.dumps(meta))
    else:
        v = meta["validation"]
        print(
            f"{args.judge} judge: validation accuracy {v['accuracy']:.3f}, AUC {v['auc']:.3f}, "
            f"precision {v['precision']:.3f}, recall {v['recall']:.3f} at threshold {meta['threshold']} "
            f"({meta['items']['validation']} held-out items; {meta['items']['train']} trained on; "
            f"{meta['n_params']} head parameters)"
        )
        print(f"saved {' and '.join(meta['paths'])}")
    return 0


def cmd_judge_eval(args: argparse.Namespace) -> int:
    from .judges import LLMJudge, baseline_judge, evaluate_judge, load_judge

    _check_files(args.data)
    enc = _encoder(args)
    if args.model == "trained":
        judge = load_judge(args.judge, args.weights, embeddings=enc)
    elif args.model == "cosine":
        judge = baseline_judge(args.judge, enc)
    else:
        from .llm import make_llm

        judge = LLMJudge(make_llm(args.llm, max_tokens=4), args.judge)
    base = baseline_judge(args.judge, enc) if args.baseline and args.model != "cosine" else None
    # with a persistent embedding cache the speed would not be real: no timing then
    timing = not args.no_timing and not args.embedding_cache
    res = evaluate_judge(args.judge, judge, args.data, threshold=args.threshold, seed=args.seed, limit=args.limit,
                         batch=args.batch, timing=timing, baseline=base)
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"{args.judge} judge ({res['model']}) on {', '.join(res['files'])}: {res['n']} items, {res['positives']} positive")
    print(f"  accuracy {res['accuracy']:.3f} at threshold {res['threshold']:.3f} (best threshold on these items: "
          f"{res['best_threshold_accuracy']:.3f}); AUC {res['auc']:.3f}; precision {res['precision']:.3f}, "
          f"recall {res['recall']:.3f}, F1 {res['f1']:.3f}")
    if "ms_per_pair" in res:
        extra = f"; {res['ms_per_pair_cached_passages']:.2f} ms with passage embeddings cached" if "ms_per_pair_cached_passages" in res else ""
        print(f"  speed: {res['ms_per_pair']:.2f} ms per item, encoding included (batches of {res['batch']}){extra}")
    for src, m in res["sources"].items():
        print(f"  {src}: {m['n']} items, accuracy {m['accuracy']:.3f}")
    if "baseline" in res:
        b = res["baseline"]
        print(f"  baseline {b['model']}: accuracy {b['accuracy']:.3f} at {b['threshold']:.3f}, best-threshold accuracy "
              f"{b['best_threshold_accuracy']:.3f}, AUC {b['auc']:.3f}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("train-judge", help="train a compact judge from benchmark files")
    p.add_argument("--judge", required=True, choices=JUDGE_CHOICES)
    p.add_argument("--data", nargs="+", metavar="FILE", required=True,
                   help="benchmark files (HotpotQA, 2Wiki, MuSiQue, PopQA formats); labels come from the files; "
                        "FILE@K/N takes part K of N of a file's questions (stable hash split)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for <judge>.npz and <judge>.json")
    p.add_argument("--hidden", type=int, default=32, help="hidden units of the head (0: logistic regression)")
    p.add_argument("--epochs", type=int, default=400)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=1e-3)
    p.add_argument("--val-fraction", type=float, default=0.2, help="share of questions held out for validation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=None, help="at most this many questions per file")
    p.add_argument("--embedding-cache", metavar="FILE", help="persistent .npz cache of MiniLM embeddings (speeds up reruns)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_train_judge)

    p = subparsers.add_parser("judge-eval", help="measure a judge on labelled pairs built from benchmark files")
    p.add_argument("--judge", required=True, choices=JUDGE_CHOICES)
    p.add_argument("--data", nargs="+", metavar="FILE", required=True)
    p.add_argument("--model", choices=["trained", "cosine", "llm"], default="trained",
                   help="the trained judge (default), the cosine baseline, or an LLM with the papers' prompt")
    p.add_argument("--weights", metavar="DIR|FILE", help="retrained weights (default: the shipped ones)")
    p.add_argument("--llm", default=None, help="model spec for --model llm")
    p.add_argument("--threshold", type=float, default=None, help="decision threshold (default: the judge's validated one)")
    p.add_argument("--baseline", action="store_true", help="also score the cosine baseline on the same items")
    p.add_argument("--batch", type=int, default=10, help="items per scoring call (default 10, like k retrieved passages)")
    p.add_argument("--limit", type=int, default=None, help="at most this many questions per file")
    p.add_argument("--seed", type=int, default=0, help="seed of the 1:1 balancing")
    p.add_argument("--no-timing", action="store_true", help="skip the speed measurement")
    p.add_argument("--embedding-cache", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_judge_eval)
