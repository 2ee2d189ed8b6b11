"""CLI verbs for the compact judges: ``ragraphs train-judge`` and ``ragraphs judge-eval``."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from typing import Any

from ..errors import ConfigError, InputError

JUDGE_CHOICES = ("evaluator", "pair", "nli")


def _check_files(files):
    if not files:
        raise InputError("give at least one data file with --data")
    from .judges.data import check_data_files

    check_data_files(files)


JUDGE_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "onnx/model_qint8.onnx")


def _check_training_shape(args: argparse.Namespace) -> None:
    """The options a training run reads after its items are built and its model loaded,
    checked before any of that (each one ended in a traceback there)."""
    if not 0.0 <= args.warmup < 1.0:  # transformers reads 1 or more as a number of steps
        raise ConfigError(f"--warmup is a share of the steps, from 0 to below 1, got {args.warmup}")
    if args.threads < 0:
        raise ConfigError(f"--threads must be >= 0 (0: every core), got {args.threads}")
    positions = _positions(args.init)
    if not 16 <= args.max_length <= positions:  # past the model's positions: a judge that failed on long texts
        raise ConfigError(f"--max-length must be from 16 to the model's {positions} positions, got {args.max_length}")
    if args.temperature is not None and not args.teachers:  # ignored without a word until 2026-12-03
        raise ConfigError("--temperature softens the --teachers' labels; without --teachers it would change nothing")
    if args.mine_k < 0 or args.pair_mine_k < 0:
        raise ConfigError("--mine-k and --pair-mine-k must be >= 0")
    if args.layers is not None and args.layers > 6 and args.init is None:
        raise ConfigError(f"--layers keeps the first N of the start model's layers (MiniLM has 6), got {args.layers}")
    _check_start_models(args)


def _check_start_models(args: argparse.Namespace) -> None:
    """``--init`` and ``--teachers``: judge folders that hold what the training reads of them."""
    for opt, d in [("--init", args.init), *(("--teachers", t) for t in args.teachers or ())]:
        if d is not None:
            _check_judge_folder(opt, d)
    for t in args.teachers or ():  # a teacher's untrained head labelled the items until 2026-12-03
        trained = _roles_of(t)
        lacking = [r for r in (args.judge or JUDGE_CHOICES) if r not in trained]
        if lacking:
            raise ConfigError(f"--teachers: {t} holds no judge for {', '.join(lacking)} (trained for "
                              f"{', '.join(trained) or 'no role'}); give --judge the roles it was trained for")
    if args.layers is not None and args.init is not None:
        try:
            with open(os.path.join(args.init, "config.json"), encoding="utf-8") as fh:
                have = int(json.load(fh).get("num_hidden_layers") or 0)
        except (OSError, ValueError, TypeError, AttributeError) as e:
            raise InputError(f"--init: {args.init}/config.json cannot be read: {e}") from e
        if have and args.layers > have:
            raise ConfigError(f"--layers keeps the first N of the --init model's {have} layers, got {args.layers}")


def _positions(init: str | None) -> int:
    """The token positions of the model training starts from (MiniLM's 512, or ``--init``'s)."""
    if init is None:
        return 512
    try:
        with open(os.path.join(init, "config.json"), encoding="utf-8") as fh:
            return int(json.load(fh).get("max_position_embeddings") or 512)
    except (OSError, ValueError, TypeError, AttributeError):  # checked later, with its message
        return 512


def _roles_of(folder: str) -> list[str]:
    """The roles a judge folder was trained for (its ragraphs_judge.json, read as the judges read
    it; all for a folder without one)."""
    from pathlib import Path

    from .judges.core import _describe

    meta = _describe(Path(folder))
    return list(meta.get("roles") or []) if meta else list(JUDGE_CHOICES)


def _check_judge_folder(opt: str, d: str) -> None:
    """What the training reads of a judge folder (``--init``, a ``--teachers`` one), checked
    before the items are built and the teachers run."""
    if not os.path.isdir(d):
        raise InputError(f"{opt}: no such folder: {d}")
    if not os.path.isfile(os.path.join(d, "config.json")):
        raise InputError(f"{opt}: {d} holds no judge: no config.json there")
    if not any(os.path.isfile(os.path.join(d, f)) for f in JUDGE_WEIGHTS):
        raise InputError(f"{opt}: {d} holds no judge weights: none of {', '.join(JUDGE_WEIGHTS)}")
    # a folder without a tokenizer read every word as [UNK] and its teachers' labels were one value;
    # a damaged ONNX file was a traceback after the items were built (both until 2026-12-01)
    from .judges.core import TOKENIZER_FILES, has_tokenizer

    if not has_tokenizer(d):
        raise InputError(f"{opt}: {d} holds no tokenizer: none of {', '.join(TOKENIZER_FILES)}")
    only_onnx = os.path.join(d, JUDGE_WEIGHTS[-1])
    if not any(os.path.isfile(os.path.join(d, f)) for f in JUDGE_WEIGHTS[:-1]):
        try:
            import onnx

            onnx.load(only_onnx, load_external_data=False)
        except Exception as e:
            raise InputError(f"{opt}: {only_onnx} cannot be read: {type(e).__name__}: "
                             f"{' '.join(str(e).split())[:160]}") from e


def cmd_train_judge(args: argparse.Namespace) -> int:
    from .judges.train import TrainConfig, train_judges

    _check_files(args.data)
    _check_numbers(args)
    _check_training_shape(args)
    roles = tuple(args.judge or JUDGE_CHOICES)
    no_cap: dict[str, Any] = {"max_per_file": {}} if args.no_cap else {}
    cfg = TrainConfig(roles=roles, epochs=args.epochs, lr=args.lr, warmup_ratio=args.warmup, batch_size=args.batch_size,
                      max_length=args.max_length, mine_k=args.mine_k, pair_mine_k=args.pair_mine_k, val_fraction=args.val_fraction, seed=args.seed,
                      threads=args.threads, limit=args.limit, init=args.init, neg_ratio=args.neg_ratio,
                      teachers=tuple(args.teachers or ()), temperature=2.0 if args.temperature is None else args.temperature,
                      layers=args.layers,
                      **no_cap)
    log = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    # the trainer prints its logs ({'loss': ...}) on stdout, where --json owes the JSON alone
    with contextlib.redirect_stdout(sys.stderr):
        meta = train_judges(args.data, args.out, cfg, log=log, progress=not args.json, keep_torch=args.keep_torch)
    if args.json:
        print(json.dumps(meta))
        return 0
    for role in roles:
        v, q = meta["validation_fp32"][role], meta["validation_int8"][role]
        print(f"{role}: held-out accuracy {v['accuracy']:.3f} / AUC {v['auc']:.3f} (fp32), "
              f"{q['accuracy']:.3f} / {q['auc']:.3f} (int8 ONNX) on {v['n']} items; threshold {meta['thresholds'][role]}")
    phases = meta.get("phases") or []
    went_on = f" ({meta['seconds']['train']:.0f} s with the judge it went on from)" if len(phases) > 1 else ""
    print(f"trained in {phases[-1]['seconds'] if phases else meta['seconds']['train']:.0f} s{went_on}; saved {args.out}")
    return 0


def _check_numbers(args: argparse.Namespace) -> None:
    """train-judge's numbers in their ranges, before any work."""
    if not (math.isfinite(args.epochs) and args.epochs > 0):  # nan, inf: a traceback after the model loaded (until 2026-12-03)
        raise ConfigError(f"--epochs must be a finite number > 0, got {args.epochs}")
    if not (math.isfinite(args.lr) and args.lr > 0) or args.batch_size < 1:
        # nan passed "<= 0" and failed in the optimizer with a traceback (until 2026-12-01), inf trained
        raise ConfigError(f"--lr must be > 0 (--lr a finite number, got {args.lr}) and --batch-size >= 1")
    if not 0 <= args.seed < 2**32:  # numpy's range: a traceback until 2026-12-03
        raise ConfigError(f"--seed must be from 0 to 2**32 - 1, got {args.seed}")
    if args.neg_ratio < 1:
        raise ConfigError("--neg-ratio must be >= 1")
    if args.temperature is not None and not (math.isfinite(args.temperature) and args.temperature > 0):
        raise ConfigError(f"--temperature must be a finite number > 0, got {args.temperature}")
    if args.layers is not None and args.layers < 1:
        raise ConfigError("--layers must be >= 1")
    if not 0.0 < args.val_fraction < 1.0:
        raise ConfigError("--val-fraction must be between 0 and 1")
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be >= 1 (leave it out for every question)")


def cmd_judge_eval(args: argparse.Namespace) -> int:
    from .embeddings import MiniLMEmbeddings
    from .judges import baseline_judge, evaluate_judge

    _check_files(args.data)
    _refuse_judge_eval_options(args)
    enc = MiniLMEmbeddings(fast=True)
    judge, weights = _judge_to_measure(args, enc)
    base = baseline_judge(args.judge, enc) if args.baseline and args.model != "cosine" else None
    timing = not args.no_timing
    res = evaluate_judge(args.judge, judge, args.data, threshold=args.threshold, seed=args.seed, limit=args.limit,
                         batch=args.batch, timing=timing, baseline=base, pair_tokens=args.pair_tokens)
    for f in res.get("files_without_items", []):  # on stderr with --json too: stdout holds the JSON only
        print(f"warning: {f}: no labelled items for the {args.judge} judge; left out", file=sys.stderr)
    if args.model == "trained":  # which judge was measured: the name is the same for every train-judge folder
        res["weights"] = weights or "shipped"
    if args.json:
        print(json.dumps(res))
    else:
        _print_judge_eval(args, res, weights)
    return 0


def _refuse_judge_eval_options(args: argparse.Namespace) -> None:
    """A bad value, or an option the chosen ``--model`` does not read, refused before any work."""
    if args.batch < 1:
        raise ConfigError("--batch must be >= 1")
    if args.threshold is not None:
        _check_threshold(args.judge, args.threshold)
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be >= 1 (leave it out for every question)")
    if args.pair_tokens is not None and (args.judge != "pair" or args.pair_tokens < 16):
        raise ConfigError("--pair-tokens is the pair judge's, at least 16 tokens" if args.judge == "pair"
                          else f"--pair-tokens is for --judge pair, not {args.judge}")
    if args.weights and os.path.isfile(args.weights):
        raise InputError(f"--weights takes the judges' folder (the one holding config.json), not a file: {args.weights}")
    # an option this --model does not read is refused, as --pair-tokens is (each was ignored until 2026-11-30)
    if args.weights and args.model != "trained":
        raise ConfigError(f"--weights is for --model trained, not --model {args.model}")
    if args.baseline and args.model == "cosine":
        raise ConfigError("--baseline adds the cosine floor beside another model; --model cosine is that floor")
    if args.llm is not None and args.model != "llm":
        raise ConfigError(f"--llm is for --model llm, not --model {args.model}")


def _check_threshold(judge: str, threshold: float) -> None:
    """A ``--threshold`` on the judge's scale: -1 to 1 for the evaluator, 0 to 1 for the others."""
    if not math.isfinite(threshold):  # reported accuracy 0.5 "at threshold nan"
        raise ConfigError(f"--threshold must be a finite number, got {threshold}")
    low = -1.0 if judge == "evaluator" else 0.0
    if not low <= threshold <= 1.0:  # every item negative, exit 0, until 2026-12-03
        raise ConfigError(f"--threshold for the {judge} judge is on its scale, from {low:g} to 1; got {threshold:g}")


def _judge_to_measure(args: argparse.Namespace, enc: Any) -> tuple[Any, str | None]:
    """The judge ``--model`` names and, for a trained one, where its weights came from."""
    from .judges import LLMJudge, baseline_judge, load_default_judge, load_judge
    from .judges.core import default_judge_source

    if args.model == "trained":  # --weights, else the judge the graphs load (RAGRAPHS_RERANKER, RAGRAPHS_JUDGES_DIR)
        if args.weights:
            return load_judge(args.judge, args.weights), args.weights
        # the evaluator ignored RAGRAPHS_RERANKER, which the graphs and calibrate-crag read, until 2026-11-30
        named = default_judge_source(args.judge)
        return load_default_judge(args.judge), (f"{named[1]} ({named[0]})" if named else None)
    if args.model == "cosine":
        return baseline_judge(args.judge, enc), None
    from .llm import make_llm

    return LLMJudge(make_llm(args.llm, max_tokens=4), args.judge), None


def _print_judge_eval(args: argparse.Namespace, res: dict, weights: str | None) -> None:
    source = f", from {weights}" if weights else (", shipped" if args.model == "trained" else "")
    print(f"{args.judge} judge ({res['model']}{source}) on {', '.join(res['files'])}: {res['n']} items, {res['positives']} positive")
    print(f"  accuracy {res['accuracy']:.3f} at threshold {res['threshold']:.3f} (at the best threshold on these items, "
          f"{res['best_threshold']:.3f}: {res['best_threshold_accuracy']:.3f}); AUC {res['auc']:.3f}; "
          f"precision {res['precision']:.3f}, recall {res['recall']:.3f}, F1 {res['f1']:.3f}")
    if "ms_per_pair" in res:
        print(f"  speed: {res['ms_per_pair']:.2f} ms per item (batches of {res['batch']})")
    for src, m in res["sources"].items():
        print(f"  {src}: {m['n']} items, accuracy {m['accuracy']:.3f}")
    if "baseline" in res:
        b = res["baseline"]
        print(f"  baseline {b['model']}: accuracy {b['accuracy']:.3f} at its best threshold on these items "
              f"({b['threshold']:.3f}), AUC {b['auc']:.3f}")


def register(subparsers) -> None:
    p = subparsers.add_parser("train-judge", help="train the judges (one multi-task cross-encoder) from benchmark files")
    p.add_argument("--judge", nargs="+", choices=JUDGE_CHOICES, default=None,
                   help="roles to train (default: all three in one model)")
    p.add_argument("--data", nargs="+", metavar="FILE", required=True,
                   help="benchmark files (HotpotQA, 2Wiki, MuSiQue, PopQA formats); labels come from the files; "
                        "FILE@K/N takes part K of N of a file's questions (stable hash split)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the model (ONNX int8) and its description")
    p.add_argument("--epochs", type=float, default=2.0)
    p.add_argument("--lr", type=float, default=7e-5)
    p.add_argument("--warmup", type=float, default=0.1, help="share of steps warming the learning rate up (0 to below 1)")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-length", type=int, default=256, help="tokens per (first, second) text pair")
    p.add_argument("--mine-k", type=int, default=1, help="evaluator: nearest paragraphs of other questions added as negatives")
    p.add_argument("--pair-mine-k", type=int, default=0,
                   help="pair: for each supporting paragraph d*, the K non-supporting paragraphs nearest to question + d* "
                        "added as negatives (the candidates DR-RAG's second stage brings)")
    p.add_argument("--neg-ratio", type=int, default=2,
                   help="evaluator and pair: negatives per positive in the training items (validation stays 1:1)")
    p.add_argument("--no-cap", action="store_true",
                   help="use every labelled item (default: a seeded sample of at most 1500 evaluator, 800 pair and "
                        "1200 NLI items per file, which bounds the time on a CPU)")
    p.add_argument("--val-fraction", type=float, default=0.1, help="share of questions held out to fit thresholds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="torch threads (default: all cores)")
    p.add_argument("--limit", type=int, default=None, help="at most this many questions per file")
    p.add_argument("--keep-torch", action="store_true", help="keep the fp32 weights beside the ONNX int8 model")
    p.add_argument("--init", metavar="DIR", default=None,
                   help="start from this model instead of the packaged MiniLM: a transformers directory, or judges that ship only the int8 ONNX file (their weights are dequantized)")
    p.add_argument("--teachers", nargs="+", metavar="DIR", default=None,
                   help="distil: label the training items sigmoid(mean logit / --temperature) of these judges "
                        "(e.g. four seeds of this recipe) instead of 0 / 1")
    p.add_argument("--temperature", type=float, default=None, help="with --teachers: the softening of their mean logit (default 2)")
    p.add_argument("--layers", type=int, default=None,
                   help="keep the first N of the start model's transformer layers (MiniLM has 6): a faster judge")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_train_judge)

    p = subparsers.add_parser("judge-eval", help="measure a judge on labelled pairs built from benchmark files")
    p.add_argument("--judge", required=True, choices=JUDGE_CHOICES)
    p.add_argument("--data", nargs="+", metavar="FILE", required=True)
    p.add_argument("--model", choices=["trained", "cosine", "llm"], default="trained",
                   help="the trained judge (default), the cosine baseline, or an LLM with the papers' prompt")
    p.add_argument("--weights", metavar="DIR", help="retrained weights (default: what the graphs load: for the evaluator $RAGRAPHS_RERANKER, "
                   "else $RAGRAPHS_JUDGES_DIR, else the shipped ones)")
    p.add_argument("--llm", default=None, help="model spec for --model llm")
    p.add_argument("--threshold", type=float, default=None, help="decision threshold (default: the judge's own, its thresholds entry)")
    p.add_argument("--baseline", action="store_true", help="also score the cosine baseline on the same items")
    p.add_argument("--batch", type=int, default=10, help="items per scoring call (default 10, like k retrieved passages)")
    p.add_argument("--limit", type=int, default=None, help="at most this many questions per file")
    p.add_argument("--seed", type=int, default=0, help="seed of the 1:1 balancing")
    p.add_argument("--pair-tokens", type=int, default=None, metavar="N",
                   help="pair judge: read each (q, d1, d2) within N tokens shared by d1 and d2, as DR-RAG's "
                        "pair_tokens setting does (default: the model's max_length, d2 cut first)")
    p.add_argument("--no-timing", action="store_true", help="skip the speed measurement")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_judge_eval)
