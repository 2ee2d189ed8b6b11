"""Measuring a judge on labelled items: scikit-learn's metrics, one threshold rule, speed."""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ...errors import InputError
from .baselines import _EmbeddingCache
from .core import score_triples
from .data import Item, build_items, spec_name


def auc_score(labels: ArrayLike, s: ArrayLike) -> float:
    """Area under the ROC curve; NaN when only one class is present."""
    y = np.asarray(labels).astype(int)
    if y.min(initial=1) == y.max(initial=0) or len(set(y.tolist())) < 2:
        return float("nan")
    from sklearn.metrics import roc_auc_score  # scikit-learn (and scipy, pandas) load when measured, not with the graphs

    return float(roc_auc_score(y, np.asarray(s, dtype=np.float64)))


def metrics_at(labels: ArrayLike, s: ArrayLike, threshold: float) -> dict:
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    y = np.asarray(labels).astype(int)
    pred = (np.asarray(s) >= threshold).astype(int)
    p, r, f, _ = precision_recall_fscore_support(y, pred, average="binary", zero_division=0) if len(y) else (0, 0, 0, 0)
    return {
        "n": int(len(y)),
        "positives": int(y.sum()),
        "accuracy": float(accuracy_score(y, pred)) if len(y) else float("nan"),
        "auc": auc_score(y, s),
        "precision": float(p),
        "recall": float(r),
        "f1": float(f),
        "threshold": float(threshold),
    }


def best_threshold(labels: ArrayLike, scores: ArrayLike) -> float:
    """The cut with the highest accuracy on (labels, scores), from the ROC curve's thresholds."""
    y = np.asarray(labels).astype(int)
    s = np.asarray(scores, dtype=np.float64)
    if len(s) == 0 or len(set(y.tolist())) < 2:
        return 0.5
    from sklearn.metrics import roc_curve

    fpr, tpr, thr = roc_curve(y, s)
    n1, n0 = y.sum(), len(y) - y.sum()
    acc = (tpr * n1 + (1 - fpr) * n0) / len(y)
    i = int(np.argmax(acc))
    return float(min(thr[i], s.max()))  # roc_curve's first threshold is +inf


def judge_scores(judge_name: str, judge_obj, items: list[Item], batch: int = 10, pair_tokens: int | None = None) -> np.ndarray:
    """Scores of items (pair: triples, read within ``pair_tokens`` by a cross-encoder when
    given; nli: items hold (hypothesis, premise))."""
    out = []
    for s in range(0, len(items), batch):
        chunk = [x.texts for x in items[s : s + batch]]
        if judge_name == "pair":
            out.append(np.asarray(score_triples(judge_obj, chunk, pair_tokens)))
        elif judge_name == "nli":
            out.append(np.asarray(judge_obj.score_batch([(p, h) for h, p in chunk])))
        else:
            out.append(np.asarray(judge_obj.score_batch(chunk)))
    return np.concatenate(out) if out else np.zeros(0)


def evaluate_judge(
    judge_name: str,
    judge_obj,
    files: Sequence[str],
    *,
    threshold: float | None = None,
    seed: int = 0,
    limit: int | None = None,
    batch: int = 10,
    timing: bool = True,
    baseline: Any = None,
    baseline_threshold: float | None = None,
    embed: Any = None,
    pair_tokens: int | None = None,
) -> dict:
    """Accuracy, AUC, precision/recall at the threshold, and ms per item on this CPU.

    ``baseline`` (a cosine judge) is scored on the same items; its threshold is fitted on
    those items (the best it could do), so the comparison favours the baseline.
    """
    if embed is None:
        from ..embeddings import MiniLMEmbeddings

        embed = _EmbeddingCache(getattr(baseline, "embeddings", None) or MiniLMEmbeddings()).encode
    empty: list[str] = []
    items = build_items(judge_name, files, seed=seed, limit=limit, embed=embed, title_prob=1.0, empty=empty)
    if not items:
        raise InputError(f"no labelled items for the {judge_name} judge in {', '.join(files)}")
    y = np.asarray([x.label for x in items])
    thr = float(threshold if threshold is not None else getattr(judge_obj, "threshold", 0.5))
    res: dict[str, Any] = {"judge": judge_name, "model": getattr(judge_obj, "name", type(judge_obj).__name__),
                           "files": [spec_name(f) for f in files if f not in empty], "batch": batch}
    if empty:  # a file that gave nothing is not one the numbers describe
        res["files_without_items"] = [spec_name(f) for f in empty]
    if judge_name == "pair" and pair_tokens:
        res["pair_tokens"] = int(pair_tokens)
    t = time.perf_counter()
    s = judge_scores(judge_name, judge_obj, items, batch, pair_tokens)
    elapsed = time.perf_counter() - t
    res.update(metrics_at(y, s, thr))
    res["best_threshold"] = best_threshold(y, s)
    res["best_threshold_accuracy"] = float(((s >= res["best_threshold"]) == y).mean())
    res["sources"] = {}
    for src in sorted({x.source for x in items}):
        idx = [i for i, x in enumerate(items) if x.source == src]
        res["sources"][src] = {"n": len(idx), "accuracy": round(float(((s[idx] >= thr) == y[idx]).mean()), 4)}
    if timing:
        res["ms_per_pair"] = round(elapsed * 1000 / len(items), 2)
    if getattr(judge_obj, "n_params", 0):
        res["params"] = int(judge_obj.n_params)
    if baseline is not None:
        sb = judge_scores(judge_name, baseline, items, batch, pair_tokens)
        bthr = float(baseline_threshold if baseline_threshold is not None else best_threshold(y, sb))
        mb = metrics_at(y, sb, bthr)
        mb["best_threshold_accuracy"] = float(((sb >= best_threshold(y, sb)) == y).mean())
        mb["model"] = getattr(baseline, "name", "baseline")
        res["baseline"] = mb
    return res
