"""The judge distilled from an ensemble of its own seeds (#14), a GPU experiment.

Four seeds of the shipped recipe (allpq2_7e-5_x2, s0-s3) are trained by
bench/judges_recipe_sweep.py; this script then scores every training item with each of them,
writes the items again with the ensemble's mean logit as a soft label, and measures the
ensemble itself on the validation items and dev rows. Students (recipes dist1_*, dist2_*) are
trained from the base weights on those soft labels by the same sweep; the run is
bench/judges_distill_run.sh.

  python bench/judges_distill.py soft ITEMS_DIR --items allpq2 --teachers DIR... --temps 1,2 --out OUT

writes ITEMS_DIR/train_dist{T}.jsonl.gz (training rows with y = sigmoid(mean logit / T),
validation rows as they were) and OUT/ensemble.json (each teacher's and the ensemble's AUC and
best-cut accuracy per row, as results.json reports a recipe).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judges_recipe_sweep import _read, _write, dev_row_keys, measure_rows, pairs_of  # noqa: E402


def soft(items_dir: str, items: str, teachers: list[str], temps: list[float], out: str, limit: int | None) -> None:
    import numpy as np
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    t0 = time.perf_counter()
    d = Path(items_dir)
    texts = [r["t"] for r in _read(d / "texts.jsonl.gz")]
    rows = _read(d / f"train_{items}.jsonl.gz")
    val = [r for r in _read(d / "train_full.jsonl.gz") if r["s"] == "val"]
    dev = _read(d / "dev.jsonl.gz")
    if limit:  # a smoke test
        rows = rows[:limit] + [r for r in rows if r["s"] == "val"][:limit]
        val = [r for role in ("evaluator", "pair", "nli") for r in [x for x in val if x["r"] == role][:limit]]
        dev = [r for key in dev_row_keys(dev) for r in [x for x in dev if (x["r"], x["f"]) == key][:limit]]
    train = [i for i, r in enumerate(rows) if r["s"] == "train"]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ident = torch.nn.Identity()
    logits, report = [], {}
    seen: list[dict] = []  # each teacher's logits per row group, for the ensemble's rows

    for path in teachers:
        m = CrossEncoder(path, num_labels=1, max_length=256, device=device, local_files_only=True)
        m.model.float()
        m.model.eval()
        cache: dict = {}
        seen.append(cache)

        def score(pairs, _m=m, _c=cache):
            _c[hash(tuple(pairs))] = s = np.asarray(_m.predict(pairs, batch_size=256, show_progress_bar=False, activation_fn=ident))
            return s

        logits.append(score(pairs_of(texts, [rows[i] for i in train])))
        report[Path(path).name] = measure_rows(score, texts, val, dev, dev_row_keys(dev))
        print(f"[{time.perf_counter() - t0:5.0f}s] {Path(path).name}: mean dev AUC {report[Path(path).name]['mean_dev_auc']}", flush=True)
        del m

    def ens(pairs):
        return np.mean([c[hash(tuple(pairs))] for c in seen], axis=0)

    report["ensemble"] = measure_rows(ens, texts, val, dev, dev_row_keys(dev))
    mean = np.mean(logits, axis=0)
    y = np.array([rows[i]["y"] for i in train])
    report["train_items"] = {"n": len(train), "teachers": len(teachers),
                             "mean_logit_pos": round(float(mean[y == 1].mean()), 3),
                             "mean_logit_neg": round(float(mean[y == 0].mean()), 3),
                             "ensemble_train_acc": round(float(((mean >= 0) == (y == 1)).mean()), 4)}
    print(json.dumps(report["train_items"]), f"ensemble mean dev AUC {report['ensemble']['mean_dev_auc']}", flush=True)
    for t in temps:
        p = 1.0 / (1.0 + np.exp(-mean / t))
        new = [dict(r) for r in rows]
        for i, v in zip(train, p):
            new[i]["y"] = round(float(v), 5)
        _write(d / f"train_dist{t:g}.jsonl.gz", new)
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "ensemble.json").write_text(json.dumps(report, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("soft")
    p.add_argument("items_dir")
    p.add_argument("--items", default="allpq2")
    p.add_argument("--teachers", nargs="+", required=True)
    p.add_argument("--temps", default="1,2")
    p.add_argument("--out", required=True)
    p.add_argument("--limit", type=int, default=None, help="a smoke test: this many items of each kind")
    a = ap.parse_args()
    soft(a.items_dir, a.items, a.teachers, [float(t) for t in a.temps.split(",")], a.out, a.limit)


if __name__ == "__main__":
    main()
