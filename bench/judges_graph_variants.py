"""Which ONNX graph of the same judge weights runs fastest on this CPU, and where its time goes.

Restores the shipped int8 weights to a transformers model (``restore_fp32``), exports it twice
(eager attention, as ``export_int8`` does, and transformers' default sdpa attention), and
writes these int8 graphs of the same weights under OUT:

- ``shipped``: the recipe ``export_int8`` uses (eager export whose last layer computes the
  first position only, ``fuse_bert``, dynamic int8);
- ``all-positions``: ``shipped`` with the last layer computing every position (the shipped
  graph before 2026-11-25, night);
- ``sdpa``: the sdpa export with onnxruntime's default fusion (how the judges shipped before
  2026-11-25, late evening, were written);
- ``skip-ln``: eager, with onnxruntime's offline ``SkipLayerNormalization`` fusion;
- ``qattention``: eager, attention fused into one node (``QAttention`` once quantized; the
  fusion then writes ``SkipLayerNormalization`` too);
- ``int8-attention``: ``shipped`` with the attention's own products int8 too
  (``MatMulConstBOnly`` off);
- ``fast-gelu``: ``shipped`` with the tanh approximation of GELU;
- ``merged-qkv``: ``shipped`` with each layer's query, key and value products merged into one
  384 x 1152 product and split after it (one int8 product instead of three; the same scores);
- ``static-qdq``: static int8 instead of dynamic: activation scales calibrated once on 64 real
  (question, paragraph) pairs of ``tests/data/hotpotqa.sample.jsonl`` (QDQ format, min-max);
- ``nbits4``, ``nbits8``: the fused fp32 graph's products as onnxruntime's ``MatMulNBits``
  (block-wise weights, 4 or 8 bits, blocks of 128, symmetric, ``accuracy_level`` 4: int8
  activations inside the kernel), the embeddings left fp32; needs the ``onnx-ir`` package;
- ``fp32``: the fused fp32 graph (no quantization), for reference.

Then times one input per run on one core (the judges run pairs side by side, one core each),
interleaving the graphs, at 256, 128 and 48 tokens: the median of ``--rounds`` rounds of
``--runs`` runs. ``--profile`` adds onnxruntime's per-operator share of one 256-token run.

    python bench/judges_graph_variants.py OUT [--variants shipped,sdpa,...] [--profile] [--json]

Run it on an otherwise idle machine; a busy one moves single timings by a quarter.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from onnx import TensorProto
from onnxruntime.quantization import QuantType, quantize_dynamic

from ragraphs.tools.judges.core import weights_dir
from ragraphs.tools.judges.onnx import export_fp32, fuse_bert, quantize_int8, restore_fp32

VARIANTS = ("shipped", "all-positions", "sdpa", "skip-ln", "qattention", "int8-attention", "fast-gelu", "merged-qkv",
            "static-qdq", "nbits4", "nbits8", "fp32")
LENGTHS = (256, 128, 48)


def build(out: Path, variants: list[str]) -> dict[str, Path]:
    """One ONNX file per variant under ``out``; returns name -> file."""
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="judge-graphs-"))
    model_dir = restore_fp32(weights_dir(), work / "fp32")  # with the tokenizer's files
    eager, _ = export_fp32(model_dir, work / "eager.onnx")
    whole = export_fp32(model_dir, work / "whole.onnx", first_token_only=False)[0] if "all-positions" in variants else None
    recipes = {  # variant -> (fp32 export, fuse_bert overrides, quantization extra options); fp32: not quantized
        "shipped": (eager, {}, {}),
        "all-positions": (whole, {}, {}),
        # the sdpa export with onnxruntime's default fusion, as the judges were written then
        "sdpa": (None, {"enable_attention": True, "enable_skip_layer_norm": True}, {}),
        "skip-ln": (eager, {"enable_skip_layer_norm": True}, {}),
        "qattention": (eager, {"enable_attention": True}, {}),
        "int8-attention": (eager, {}, {"MatMulConstBOnly": False}),
        "fast-gelu": (eager, {"enable_gelu_approximation": True}, {}),
    }
    files = {}
    for v in variants:
        target = out / f"{v}.onnx"
        if v == "fp32":
            fuse_bert(eager, target)
        elif v == "merged-qkv":
            merged = merge_qkv(fuse_bert(eager, work / "fused.onnx"), work / "merged.onnx")
            quantize_dynamic(str(merged), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                             extra_options={"DefaultTensorType": TensorProto.FLOAT})
        elif v == "static-qdq":
            static_int8(fuse_bert(eager, work / "fused.onnx"), target, model_dir)
        elif v in ("nbits4", "nbits8"):
            block_nbits(fuse_bert(eager, work / "fused.onnx"), target, bits=int(v[-1]))
        elif v in recipes:
            fp32, fusion, quant = recipes[v]
            fp32 = fp32 or export_fp32(model_dir, work / "sdpa.onnx", attn_implementation="sdpa", first_token_only=False)[0]
            quantize_int8(fp32, target, fusion=fusion, quant_options=quant)
        else:
            raise SystemExit(f"unknown variant {v!r}; choose from {', '.join(VARIANTS)}")
        files[v] = target
    shutil.rmtree(work, ignore_errors=True)
    return files


def merge_qkv(src: Path, dst: Path) -> Path:
    """Each layer's query, key and value MatMuls (same input, constant weights) become one MatMul
    over the concatenated weights followed by a Split with the three original outputs."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(str(src))
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    by_input: dict[str, list] = {}
    for n in g.node:
        if n.op_type == "MatMul" and n.input[1] in inits and any(r in n.name for r in ("/query/", "/key/", "/value/")):
            by_input.setdefault(n.input[0], []).append(n)
    for a, nodes in by_input.items():
        if len(nodes) != 3:  # the last layer's query reads the first position only
            continue
        nodes.sort(key=lambda n: [r in n.name for r in ("/query/", "/key/", "/value/")].index(True))
        ws = [numpy_helper.to_array(inits[n.input[1]]) for n in nodes]
        name = nodes[0].name.replace("/query/", "/qkv/")
        g.initializer.extend([numpy_helper.from_array(np.concatenate(ws, axis=1), name + "_W"),
                              numpy_helper.from_array(np.array([w.shape[1] for w in ws], np.int64), name + "_sizes")])
        at = min(list(g.node).index(n) for n in nodes)
        for n in nodes:
            g.node.remove(n)
        g.node.insert(at, helper.make_node("Split", [name + "_out", name + "_sizes"], [n.output[0] for n in nodes],
                                           name=name + "_split", axis=-1))
        g.node.insert(at, helper.make_node("MatMul", [a, name + "_W"], [name + "_out"], name=name))
    onnx.save(m, str(dst))
    return dst


def static_int8(fused: Path, target: Path, model_dir: Path, n: int = 64) -> Path:
    """Static int8 (QDQ, min-max activation ranges) of the fused fp32 graph, calibrated on ``n``
    real (question, paragraph) pairs of the bundled HotpotQA sample."""
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, quantize_static
    from transformers import AutoTokenizer

    from ragraphs.datasets import load_dataset
    from ragraphs.tools.judges import passage_text

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    sample = Path(__file__).resolve().parents[1] / "tests" / "data" / "hotpotqa.sample.jsonl"
    pairs = [(ex.question, passage_text(p)) for ex in load_dataset(str(sample), "hotpotqa") for p in ex.paragraphs[:3]][:n]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.items = iter([{k: v.astype(np.int64) for k, v in tok(q, p, truncation=True, max_length=256,
                                                                         return_tensors="np").items()} for q, p in pairs])

        def get_next(self):
            return next(self.items, None)

    quantize_static(str(fused), str(target), Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=True, reduce_range=True, op_types_to_quantize=["MatMul"],
                    calibrate_method=CalibrationMethod.MinMax, extra_options={"MatMulConstBOnly": True})
    return target


def block_nbits(fused: Path, target: Path, bits: int, block_size: int = 128) -> Path:
    """The fused graph's MatMuls with constant weights as ``MatMulNBits`` (block-wise symmetric
    weights of ``bits`` bits, int8 activations in the kernel: ``accuracy_level`` 4)."""
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer  # needs onnx-ir

    q = MatMulNBitsQuantizer(onnx.load(str(fused)), bits=bits, block_size=block_size, is_symmetric=True,
                             accuracy_level=4)
    q.process()
    q.model.save_model_to_file(str(target), use_external_data_format=False)
    return target


def _session(file: Path, profile_prefix: str | None = None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(str(file), so, providers=["CPUExecutionProvider"])


def _feeds(session, length: int) -> dict:
    rng = np.random.default_rng(0)
    all_feeds = {"input_ids": rng.integers(1000, 20000, (1, length)).astype(np.int64),
                 "attention_mask": np.ones((1, length), np.int64), "token_type_ids": np.zeros((1, length), np.int64)}
    names = {i.name for i in session.get_inputs()}
    return {k: v for k, v in all_feeds.items() if k in names}


def timings(files: dict[str, Path], rounds: int, runs: int) -> dict[str, dict[int, float]]:
    """ms per run, one core: the median over rounds, the graphs interleaved in each round."""
    sessions = {v: _session(f) for v, f in files.items()}
    res: dict[str, dict[int, float]] = {v: {} for v in files}
    for length in LENGTHS:
        per: dict[str, list[float]] = {v: [] for v in files}
        for _ in range(rounds):
            for v, s in sessions.items():
                feeds = _feeds(s, length)
                s.run(None, feeds)
                t = time.perf_counter()
                for _ in range(runs):
                    s.run(None, feeds)
                per[v].append((time.perf_counter() - t) * 1000 / runs)
        for v in files:
            res[v][length] = round(statistics.median(per[v]), 2)
    return res


def profile(file: Path, runs: int = 10) -> dict[str, float]:
    """Share of kernel time per operator type, one 256-token input on one core."""
    with tempfile.TemporaryDirectory() as tmp:
        s = _session(file, str(Path(tmp) / "p"))
        feeds = _feeds(s, 256)
        for _ in range(runs):
            s.run(None, feeds)
        events = json.loads(Path(s.end_profiling()).read_text())
    by_op: collections.Counter = collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            by_op[e["args"]["op_name"]] += e["dur"]
    total = sum(by_op.values()) or 1
    return {op: round(100 * t / total, 1) for op, t in by_op.most_common(12)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--profile", action="store_true", help="also each graph's per-operator share at 256 tokens")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    files = build(Path(a.out), [v.strip() for v in a.variants.split(",") if v.strip()])
    res = {"ms_per_run_one_core": timings(files, a.rounds, a.runs), "rounds": a.rounds, "runs": a.runs}
    if a.profile:
        res["op_share_pct_256"] = {v: profile(f) for v, f in files.items()}
    if a.json:
        print(json.dumps(res))
        return
    print("variant          " + "".join(f"{n:>10d}" for n in LENGTHS) + "   (ms per run, one core, tokens)")
    for v, row in res["ms_per_run_one_core"].items():
        print(f"{v:16s} " + "".join(f"{row[n]:10.2f}" for n in LENGTHS))
    for v, shares in res.get("op_share_pct_256", {}).items():
        print(f"{v}: " + ", ".join(f"{op} {p}%" for op, p in shares.items()))


if __name__ == "__main__":
    main()
