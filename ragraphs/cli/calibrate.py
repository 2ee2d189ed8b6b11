"""``ragraphs calibrate-crag``: CRAG's two action thresholds fitted on data by the paper's rule.

CRAG (Appendix B) sets the upper and lower thresholds "to maximize the overall accuracy
with a false-positive punishment"::

    S = max (TP + TN) / n_total - alpha * FP / n_neg        (alpha = 1)

Here each threshold is one binary decision, fitted separately on labelled scores:

- **upper**: "relevant" when score > upper. TP: relevant judged relevant, TN: irrelevant
  judged not relevant, FP: *irrelevant* judged relevant; n_neg = irrelevant samples.
- **lower**: "irrelevant" when score < lower. TP: irrelevant judged irrelevant, TN: relevant
  judged not irrelevant, FP: *relevant* judged irrelevant (the costly error: a good
  retrieval thrown away); n_neg = relevant samples. The lower threshold is at most the upper.

Samples (``--unit``): ``question`` (default: the action's own input, the best score among
a question's retrieved documents; label = some retrieved document is a gold supporting
paragraph, for PopQA one that holds a gold answer) or ``doc`` (each retrieved document on
its own, labelled supporting or not). Both are reported.

The corpus is the data file's paragraphs pooled into one index (as ``ragraphs eval``), the
retrieval is the graph's own (top ``--k``), the evaluator is ``c.judge("evaluator")``.

Lower (``--lower``): ``judge`` (default) takes the evaluator's own relevance cut (the
``thresholds`` entry: for the shipped judge the cut cross-fitted on the dev files, for a
train-judge output its validation cut) as the lower threshold, at most the upper one: Incorrect
then means that no retrieved document is judged relevant, whatever the corpus's share of
misses. ``rule`` fits it by the rule above. On PopQA's half 1 the rule put it at -0.98, under
nearly every score, so Incorrect never fired; over the whole PopQA dev file the judge's cut
(-0.05) gave the same EM and F1 as -0.98 and sent 71% of true misses to Incorrect
(docs/crag.md, "The lower cut").

Misses (``--misses``): in a pooled benchmark corpus a gold paragraph is retrieved for nearly
every question (97% of PopQA's), so ``retrieved`` (default: the retrievals as they come)
leaves the lower threshold a handful of irrelevant samples, and the rule fits the corpus's
own share of misses. The paper fitted its thresholds where retrieval over Wikipedia often
missed. ``withheld`` adds, for every question, the retrieval it gets when its own gold
paragraphs are withheld from the corpus (:class:`~ragraphs.evaluation.corpus.WithheldRetriever`):
a real retrieval that truly missed, labelled irrelevant, so misses are half the samples.
Both thresholds are then fitted on the retrievals plus these misses; the action shares are
reported for the retrievals as they come and for the misses. Which share of misses to fit
for is the user's corpus's question: docs/crag.md gives what each choice measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any, Sequence

import numpy as np

from ..errors import InputError, check_writable_file
from ..state.types import Passage
from .calibrate_report import calibration_provenance, print_calibration


def _objectives(cands: np.ndarray, s: np.ndarray, y: np.ndarray, alpha: float, above: bool) -> np.ndarray:
    """The rule's objective at every candidate cut at once, from sorted scores. ``above``: the
    positive class is the relevant one, predicted when score > cut (the upper threshold); else
    the irrelevant one, predicted when score < cut (the lower threshold)."""
    rel, irr = np.sort(s[y]), np.sort(s[~y])
    if above:  # TP: relevant above the cut; FP: irrelevant above it; n_neg: the irrelevant
        tp = rel.size - np.searchsorted(rel, cands, side="right")
        fp = irr.size - np.searchsorted(irr, cands, side="right")
        n_neg = irr.size
    else:  # TP: irrelevant below the cut; FP: relevant below it; n_neg: the relevant
        tp = np.searchsorted(irr, cands, side="left")
        fp = np.searchsorted(rel, cands, side="left")
        n_neg = rel.size
    tn = n_neg - fp
    return (tp + tn) / s.size - (alpha * fp / n_neg if n_neg else 0.0)


def _candidates(scores: np.ndarray) -> np.ndarray:
    u = np.unique(np.round(scores.astype(np.float64), 4))
    mids = (u[:-1] + u[1:]) / 2 if u.size > 1 else np.zeros(0)
    return np.unique(np.concatenate([[-1.0, 1.0], mids, u]))


def calibrate_thresholds(scores: Sequence[float], labels: Sequence[bool], alpha: float = 1.0) -> dict:
    """Fit (upper, lower) on labelled evaluator scores by the paper's rule (module doc)."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    if s.size == 0 or s.size != y.size:
        raise InputError("calibration needs as many labels as scores, and at least one")
    if y.all() or (~y).all():
        raise InputError("calibration needs both relevant and irrelevant samples")
    cands = _candidates(s)
    # upper: positive = relevant; ties broken towards the higher (more cautious) threshold
    obj_up = _objectives(cands, s, y, alpha, above=True)
    best = np.flatnonzero(np.round(obj_up, 9) == np.round(obj_up, 9).max())
    i_up = best[np.argmax(cands[best])]
    upper = float(cands[i_up])
    # lower: positive = irrelevant, false positive = a relevant sample judged irrelevant;
    # ties broken towards the lower (more cautious) threshold
    low_c = cands[cands <= upper]
    obj_low = _objectives(low_c, s, y, alpha, above=False)
    best = np.flatnonzero(np.round(obj_low, 9) == np.round(obj_low, 9).max())
    i_low = best[np.argmin(low_c[best])]
    lower = float(low_c[i_low])
    best_up, best_low = (float(obj_up[i_up]), upper), (float(obj_low[i_low]), lower)
    return {
        "upper": round(upper, 4),
        "lower": round(lower, 4),
        "objective_upper": round(best_up[0], 4),
        "objective_lower": round(best_low[0], 4),
        "alpha": alpha,
        "n": int(s.size),
        "n_relevant": int(y.sum()),
    }


def action_shares(max_scores: Sequence[float], upper: float, lower: float) -> dict:
    from ..nodes.crag import decide_action

    counts = {"correct": 0, "incorrect": 0, "ambiguous": 0}
    for m in max_scores:
        counts[decide_action([m], upper, lower)[0]] += 1
    n = max(1, len(max_scores))
    return {k: round(v / n, 4) for k, v in counts.items()} | {"n": len(max_scores)}


def action_quality(max_scores: Sequence[float], has_gold: Sequence[bool], upper: float, lower: float) -> dict:
    """How often each action was right: Correct with a supporting doc retrieved, Incorrect without."""
    from ..nodes.crag import decide_action

    out: dict[str, Any] = {}
    acts = [decide_action([m], upper, lower)[0] for m in max_scores]
    for a, want in (("correct", True), ("incorrect", False)):
        idx = [i for i, x in enumerate(acts) if x == a]
        out[f"{a}_precision"] = round(sum(has_gold[i] == want for i in idx) / len(idx), 4) if idx else None
    amb = [i for i, x in enumerate(acts) if x == "ambiguous"]
    out["ambiguous_with_gold"] = round(sum(has_gold[i] for i in amb) / len(amb), 4) if amb else None
    return out


def collect(examples: list, retriever: Any, judge: Any, k: int, mode: str = "dense") -> list[dict]:
    """Per question: retrieved docs' evaluator scores and whether each is supporting."""
    from ..nodes.retrieve import search_many

    return score_hits(examples, search_many(retriever, [ex.question for ex in examples], k, mode), judge)


def collect_withheld(examples: list, retriever: Any, judge: Any, k: int, mode: str = "dense") -> list[dict]:
    """Like :func:`collect`, each question's retrieval with its own gold paragraphs withheld
    from the corpus: a retrieval that truly missed (every label False)."""
    from ..evaluation.corpus import WithheldRetriever

    held = WithheldRetriever(retriever)
    hits = []
    for ex in examples:
        held.withhold(ex.supporting_ids)
        hits.append(held.search(ex.question, k, mode=mode))
    return score_hits(examples, hits, judge)


def score_hits(examples: list, hits: Sequence[Sequence[Passage]], judge: Any) -> list[dict]:
    """Per question: its retrieved docs' evaluator scores and whether each is supporting."""
    from ..nodes.refine import judge_text

    pairs, owner = [], []
    for qi, (ex, docs) in enumerate(zip(examples, hits)):
        for d in docs:
            pairs.append((ex.question, judge_text(d.get("title", ""), d.get("text", ""))))
            owner.append(qi)
    scores = np.asarray(judge.score_batch(pairs), dtype=np.float64) if pairs else np.zeros(0)
    rows = [{"question": ex.question, "scores": [], "labels": []} for ex in examples]
    for j, qi in enumerate(owner):
        rows[qi]["scores"].append(float(scores[j]))
    for qi, (ex, docs) in enumerate(zip(examples, hits)):
        gold = ex.supporting_ids
        rows[qi]["labels"] = [d["id"] in gold for d in docs]
        rows[qi]["docs"] = docs
    return rows


def collect_strips(examples: list, hits: Sequence[Sequence[Passage]], judge: Any, sentences: int = 3) -> tuple[list[float], list[bool]]:
    """Every knowledge strip of the retrieved documents (CRAG's decomposition), scored by the
    evaluator and labelled by whether it holds a gold answer (PopQA's labels are answers)."""
    from ..nodes.refine import decompose, judge_text
    from ..tools.judges.data import _contains

    pairs, labels = [], []
    for ex, docs in zip(examples, hits):
        if not ex.answers:
            continue
        for d in docs:
            for strip in decompose(d, sentences):
                pairs.append((ex.question, judge_text(d.get("title", ""), strip)))
                labels.append(_contains(strip, ex.answers))
    scores = judge.score_batch(pairs) if pairs else []
    return [float(x) for x in scores], labels


def calibrate_rows(rows: list[dict], unit: str = "doc", alpha: float = 1.0) -> dict:
    if unit == "doc":
        s = [x for r in rows for x in r["scores"]]
        y = [x for r in rows for x in r["labels"]]
    elif unit == "question":
        keep = [r for r in rows if r["scores"]]
        s = [max(r["scores"]) for r in keep]
        y = [any(r["labels"]) for r in keep]
    else:
        raise InputError(f"unknown --unit {unit!r}; choose doc or question")
    return calibrate_thresholds(s, y, alpha)


def bootstrap_range(rows: list[dict], unit: str, alpha: float, n: int, seed: int = 0) -> dict | None:
    """How far the rule's cuts move when the questions are resampled: the 5th and 95th
    percentiles of upper and lower over ``n`` bootstrap resamples of ``rows`` (a resample
    without both kinds of sample is skipped). None when ``n`` is 0 or none could be fitted."""
    if n <= 0:
        return None
    rng = np.random.default_rng(seed)
    ups, lows = [], []
    for _ in range(n):
        pick = [rows[i] for i in rng.integers(0, len(rows), len(rows))]
        try:
            f = calibrate_rows(pick, unit, alpha)
        except InputError:
            continue
        ups.append(f["upper"])
        lows.append(f["lower"])
    if not ups:
        return None
    q = lambda xs: [round(float(np.percentile(xs, 5)), 4), round(float(np.percentile(xs, 95)), 4)]  # noqa: E731
    return {"upper": q(ups), "lower_rule": q(lows), "resamples": len(ups), "seed": seed}


def lower_from(fitted: dict, judge: Any, how: str) -> dict:
    """``how="judge"``: the lower threshold becomes the evaluator's own relevance cut (its
    ``threshold``, at most the upper one), so Incorrect means "no retrieved document judged
    relevant"; the rule's own fit stays in ``lower_rule``. ``how="rule"``: unchanged."""
    from ..tools.judges import own_threshold

    own = own_threshold(judge, math.nan)
    if how != "judge" or math.isnan(own):  # a judge with no cut of its own: the rule's
        return {**fitted, "lower_from": "rule"}
    return {**fitted, "lower": round(min(own, fitted["upper"]), 4), "lower_rule": fitted["lower"], "lower_from": "judge"}


def _refuse_bad_args(args: argparse.Namespace, path: str) -> None:
    """An :class:`InputError` for a missing data file or a value out of range, and for an
    ``--out`` that cannot be written: before the work, so that its result is not lost."""
    if os.path.isdir(path):  # "no such file" until 2026-12-03, as the other commands say it
        raise InputError(f"--data {path} is a folder; give a data file")
    if not os.path.isfile(path):
        raise InputError(f"--data: no such file: {path}")
    if args.k < 1:
        raise InputError("--k must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1 (leave it out for every question)")
    if args.bootstrap < 0:
        raise InputError("--bootstrap must be at least 0")
    if not (math.isfinite(args.alpha) and args.alpha >= 0):  # a negative weight rewards false positives
        raise InputError(f"--alpha weighs the false positives: a number >= 0, got {args.alpha}")
    if args.out:
        check_writable_file(args.out)


def _pooled_corpus(passages: list, embeddings: Any, quiet: bool) -> Any:
    """The file's paragraphs pooled as the corpus the questions retrieve from."""
    try:
        from ..evaluation.corpus import PooledCorpus

        return PooledCorpus(passages, embeddings, quiet=quiet)
    except ImportError:  # pragma: no cover - the evaluation package is optional here
        from ..tools.vectorstore import InMemoryCorpus

        return InMemoryCorpus(passages, embeddings)


def _calibration_inputs(args: argparse.Namespace) -> tuple[list, Any, Any]:
    """The questions (``--data``, its part, ``--limit``), the corpus pooling the whole file's
    paragraphs, and the evaluator the fit reads (``--judge``)."""
    from ..components import Components
    from ..datasets import load_dataset, parse_data_spec, pooled_passages, select_part
    from ..tools.embeddings import MiniLMEmbeddings

    path, part, nparts = parse_data_spec(args.data)
    _refuse_bad_args(args, path)
    all_examples = load_dataset(path, args.dataset)
    if not all_examples:
        raise InputError(f"{path}: no questions could be read")
    examples = select_part(all_examples, part, nparts)  # FILE@K/N: part K's questions; the corpus pools the whole file
    examples = examples[: args.limit] if args.limit else examples
    passages = pooled_passages(all_examples)
    if not passages:  # question-answer rows only: no retrieval to judge, no gold to label it
        raise InputError(f"{path}: its rows hold no paragraphs, so there is no retrieval to calibrate on; "
                         "use a benchmark file whose rows carry their paragraphs (PopQA, HotpotQA, 2Wiki, MuSiQue)")
    embeddings = MiniLMEmbeddings()
    corpus = _pooled_corpus(passages, embeddings, args.quiet)
    judges = None
    if args.judge == "cosine":
        from ..tools.judges import CosineJudge

        judges = {"evaluator": CosineJudge(embeddings)}
    judge = Components(retriever=corpus, embeddings=embeddings, judges=judges).judge("evaluator")
    return examples, corpus, judge


def _judged_retrievals(args: argparse.Namespace, examples: list, corpus: Any, judge: Any) -> tuple[list, list]:
    """Each question's retrieval judged and labelled, and (``--misses withheld``) each one again
    with its gold withheld; an :class:`InputError` when they leave nothing to fit on."""
    rows = collect(examples, corpus, judge, args.k, args.retrieval)
    if not any(any(r["labels"]) for r in rows):
        raise InputError("no retrieved document is a gold supporting paragraph: nothing to calibrate on")
    missed = collect_withheld(examples, corpus, judge, args.k, args.retrieval) if args.misses == "withheld" else []
    if args.unit == "question" and not missed and all(any(r["labels"]) for r in rows):
        raise InputError(f"calibration needs both relevant and irrelevant samples, and all {len(rows)} retrievals hold a "
                         "gold supporting paragraph (no miss for the rule to fit on): add --misses withheld "
                         "(each question's retrieval with its gold withheld), --unit doc, or more questions")
    return rows, missed


def _strip_cut(examples: list, rows: list, judge: Any, alpha: float) -> tuple[float | None, list]:
    """The strip threshold fitted on the retrieved documents' strips (None when every strip, or
    none, holds a gold answer), and the strips' labels."""
    strip_s, strip_y = collect_strips(examples, [r["docs"] for r in rows], judge)
    if strip_y and any(strip_y) and not all(strip_y):
        return calibrate_thresholds(strip_s, strip_y, alpha)["upper"], strip_y
    return None, strip_y


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ..settings import PAPER_LOWER, PAPER_UPPER

    examples, corpus, judge = _calibration_inputs(args)
    rows, missed = _judged_retrievals(args, examples, corpus, judge)
    fitted = lower_from(calibrate_rows(rows + missed, args.unit, args.alpha), judge, args.lower)
    other = "question" if args.unit == "doc" else "doc"
    try:  # the other unit, for comparison: none when it has no samples of one kind (every retrieval holds gold)
        fitted_other: dict | None = lower_from(calibrate_rows(rows + missed, other, args.alpha), judge, args.lower)
    except InputError:
        fitted_other = None
    stability = bootstrap_range(rows + missed, args.unit, args.alpha, args.bootstrap)
    maxes = [max(r["scores"]) if r["scores"] else -1.0 for r in rows]
    missed_maxes = [max(r["scores"]) if r["scores"] else -1.0 for r in missed]
    strip_cut, strip_y = _strip_cut(examples, rows, judge, args.alpha)
    has_gold = [any(r["labels"]) for r in rows]
    shares = lambda xs, f: action_shares(xs, f["upper"], f["lower"])  # noqa: E731
    paper = {"upper": PAPER_UPPER, "lower": PAPER_LOWER}
    report = {
        "data": args.data,
        "questions": len(rows),
        "k": args.k,
        "judge": getattr(judge, "name", type(judge).__name__),
        "unit": args.unit,
        "misses": args.misses,
        "calibrated": fitted,
        "bootstrap_90": stability,
        f"calibrated_{other}": {k: fitted_other[k] for k in ("upper", "lower")} if fitted_other else None,
        f"shares_calibrated_{other}": shares(maxes, fitted_other) if fitted_other else None,
        f"quality_calibrated_{other}": (action_quality(maxes, has_gold, fitted_other["upper"], fitted_other["lower"])
                                        if fitted_other else None),
        "retrieval_has_gold": round(sum(has_gold) / max(1, len(rows)), 4),
        "shares_calibrated": shares(maxes, fitted),
        "shares_paper": shares(maxes, paper),
        "quality_calibrated": action_quality(maxes, has_gold, fitted["upper"], fitted["lower"]),
        "quality_paper": action_quality(maxes, has_gold, PAPER_UPPER, PAPER_LOWER),
        **({
            "withheld_misses": len(missed),
            "shares_withheld_calibrated": shares(missed_maxes, fitted),
            "shares_withheld_paper": shares(missed_maxes, paper),
        } if missed else {}),
        "strip_threshold": strip_cut,
        "strips": {"n": len(strip_y), "with_answer": int(sum(strip_y))},
        # the cosine baseline's cuts: no run reads them (its line set the trained evaluator's cuts until 2026-12-03)
        "use": None if args.judge == "cosine" else f"--set upper={fitted['upper']} --set lower={fitted['lower']}"
        + (f" --set strip_threshold={strip_cut}" if strip_cut is not None else ""),
        **calibration_provenance(args),
    }
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
    if args.json:
        print(json.dumps(report))
    else:
        print_calibration(report, args)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "calibrate-crag",
        help="fit CRAG's upper/lower thresholds on a benchmark file (the paper's rule)",
        description="Fit CRAG's action thresholds: maximise accuracy minus alpha * false-positive rate "
        "(CRAG Appendix B) on the evaluator's scores of each question's retrieved documents.",
    )
    p.add_argument("--data", required=True, metavar="PATH",
                   help="benchmark file with gold paragraphs (e.g. popqa.dev.jsonl); PATH@K/N: part K of N of its questions")
    p.add_argument("--dataset", default="auto", help="its format (default: detect)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="the first N questions (the corpus still pools the whole file)")
    p.add_argument("--k", type=int, default=4, help="documents retrieved per question (default 4)")
    p.add_argument("--retrieval", choices=["dense", "bm25", "hybrid"], default="dense")
    p.add_argument("--unit", choices=["doc", "question"], default="question", help="samples: each question's best score (default; what the action reads) or each retrieved document")
    p.add_argument("--misses", choices=["retrieved", "withheld"], default="retrieved",
                   help="irrelevant samples: only the retrievals that missed (default), or also, for every question, its "
                   "retrieval with its own gold paragraphs withheld from the corpus (a corpus where misses are common)")
    p.add_argument("--lower", choices=["judge", "rule"], default="judge",
                   help="the lower threshold: the evaluator's own relevance cut, so that Incorrect means no retrieved "
                   "document is judged relevant (default; what ships), or the paper's rule, which a corpus whose "
                   "retrievals rarely miss leaves a handful of misses to fit on")
    p.add_argument("--alpha", type=float, default=1.0, help="false-positive penalty (paper: 1)")
    p.add_argument("--bootstrap", type=int, default=200, metavar="N",
                   help="resample the questions N times and report the range of the rule's cuts (default 200; 0: off)")
    p.add_argument("--judge", choices=["default", "cosine"], default="default", help="the evaluator runs use (default: the shipped one, or $RAGRAPHS_JUDGES_DIR / $RAGRAPHS_RERANKER where set) or the cosine baseline")
    p.add_argument("--out", metavar="FILE", default=None, help="also write the report as JSON")
    p.add_argument("--json", action="store_true", help="print the report as one JSON line")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_calibrate)

