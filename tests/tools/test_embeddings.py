"""The packaged MiniLM embeddings' in-process vector cache (``RAGRAPHS_EMBED_CACHE``)."""

import numpy as np
import pytest

from ragraphs.errors import ConfigError
from ragraphs.tools import embeddings as E

pytestmark = pytest.mark.slow


def test_a_text_embedded_before_is_served_from_the_cache(minilm):
    first = minilm.encode(["Marie Curie won two Nobel Prizes.", "The Seine flows through Paris."])
    seen: list[int] = []
    again = minilm.encode(
        ["The Seine flows through Paris.", "Kyoto was the capital of Japan.", "The Seine flows through Paris."],
        progress=seen.append,
    )
    assert sum(seen) == 3  # every row is reported, cached or not
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[1])
    # the new text is a real MiniLM vector, not a neighbour's
    assert abs(float(again[1] @ again[1]) - 1.0) < 1e-3 and float(again[1] @ first[1]) < 0.5
    # a cached vector handed out is a copy: changing it changes nothing for the next caller
    again[0][:] = 0.0
    assert np.array_equal(minilm.encode(["The Seine flows through Paris."])[0], first[1])
    # the float variant has its own entries
    exact = E.MiniLMEmbeddings(fast=False).encode(["The Seine flows through Paris."])[0]
    assert not np.array_equal(exact, first[1]) and float(exact @ first[1]) > 0.95


def test_cache_is_bounded_and_can_be_turned_off(monkeypatch):
    c = E.VectorCache(2)
    for k in "abc":
        c.put((True, k), np.full(3, ord(k), dtype=np.float32))
    assert c.get((True, "a")) is None and c.get((True, "b")) is not None  # least recently used out
    c.put((True, "d"), np.zeros(3, dtype=np.float32))
    assert c.get((True, "c")) is None and c.get((True, "b")) is not None  # "b" was used, "c" was not
    off = E.VectorCache(0)
    off.put((True, "a"), np.zeros(3, dtype=np.float32))
    assert off.get((True, "a")) is None
    monkeypatch.setenv("RAGRAPHS_EMBED_CACHE", "0")
    assert E._cache_size() == 0
    monkeypatch.setenv("RAGRAPHS_EMBED_CACHE", "lots")
    with pytest.raises(ConfigError, match="RAGRAPHS_EMBED_CACHE"):
        E._cache_size()


def test_an_int8_vector_depends_on_its_text_only(monkeypatch):
    """Dynamic int8 scales a layer's input by the whole batch; each text is read alone, so the
    same text gets the same vector whatever is embedded beside it, in any order, and the same
    as SentenceTransformer.encode gives it alone."""
    monkeypatch.setenv("RAGRAPHS_EMBED_CACHE", "0")
    monkeypatch.setattr(E, "_VECTORS", None)
    emb = E.MiniLMEmbeddings(fast=True)
    text = "Gustave Eiffel's company built the tower for the 1889 World's Fair in Paris."
    others = ["A short one.", "Chroma stores vectors on disk. " * 20, "Kyoto was the capital of Japan for a thousand years."]
    alone = emb.encode([text])[0]
    among = emb.encode(others + [text])[-1]
    reversed_ = emb.encode([text] + others[::-1])[0]
    assert np.array_equal(alone, among) and np.array_equal(alone, reversed_)
    lib = emb.model.encode([text], batch_size=1, normalize_embeddings=True)[0]
    assert np.abs(lib - alone).max() < 1e-5
    assert emb.vectors_id != emb.name  # on-disk caches of the batched vectors are not read
    # the packaged model's own steps, not encode() one text at a time: sentence-transformers 6 names
    # mean pooling otherwise, and every text took the slower path there until 2026-12-01
    monkeypatch.setattr(emb.model, "encode", lambda *a, **k: (_ for _ in ()).throw(AssertionError("encode() called")))
    assert np.array_equal(emb.encode([text + " Again."]), emb.encode([text + " Again."]))


def test_the_cache_keeps_a_digest_of_each_text_not_the_text(minilm, monkeypatch):
    """Whole texts as keys made the default 50,000 vectors about 129 MB of HotpotQA paragraphs
    until 2026-11-30; the key is now 16 bytes whatever the text's length."""
    monkeypatch.setattr(E, "_VECTORS", None)
    text = "Chroma stores vectors on disk. " * 40
    first = minilm.encode([text])[0]
    keys = list(E._vectors()._d)
    assert keys == [(True, E._text_key(True, text)[1])] and len(keys[0][1]) == 16
    assert np.array_equal(minilm.encode([text])[0], first)  # a hit, the same vector


def test_embed_threads_come_from_the_environment():
    """``RAGRAPHS_EMBED_THREADS`` sets torch's threads when the embedder loads (nothing set them
    but OMP_NUM_THREADS until 2026-11-30); a bad value is one line naming it. A separate
    process: torch's thread count is the process's."""
    import os
    import subprocess
    import sys

    code = ("import torch; from ragraphs.tools.embeddings import MiniLMEmbeddings\n"
            "MiniLMEmbeddings(fast=True).encode(['x']); print(torch.get_num_threads())\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    one = subprocess.run([sys.executable, "-c", code], env={**env, "RAGRAPHS_EMBED_THREADS": "1"},
                         capture_output=True, text=True, timeout=300)
    assert one.returncode == 0 and one.stdout.strip().splitlines()[-1] == "1", one.stderr[-1000:]
    bad = subprocess.run([sys.executable, "-c", code], env={**env, "RAGRAPHS_EMBED_THREADS": "0"},
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "RAGRAPHS_EMBED_THREADS must be a positive integer, got '0'" in bad.stderr
