"""ONNX int8 for the judges: export, quantize, and a ``predict`` that runs on onnxruntime.

sentence-transformers' own ONNX backend needs ``optimum-onnx``, whose only release (0.1.0)
requires transformers < 5 while sentence-transformers 6 requires transformers >= 5, so the
two cannot be installed together. The same three steps are done here with the libraries
under it: torch's ONNX exporter, onnxruntime's BERT graph fusion and its dynamic int8
quantization (onnxruntime is already installed with Chroma), and a small predictor that
returns ``CrossEncoder.predict``'s sigmoid scores.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import ConfigError

INT8_FILE = "onnx/model_qint8.onnx"


def _tokenizer(d: Path, auto: Any) -> Any:
    """The judge's tokenizer, or a ConfigError naming its file: a missing ``tokenizer.json`` let
    transformers build a five-token one that read every word as [UNK] (garbage scores, no error)."""
    files = [d / f for f in ("tokenizer.json", "vocab.txt") if (d / f).is_file()]
    if not files:
        raise ConfigError(f"judge model file missing: {d / 'tokenizer.json'}")
    try:
        tok = auto.from_pretrained(str(d), local_files_only=True)
    except Exception as e:
        raise ConfigError(f"judge tokenizer could not be loaded from {files[0]}: {type(e).__name__}: "
                          f"{' '.join(str(e).split())[:160]}") from e
    if len(tok) < 1000:  # MiniLM's has 30,522
        raise ConfigError(f"judge tokenizer {files[0]} holds {len(tok)} tokens: damaged or not this model's")
    return tok


def positive_label(id2label: Any, n: int) -> int:
    """Which of a model's ``n`` labels is the positive one: the first whose name says entailment
    or relevance (not "not ...", "non...", "irrelevant"), else the last."""
    names = {int(i): str(v).lower() for i, v in (id2label or {}).items() if str(i).isdigit()}
    for word in ("entail", "relevant"):
        hits = [i for i, v in names.items() if word in v and not any(w in v for w in ("not", "non", "ir" + word)) and i < n]
        if hits:
            return hits[0]
    return n - 1


def positive_probability(logits: Any, id2label: Any) -> np.ndarray:
    """P(positive) of each row of raw logits: one logit through a sigmoid, several through a
    softmax read at :func:`positive_label` (the ONNX and the torch judges read them alike)."""
    z = np.asarray(logits, dtype=np.float64)
    z = z.reshape(len(z), -1) if z.size else z.reshape(0, 1)
    if z.shape[1] == 1:
        return (1.0 / (1.0 + np.exp(-z[:, 0]))).astype(np.float32)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return (e[:, positive_label(id2label, z.shape[1])] / e.sum(axis=1)).astype(np.float32)


def _id2label(d: Path) -> dict:
    try:
        return dict(json.loads((d / "config.json").read_text(encoding="utf-8")).get("id2label") or {})
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


class OnnxCrossEncoder:
    """``predict(pairs)`` of a sequence-classification model exported to ONNX (one logit).

    Each pair runs on its own (see ``predict``). One pair uses every core; several pairs run
    side by side, one core each, which keeps the cores busier on these small matrices (on 2
    cores, ``bench/judges_speed.py``: 4.4 against 5.9 ms per 200-character strip, 20 against
    23 ms per 256-token pair), with the same scores. ``threads`` caps the cores used (0: all
    available)."""

    def __init__(self, model_dir: str | os.PathLike, file_name: str = INT8_FILE, max_length: int = 256,
                 threads: int = 0):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        d = Path(model_dir)
        self.tokenizer = _tokenizer(d, AutoTokenizer)
        cores = threads or _available_cores()

        def session(n: int):
            so = ort.SessionOptions()
            so.intra_op_num_threads = n
            so.log_severity_level = 3
            return ort.InferenceSession(str(d / file_name), so, providers=["CPUExecutionProvider"])

        self.session = session(cores)  # one pair: every core
        self._solo = session(1) if cores > 1 else None  # several pairs: one core each, side by side
        self._cores, self._pool_pid, self._pool_lock = cores, 0, threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.max_length = max_length
        self.id2label = _id2label(d)  # a model of several labels is read at its positive one

    def _executor(self) -> ThreadPoolExecutor:
        """The worker threads, made in this process (a forked child gets its own)."""
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(self._cores, thread_name_prefix="ragraphs-judge")
                self._pool_pid = os.getpid()
            return self._pool

    def _logits(self, session, feeds: dict) -> np.ndarray:
        return np.asarray(session.run(None, feeds)[0], dtype=np.float64).reshape(-1)

    def feeds(self, pairs: Sequence[tuple[str, str]]) -> list[dict]:
        """Each pair's model inputs (a batch of one, unpadded), from one tokenizer call for all
        the pairs: each pair gets the ids it has when tokenized alone."""
        pairs = list(pairs)
        if not pairs:
            return []
        enc = self.tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first",
                             max_length=self.max_length)
        names = [k for k in enc.keys() if k in self.inputs]
        return [{k: np.asarray([enc[k][i]], dtype=np.int64) for k in names} for i in range(len(pairs))]

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 1, show_progress_bar: bool = False,
                convert_to_numpy: bool = True) -> np.ndarray:
        """P(positive) of each pair (:func:`positive_probability`: the sigmoid of a one-logit
        model's score; until 2026-12-01 a model of several labels was read at its last logit,
        not as the torch judges read it), one pair per run: dynamic int8 quantization picks one activation
        scale per input tensor, so in a padded batch a pair's score would depend on the other
        pairs; alone, it does not (and unpadded runs cost no more on a CPU: measured in
        bench/judges_speed.py). ``batch_size`` is accepted for CrossEncoder's signature."""
        feeds = self.feeds(pairs)
        if not feeds:
            return np.zeros(0, dtype=np.float32)
        if self._solo is not None and len(feeds) > 1:
            logits = list(self._executor().map(lambda f: self._logits(self._solo, f), feeds))
        else:
            logits = [self._logits(self.session, f) for f in feeds]
        return positive_probability(np.stack(logits), self.id2label)


def _available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def export_int8(model_dir: str | os.PathLike, max_length: int = 256) -> str:
    """Export the model in ``model_dir`` to ONNX, fuse the BERT graph, quantize to int8.

    Writes ``onnx/model.onnx`` (fp32) and ``onnx/model_qint8.onnx``; returns the latter's
    path relative to ``model_dir``."""
    d = Path(model_dir)
    (d / "onnx").mkdir(exist_ok=True)
    fp32, cfg = export_fp32(d, d / "onnx" / "model.onnx")
    # onnxruntime's quantizer logs "Please consider to run pre-processing" on the root logger,
    # through train-judge --json too: the graph is fused here already
    advice = _DropMessage("Please consider to run pre-processing")
    logging.getLogger().addFilter(advice)
    try:
        quantize_int8(fp32, d / INT8_FILE, num_heads=cfg.num_attention_heads, hidden_size=cfg.hidden_size)
    finally:
        logging.getLogger().removeFilter(advice)
    return INT8_FILE


class _DropMessage(logging.Filter):
    def __init__(self, start: str) -> None:
        super().__init__()
        self.start = start

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.getMessage()).startswith(self.start)


def first_token_last_layer(model) -> None:
    """Make the encoder's last layer of a BERT sequence classifier compute its first position
    only: the pooler and the classifier read nothing else.

    Its keys and values still come from every position, so the first position's output is
    the same (to float rounding, padding included); the queries, the attention output, the
    residual, layer norm and feed-forward of the other positions are skipped: about five
    sixths of the last layer's products. Only two ``forward`` methods change (the layer's
    attention and self-attention), so the modules are called along the same path and the
    exported graph's node names, which :func:`int8_state_dict` reads, stay the same."""
    import types

    from transformers.models.bert.modeling_bert import eager_attention_forward

    attention = model.bert.encoder.layer[-1].attention

    def self_attention(self, hidden_states, attention_mask=None, *args, **kwargs):
        first = hidden_states[:, :1]
        heads = (hidden_states.shape[0], -1, self.num_attention_heads, self.attention_head_size)
        query = self.query(first).view(heads).transpose(1, 2)
        key = self.key(hidden_states).view(heads).transpose(1, 2)
        value = self.value(hidden_states).view(heads).transpose(1, 2)
        mask = attention_mask[:, :, :1, :] if attention_mask is not None else None
        context, weights = eager_attention_forward(self, query, key, value, mask, scaling=self.scaling)
        return context.reshape(first.shape), weights

    def attention_forward(self, hidden_states, attention_mask=None, *args, **kwargs):
        context, weights = self.self(hidden_states, attention_mask=attention_mask)
        return self.output(context, hidden_states[:, :1]), weights

    attention.self.forward = types.MethodType(self_attention, attention.self)
    attention.forward = types.MethodType(attention_forward, attention)


def export_fp32(model_dir: str | os.PathLike, target: str | os.PathLike, attn_implementation: str = "eager",
                first_token_only: bool = True):
    """torch's ONNX export of the sequence-classification model in ``model_dir`` to ``target``
    (dynamic batch and length); returns (``target``, the model's config).

    Eager attention by default: transformers' default (sdpa) exports a mask guarded by
    ``IsNaN`` / ``Where`` in every layer, which onnxruntime cannot fuse; those nodes took 15%
    of a 256-token pair (``bench/judges_graph_variants.py --profile``). ``first_token_only``
    (default): the last layer computes the first position only (:func:`first_token_last_layer`)."""
    import torch
    from transformers import AutoTokenizer

    from .widths import load_classifier

    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = load_classifier(model_dir, local_files_only=True, attn_implementation=attn_implementation).eval()
    if first_token_only:
        if attn_implementation != "eager":
            raise ValueError("first_token_only needs attn_implementation='eager'")
        first_token_last_layer(model)
    dummy = tok(["what is a question?"], ["a passage that answers it"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in dummy]
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["logits"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(model, tuple(dummy[n] for n in names), str(target), input_names=names, output_names=["logits"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    return Path(target), model.config


def fuse_bert(fp32_file: str | os.PathLike, target: str | os.PathLike, *, num_heads: int = 12,
              hidden_size: int = 384, **fusion: bool) -> Path:
    """onnxruntime's BERT graph fusion of ``fp32_file`` (bias + GELU, folded constants), written
    to ``target``.

    Two fusions are left out, each measured on a 256-token pair on one core (onnxruntime
    1.32, ``bench/judges_graph_variants.py``, two runs: 30-32 ms with neither):

    - the attention block stays matrix products: fused, it becomes one ``Attention`` node
      that dynamic quantization turns into ``QAttention``, whose query/key/value weights are
      quantized per tensor instead of per column; 37-40 ms, and it moved scores by up to 0.2;
    - residual + layer norm stay two nodes: the offline-fused ``SkipLayerNormalization``
      took 14% of the time (40-41 ms); onnxruntime fuses some of them itself at load time,
      at a fraction of that cost.

    ``fusion`` overrides onnxruntime's ``FusionOptions`` fields (``enable_attention=True``...)."""
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    options = FusionOptions("bert")
    options.enable_attention = False
    options.enable_skip_layer_norm = False
    for name, value in fusion.items():
        setattr(options, name, value)
    optimize_model(str(fp32_file), model_type="bert", num_heads=num_heads, hidden_size=hidden_size,
                   optimization_options=options).save_model_to_file(str(target))
    return Path(target)


def quantize_int8(fp32_file: str | os.PathLike, target: str | os.PathLike, *, num_heads: int = 12,
                  hidden_size: int = 384, keep_fp32: Callable[[str], bool] | None = None,
                  fusion: dict | None = None, quant_options: dict | None = None, reduce_range: bool = True) -> Path:
    """Fuse the BERT graph of ``fp32_file`` (onnxruntime's optimizer), then quantize it to
    dynamic int8 (per-channel weights) into ``target``; the matrix products whose node name
    ``keep_fp32`` accepts stay fp32 (default: none). ``fusion`` goes to :func:`fuse_bert` and
    ``quant_options`` to onnxruntime's ``extra_options`` (for experiments: the defaults are
    the shipped recipe).

    ``reduce_range`` (default): the weights use 7 of the 8 bits, [-64, 64]. On an x86 CPU with
    AVX2 but no VNNI, onnxruntime's int8 kernel adds two uint8 x int8 products in 16 bits,
    which full-range weights can overflow (255 x 127 x 2 > 32767): the same file then scored a
    pair 0.16 on such a CPU where the exact integer product gives 0.22 (onnx's reference
    evaluator). With 7-bit weights the sum fits, so every CPU computes the same scores, at the
    same speed; the dev AUC moved by -0.008 to +0.008 (``bench/results/judges_first_token/``)."""
    import onnx
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = Path(target)
    fused = fuse_bert(fp32_file, target.with_name(target.stem + "_fused.onnx"), num_heads=num_heads, hidden_size=hidden_size,
                      **(fusion or {}))
    exclude = []
    if keep_fp32 is not None:
        exclude = [n.name for n in onnx.load(str(fused)).graph.node if n.op_type in ("MatMul", "Gather") and keep_fp32(n.name)]
    quantize_dynamic(str(fused), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=reduce_range,
                     nodes_to_exclude=exclude, extra_options={"DefaultTensorType": TensorProto.FLOAT, **(quant_options or {})})
    fused.unlink(missing_ok=True)
    return target


def _dequantized(init: dict, base: str) -> np.ndarray:
    from onnx import numpy_helper

    q = numpy_helper.to_array(init[base + "_quantized"]).astype(np.float32)
    scale = numpy_helper.to_array(init[base + "_scale"]).astype(np.float32)
    zero = numpy_helper.to_array(init[base + "_zero_point"]).astype(np.float32)
    return (q - zero) * scale  # per-tensor (embeddings) or per output column (MatMul weights)


def int8_state_dict(onnx_file: str | os.PathLike) -> dict[str, np.ndarray]:
    """The weights of an int8 file written by :func:`export_int8`, dequantized, under the
    names of the transformers model it was exported from.

    The int8 file is all that ships, so this is how training can continue from the shipped
    judges: every matrix comes back within half a quantization step of the fp32 weights."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_file))
    init = {i.name: i for i in model.graph.initializer}
    state: dict[str, np.ndarray] = {}
    for name, t in init.items():  # biases and layer norms stay fp32 under their own names
        if name.startswith(("bert.", "classifier.")) and not name.endswith(("_quantized", "_scale", "_zero_point")):
            state[name] = numpy_helper.to_array(t).astype(np.float32)
    for name in init:
        if name.startswith("bert.embeddings.") and name.endswith(".weight_quantized"):
            base = name[: -len("_quantized")]
            state[base] = _dequantized(init, base)
    for node in model.graph.node:
        if node.op_type != "MatMulInteger":
            continue
        base = node.input[1][: -len("_quantized")]
        if base.endswith(".weight_Transposed"):  # pooler and classifier keep their names
            key = base[: -len("_Transposed")]
        else:  # encoder matrices: the module's path is in the node's output name
            out = node.output[0]
            path = out[: out.index("/MatMul_output_0")].strip("/")
            key = path.replace("/", ".") + ".weight"
        state[key] = _dequantized(init, base).T.copy()  # MatMul (in, out) -> Linear (out, in)
    return state


def restore_fp32(model_dir: str | os.PathLike, out_dir: str | os.PathLike, file_name: str = INT8_FILE) -> Path:
    """Write a transformers model to ``out_dir`` from the int8 ONNX file in ``model_dir``
    (its config and tokenizer copied, its weights dequantized): a start for more training."""
    import shutil

    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from .widths import fit_ffn_widths

    src, out = Path(model_dir), Path(out_dir)
    onnx_file = src / file_name
    if not onnx_file.is_file():
        raise FileNotFoundError(f"no ONNX judge model at {onnx_file}")
    out.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and f.suffix in (".json", ".txt"):
            shutil.copy2(f, out / f.name)
    model = AutoModelForSequenceClassification.from_config(AutoConfig.from_pretrained(str(src), local_files_only=True))
    state = {k: torch.from_numpy(v) for k, v in int8_state_dict(onnx_file).items()}
    fit_ffn_widths(model, state)  # a judge whose layers' feed-forward widths differ
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise ValueError(f"{onnx_file}: weights do not match the config (missing {missing[:3]}, unexpected {unexpected[:3]})")
    model.save_pretrained(str(out))
    return out
