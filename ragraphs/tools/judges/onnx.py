"""ONNX int8 for the judges: export, quantize, and a ``predict`` that runs on onnxruntime.

sentence-transformers' own ONNX backend needs ``optimum-onnx``, whose only release (0.1.0)
requires transformers < 5 while sentence-transformers 6 requires transformers >= 5, so the
two cannot be installed together. The same three steps are done here with the libraries
under it: torch's ONNX exporter, onnxruntime's BERT graph fusion and its dynamic int8
quantization (onnxruntime is already installed with Chroma), and a small predictor that
returns ``CrossEncoder.predict``'s sigmoid scores.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

INT8_FILE = "onnx/model_qint8.onnx"


class OnnxCrossEncoder:
    """``predict(pairs)`` of a sequence-classification model exported to ONNX (one logit)."""

    def __init__(self, model_dir: str | os.PathLike, file_name: str = INT8_FILE, max_length: int = 256,
                 threads: int = 0):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        d = Path(model_dir)
        self.tokenizer = AutoTokenizer.from_pretrained(str(d), local_files_only=True)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.log_severity_level = 3
        self.session = ort.InferenceSession(str(d / file_name), so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.max_length = max_length

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 1, show_progress_bar: bool = False,
                convert_to_numpy: bool = True) -> np.ndarray:
        """Sigmoid scores, one pair per run: dynamic int8 quantization picks one activation
        scale per input tensor, so in a padded batch a pair's score would depend on the other
        pairs; alone, it does not (and unpadded runs cost no more on a CPU: measured in
        bench/judges_speed.py). ``batch_size`` is accepted for CrossEncoder's signature."""
        out = np.zeros(len(pairs), dtype=np.float32)
        for i, (a, b) in enumerate(pairs):
            enc = self.tokenizer(a, b, truncation="longest_first", max_length=self.max_length, return_tensors="np")
            feeds = {k: v.astype(np.int64) for k, v in enc.items() if k in self.inputs}
            logit = float(self.session.run(None, feeds)[0].reshape(-1)[-1])
            out[i] = 1.0 / (1.0 + np.exp(-logit))
        return out


def export_int8(model_dir: str | os.PathLike, max_length: int = 256) -> str:
    """Export the model in ``model_dir`` to ONNX, fuse the BERT graph, quantize to int8.

    Writes ``onnx/model.onnx`` (fp32) and ``onnx/model_qint8.onnx``; returns the latter's
    path relative to ``model_dir``."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    d = Path(model_dir)
    (d / "onnx").mkdir(exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(d), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(d), local_files_only=True).eval()
    dummy = tok(["what is a question?"], ["a passage that answers it"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in dummy]
    fp32 = d / "onnx" / "model.onnx"
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["logits"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(model, tuple(dummy[n] for n in names), str(fp32), input_names=names, output_names=["logits"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    cfg = model.config
    fused = d / "onnx" / "model_fused.onnx"
    opt = optimize_model(str(fp32), model_type="bert", num_heads=cfg.num_attention_heads, hidden_size=cfg.hidden_size)
    opt.save_model_to_file(str(fused))
    from onnx import TensorProto

    quantize_dynamic(str(fused), str(d / INT8_FILE), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"DefaultTensorType": TensorProto.FLOAT})
    fused.unlink(missing_ok=True)
    return INT8_FILE
