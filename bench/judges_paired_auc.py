"""Paired AUC differences between judges on the same items, with bootstrap intervals.

    python bench/judges_paired_auc.py ITEMS_DIR REFERENCE OTHER... [--resamples 2000] [--json OUT]

ITEMS_DIR is the directory ``bench/judges_recipe_sweep.py dump`` wrote; REFERENCE and each
OTHER a judges directory (its int8 weights dequantized) or a transformers model (fp32 or fp16,
read in fp32; per-layer feed-forward widths too). Every model scores the validation items of the
three roles and the PopQA dev half-1 evaluator row, as the sweep's measurement builds them;
for each OTHER the table gives its AUC, the reference's, and the difference OTHER - REFERENCE
with a 95% interval from resampling the items (the same resample for both models).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judges_recipe_sweep import JUDGES, _read, pairs_of  # noqa: E402

ROWS = [f"val:{r}" for r in JUDGES] + ["evaluator:popqa@1/2"]


def item_rows(items_dir: str) -> dict[str, list[dict]]:
    d = Path(items_dir)
    val = [r for r in _read(d / "train_full.jsonl.gz") if r["s"] == "val"]
    dev = _read(d / "dev.jsonl.gz")
    rows = {f"val:{role}": [r for r in val if r["r"] == role] for role in JUDGES}
    rows["evaluator:popqa@1/2"] = [r for r in dev if r["r"] == "evaluator" and r["f"] == "popqa@1/2"]
    return rows


def scores(model_dir: str, texts: list[str], rows: dict[str, list[dict]], work: str):
    import numpy as np

    from ragraphs.tools.judges.train import torch_weights
    from ragraphs.tools.judges.widths import load_cross_encoder

    path = torch_weights(model_dir, Path(work) / Path(model_dir).name)
    model = load_cross_encoder(path, num_labels=1, max_length=256, device="cpu", local_files_only=True)
    model.model.float().eval()
    return {k: np.asarray(model.predict(pairs_of(texts, v), batch_size=64, show_progress_bar=False)) for k, v in rows.items()}


def paired(y, a, b, resamples: int, seed: int = 0) -> dict:
    """AUC of a and b on labels y, and of b - a with a 95% bootstrap interval over items."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    diffs = []
    while len(diffs) < resamples:
        i = rng.integers(0, len(y), len(y))
        if 0 < y[i].sum() < len(i):
            diffs.append(roc_auc_score(y[i], b[i]) - roc_auc_score(y[i], a[i]))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    ra, rb = roc_auc_score(y, a), roc_auc_score(y, b)
    return {"n": int(len(y)), "reference": round(float(ra), 4), "other": round(float(rb), 4),
            "diff": round(float(rb - ra), 4), "low": round(float(lo), 4), "high": round(float(hi), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("items")
    ap.add_argument("reference")
    ap.add_argument("others", nargs="+")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--json", default=None, help="write the results here too")
    a = ap.parse_args()

    import numpy as np

    texts = [r["t"] for r in _read(Path(a.items) / "texts.jsonl.gz")]
    rows = item_rows(a.items)
    labels = {k: np.array([r["y"] for r in v]) for k, v in rows.items()}
    with tempfile.TemporaryDirectory() as work:
        ref = scores(a.reference, texts, rows, work)
        out = {}
        print("| model | row | n | reference AUC | AUC | difference [95% interval] |\n| --- | --- | --- | --- | --- | --- |")
        for other in a.others:
            got = scores(other, texts, rows, work)
            out[other] = {k: paired(labels[k], ref[k], got[k], a.resamples) for k in ROWS}
            for k, r in out[other].items():
                print(f"| {Path(other).name} | {k} | {r['n']} | {r['reference']:.4f} | {r['other']:.4f} | "
                      f"{r['diff']:+.4f} [{r['low']:+.4f}, {r['high']:+.4f}] |", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"reference": Path(a.reference).name, "resamples": a.resamples,
                                            "results": {Path(k).name: v for k, v in out.items()}}, indent=1) + "\n")


if __name__ == "__main__":
    main()
