"""Loading and scoring: the judges are sentence-transformers ``CrossEncoder`` models.

Three roles, each a view of a cross-encoder that reads its two texts *together*:

- **evaluator** (CRAG's retrieval evaluator; also the re-ranker and a knowledge filter):
  ``score(question, passage) -> [-1, 1]``; above 0 leans relevant.
- **pair** (DR-RAG's classifier C(q, d1, d2)): ``score_pair(question, d1, d2) -> [0, 1]``,
  high only when the two passages together are the ones the question needs.
- **nli** (MIGRES's citation check, ERM4's knowledge filter): ``score(premise, hypothesis)
  -> [0, 1]``, the probability that the premise entails the hypothesis.

The shipped judges are one multi-task cross-encoder fine-tuned from the packaged
all-MiniLM-L6-v2 weights (``ragraphs train-judge``), each role marked by a task prefix on
the first text, exported to ONNX with dynamic int8 quantization and loaded with
sentence-transformers' ONNX backend. ``RAGRAPHS_JUDGES_DIR`` points at retrained judges, and
``RAGRAPHS_RERANKER`` (or ``load_judge(..., path=...)``) at any CrossEncoder directory or
cached model name, e.g. a larger re-ranker, for the evaluator role.

Pass passages as ``"Title\\ntext"`` (:func:`passage_text`): the judges were trained on it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from ...errors import ConfigError
from ..env import positive_int

JUDGES = ("evaluator", "pair", "nli")
# the task prefix each role puts before its first text (the multi-task model reads it)
PREFIX = {"evaluator": "relevance: ", "pair": "pair: ", "nli": "entailment: "}
PAIR_SEP = "\n[SEP]\n"
MAX_CHARS = 2000  # characters of one text handed to the tokenizer (it truncates to max_length)


@runtime_checkable
class Judge(Protocol):
    def score(self, question: str, passage: str) -> float: ...

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


def passage_text(p: Any) -> str:
    """The text a judge should see for a passage dict: ``"Title\\ntext"`` (or a plain string)."""
    if isinstance(p, str):
        return p
    title = (p.get("title") or "").strip()
    text = p.get("text") or ""
    return f"{title}\n{text}" if title else text


def clean(text: Any, limit: int = MAX_CHARS) -> str:
    """Any input as a non-empty string the tokenizer accepts (None, NULs, huge texts)."""
    if text is None:
        text = ""
    if not isinstance(text, str):
        text = str(text)
    text = text.replace("\x00", " ")[:limit]
    return text if text.strip() else "-"


def weights_dir() -> Path:
    return Path(str(resources.files("ragraphs") / "data" / "judges"))


# ---------------------------------------------------------------- the model
_MODELS: dict[tuple, Any] = {}
_LOCK = threading.Lock()
_ONNX_FILE = "onnx/model_qint8.onnx"


def _describe(path: Path) -> dict:
    meta_file = path / "ragraphs_judge.json"
    if meta_file.is_file():
        try:
            return json.loads(meta_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConfigError(f"judge description is corrupt: {meta_file} ({e})") from e
    return {}


def _unreadable_file(folder: Path) -> Path:
    """The file of a sentence-transformers model folder that does not read (its config or its
    safetensors weights), else the folder: a load error then names what to replace."""
    config = folder / "config.json"
    try:
        json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return config
    weights = folder / "model.safetensors"
    if weights.is_file():
        try:
            from safetensors import safe_open

            with safe_open(str(weights), framework="numpy") as f:
                for name in f.keys():
                    f.get_slice(name)
        except Exception:
            return weights
    return folder


# the files one of which a model folder's tokenizer is read from (fast, WordPiece, SentencePiece, BPE)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model",
                   "vocab.json")


def has_tokenizer(folder: str | os.PathLike) -> bool:
    """Whether a model folder holds a tokenizer file (:data:`TOKENIZER_FILES`): without one,
    transformers builds a tokenizer of a few tokens, every word ``[UNK]``, and says nothing."""
    return any((Path(folder) / t).is_file() for t in TOKENIZER_FILES)


def load_cross_encoder(path: str | os.PathLike, backend: str | None = None, max_length: int | None = None):
    """A cross-encoder from a directory (its ONNX int8 model when it holds one, run by
    onnxruntime; else sentence-transformers' ``CrossEncoder``) or a cached model name;
    loaded once per process. Errors name the file that is missing or corrupt."""
    p = Path(path).expanduser()
    local = p.exists()
    if not local and _path_like(str(path)):  # "org/name" goes on to the local model cache
        raise ConfigError(f"judge model not found: {p}")
    meta = _describe(p) if local else {}
    backend, onnx_file = _judge_backend(p, str(path), local, meta, backend)
    if local:
        _check_judge_files(p, backend, onnx_file)
    threads = positive_int("RAGRAPHS_JUDGE_THREADS") or 0
    key = (str(p.resolve()) if local else str(path), backend, max_length, threads)
    # a ragraphs judge reads the length it was trained with; another CrossEncoder keeps its own
    length = max_length or meta.get("max_length") or (None if backend == "torch" else 256)
    with _LOCK:
        if key in _MODELS:
            return _MODELS[key]
        # a sentence-embedding model (a folder, or a cached name's config), before it loads
        _refuse_bi_encoder(p if local else _cached_folder(str(path)))
        model = _load_model(p, str(path), local, backend, onnx_file, length, threads)
        _MODELS[key] = (model, meta)
        return _MODELS[key]


def _judge_backend(p: Path, spec: str, local: bool, meta: dict, backend: str | None) -> tuple[str, Path | None]:
    """The backend to run a judge with (``onnx`` where a ragraphs judge folder names its ONNX
    file, else ``torch``) and that file, for a folder."""
    onnx_file = p / meta.get("onnx_file", _ONNX_FILE) if local else None
    if backend is None:  # a ragraphs judge directory names its ONNX file: that one, or an error naming it
        backend = "onnx" if onnx_file is not None and (onnx_file.is_file() or meta.get("onnx_file")) else "torch"
    if backend not in ("onnx", "torch"):
        raise ConfigError(f"unknown judge backend {backend!r}; choose onnx or torch")
    if backend == "onnx" and onnx_file is None:
        raise ConfigError(f"the onnx judge backend needs a model directory holding its ONNX file; {spec} is not a directory here")
    return backend, onnx_file


def _check_judge_files(p: Path, backend: str, onnx_file: Path | None) -> None:
    """A judge folder's config, ONNX file (for that backend) and tokenizer, each named when missing."""
    needed = [p / "config.json"] + ([onnx_file] if backend == "onnx" and onnx_file is not None else [])
    for f in needed:
        if not f.is_file():
            raise ConfigError(f"judge model file missing: {f}")
    if p.is_dir() and not has_tokenizer(p):
        # a folder without one loaded a tokenizer of a few tokens: every word [UNK], every pair one
        # score, no error (judge-eval, rerank= and train-judge's teachers read it until 2026-12-01)
        raise ConfigError(f"judge model file missing: {p / 'tokenizer.json'} (the folder holds no tokenizer: "
                          f"{', '.join(TOKENIZER_FILES)})")


def _load_model(p: Path, spec: str, local: bool, backend: str, onnx_file: Path | None, length: int | None, threads: int):
    """The model itself, loaded quietly; what fails to load is a ConfigError naming its file."""
    from ...quiet import quiet_loading

    try:
        with quiet_loading():
            if backend == "onnx" and onnx_file is not None:
                from .onnx import OnnxCrossEncoder

                return OnnxCrossEncoder(p, str(onnx_file.relative_to(p)), max_length=length or 256, threads=threads)
            from sentence_transformers import CrossEncoder

            return CrossEncoder(str(p) if local else spec, max_length=length, device="cpu", local_files_only=True)
    except ConfigError:  # one that names its file already (the tokenizer's)
        raise
    except Exception as e:  # corrupt weights, unreadable ONNX graph, bad config, unknown name
        where = onnx_file if backend == "onnx" else (_unreadable_file(p) if local else p)
        if not local and isinstance(e, OSError):  # a name not in the local model cache (no hub is reached)
            raise ConfigError(f"judge model {spec!r}: no such folder, and no model of that name in the local "
                              "Hugging Face cache (ragraphs loads models offline): give a CrossEncoder folder "
                              "or a cached model name") from e
        why = " ".join(str(e).split())[:200]  # one line
        raise ConfigError(f"judge model could not be loaded from {where}: {type(e).__name__}: {why}") from e


def _path_like(spec: str) -> bool:
    """A judge spec that can only be a folder (absolute, ``./``, ``~``, or deeper than a
    model cache's ``org/name``)."""
    return spec.startswith((os.sep, ".", "~")) or spec.count("/") > 1 or (os.sep != "/" and os.sep in spec)


def _cached_folder(name: str) -> Path:
    """The local Hugging Face cache's folder of ``name``'s config (a folder that is not there
    when the cache has none: the loader then says the model is not cached)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # not a repository name the hub library takes
        found = None
    return Path(found).parent if isinstance(found, str) else Path(os.devnull) / "none"


def is_cached_model(name: str) -> bool:
    """Whether the local Hugging Face cache holds a model of this name (its config), read without
    reaching the hub."""
    return (_cached_folder(name) / "config.json").is_file()


def _refuse_bi_encoder(folder: Path) -> None:
    """A sentence-embedding model given as a judge loads with a new, random scoring layer:
    its scores would be noise. Refused when its config names no sequence-classification
    architecture (a bi-encoder's says ``BertModel``)."""
    try:
        arch = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("architectures") or []
    except (OSError, ValueError, AttributeError):
        return  # a missing or corrupt config is named by the checks that follow
    if arch and not any(str(a).endswith("ForSequenceClassification") for a in arch):
        raise ConfigError(f"{folder} is not a cross-encoder: its config.json names {', '.join(map(str, arch))}, "
                          "a sentence-embedding model with no scoring head; give a CrossEncoder "
                          "(a *ForSequenceClassification model), e.g. one saved by sentence-transformers' CrossEncoder")


def probabilities(model: Any, pairs: list, batch_size: int = 32) -> np.ndarray:
    """P(relevant) in [0, 1] for each pair, whatever the cross-encoder's head: ragraphs' ONNX
    predictor gives it; a sentence-transformers ``CrossEncoder``'s logits are read past its own
    activation (many re-rankers set ``Identity``, two-label ones give raw logits): one logit
    through a sigmoid, several through a softmax, taking the label whose name says
    entailment or relevance, else the last."""
    if not _is_sentence_transformers(model):
        out = model.predict(pairs, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(out, dtype=np.float32).reshape(len(pairs), -1)[:, -1]
    import torch

    from .onnx import positive_probability

    raw = model.predict(pairs, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True,
                        activation_fn=torch.nn.Identity())
    logits = np.asarray(raw, dtype=np.float64).reshape(len(pairs), -1)
    return positive_probability(logits, getattr(getattr(model, "config", None), "id2label", None))


def _is_sentence_transformers(model: Any) -> bool:
    """A sentence-transformers ``CrossEncoder`` (or a subclass of the user's); the library is
    not imported for other models."""
    st = sys.modules.get("sentence_transformers")
    return st is not None and isinstance(model, getattr(st, "CrossEncoder", ()))


def _offsets(tok: Any, text: str) -> list:
    return tok(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]


def _upto(text: str, offsets: list, n: int) -> str:
    """``text`` up to the end of its ``n``-th token (the original characters, not decoded ones)."""
    return text if len(offsets) <= n else text[: offsets[n - 1][1]]


def balanced_pair(tok: Any, first: str, d1: str, d2: str, budget: int) -> tuple[str, str]:
    """(first, d1 [SEP] d2) within ``budget`` tokens, the room shared fairly by d1 and d2 (a
    short one leaves the rest to the other) instead of cutting d2 from its end."""
    n_first = len(tok(first, add_special_tokens=False)["input_ids"])
    return _shared(first, n_first, d1, _offsets(tok, d1), d2, _offsets(tok, d2), budget)


def balanced_pairs(tok: Any, triples: Sequence[tuple[str, str, str]], budget: int) -> list[tuple[str, str]]:
    """:func:`balanced_pair` for many (first, d1, d2) triples, each distinct text tokenized
    once, in one batch: DR-RAG's triples repeat the question and each static document."""
    firsts = list(dict.fromkeys(t[0] for t in triples))
    docs = list(dict.fromkeys(d for t in triples for d in t[1:]))
    n_first = dict(zip(firsts, map(len, tok(firsts, add_special_tokens=False)["input_ids"]))) if firsts else {}
    offs = dict(zip(docs, tok(docs, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"])) if docs else {}
    return [_shared(f, n_first[f], d1, offs[d1], d2, offs[d2], budget) for f, d1, d2 in triples]


def _shared(first: str, n_first: int, d1: str, o1: list, d2: str, o2: list, budget: int) -> tuple[str, str]:
    room = max(16, budget - n_first - 4)  # [CLS] first [SEP] d1 [SEP] d2 [SEP]
    half = room // 2
    c1 = len(o1) if len(o1) <= half else max(half, room - len(o2))
    c2 = room - min(len(o1), c1)
    return first, _upto(d1, o1, c1) + PAIR_SEP + _upto(d2, o2, max(1, c2))


class CrossEncoderJudge:
    """One role of a cross-encoder. ``prefix`` marks the task for the multi-task model (empty
    for a plain re-ranker); ``threshold`` is the judge's own cut for its role, its ``thresholds``
    entry: for the shipped judges the cuts cross-fitted on the dev files
    (``bench/judges_fit_cuts.py --crossfit``; the validation cuts are ``thresholds_validation``),
    for a ``train-judge`` output the validation cut."""

    def __init__(self, role: str, model: Any, meta: dict | None = None, *, prefix: str | None = None,
                 name: str = "cross-encoder", batch_size: int = 32):
        if role not in JUDGES:
            raise ConfigError(f"unknown judge {role!r}; choose evaluator, pair or nli")
        self.role, self.model, self.meta = role, model, dict(meta or {})
        self.prefix = PREFIX[role] if prefix is None else prefix
        default_thr = 0.0 if role == "evaluator" else 0.5
        self.threshold = float((self.meta.get("thresholds") or {}).get(role, default_thr))
        self.name, self.batch_size = name, batch_size

    @property
    def n_params(self) -> int:
        return int(self.meta.get("n_params", 0))

    def _probs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        out = probabilities(self.model, pairs, self.batch_size)
        return np.clip(np.nan_to_num(out, nan=0.5), 0.0, 1.0)

    # evaluator and nli: (first, second) pairs
    def score_batch(self, pairs: Sequence[tuple]) -> np.ndarray:
        if self.role == "pair":
            return self.score_pairs(pairs)
        texts = [(self.prefix + clean(a, 1000), clean(b)) for a, b in pairs]
        if self.role == "nli":  # trained as (hypothesis, premise): the premise may be long
            texts = [(self.prefix + clean(b, 1000), clean(a)) for a, b in pairs]
        p = self._probs(texts)
        return (2.0 * p - 1.0).astype(np.float32) if self.role == "evaluator" else p

    def score(self, a: str, b: str) -> float:
        return float(self.score_batch([(a, b)])[0])

    # pair: (question, d1, d2) triples
    def score_pairs(self, triples: Sequence[tuple[str, str, str]], max_tokens: int | None = None) -> np.ndarray:
        """C(q, d1, d2) in [0, 1]. ``max_tokens``: read each triple within this many tokens, the
        room shared by d1 and d2 (:func:`balanced_pair`); None or 0: the model's ``max_length``,
        which the tokenizer reaches by cutting d2 from its end."""
        if self.role != "pair":
            raise ConfigError(f"the {self.role} judge scores pairs: use score_batch")
        half = MAX_CHARS // 2
        budget = int(max_tokens or 0)
        tok = getattr(self.model, "tokenizer", None)
        if budget > 0 and tok is not None:
            texts = balanced_pairs(tok, [(self.prefix + clean(q, 600), clean(d1, half), clean(d2, half))
                                         for q, d1, d2 in triples], budget)
        else:
            texts = [(self.prefix + clean(q, 600), clean(d1, half) + PAIR_SEP + clean(d2, half)) for q, d1, d2 in triples]
        return self._probs(texts)

    def score_pair(self, question: str, d1: str, d2: str) -> float:
        return float(self.score_pairs([(question, d1, d2)])[0])


def own_threshold(judge: Any, fallback: float) -> float:
    """A judge's own cut (its ``threshold``: for a :class:`CrossEncoderJudge` its ``thresholds``
    entry, for the shipped judges cross-fitted on the dev files, for a ``train-judge`` output the
    validation cut), else ``fallback``."""
    own = getattr(judge, "threshold", None)
    return float(own) if isinstance(own, (int, float)) and not isinstance(own, bool) else float(fallback)


def score_triples(judge: Any, triples: Sequence[tuple[str, str, str]], max_tokens: int | None = None) -> list[float]:
    """Any pair judge's C(q, d1, d2) for ``triples``; ``max_tokens`` reaches a cross-encoder
    (see :meth:`CrossEncoderJudge.score_pairs`), other judges read their texts their own way."""
    if not triples:
        return []
    if isinstance(judge, CrossEncoderJudge):
        return [float(s) for s in judge.score_pairs(triples, max_tokens=max_tokens)]
    if hasattr(judge, "score_pairs"):
        return [float(s) for s in judge.score_pairs(triples)]
    if hasattr(judge, "score_pair"):
        return [float(judge.score_pair(q, a, b)) for q, a, b in triples]
    # a judge that scores (text, text) pairs only: it reads the question with d1 + separator + d2
    return [float(s) for s in judge.score_batch([(q, f"{a}\n\n{b}") for q, a, b in triples])]


def load_judge(name: str, path: str | os.PathLike | None = None, embeddings: Any = None, backend: str | None = None):
    """The ``name`` role of the judges in ``path`` (a directory written by ``train-judge``,
    or any CrossEncoder directory / cached name), or of the shipped judges when None.
    ``embeddings`` is accepted for the cosine baselines' signature and unused."""
    if name not in JUDGES:
        raise ConfigError(f"unknown judge {name!r}; choose evaluator, pair or nli")
    p = Path(path) if path is not None else weights_dir()
    model, meta = load_cross_encoder(p if (path is None or p.expanduser().exists()) else str(path), backend=backend)
    ours = bool(meta.get("roles"))  # trained by ragraphs: task prefixes; else a plain re-ranker
    if ours and name not in meta["roles"]:  # it served an untrained role without a word until 2026-11-30
        raise ConfigError(f"{p} holds judges for {', '.join(meta['roles'])}, not for {name!r}; "
                          f"train-judge --judge {name} makes one")
    if not ours and name != "evaluator":
        raise ConfigError(f"{p} is not a ragraphs judge model; an outside CrossEncoder can only serve as the evaluator")
    return CrossEncoderJudge(name, model, meta, prefix=None if ours else "", name=meta.get("name", str(path or "shipped")))


def as_judge(role: str, judge: Any) -> Any:
    """A judge a user gives for ``role``: itself when it scores (``score_batch``, or the pair
    role's ``score_pair`` / ``score_pairs``) or is a path or cached model name (loaded by
    :func:`load_judge` on first use); a sentence-transformers ``CrossEncoder`` object wrapped
    as the evaluator (a plain re-ranker, no task prefix); a :class:`ConfigError` naming the
    role and the type otherwise."""
    if isinstance(judge, (str, os.PathLike)):
        return judge
    if role not in JUDGES or any(callable(getattr(judge, m, None)) for m in ("score_batch", "score_pair", "score_pairs")):
        return judge
    if callable(getattr(judge, "predict", None)):
        if role != "evaluator":
            raise ConfigError(f"a CrossEncoder of your own can serve as the evaluator only, not as the {role} judge")
        return CrossEncoderJudge("evaluator", judge, prefix="", name=type(judge).__name__)
    extra = " (or score_pair(q, d1, d2) / score_pairs(triples))" if role == "pair" else ""
    raise ConfigError(f"the {role} judge must have score_batch(pairs){extra}, or be a model path or name, or a "
                      f"sentence-transformers CrossEncoder (as the evaluator); got {type(judge).__name__}")


def judge_for(role: str, spec: Any = None, embeddings: Any = None) -> Any:
    """The judge ``spec`` names for ``role``: None the default (:func:`load_default_judge`), a
    path or cached model name loaded (:func:`load_judge`), an object as :func:`as_judge` takes it."""
    if spec is None:
        return load_default_judge(role, embeddings=embeddings)
    if isinstance(spec, (str, os.PathLike)):
        return load_judge(role, spec)
    return as_judge(role, spec)


def default_judge_source(name: str) -> tuple[str, str] | None:
    """(variable, value) of the environment variable that names the default judge for
    ``name`` (``RAGRAPHS_RERANKER`` for the evaluator, else ``RAGRAPHS_JUDGES_DIR``), or None
    for the shipped one."""
    for var in (("RAGRAPHS_RERANKER",) if name == "evaluator" else ()) + ("RAGRAPHS_JUDGES_DIR",):
        value = os.environ.get(var, "").strip()
        if value:
            return var, value
    return None


def load_default_judge(name: str, embeddings: Any = None):
    """The default judge for ``name``: ``RAGRAPHS_JUDGES_DIR`` if set, else the shipped one;
    for the evaluator, ``RAGRAPHS_RERANKER`` (a CrossEncoder path or cached name) wins. An
    error loading a judge a variable names says which (``(from RAGRAPHS_RERANKER)``)."""
    if name not in JUDGES:
        raise ConfigError(f"unknown judge {name!r}; choose evaluator, pair or nli")
    source = default_judge_source(name)
    if source is None:
        return load_judge(name, None)
    try:
        return load_judge(name, source[1])
    except ConfigError as e:
        raise ConfigError(f"{e} (from {source[0]})") from e
