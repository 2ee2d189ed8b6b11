"""A judge trained elsewhere (`bench/judges_recipe_sweep.py train --save` on a lent GPU:
fp16 `model.safetensors`, brought back in chunks) made into a judges directory that
`RAGRAPHS_JUDGES_DIR`, `judge-eval` and `ragraphs eval` read: the weights in the packaged
MiniLM's classifier, the shipped directory's metadata (roles, task prefixes, cuts), the ONNX
int8 export of `train-judge`.

    python bench/judges_import.py OUT_DIR best_NAME.safetensors.00 [best_NAME.safetensors.01 ...] [--layers N]

The cuts are the shipped model's until `bash bench/judges_dev_eval.sh OUT_DIR ...` refits them
on the dev files. A judge made this way was not written by `train-judge`: its recipe and seed
are in the sweep's results, and `train-judge` with the same settings trains the same recipe
(on a CPU, not bit for bit).
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
    ap.add_argument("--name", default=None, help="the judge's name in its metadata (default: the file's stem)")
    a = ap.parse_args()

    import torch
    from safetensors.torch import load
    from sentence_transformers.cross_encoder import CrossEncoder

    from ragraphs.tools.embeddings import minilm_path
    from ragraphs.tools.judges.core import weights_dir
    from ragraphs.tools.judges.onnx import export_int8

    blob = b"".join(Path(c).read_bytes() for c in a.chunks)
    state = {k: v.float() if v.is_floating_point() else v for k, v in load(blob).items()}
    model = CrossEncoder(minilm_path(), num_labels=1, max_length=256, device="cpu", local_files_only=True)
    if a.layers:
        model.model.bert.encoder.layer = model.model.bert.encoder.layer[: a.layers]
        model.model.config.num_hidden_layers = a.layers
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
    meta = json.loads((weights_dir() / "ragraphs_judge.json").read_text(encoding="utf-8"))
    keep = ("roles", "prefixes", "base", "max_length", "thresholds", "onnx_file")
    meta = {k: meta[k] for k in keep if k in meta}
    meta["name"] = a.name or Path(a.chunks[0]).name.split(".safetensors")[0]
    meta["n_params"] = sum(p.numel() for p in model.model.parameters())
    meta["thresholds_note"] = "the shipped judge's cuts, until bench/judges_dev_eval.sh refits them"
    meta["source"] = "bench/judges_import.py: weights trained by bench/judges_recipe_sweep.py"
    (out / "ragraphs_judge.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    with torch.no_grad():
        onnx_file = export_int8(out, meta.get("max_length", 256))
    (out / "onnx" / "model.onnx").unlink(missing_ok=True)  # the fp32 graph: only the int8 one is read
    for f in ("model.safetensors", "README.md"):
        (out / f).unlink(missing_ok=True)  # as shipped: the int8 graph holds the weights (restore_fp32 brings them back)
    print(f"{out}: {onnx_file}, {meta['n_params']:,} parameters")


if __name__ == "__main__":
    main()
