"""How much does int8 cost the judges? Write the same model as fp32 and as int8 variants.

Takes a judges directory trained with ``--keep-torch`` (it holds ``onnx/model.onnx``, the fp32
export) and writes one judges directory per variant under OUT, each with its ONNX file at the
path the judges load (``onnx/model_qint8.onnx``), so ``judge-eval --weights OUT/VARIANT``
measures it:

- ``fp32``: the fp32 export itself;
- ``int8``: the shipped recipe (``export_int8``: every matrix product int8);
- ``int8-keep-last2``: int8, except layers 4-5, the pooler and the classifier;
- ``int8-keep-first2``, ``int8-keep-embed``, ``int8-keep-embed-first2``: int8, except layers
  0-1, the word embeddings, or both;
- a ``+fp16w`` suffix stores the fp32 matrices left in the file as fp16, each behind a Cast
  to fp32 that onnxruntime folds when it loads the file: half the bytes, the same fp32
  arithmetic (``fp32+fp16w`` is the fused fp32 graph stored so: 46 MB instead of 91).

Usage (then one judge-eval per variant, role and file):
  python bench/judges_quant_variants.py runs/p4k/judges runs/q fp32,int8,int8-keep-last2
  python bench/judges_quant_variants.py runs/p4k/judges runs/q3 fp32+fp16w,int8-keep-first2+fp16w
  RAGRAPHS_JUDGES_DIR=runs/q/fp32 ragraphs judge-eval --judge pair --weights runs/q/fp32 \
      --data ../shared/data/hotpotqa.dev.jsonl --json --no-timing
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

from ragraphs.tools.judges.onnx import INT8_FILE, fuse_bert, quantize_int8

FIRST2 = ("layer.0/", "layer.1/")
KEEP = {
    "int8": None,
    "int8-keep-last2": lambda name: any(k in name for k in ("layer.4/", "layer.5/", "pooler", "classifier")),
    "int8-keep-first2": lambda name: any(k in name for k in FIRST2),
    "int8-keep-embed": lambda name: "embeddings" in name,
    "int8-keep-embed-first2": lambda name: "embeddings" in name or any(k in name for k in FIRST2),
}


def fp16_storage(src: Path, dst: Path, min_size: int = 1024) -> None:
    """Store each float initializer of at least ``min_size`` values as fp16 behind a Cast."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    m = onnx.load(str(src))
    inits, casts = [], []
    for init in m.graph.initializer:
        if init.data_type == TensorProto.FLOAT and int(np.prod(init.dims)) >= min_size:
            half = init.name + "_fp16"
            inits.append(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), half))
            casts.append(helper.make_node("Cast", [half], [init.name], to=TensorProto.FLOAT, name=init.name + "_cast"))
        else:
            inits.append(init)
    nodes = casts + list(m.graph.node)
    del m.graph.initializer[:], m.graph.node[:]
    m.graph.initializer.extend(inits)
    m.graph.node.extend(nodes)
    onnx.save(m, str(dst))


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().split("Usage")[1], file=sys.stderr)
        return 2
    src, out, variants = Path(argv[0]), Path(argv[1]), argv[2].split(",")
    fp32 = src / "onnx" / "model.onnx"
    if not fp32.is_file():
        raise SystemExit(f"no fp32 export at {fp32}: train with --keep-torch")
    for v in variants:
        base, _, store = v.partition("+")
        if (base != "fp32" and base not in KEEP) or store not in ("", "fp16w"):
            raise SystemExit(f"unknown variant {v!r}; choose fp32, " + ", ".join(KEEP) + " (each with an optional +fp16w)")
        d = out / v
        (d / "onnx").mkdir(parents=True, exist_ok=True)
        for f in src.iterdir():  # config, tokenizer, the judges' description
            if f.is_file() and f.suffix in (".json", ".txt"):
                shutil.copy2(f, d / f.name)
        target = d / INT8_FILE
        if v == "fp32":
            shutil.copy2(fp32, target)
        elif v == "fp32+fp16w":  # the fused graph (what quantize_int8 starts from), not quantized
            fused = fuse_bert(fp32, d / "onnx" / "fused.onnx")
            fp16_storage(fused, target)
            fused.unlink()
        else:
            quantize_int8(fp32, target, keep_fp32=KEEP[base])
            if store:
                fp16_storage(target, target)
        print(f"{v}: {target.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
