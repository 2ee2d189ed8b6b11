"""How much does int8 cost the judges? Write the same model as fp32 and as int8 variants.

Takes a judges directory trained with ``--keep-torch`` (it holds ``onnx/model.onnx``, the fp32
export) and writes one judges directory per variant under OUT, each with its ONNX file at the
path the judges load (``onnx/model_qint8.onnx``), so ``judge-eval --weights OUT/VARIANT``
measures it:

- ``fp32``: the fp32 export itself;
- ``int8``: the shipped recipe (``export_int8``: every matrix product int8);
- ``int8-keep-last2``: int8, except layers 4-5, the pooler and the classifier.

Usage (then one judge-eval per variant, role and file):
  python bench/judges_quant_variants.py runs/p4k/judges runs/q fp32,int8,int8-keep-last2
  RAGRAPHS_JUDGES_DIR=runs/q/fp32 ragraphs judge-eval --judge pair --weights runs/q/fp32 \
      --data ../shared/data/hotpotqa.dev.jsonl --json --no-timing
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ragraphs.tools.judges.onnx import INT8_FILE, quantize_int8

KEEP = {
    "int8": None,
    "int8-keep-last2": lambda name: any(k in name for k in ("layer.4/", "layer.5/", "pooler", "classifier")),
}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().split("Usage")[1], file=sys.stderr)
        return 2
    src, out, variants = Path(argv[0]), Path(argv[1]), argv[2].split(",")
    fp32 = src / "onnx" / "model.onnx"
    if not fp32.is_file():
        raise SystemExit(f"no fp32 export at {fp32}: train with --keep-torch")
    for v in variants:
        if v != "fp32" and v not in KEEP:
            raise SystemExit(f"unknown variant {v!r}; choose fp32, " + ", ".join(KEEP))
        d = out / v
        (d / "onnx").mkdir(parents=True, exist_ok=True)
        for f in src.iterdir():  # config, tokenizer, the judges' description
            if f.is_file() and f.suffix in (".json", ".txt"):
                shutil.copy2(f, d / f.name)
        target = d / INT8_FILE
        if v == "fp32":
            shutil.copy2(fp32, target)
        else:
            quantize_int8(fp32, target, keep_fp32=KEEP[v])
        print(f"{v}: {target.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
