"""Training recipes for the multi-task judge, compared on the dev files (a GPU sweep).

Two steps, so that the training step needs sentence-transformers alone (no ragraphs, no
network) and can run on a lent GPU machine:

  # 1. here: the items train-judge builds, as the model reads them, and the dev rows of
  #    judge-eval (pair rows also in DR-RAG's reading: 112 tokens shared by d1 and d2)
  python bench/judges_recipe_sweep.py dump DATA_DIR ITEMS_DIR
  # 2. anywhere with sentence-transformers: each recipe from the base MiniLM weights, dev
  #    AUC / accuracy after every epoch (fp32), results.json in OUT
  python bench/judges_recipe_sweep.py train ITEMS_DIR BASE_MODEL_DIR OUT [--recipes A,B] [--budget S]
  # 3. the table and the plot
  python bench/judges_recipe_sweep.py report OUT/results.json OUT_DIR

The shipped judge is measured by `judge-eval` on its int8 file; this sweep compares recipes
in fp32, which is what a recipe changes. Pair items are trained as train-judge writes them
(d1 [SEP] d2 in 256 tokens, d2 cut first) unless a recipe says `pair_format: b112`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path

TRAIN_SPECS = ["train/*.jsonl", "popqa.dev.jsonl@0/2"]
JUDGES = ("evaluator", "pair", "nli")
DEV_ROWS = [("evaluator", "hotpotqa"), ("evaluator", "2wikimultihopqa"), ("evaluator", "musique"),
            ("evaluator", "popqa@1/2"), ("pair", "hotpotqa"), ("pair", "2wikimultihopqa"), ("pair", "musique"),
            ("nli", "2wikimultihopqa"), ("nli", "musique")]


# ---------------------------------------------------------------------------------------- dump
def dump(data_dir: str, out_dir: str, only: list[str] | None = None) -> None:
    import glob

    from transformers import AutoTokenizer

    from ragraphs.tools.embeddings import MiniLMEmbeddings, minilm_path
    from ragraphs.tools.judges.baselines import _EmbeddingCache
    from ragraphs.tools.judges.core import MAX_CHARS, PREFIX, balanced_pairs, clean
    from ragraphs.tools.judges.data import _balance, build_items, split_items
    from ragraphs.tools.judges.train import TrainConfig, build_training_items, item_texts

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(minilm_path())
    files = sorted(glob.glob(os.path.join(data_dir, TRAIN_SPECS[0]))) + [os.path.join(data_dir, TRAIN_SPECS[1])]
    texts: dict[str, int] = {}

    def tid(t: str) -> int:
        return texts.setdefault(t, len(texts))

    def row(role: str, it, **extra) -> dict:
        a, b = item_texts(role, it)
        r = {"r": role, "a": tid(a), "b": tid(b), "y": int(it.label), **extra}
        if role == "pair":
            q, d1, d2 = it.texts
            half = MAX_CHARS // 2
            f, b112 = balanced_pairs(tok, [(PREFIX["pair"] + clean(q, 600), clean(d1, half), clean(d2, half))], 112)[0]
            r["b112"] = tid(b112)
        return r

    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    fast = _EmbeddingCache(MiniLMEmbeddings(fast=True), 10**7).encode
    sets = (("capped", TrainConfig(neg_ratio=1)), ("full", TrainConfig(neg_ratio=2, max_per_file={})),
            ("neg3", TrainConfig(neg_ratio=3, max_per_file={})), ("neg4", TrainConfig(neg_ratio=4, max_per_file={})))
    for name, cfg in sets:
        if only and name not in only:
            continue
        by_role = build_training_items(files, cfg, fast, log)
        rows = []
        for role, items in by_role.items():
            tr, va = split_items(items, cfg.val_fraction, cfg.seed)
            if cfg.neg_ratio > 1:
                va = _balance(va, random.Random(f"{cfg.seed}:val:{role}"))
            rows += [row(role, it, s="train") for it in tr] + [row(role, it, s="val") for it in va]
        _write(out / f"train_{name}.jsonl.gz", rows)
        log(f"{name}: {sum(r['s'] == 'train' for r in rows)} train, {sum(r['s'] == 'val' for r in rows)} val")
    full = _EmbeddingCache(MiniLMEmbeddings()).encode  # what judge-eval builds its items with
    rows = []
    for role, f in DEV_ROWS:
        spec = os.path.join(data_dir, f"{f.split('@')[0]}.dev.jsonl") + (f"@{f.split('@')[1]}" if "@" in f else "")
        rows += [row(role, it, f=f) for it in build_items(role, [spec], seed=0, embed=full, title_prob=1.0)]
    _write(out / "dev.jsonl.gz", rows)
    _write(out / "texts.jsonl.gz", [{"t": t} for t in texts])
    log(f"{len(texts)} distinct texts; dev {len(rows)} items")


CROSSFIT_FILES = ("hotpotqa", "2wikimultihopqa", "musique")


def dump_crossfit(data_dir: str, items_dir: str, only: list[str] | None = None) -> None:
    """Extends a `dump` directory: train_cf{0,1} (the full items plus the training items, built
    as train-judge builds them, of half K of each multi-hop dev file), train_all (the same with
    the whole multi-hop dev files: the judge #14 asks for, trained on the training files and
    the dev files) and the judge-eval rows of each half (file key `NAME@K/2`) added to
    dev.jsonl.gz. Text ids stay those of the dump. `only` names the sets to write."""
    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.judges.baselines import _EmbeddingCache
    from ragraphs.tools.judges.data import build_items, split_items
    from ragraphs.tools.judges.train import TrainConfig, build_training_items, item_texts

    d = Path(items_dir)
    texts = [r["t"] for r in _read(d / "texts.jsonl.gz")]
    ids = {t: i for i, t in enumerate(texts)}

    def tid(t: str) -> int:
        if t not in ids:
            ids[t] = len(texts)
            texts.append(t)
        return ids[t]

    def row(role, it, **extra):
        a, b = item_texts(role, it)
        return {"r": role, "a": tid(a), "b": tid(b), "y": int(it.label), **extra}

    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    full_rows = _read(d / "train_full.jsonl.gz")
    fast = _EmbeddingCache(MiniLMEmbeddings(fast=True), 10**7).encode
    cfg = TrainConfig(neg_ratio=2, max_per_file={})
    for name, part in (("cf0", "@0/2"), ("cf1", "@1/2"), ("all", "")):
        if only and name not in only:
            continue
        specs = [os.path.join(data_dir, f"{f}.dev.jsonl{part}") for f in CROSSFIT_FILES]
        by_role = build_training_items(specs, cfg, fast, log)
        added = []
        for role, items in by_role.items():
            tr, _va = split_items(items, cfg.val_fraction, cfg.seed)
            added += [row(role, it, s="train") for it in tr]
        _write(d / f"train_{name}.jsonl.gz", full_rows + added)
        log(f"{name}: {len(added)} training items added from the dev files ({part or 'whole'})")
    weights = [t for t in (2, 4) if not only or f"allpq{t}" in only]
    if weights:  # train_all with PopQA's training items read 2 or 4 times
        from ragraphs.tools.judges.core import PREFIX, clean
        from ragraphs.tools.judges.data import _row_examples

        asked = {PREFIX["evaluator"] + clean(x["question"], 1000) for x, _ in _row_examples(os.path.join(data_dir, TRAIN_SPECS[1]))}
        rows = _read(d / "train_all.jsonl.gz")
        pq = [r for r in rows if r["s"] == "train" and r["r"] == "evaluator" and texts[r["a"]] in asked]
        for times in weights:
            _write(d / f"train_allpq{times}.jsonl.gz", rows + pq * (times - 1))
            log(f"allpq{times}: {len(pq)} PopQA training items read {times} times")
    full = _EmbeddingCache(MiniLMEmbeddings()).encode
    dev = [r for r in _read(d / "dev.jsonl.gz") if "@" not in r["f"] or r["f"].startswith("popqa")]
    for role, f in DEV_ROWS:
        if f not in CROSSFIT_FILES:
            continue
        for k in (0, 1):
            spec = os.path.join(data_dir, f"{f}.dev.jsonl@{k}/2")
            dev += [row(role, it, f=f"{f}@{k}/2") for it in build_items(role, [spec], seed=0, embed=full, title_prob=1.0)]
    _write(d / "dev.jsonl.gz", dev)
    _write(d / "texts.jsonl.gz", [{"t": t} for t in texts])
    log(f"{len(texts)} distinct texts; dev {len(dev)} items")


def _write(path: Path, rows: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def _read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


# --------------------------------------------------------------------------------------- train
# Each recipe: phases run in turn from the base weights; a phase names its items (capped: the
# per-file caps and 1:1; full: every item, 2 negatives per positive), learning rate, warm-up
# share and epochs. "shipped" is bench/judges_train_eval.sh.
RECIPES = {
    "shipped": [dict(items="capped", lr=1e-4, warmup=0.1, epochs=1), dict(items="capped", lr=2e-5, warmup=0.05, epochs=1),
                dict(items="full", lr=2e-5, warmup=0.05, epochs=1)],
    "full_5e-5_x3": [dict(items="full", lr=5e-5, warmup=0.1, epochs=3)],
    "full_5e-5_x3_b112": [dict(items="full", lr=5e-5, warmup=0.1, epochs=3, pair_format="b112")],
    "full_3e-5_x3": [dict(items="full", lr=3e-5, warmup=0.1, epochs=3)],
    "full_1e-4_x3": [dict(items="full", lr=1e-4, warmup=0.1, epochs=3)],
    "full_5e-5_x6": [dict(items="full", lr=5e-5, warmup=0.1, epochs=6)],
    "full_5e-5_x3_bs32": [dict(items="full", lr=5e-5, warmup=0.1, epochs=3, batch=32)],
    "full_5e-5_x2": [dict(items="full", lr=5e-5, warmup=0.1, epochs=2)],
    "full_7e-5_x2": [dict(items="full", lr=7e-5, warmup=0.1, epochs=2)],
    "full_5e-5_x2_w0.2": [dict(items="full", lr=5e-5, warmup=0.2, epochs=2)],
    "evaluator_only_5e-5_x3": [dict(items="full", lr=5e-5, warmup=0.1, epochs=3, roles=["evaluator"])],
    # the second sweep (2026-11-26, evening): the shipped recipe under other seeds (the noise
    # floor), more of the files' own negatives (3 or 4 per positive), 384 tokens, a third epoch
    "full_7e-5_x2_s1": [dict(items="full", lr=7e-5, warmup=0.1, epochs=2, seed=1)],
    "full_7e-5_x2_s2": [dict(items="full", lr=7e-5, warmup=0.1, epochs=2, seed=2)],
    "neg3_7e-5_x2": [dict(items="neg3", lr=7e-5, warmup=0.1, epochs=2)],
    "neg4_7e-5_x2": [dict(items="neg4", lr=7e-5, warmup=0.1, epochs=2)],
    "full_7e-5_x2_L384": [dict(items="full", lr=7e-5, warmup=0.1, epochs=2, max_length=384)],
    "full_7e-5_x3": [dict(items="full", lr=7e-5, warmup=0.1, epochs=3)],
    "neg3_7e-5_x2_L384": [dict(items="neg3", lr=7e-5, warmup=0.1, epochs=2, max_length=384)],
    # fewer layers (the first n of MiniLM's six): the #14 speed target at 256 tokens
    "full_7e-5_x2_l5": [dict(items="full", lr=7e-5, warmup=0.1, epochs=2, layers=5)],
    "full_7e-5_x2_l4": [dict(items="full", lr=7e-5, warmup=0.1, epochs=2, layers=4)],
    "full_7e-5_x2_l3": [dict(items="full", lr=7e-5, warmup=0.1, epochs=2, layers=3)],
    "full_7e-5_x3_l4": [dict(items="full", lr=7e-5, warmup=0.1, epochs=3, layers=4)],
    "full_7e-5_x2_l4_s1": [dict(items="full", lr=7e-5, warmup=0.1, epochs=2, layers=4, seed=1)],
    # the dev files as training data, measured by cross-fitting (`dump-crossfit`): cf0 adds the
    # HotpotQA, 2Wiki and MuSiQue dev questions of half 0 and is read on half 1; cf1 the reverse
    "cf0_7e-5_x2": [dict(items="cf0", lr=7e-5, warmup=0.1, epochs=2)],
    "cf1_7e-5_x2": [dict(items="cf1", lr=7e-5, warmup=0.1, epochs=2)],
    "cf0_7e-5_x2_s1": [dict(items="cf0", lr=7e-5, warmup=0.1, epochs=2, seed=1)],
    "cf1_7e-5_x2_s1": [dict(items="cf1", lr=7e-5, warmup=0.1, epochs=2, seed=1)],
}
# the shipped recipe on the training files plus the whole HotpotQA, 2Wiki and MuSiQue dev files
# (items "all"; the PopQA dev half 1 stays out: CRAG's calibration and the PopQA rows read it),
# seeds 0-3, and seeds 3 and 4 without the dev files: do the dev files cost the PopQA row AUC?
# dist1 / dist2: allpq2's items with the mean logit of four allpq2 seeds as soft labels, at
# temperature 1 or 2 (bench/judges_distill.py)
for _items, _seeds in (("all", range(4)), ("full", (3, 4)), ("allpq2", range(4)), ("allpq4", range(3)),
                       ("dist1", range(2)), ("dist2", range(1))):
    for _s in _seeds:
        RECIPES[f"{_items}_7e-5_x2" + (f"_s{_s}" if _s else "")] = [
            dict(items=_items, lr=7e-5, warmup=0.1, epochs=2, **({"seed": _s} if _s else {}))]
# students of four or five layers on the soft labels: does distillation give back what fewer
# layers lost (full_7e-5_x2_l4 / _l5 above), at the speed the #14 pair target needs? allpq2_*_l4:
# the same items with the hard labels, beside them
for _items, _layers, _s in (("allpq2", 4, 0), ("dist2", 4, 0), ("dist2", 4, 1), ("dist1", 4, 0), ("dist2", 5, 0)):
    RECIPES[f"{_items}_7e-5_x2_l{_layers}" + (f"_s{_s}" if _s else "")] = [
        dict(items=_items, lr=7e-5, warmup=0.1, epochs=2, layers=_layers, **({"seed": _s} if _s else {}))]
# four-layer students trained longer on the same soft labels (not yet run): can a four-layer
# judge, which meets the 10 ms pair target, reach the six-layer teachers' validation AUC? Run with
# SKIP_TEACHERS=1 after copying bench/results/judges_distill/run2/train_dist2.jsonl.gz into the items
for _lr, _ep in (("7e-5", 3), ("7e-5", 4), ("1e-4", 3), ("1e-4", 4)):
    RECIPES[f"dist2_{_lr}_x{_ep}_l4"] = [dict(items="dist2", lr=float(_lr), warmup=0.1, epochs=_ep, layers=4)]
# from the shipped student instead of the base weights (BASE = its int8 file dequantized, e.g. by
# ragraphs.tools.judges.train.torch_weights): the student as it is (x0: measured, not trained),
# its first four layers as they are, and those four trained one epoch on call 2's soft labels:
# does a four-layer judge cut from the trained six keep their AUC in one epoch a CPU can run?
RECIPES["stu_x0"] = [dict(items="dist2", lr=0.0, warmup=0, epochs=0)]
RECIPES["stu_x0_l4"] = [dict(items="dist2", lr=0.0, warmup=0, epochs=0, layers=4)]
RECIPES["stu_5e-5_x1_l4"] = [dict(items="dist2", lr=5e-5, warmup=0.1, epochs=1, layers=4)]
# from the student with its feed-forward cut to 512 neurons per layer (BASE = bench/judges_ffn_prune.py's
# OUT/model): six layers at about four layers' speed
RECIPES["ffn512_x0"] = [dict(items="dist2", lr=0.0, warmup=0, epochs=0)]
RECIPES["ffn512_5e-5_x1"] = [dict(items="dist2", lr=5e-5, warmup=0.1, epochs=1)]
# a second epoch, continued from ffn512_5e-5_x1's saved model (BASE = OUT/model_ffn512_5e-5_x1), lower lr
RECIPES["ffn512_more_2e-5_x1"] = [dict(items="dist2", lr=2e-5, warmup=0.05, epochs=1, seed=1)]
# a third epoch, continued from ffn512_more_2e-5_x1's saved model, a new shuffle
RECIPES["ffn512_more2_2e-5_x1"] = [dict(items="dist2", lr=2e-5, warmup=0.05, epochs=1, seed=2)]
# the 512 cut after ffn512_more2_2e-5_x1 with its last layer's feed-forward whole again
# (bench/judges_ffn_last.py): as it is, then one more epoch, a new shuffle
RECIPES["ffn512L_x0"] = [dict(items="dist2", lr=0.0, warmup=0, epochs=0)]
RECIPES["ffn512L_more3_2e-5_x1"] = [dict(items="dist2", lr=2e-5, warmup=0.05, epochs=1, seed=3)]
# the all-512 cut after ffn512_more2_2e-5_x1, one more epoch with PopQA's items read four times
# (items dist2pq4: bench/judges_items_popqa.py)
RECIPES["ffn512_pq4_2e-5_x1"] = [dict(items="dist2pq4", lr=2e-5, warmup=0.05, epochs=1, seed=4)]
# for a device call (not yet run): the 512-wide cut trained longer from the start, BASE = the cut model
# (bench/judges_ffn_prune.py OUT/model, carried in fp16)
for _lr, _ep in (("5e-5", 2), ("5e-5", 3), ("7e-5", 3)):
    RECIPES[f"ffn512_{_lr}_x{_ep}"] = [dict(items="dist2", lr=float(_lr), warmup=0.1, epochs=_ep)]


def train(items_dir: str, base: str, out_dir: str, recipes: list[str], budget: float, save: str | None,
          limit: int | None = None) -> None:
    import torch

    from ragraphs.tools.judges.train import keep_layers
    from ragraphs.tools.judges.widths import load_cross_encoder

    t_start = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    d = Path(items_dir)
    texts = [r["t"] for r in _read(d / "texts.jsonl.gz")]
    need = {ph["items"] for name in recipes for ph in RECIPES[name]} | {"full"}  # full: the validation items
    sets = {k: _read(d / f"train_{k}.jsonl.gz") for k in sorted(need)}
    dev = _read(d / "dev.jsonl.gz")
    if limit:  # a smoke test: a few items of each kind
        sets = {k: [r for sp in ("train", "val") for role in ("evaluator", "pair", "nli")
                    for r in [x for x in v if x["s"] == sp and x["r"] == role][:limit]] for k, v in sets.items()}
        dev = [r for key in DEV_ROWS for r in [x for x in dev if (x["r"], x["f"]) == key][:limit]]
    dev_rows = dev_row_keys(dev)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_float32_matmul_precision("high")  # TF32 on a GPU: recipes are compared with each other
    results = json.loads((out / "results.json").read_text()) if (out / "results.json").is_file() else {}

    def measure(model, tag):
        res = measure_rows(lambda pairs: model.predict(pairs, batch_size=128, show_progress_bar=False),
                           texts, [r for r in sets["full"] if r["s"] == "val"], dev, dev_rows)
        print(f"[{time.perf_counter() - t_start:6.0f}s] {tag}: mean dev AUC {res['mean_dev_auc']} | "
              + " ".join(f"{k}={v['auc']}/{v['best_acc']}" for k, v in res.items() if isinstance(v, dict)), flush=True)
        return res

    for name in recipes:
        if name in results and results[name].get("done"):
            continue
        if time.perf_counter() - t_start > budget:
            print(f"budget spent: {name} not run", flush=True)
            continue
        t0 = time.perf_counter()
        seed = RECIPES[name][0].get("seed", 0)
        torch.manual_seed(seed)  # the classifier head's initial weights
        random.seed(seed)
        max_length = RECIPES[name][0].get("max_length", 256)
        model = load_cross_encoder(_base_copy(base, out), num_labels=1, max_length=max_length, device=device,
                                   local_files_only=True)
        if "layers" in RECIPES[name][0]:  # keep the first n transformer layers
            keep_layers(model, RECIPES[name][0]["layers"])
        rec = {"phases": RECIPES[name], "epochs": [], "done": False}
        for pi, ph in enumerate(RECIPES[name]):
            rows = [r for r in sets[ph["items"]] if r["s"] == "train" and r["r"] in ph.get("roles", JUDGES)]
            data = pairs_of(texts, rows, ph.get("pair_format", "cut"))
            labels = [float(r["y"]) for r in rows]
            order = list(range(len(rows)))
            random.Random(pi + 1000 * seed).shuffle(order)
            data, labels = [data[i] for i in order], [labels[i] for i in order]

            def on_epoch(ep, _ph=ph, _pi=pi):
                m = measure(model, f"{name} phase {_pi + 1} epoch {ep}")
                m.update(phase=_pi + 1, epoch=ep, seconds=round(time.perf_counter() - t0, 1))
                rec["epochs"].append(m)
                results[name] = rec
                (out / "results.json").write_text(json.dumps(results, indent=1))

            losses = _fit(model, data, labels, lr=ph["lr"], warmup=ph["warmup"], epochs=ph["epochs"],
                          batch=ph.get("batch", 16), seed=pi + 1000 * seed, on_epoch=on_epoch, max_length=max_length)
            rec.setdefault("loss", []).append(losses)
        rec["done"] = True
        rec["seconds"] = round(time.perf_counter() - t0, 1)
        results[name] = rec
        (out / "results.json").write_text(json.dumps(results, indent=1))
        if save and name == save:
            model.model.half()
            model.save(str(out / f"model_{name}"))
    print(json.dumps({k: [e["mean_dev_auc"] for e in v["epochs"]] for k, v in results.items()}), flush=True)


def pairs_of(texts: list[str], rows: list[dict], fmt: str = "cut") -> list[tuple[str, str]]:
    """The (a, b) texts of item rows; pair rows in DR-RAG's 112-token reading with fmt b112."""
    return [(texts[r["a"]], texts[r.get("b112", r["b"]) if (fmt == "b112" and r["r"] == "pair") else r["b"]]) for r in rows]


def dev_row_keys(dev: list[dict]) -> list[tuple[str, str]]:
    present = list(dict.fromkeys((r["r"], r["f"]) for r in dev))
    return [k for k in DEV_ROWS if k in present] + [k for k in present if k not in DEV_ROWS]


def best_acc(y, s) -> tuple[float, float]:
    """The best accuracy over cuts on scores s of labels y, and that cut."""
    import numpy as np
    from sklearn.metrics import roc_curve

    fpr, tpr, thr = roc_curve(y, s)
    n1 = y.sum()
    acc = (tpr * n1 + (1 - fpr) * (len(y) - n1)) / len(y)
    i = int(np.argmax(acc))
    return float(acc[i]), float(min(thr[i], s.max()))


def measure_rows(score, texts: list[str], val: list[dict], dev: list[dict], dev_rows) -> dict:
    """AUC and best-cut accuracy of score(pairs) -> scores on each role's validation items and
    each dev row (pair rows also in the 112-token reading), accuracy at the validation cut."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    res, cuts = {}, {}
    for role in JUDGES:
        rows = [r for r in val if r["r"] == role]
        y = np.array([r["y"] for r in rows])
        s = np.asarray(score(pairs_of(texts, rows)))
        acc, cuts[role] = best_acc(y, s)
        res[f"val:{role}"] = {"n": len(rows), "auc": round(float(roc_auc_score(y, s)), 4), "best_acc": round(acc, 4)}
    for role, f in dev_rows:
        rows = [r for r in dev if r["r"] == role and r["f"] == f]
        y = np.array([r["y"] for r in rows])
        for fmt in (("cut", "b112") if role == "pair" else ("cut",)):
            s = np.asarray(score(pairs_of(texts, rows, fmt)))
            acc, _ = best_acc(y, s)
            key = f"{role}:{f}" + (":b112" if fmt == "b112" else "")
            res[key] = {"n": len(rows), "auc": round(float(roc_auc_score(y, s)), 4), "best_acc": round(acc, 4),
                        "acc_at_val_cut": round(float(((s >= cuts[role]) == y).mean()), 4)}
    dev_keys = [k for k in res if not k.startswith("val:")]
    res["mean_dev_auc"] = round(float(np.mean([res[k]["auc"] for k in dev_keys])), 4)
    return res


def _base_copy(base: str, out: Path) -> str:
    """The base weights in fp32 (the carried copy may be fp16 to travel light)."""
    from safetensors.torch import load_file, save_file

    dst = out / "_base_fp32"
    if not dst.is_dir():
        import shutil

        shutil.copytree(base, dst)
        w = load_file(str(Path(base) / "model.safetensors"))
        save_file({k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in w.items()}, str(dst / "model.safetensors"))
        # the config must say fp32 too: a model saved in fp16 says float16 there, and transformers
        # would load it back (and train it) in fp16, slow on a CPU, AdamW's small updates rounded away
        cfg = json.loads((dst / "config.json").read_text())
        cfg.pop("torch_dtype", None)
        (dst / "config.json").write_text(json.dumps({**cfg, "dtype": "float32"}, indent=2))
    return str(dst)


def _fit(model, data, labels, *, lr, warmup, epochs, batch, seed, on_epoch, max_length=256):
    """The loop CrossEncoderTrainer runs with its defaults (AdamW, weight decay 0.01 except
    biases and LayerNorm, linear warm-up and decay, gradient norm clipped at 1, BCE with
    logits), in length-bucketed batches as train-judge's sampler makes them."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    net = model.model
    if epochs == 0:  # measured as it is
        net.eval()
        with torch.no_grad():
            on_epoch(0)
        return []
    net.train()
    dev = net.device
    decay = [p for n, p in net.named_parameters() if not any(x in n for x in ("bias", "LayerNorm.weight"))]
    no_decay = [p for n, p in net.named_parameters() if any(x in n for x in ("bias", "LayerNorm.weight"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=lr)
    n_batches = -(-len(data) // batch)
    total = int(n_batches * epochs)
    sched = get_linear_schedule_with_warmup(opt, int(warmup * total) if warmup < 1 else int(warmup), total)
    lossf = torch.nn.BCEWithLogitsLoss()
    lengths = [len(a) + len(b) for a, b in data]
    curve, step = [], 0
    for ep in range(int(-(-epochs // 1))):
        rng = random.Random(seed * 1000 + ep)
        idx = list(range(len(data)))
        rng.shuffle(idx)
        span = batch * 50
        batches = []
        for s in range(0, len(idx), span):
            chunk = sorted(idx[s : s + span], key=lengths.__getitem__)
            batches += [chunk[i : i + batch] for i in range(0, len(chunk), batch)]
        rng.shuffle(batches)
        run = 0.0
        for bi, b in enumerate(batches):
            if step >= total:
                break
            enc = model.tokenizer([data[i][0] for i in b], [data[i][1] for i in b], padding=True, truncation=True,
                                  max_length=max_length, return_tensors="pt").to(dev)
            y = torch.tensor([labels[i] for i in b], device=dev)
            logits = net(**enc).logits.view(-1)
            loss = lossf(logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            run += float(loss.detach())
            step += 1
            if step % 50 == 0:
                curve.append([step, round(run / 50, 4)])
                run = 0.0
        net.eval()
        with torch.no_grad():
            on_epoch(ep + 1)
        net.train()
    return curve


# -------------------------------------------------------------------------------------- report
SHORT = {"evaluator": "eval", "hotpotqa": "HotpotQA", "2wikimultihopqa": "2Wiki", "musique": "MuSiQue",
         "popqa@1/2": "PopQA half 1"}


def report(results_file: str, out_dir: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = json.loads(Path(results_file).read_text())
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cols = [f"{r}:{f}" for r, f in DEV_ROWS]
    head = [" ".join(SHORT.get(x, x) for x in c.split(":")) for c in cols]
    first = res[next(iter(res))]["epochs"][-1]
    lines = ["Dev AUC / best-cut accuracy (%) of each recipe's fp32 model after its last epoch; n items per row: "
             + ", ".join(f"{h} {first[c]['n']}" for h, c in zip(head, cols)) + ".", "",
             "mean AUC: of these 9 rows and the 3 pair rows read as DR-RAG reads them (112 tokens shared by d1 "
             "and d2). evaluator_only trains the evaluator role alone: its pair and nli columns are untrained.", "",
             "| recipe | item passes | mean AUC | " + " | ".join(head) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in cols) + " |"]
    order = sorted(res, key=lambda k: -res[k]["epochs"][-1]["mean_dev_auc"])
    for name in order:
        e = res[name]["epochs"][-1]
        passes = 0
        for ph in res[name]["phases"]:
            n = {"capped": 11756, "full": 18874, "neg3": 24332, "neg4": 28993, "cf0": 20689, "cf1": 20779, "all": 22579, "allpq2": 22579 + 295, "allpq4": 22579 + 3 * 295,
                 "dist1": 22579 + 295, "dist2": 22579 + 295, "dist2pq4": 22579 + 3 * 295}[ph["items"]]
            passes += n * ph["epochs"] * (0.603 if ph.get("roles") == ["evaluator"] else 1)
        lines.append(f"| {name} | {passes / 1000:.1f}k | {e['mean_dev_auc']:.3f} | "
                     + " | ".join(f"{e[c]['auc']:.3f} / {100 * e[c]['best_acc']:.1f}" for c in cols) + " |")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=110)
    for name in order:
        ep = res[name]["epochs"]
        ax.plot(range(1, len(ep) + 1), [e["mean_dev_auc"] for e in ep], marker="o", lw=1, label=name)
    ax.set_xlabel("epoch (all phases in turn)")
    _finish(fig, ax, out / "recipes.png", "mean dev AUC, 12 rows (fp32)", "judges: training recipes on the dev files", lines)


def _finish(fig, ax, png: Path, ylabel: str, title: str, lines: list[str]) -> None:
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png)
    print("\n".join(lines))


def report_crossfit(results_file: str, out_dir: str) -> None:
    """table.md and crossfit.png of a cross-fit run: each half's rows, read by the control
    (full_7e-5_x2, seeds 0 and 1) and by the model that trained on the other half."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = json.loads(Path(results_file).read_text())
    out = Path(out_dir)
    ctrl = ["full_7e-5_x2", "full_7e-5_x2_s1"]
    fm = lambda v: f"{v['auc']:.3f} / {100 * v['best_acc']:.1f}"  # noqa: E731
    lines = ["| row (dev half read) | n | without the dev files: AUC / best-cut acc, seeds 0 and 1 | "
             "with the other half: AUC / best-cut acc, seeds 0 and 1 | mean AUC change |", "| --- | --- | --- | --- | --- |"]
    bars = []
    for role in JUDGES:
        for f in CROSSFIT_FILES:
            for half, cf in ((1, "cf0"), (0, "cf1")):
                k = f"{role}:{f}@{half}/2"
                if k not in res[ctrl[0]]["epochs"][-1]:
                    continue
                c = [res[n]["epochs"][-1][k] for n in ctrl]
                t = [res[n]["epochs"][-1][k] for n in (f"{cf}_7e-5_x2", f"{cf}_7e-5_x2_s1")]
                a, b = (c[0]["auc"] + c[1]["auc"]) / 2, (t[0]["auc"] + t[1]["auc"]) / 2
                name = f"{SHORT.get(role, role)} {SHORT[f]}"
                lines.append(f"| {name} (half {half}) | {c[0]['n']} | {fm(c[0])}, {fm(c[1])} | {fm(t[0])}, {fm(t[1])} | {b - a:+.3f} |")
                bars.append((f"{name} h{half}", a, b))
    (out / "table.md").write_text("\n".join(lines) + "\n")
    fig, ax = plt.subplots(figsize=(7.2, 3.6), dpi=110)
    x = range(len(bars))
    ax.bar([i - 0.2 for i in x], [a for _, a, _ in bars], 0.4, label="training files only")
    ax.bar([i + 0.2 for i in x], [b for *_, b in bars], 0.4, label="+ the other half of the dev files")
    ax.set_xticks(list(x))
    ax.set_xticklabels([n for n, *_ in bars], rotation=60, ha="right", fontsize=7)
    ax.set_ylim(0.5, 1.0)
    _finish(fig, ax, out / "crossfit.png", "dev AUC, mean of 2 seeds (fp32)",
            "judges: the dev files as training data, cross-fitted", lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("dump")
    p.add_argument("data_dir")
    p.add_argument("items_dir")
    p.add_argument("--only", default=None, help="the item sets to write, comma-separated (capped, full, neg3, neg4)")
    p = sub.add_parser("dump-crossfit")
    p.add_argument("data_dir")
    p.add_argument("items_dir")
    p.add_argument("--only", default=None, help="the item sets to write, comma-separated (cf0, cf1, all, allpq2, allpq4)")
    p = sub.add_parser("train")
    p.add_argument("items_dir")
    p.add_argument("base")
    p.add_argument("out")
    p.add_argument("--recipes", default=",".join(RECIPES))
    p.add_argument("--budget", type=float, default=1e9, help="seconds: start no recipe after this")
    p.add_argument("--save", default=None, help="save this recipe's model (fp16) in OUT/model_NAME")
    p.add_argument("--limit", type=int, default=None, help="a smoke test: this many items of each kind")
    for name in ("report", "report-crossfit"):
        p = sub.add_parser(name)
        p.add_argument("results")
        p.add_argument("out_dir")
    a = ap.parse_args()
    if a.cmd == "report":
        report(a.results, a.out_dir)
    elif a.cmd == "report-crossfit":
        report_crossfit(a.results, a.out_dir)
    elif a.cmd == "dump":
        dump(a.data_dir, a.items_dir, a.only.split(",") if a.only else None)
    elif a.cmd == "dump-crossfit":
        dump_crossfit(a.data_dir, a.items_dir, a.only.split(",") if a.only else None)
    else:
        train(a.items_dir, a.base, a.out, a.recipes.split(","), a.budget, a.save, a.limit)


if __name__ == "__main__":
    main()
