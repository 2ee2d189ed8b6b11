"""A judge with a narrower feed-forward: the neurons of each layer's feed-forward that matter
most kept, the rest cut (#14's pair speed target without dropping layers).

    python bench/judges_ffn_prune.py JUDGE_OR_MODEL_DIR ITEMS_DIR OUT --width 768 [--keep-last] [--half]
    python bench/judges_import.py OUT/judges OUT/model/model.safetensors --config OUT/model --name ffn768

Importance of neuron i in a layer: its mean |GELU activation| over the real tokens of the
first ``--sample`` training items of ITEMS_DIR (the directory of
``bench/judges_recipe_sweep.py dump``), times the norm of its output weights. OUT gets a
transformers model that ``bench/judges_recipe_sweep.py train ITEMS OUT/model ...`` can start
from; ``bench/judges_import.py`` (second line) makes it a judges directory (the shipped judge's
metadata, the int8 ONNX export) that ``RAGRAPHS_JUDGES_DIR`` and ``bench/judges_speed.py`` read.
Untrained, the cut model scores worse: it is a start for more training.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judges_recipe_sweep import _read, pairs_of  # noqa: E402


def importance(model, pairs: list[tuple[str, str]], batch: int = 16) -> list:
    """Per layer, a tensor of each feed-forward neuron's importance on ``pairs``."""
    import torch

    net = model.model
    layers = net.base_model.encoder.layer
    sums = [torch.zeros(layer.intermediate.dense.out_features) for layer in layers]
    count = {"tokens": 0}
    mask_now = {}

    def hook(i):
        def fn(_module, _inputs, output):
            m = mask_now["m"].unsqueeze(-1).to(output.dtype)
            sums[i] += (output.abs() * m).sum(dim=(0, 1))
        return fn

    handles = [layer.intermediate.register_forward_hook(hook(i)) for i, layer in enumerate(layers)]
    net.eval()
    with torch.no_grad():
        for s in range(0, len(pairs), batch):
            b = pairs[s : s + batch]
            enc = model.tokenizer([a for a, _ in b], [c for _, c in b], padding=True, truncation=True,
                                  max_length=256, return_tensors="pt")
            mask_now["m"] = enc["attention_mask"]
            count["tokens"] += int(enc["attention_mask"].sum())
            net(**enc)
    for h in handles:
        h.remove()
    return [sums[i] / count["tokens"] * layer.output.dense.weight.norm(dim=0) for i, layer in enumerate(layers)]


def kept(score, width: int):
    """The indices, in order, of the ``width`` most important neurons of a layer."""
    import torch

    return torch.sort(torch.topk(score, width).indices).values


def cut(model, scores: list, width: int, keep_last: bool = False) -> None:
    """Keep the ``width`` most important feed-forward neurons of every layer (but the last, whole,
    with ``keep_last``: the exported graph computes it for the first position only)."""
    import torch

    net = model.model
    layers = list(net.base_model.encoder.layer)
    widths = [width] * len(layers)
    if keep_last:
        widths[-1] = layers[-1].intermediate.dense.out_features
        layers, scores = layers[:-1], scores[:-1]
    for layer, score in zip(layers, scores, strict=True):
        keep = kept(score, width)
        old_in, old_out = layer.intermediate.dense, layer.output.dense
        new_in = torch.nn.Linear(old_in.in_features, width)
        new_out = torch.nn.Linear(width, old_out.out_features)
        with torch.no_grad():
            new_in.weight.copy_(old_in.weight[keep])
            new_in.bias.copy_(old_in.bias[keep])
            new_out.weight.copy_(old_out.weight[:, keep])
            new_out.bias.copy_(old_out.bias)
        layer.intermediate.dense, layer.output.dense = new_in, new_out
    net.config.intermediate_size = width
    if keep_last:
        net.config.ffn_widths = widths  # read back by ragraphs.tools.judges.widths


def open_judge(path: str, out: Path):
    """The CrossEncoder of a judge (its int8 weights dequantized under ``out`` when that is all
    it ships), once ``out`` is checked to be a new directory."""
    from sentence_transformers.cross_encoder import CrossEncoder

    from ragraphs.tools.judges.train import torch_weights

    if out.exists():
        raise SystemExit(f"{out} exists: name a new directory")
    src = torch_weights(path, out / "_fp32")
    return CrossEncoder(str(src), num_labels=1, max_length=256, device="cpu", local_files_only=True)


def sample_pairs(items_dir: str, n: int) -> list[tuple[str, str]]:
    """The first ``n`` training items of the sweep's items directory, as (a, b) texts: what the
    importance is read on."""
    d = Path(items_dir)
    texts = [r["t"] for r in _read(d / "texts.jsonl.gz")]
    rows = [r for r in _read(d / "train_full.jsonl.gz") if r["s"] == "train"][:n]
    return pairs_of(texts, rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a transformers CrossEncoder directory, or judges that ship only the int8 file")
    ap.add_argument("items", help="the directory bench/judges_recipe_sweep.py dump wrote")
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--sample", type=int, default=256, help="training items read for the importance")
    ap.add_argument("--keep-last", action="store_true", help="leave the last layer's feed-forward whole")
    ap.add_argument("--half", action="store_true", help="write OUT/model in fp16 (half the size, to carry to a device)")
    a = ap.parse_args()

    out = Path(a.out)
    model = open_judge(a.model, out)
    cut(model, importance(model, sample_pairs(a.items, a.sample)), a.width, a.keep_last)
    if a.half:
        model.model.half()
    model.save(str(out / "model"))
    shutil.rmtree(out / "_fp32", ignore_errors=True)
    n = sum(p.numel() for p in model.model.parameters())
    print(f"{out / 'model'}: feed-forward {a.width} wide, {n:,} parameters")


if __name__ == "__main__":
    main()
