"""Write the shipped judges again through today's export, without training: the int8 weights
are dequantized (``restore_fp32``), exported and quantized by ``export_int8``, and the new
scores are compared with the old ones on real pairs.

Used on 2026-11-25 (late evening) to ship the judges' faster graph: eager attention, without
the sdpa mask guard, and residual + layer norm left unfused (``ragraphs/tools/judges/onnx.py``);
per-column int8 weights quantized back to the same values. Used again that night for 7-bit
weights (the same scores on every CPU) and a last layer that computes the first position only:
the weights were rounded once more, to 7 bits, and a 7-bit file writes back unchanged.
``bench/judges_graph_variants.py`` writes the same file byte for byte.

    python bench/judges_reexport.py OUT [--src DIR] [--data FILE] [--n 400]
    cp OUT/onnx/model_qint8.onnx ragraphs/data/judges/onnx/model_qint8.onnx
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from ragraphs.datasets import load_dataset
from ragraphs.tools.judges import passage_text
from ragraphs.tools.judges.core import weights_dir
from ragraphs.tools.judges.onnx import OnnxCrossEncoder, export_int8, restore_fp32

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "hotpotqa.sample.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--src", default=None, help="judges directory (default: the shipped one)")
    ap.add_argument("--data", default=str(DATA), help="a HotpotQA-format file whose paragraphs are scored")
    ap.add_argument("--n", type=int, default=400)
    a = ap.parse_args()
    src, out = Path(a.src) if a.src else weights_dir(), Path(a.out)
    t = time.perf_counter()
    restore_fp32(src, out)
    export_int8(out)
    exs = load_dataset(a.data, "hotpotqa")
    pairs = [(ex.question, passage_text(p)) for ex in exs for p in ex.paragraphs][: a.n]
    old, new = OnnxCrossEncoder(src).predict(pairs), OnnxCrossEncoder(out).predict(pairs)
    d = np.abs(old - new)
    print(json.dumps({"out": str(out / "onnx" / "model_qint8.onnx"), "pairs": len(pairs), "max_abs_diff": round(float(d.max()), 4),
                      "mean_abs_diff": round(float(d.mean()), 5), "seconds": round(time.perf_counter() - t, 1)}))


if __name__ == "__main__":
    main()
