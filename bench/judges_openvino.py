"""The shipped judge's weights run by OpenVINO instead of onnxruntime: speed and scores.

An experiment for #14's speed target (<= 10 ms per 256-token pair on 2 cores), not a
dependency: it needs ``pip install openvino nncf`` beside ragraphs. Three steps:

1. the shipped int8 file's weights back to fp32 (``restore_fp32``) and torch's ONNX export
   of the same graph as the shipped one (``export_fp32``: eager attention, a last layer that
   computes the first position only);
2. NNCF's static int8 quantization of that graph (``ModelType.TRANSFORMER``), calibrated on
   ``--calib`` random training items of the judge's own training rows (not the dev rows);
3. onnxruntime (the shipped file) and OpenVINO (two streams of one core, as the shipped
   predictor runs two pairs side by side, the rest of the graph in fp32) timed in turn on
   ``bench/judges_speed.py``'s inputs, ``--rounds`` times, then both read on the validation
   items and the dev rows of ``judges_recipe_sweep.py dump`` (AUC, best-cut accuracy).

    python bench/judges_recipe_sweep.py dump ../shared/data ITEMS --only full
    python bench/judges_recipe_sweep.py dump-crossfit ../shared/data ITEMS --only all,allpq2  # optional: half-file rows
    python bench/judges_openvino.py ITEMS OUT [--calib 300] [--n 128] [--repeat 5] [--rounds 3] [--others]

Writes OUT/results.json (and the OpenVINO model, OUT/ov_int8.xml).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judges_recipe_sweep import _read, dev_row_keys, measure_rows, pairs_of  # noqa: E402
from judges_speed import _timed, speed_inputs  # noqa: E402

from ragraphs.tools.judges.core import CrossEncoderJudge, load_cross_encoder, weights_dir  # noqa: E402


class OpenVinoCrossEncoder:
    """``predict(pairs)`` of an OpenVINO model with the shipped predictor's inputs: each pair
    alone, unpadded, two at a time on two single-core streams."""

    def __init__(self, xml: Path, ort_model, threads: int = 2, precision: str = "f32"):
        import openvino as ov

        self.ort = ort_model
        self.tokenizer = ort_model.tokenizer
        self.compiled = ov.Core().compile_model(str(xml), "CPU", {
            "PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": threads, "INFERENCE_NUM_THREADS": threads,
            "INFERENCE_PRECISION_HINT": precision})
        self.names = [i.get_any_name() for i in self.compiled.inputs]
        self._out = np.zeros(0)
        self.queue = ov.AsyncInferQueue(self.compiled, threads)  # made once, as the shipped predictor's threads
        self.queue.set_callback(self._done)

    def _done(self, request, i):
        self._out[i] = float(request.get_output_tensor(0).data.reshape(-1)[-1])

    def predict(self, pairs, batch_size: int = 1, show_progress_bar: bool = False, convert_to_numpy: bool = True):
        feeds = self.ort.feeds(pairs)
        self._out = np.zeros(len(feeds), dtype=np.float64)
        for i, f in enumerate(feeds):
            self.queue.start_async({k: f[k] for k in self.names}, i)
        self.queue.wait_all()
        return (1.0 / (1.0 + np.exp(-self._out))).astype(np.float32)


def quantize(items_dir: Path, out: Path, calib: int, ort_model) -> Path:
    import nncf
    import openvino as ov

    from ragraphs.tools.judges.onnx import export_fp32, restore_fp32

    fp32_dir = restore_fp32(weights_dir(), out / "fp32")
    onnx_file, _cfg = export_fp32(fp32_dir, out / "fp32" / "model.onnx")
    texts = [r["t"] for r in _read(items_dir / "texts.jsonl.gz")]
    train = [r for r in _read(items_dir / "train_full.jsonl.gz") if r["s"] == "train"]
    rows = random.Random(0).sample(train, min(calib, len(train)))
    feeds = ort_model.feeds(pairs_of(texts, rows))
    model = nncf.quantize(ov.Core().read_model(str(onnx_file)), nncf.Dataset(feeds), subset_size=len(feeds),
                          model_type=nncf.ModelType.TRANSFORMER)
    ov.save_model(model, str(out / "ov_int8.xml"))
    return out / "ov_int8.xml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("items_dir")
    ap.add_argument("out")
    ap.add_argument("--calib", type=int, default=300, help="training items that calibrate the activation scales")
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3, help="onnxruntime and OpenVINO timed in turn, this many times")
    ap.add_argument("--others", action="store_true",
                    help="also time, once, OpenVINO reading the shipped int8 file itself and the fp32 graph in fp32 and bf16")
    a = ap.parse_args()
    try:
        import nncf  # noqa: F401
        import openvino  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"this experiment needs OpenVINO and NNCF: pip install openvino nncf ({e})")
    items, out = Path(a.items_dir), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ort_model, meta = load_cross_encoder(weights_dir())
    t = time.perf_counter()
    xml = quantize(items, out, a.calib, ort_model)
    res: dict = {"quantize_s": round(time.perf_counter() - t, 1), "calib_items": a.calib,
                 "openvino": openvino.__version__, "nncf": nncf.__version__}
    ov_model = OpenVinoCrossEncoder(xml, ort_model)
    judges = {"onnxruntime": CrossEncoderJudge("evaluator", ort_model, meta),
              "openvino": CrossEncoderJudge("evaluator", ov_model, meta)}
    long_pairs, strips, _ = speed_inputs(ort_model.tokenizer, a.n)
    for name in judges:
        res[name] = {"ms_per_256_token_pair": [], "ms_per_200_char_strip": []}
    for _ in range(a.rounds):
        for name, judge in judges.items():
            res[name]["ms_per_256_token_pair"].append(round(_timed(judge.score_batch, long_pairs, 32, a.repeat), 2))
            res[name]["ms_per_200_char_strip"].append(round(_timed(judge.score_batch, strips, 32, a.repeat), 2))
        print(json.dumps({k: res[k] for k in judges}), flush=True)
    if a.others:  # speed only: once each, after the rounds
        for name, src, precision in (("openvino_shipped_int8_file", weights_dir() / "onnx" / "model_qint8.onnx", "f32"),
                                     ("openvino_fp32", out / "fp32" / "model.onnx", "f32"),
                                     ("openvino_fp32_bf16", out / "fp32" / "model.onnx", "bf16")):
            judge = CrossEncoderJudge("evaluator", OpenVinoCrossEncoder(src, ort_model, precision=precision), meta)
            res[name] = {"ms_per_256_token_pair": round(_timed(judge.score_batch, long_pairs, 32, a.repeat), 2),
                         "ms_per_200_char_strip": round(_timed(judge.score_batch, strips, 32, a.repeat), 2)}
            print(json.dumps({name: res[name]}), flush=True)
    texts = [r["t"] for r in _read(items / "texts.jsonl.gz")]
    val = [r for r in _read(items / "train_full.jsonl.gz") if r["s"] == "val"]
    dev = _read(items / "dev.jsonl.gz")
    for name, model in (("onnxruntime", ort_model), ("openvino", ov_model)):
        res[name]["rows"] = measure_rows(model.predict, texts, val, dev, dev_row_keys(dev))
    res["largest_score_difference_val"] = round(float(np.abs(ort_model.predict(pairs_of(texts, val))
                                                            - ov_model.predict(pairs_of(texts, val))).max()), 4)
    (out / "results.json").write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
