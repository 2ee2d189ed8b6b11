"""Does onnxruntime compute the judges' int8 products exactly on this CPU?

Dynamic int8 multiplies uint8 activations by int8 weights. On an x86 CPU with AVX2 but no
VNNI, onnxruntime's kernel adds two such products in a 16-bit lane first, which overflows
when the weights use the whole int8 range (255 x 127 x 2 > 32767), so the same file scores
differently on different CPUs. With 7-bit weights (``reduce_range``, the export's default
since 2026-11-25, night) the sum fits.

This script restores the shipped weights (``restore_fp32``), exports them unfused, quantizes
them three ways (8-bit, 7-bit and uint8 weights), and scores real (question, passage) pairs
with onnxruntime and with onnx's reference evaluator, which does the integer arithmetic in
numpy (exact). It prints the largest score difference for each, and the CPU's flags that
decide the kernel.

    python bench/judges_int8_exactness.py [--n 12] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from ragraphs.datasets import load_dataset
from ragraphs.tools.judges import passage_text
from ragraphs.tools.judges.core import weights_dir
from ragraphs.tools.judges.onnx import export_fp32, restore_fp32

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "hotpotqa.sample.jsonl"


def cpu_flags() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return sorted(f for f in flags if f.startswith("avx") or "vnni" in f)


def main() -> None:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto
    from onnx.reference import ReferenceEvaluator
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoTokenizer

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=12, help="pairs scored (the reference evaluator is slow)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model_dir = restore_fp32(weights_dir(), work / "fp32")
        plain, _ = export_fp32(model_dir, work / "plain.onnx")
        tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
        exs = load_dataset(str(DATA), "hotpotqa")
        pairs = [("relevance: " + ex.question, passage_text(p)) for ex in exs for p in ex.paragraphs][: a.n]
        out: dict = {"cpu_flags": cpu_flags(), "pairs": len(pairs), "max_abs_score_diff": {}}
        kinds = (("8-bit weights", QuantType.QInt8, False), ("7-bit weights", QuantType.QInt8, True),
                 ("uint8 weights", QuantType.QUInt8, False))
        for i, (name, weight_type, reduce_range) in enumerate(kinds):
            q = work / f"q{i}.onnx"
            quantize_dynamic(str(plain), str(q), weight_type=weight_type, per_channel=True, reduce_range=reduce_range,
                             extra_options={"DefaultTensorType": TensorProto.FLOAT})
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            so.log_severity_level = 3
            session = ort.InferenceSession(str(q), so, providers=["CPUExecutionProvider"])
            model = onnx.load(str(q))
            for op in model.opset_import:  # the reference evaluator knows DequantizeLinear from opset 19
                if op.domain in ("", "ai.onnx"):
                    op.version = max(op.version, 21)
            ref = ReferenceEvaluator(model)
            names = [i.name for i in session.get_inputs()]
            diffs = []
            for x, y in pairs:
                enc = tok(x, y, truncation="longest_first", max_length=256, return_tensors="np")
                feeds = {k: enc[k].astype(np.int64) for k in names}
                got = float(session.run(None, feeds)[0].reshape(-1)[-1])
                exact = float(ref.run(None, feeds)[0].reshape(-1)[-1])
                diffs.append(abs(1 / (1 + np.exp(-got)) - 1 / (1 + np.exp(-exact))))
            out["max_abs_score_diff"][name] = round(max(diffs), 4)
    if a.json:
        print(json.dumps(out))
        return
    print(f"CPU flags: {' '.join(out['cpu_flags']) or '-'}; {out['pairs']} pairs")
    for name, d in out["max_abs_score_diff"].items():
        print(f"{name}: onnxruntime vs exact integer arithmetic, largest score difference {d}")


if __name__ == "__main__":
    main()
