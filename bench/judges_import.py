"""A judge trained elsewhere (`bench/judges_recipe_sweep.py train --save` on a lent GPU:
fp16 `model.safetensors`, brought back in chunks) made into a judges directory that
`RAGRAPHS_JUDGES_DIR`, `judge-eval` and `ragraphs eval` read: the weights in the packaged
MiniLM's classifier, the shipped directory's metadata (roles, task prefixes, cuts), the ONNX
int8 export of `train-judge`.

    python bench/judges_import.py OUT_DIR best_NAME.safetensors.00 [best_NAME.safetensors.01 ...] [--layers N | --config DIR]

The cuts are the shipped model's until `bash bench/judges_dev_eval.sh OUT_DIR ...` refits them
on the dev files. With `--results RESULTS.json --recipe NAME --items ITEMS_DIR` (the sweep's
results and the directory its `dump` wrote) the description gets what `train-judge` writes:
the training files and item counts, the recipe, the loss curve, and the held-out validation
items (questions of the training files no model trained on) scored in fp32 and int8, with
the cuts fitted on them as `thresholds_validation`. A judge made this way was not written by
`train-judge`: its recipe and seed are in the sweep's results, and `train-judge` with the same
settings trains the same recipe (on a CPU, not bit for bit).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("chunks", nargs="+", help="the safetensors file, or its chunks in order")
    ap.add_argument("--layers", type=int, default=None, help="the model kept only its first N layers")
    ap.add_argument("--config", default=None, help="a model directory whose config the weights fit (a model cut by "
                    "bench/judges_ffn_prune.py) instead of the packaged MiniLM's")
    ap.add_argument("--name", default=None, help="the judge's name in its metadata (default: the file's stem)")
    ap.add_argument("--results", default=None, help="the sweep's results.json (recipe, loss curve, seconds)")
    ap.add_argument("--recipe", default=None, help="the recipe's name in --results")
    ap.add_argument("--items", default=None, help="the sweep's items directory: the validation items are scored")
    ap.add_argument("--train-files", nargs="*", default=None, help="the data files the recipe's items came from")
    a = ap.parse_args()
    if a.results and not a.recipe:
        ap.error("--results needs --recipe: the recipe's name in that file")

    import torch
    from safetensors.torch import load
    from ragraphs.tools.embeddings import minilm_path
    from ragraphs.tools.judges.core import weights_dir
    from ragraphs.tools.judges.onnx import export_int8
    from ragraphs.tools.judges.train import keep_layers
    from ragraphs.tools.judges.widths import fit_ffn_widths, load_cross_encoder

    blob = b"".join(Path(c).read_bytes() for c in a.chunks)
    state = {k: v.float() if v.is_floating_point() else v for k, v in load(blob).items()}
    model = load_cross_encoder(a.config or minilm_path(), num_labels=1, max_length=256, device="cpu",
                               local_files_only=True)
    if a.layers:
        keep_layers(model, a.layers)
    fit_ffn_widths(model.model, state)  # the weights' own widths (a cut that kept a layer whole)
    missing, unexpected = model.model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise SystemExit(f"the weights do not fit the model: missing {missing[:5]}, unexpected {unexpected[:5]}")
    model.model.eval()
    out = Path(a.out)
    if out.exists():
        raise SystemExit(f"{out} exists: name a new directory")
    with tempfile.TemporaryDirectory() as tmp:
        model.save(tmp)
        shutil.copytree(tmp, out)
    _tokenizer_reads(out / "tokenizer.json", 256)
    meta = json.loads((weights_dir() / "ragraphs_judge.json").read_text(encoding="utf-8"))
    keep = ("roles", "prefixes", "base", "max_length", "thresholds", "onnx_file")
    meta = {k: meta[k] for k in keep if k in meta}
    meta["name"] = a.name or Path(a.chunks[0]).name.split(".safetensors")[0]
    meta["n_params"] = sum(p.numel() for p in model.model.parameters())
    meta["thresholds_note"] = "the shipped judge's cuts, until bench/judges_dev_eval.sh refits them"
    meta["source"] = "bench/judges_import.py: weights trained by bench/judges_recipe_sweep.py"
    val = _validation_items(a.items) if a.items else {}
    fp32 = {role: model.predict(pairs, batch_size=32, show_progress_bar=False) for role, (pairs, _y) in val.items()}
    if a.results:
        meta.update(_training_description(a.results, a.recipe, a.items, a.train_files))
    (out / "ragraphs_judge.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    with torch.no_grad():
        onnx_file = export_int8(out, meta.get("max_length", 256))
    if val:
        _validate(out, meta, val, fp32)
    (out / "onnx" / "model.onnx").unlink(missing_ok=True)  # the fp32 graph: only the int8 one is read
    for f in ("model.safetensors", "README.md"):
        (out / f).unlink(missing_ok=True)  # as shipped: the int8 graph holds the weights (restore_fp32 brings them back)
    print(f"{out}: {onnx_file}, {meta['n_params']:,} parameters")


def _tokenizer_reads(path: Path, max_length: int) -> None:
    """The saved tokenizer keeps the base model's 128-token cut and fixed padding: write the
    judge's own (as train-judge's files have it), so every loader reads max_length tokens."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length, strategy="longest_first")
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    tok.save(str(path))


def _read(path: Path) -> list[dict]:
    """The sweep's own reader of its gzipped JSON-lines item files."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from judges_recipe_sweep import _read as read

    return read(path)


def _validation_items(items_dir: str) -> dict:
    """role -> (text pairs as the model reads them, labels): the sweep's validation rows."""
    d = Path(items_dir)
    texts = [r["t"] for r in _read(d / "texts.jsonl.gz")]
    rows = [r for r in _read(d / "train_full.jsonl.gz") if r["s"] == "val"]
    return {role: ([(texts[r["a"]], texts[r["b"]]) for r in rows if r["r"] == role], [r["y"] for r in rows if r["r"] == role])
            for role in ("evaluator", "pair", "nli")}


def _training_description(results: str, recipe: str, items_dir: str | None, train_files: list[str] | None) -> dict:
    rec = json.loads(Path(results).read_text(encoding="utf-8"))[recipe]
    ph = rec["phases"]
    desc: dict = {"recipe": {"name": recipe, "phases": ph, "trainer": "bench/judges_recipe_sweep.py train (GPU, TF32)"}}
    if train_files:
        desc["train_files"] = train_files
    if items_dir:
        rows = [r for r in _read(Path(items_dir) / f"train_{ph[0]['items']}.jsonl.gz") if r["s"] == "train"]
        desc["items"] = {role: sum(r["r"] == role for r in rows) for role in ("evaluator", "pair", "nli")}
        desc["train_items"] = len(rows)
    desc["config"] = {"epochs": float(ph[0]["epochs"]), "lr": ph[0]["lr"], "warmup_ratio": ph[0]["warmup"],
                      "batch_size": ph[0].get("batch", 16), "max_length": ph[0].get("max_length", 256),
                      "neg_ratio": {"capped": 1, "neg3": 3, "neg4": 4}.get(ph[0]["items"], 2), "seed": ph[0].get("seed", 0),
                      "max_per_file": None if ph[0]["items"] == "capped" else {}}
    desc["loss_curve"] = [pt for phase in rec.get("loss", []) for pt in phase]
    n_train = desc.get("train_items")
    desc["phases"] = [{"lr": p["lr"], "epochs": float(p["epochs"]), "warmup": p["warmup"], "seconds": rec.get("seconds"),
                       **({"steps": -(-n_train // p.get("batch", 16)) * int(p["epochs"])} if n_train else {})} for p in ph]
    pts = desc["loss_curve"]
    if len(pts) > 1:
        desc["loss_every"] = pts[1][0] - pts[0][0]
    desc["seconds"] = {"train": rec.get("seconds")}
    last = rec["epochs"][-1]
    desc["validation_fp32_sweep"] = {role: last[f"val:{role}"] for role in ("evaluator", "pair", "nli") if f"val:{role}" in last}
    return desc


def _validate(out: Path, meta: dict, val: dict, fp32: dict) -> None:
    """The validation items scored by the fp32 weights and the int8 file; cuts fitted on them."""
    import numpy as np

    from ragraphs.tools.judges.metrics import best_threshold, metrics_at
    from ragraphs.tools.judges.onnx import OnnxCrossEncoder

    q = OnnxCrossEncoder(out, meta["onnx_file"], max_length=meta.get("max_length", 256))
    r4 = lambda m: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in m.items()}  # noqa: E731
    meta["validation_fp32"], meta["validation_int8"], meta["thresholds_validation"] = {}, {}, {}
    for role, (pairs, y) in val.items():
        s32, s8 = np.asarray(fp32[role], dtype=np.float64), np.asarray(q.predict(pairs), dtype=np.float64)
        cut = best_threshold(y, s32)
        meta["validation_fp32"][role] = r4(metrics_at(y, s32, cut))
        m8 = metrics_at(y, s8, cut)
        m8["max_abs_diff_vs_fp32"] = float(np.abs(s8 - s32).max())
        meta["validation_int8"][role] = r4(m8)
        meta["thresholds_validation"][role] = round(2 * cut - 1 if role == "evaluator" else cut, 4)
    (out / "ragraphs_judge.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
