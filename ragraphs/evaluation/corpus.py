"""Corpora for evaluation: the pooled distractor corpus (cached on disk) and the oracle.

The default corpus of an evaluation is every question's paragraphs of the data file pooled
into one index (the distractor-pool setting of HotpotQA, 2Wiki and MuSiQue). Embedding a
thousand paragraphs takes tens of seconds on a CPU, so the vectors are cached under
``$RAGRAPHS_HOME/eval-cache/`` in a file named by the embeddings' name and a hash of the
pooled passages' ids; a second evaluation of the same file loads them in milliseconds. Beside
each file, ``.keys.npy`` holds a digest of each passage's text: for an embedder whose vector
depends on its text alone (``per_text``, the shipped int8 MiniLM), a new pool (other files, or
the same in another order) takes every vector a cached corpus already holds and embeds the rest.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from typing import Any, Iterable, cast

import numpy as np

from ..settings import data_dir
from ..state.types import Passage
from ..tools.bm25 import BM25Index
from ..tools.embeddings import embed_texts, embedder_id, unit_rows
from ..tools.vectorstore import InMemoryCorpus


def _passage_text(p: Passage) -> str:
    return f"{p['title']}. {p['text']}" if p["title"] else p["text"]


def cache_dir() -> str:
    return str(data_dir() / "eval-cache")


def corpus_key(passages: Iterable[Passage], embeddings: Any) -> str:
    h = hashlib.sha256()
    for p in passages:
        h.update(p["id"].encode())
        h.update(b"\n")
    name = getattr(embeddings, "vectors_id", None) or embedder_id(embeddings)  # the model's name too (since 2026-11-30)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(name))
    return f"{safe}-{h.hexdigest()[:16]}"


class PooledCorpus(InMemoryCorpus):
    """An :class:`InMemoryCorpus` whose vectors come from (and go to) an on-disk cache."""

    def __init__(self, passages: Iterable[Passage], embeddings: Any, *, cache: bool = True, quiet: bool = False):
        uniq: dict[str, Passage] = {}
        for p in passages:
            uniq.setdefault(p["id"], p)
        self.passages = list(uniq.values())
        self.embeddings = embeddings
        self.cache_path: str | None = None
        self.cached = False
        vectors = None
        if cache and self.passages:
            self.cache_path = os.path.join(cache_dir(), corpus_key(self.passages, embeddings) + ".npy")
            vectors = self._cached_vectors()
        if vectors is None:
            vectors = self._embedded(quiet)
        self.vectors = unit_rows(vectors)
        self._bm25 = BM25Index(self.passages)

    def _cached_vectors(self) -> np.ndarray | None:
        """This corpus's vectors from the cache, when it holds them."""
        assert self.cache_path
        try:
            v = np.load(self.cache_path)
        except (OSError, ValueError):
            return None
        if v.shape[0] != len(self.passages):
            return None
        self.cached = True
        if getattr(self.embeddings, "per_text", False) and not os.path.exists(_keys_path(self.cache_path)):
            # a corpus cached before the text digests were kept: other pools can use it from now on
            _atomic_save(_keys_path(self.cache_path), _text_keys([_passage_text(p) for p in self.passages]))
        return v.astype(np.float32)

    def _embedded(self, quiet: bool) -> np.ndarray:
        """The passages embedded (a text another cached corpus of the same embedder holds is taken
        from it), and saved to the cache."""
        texts = [_passage_text(p) for p in self.passages]
        # an embedder whose vector depends on its text alone can take any cached corpus's vectors
        keys = _text_keys(texts) if self.cache_path and getattr(self.embeddings, "per_text", False) else None
        known = _cached_by_text(self.cache_path, keys) if self.cache_path and keys is not None else {}
        todo = [i for i in range(len(texts)) if i not in known]
        if todo and not quiet:
            reused = f" ({len(known)} cached)" if known else ""
            print(f"embedding the pooled corpus: {len(todo)} passages{reused} ...", file=sys.stderr, flush=True)
        rows = dict(known)
        if todo:
            rows.update(zip(todo, embed_texts(self.embeddings, [texts[i] for i in todo])))
        vectors = np.stack([rows[i] for i in range(len(texts))]).astype(np.float32) if texts else np.zeros((0, 384), np.float32)
        if self.cache_path:
            _atomic_save(self.cache_path, vectors)
            if keys is not None:
                _atomic_save(_keys_path(self.cache_path), keys)
        return vectors


def _text_keys(texts: list[str]) -> np.ndarray:
    """A 16-byte digest of each text, as an (n, 16) uint8 array (saved beside a corpus's vectors)."""
    digests = b"".join(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest()[:16] for t in texts)
    return np.frombuffer(digests, np.uint8).reshape(len(texts), 16)


def _keys_path(vectors_path: str) -> str:
    return vectors_path[: -len(".npy")] + ".keys.npy"


def _cached_by_text(cache_path: str, keys: np.ndarray) -> dict[int, np.ndarray]:
    """Row -> vector for each text of ``keys`` that another cached corpus of the same embedder
    (the same file name prefix, with its ``.keys.npy``) holds."""
    folder, name = os.path.split(cache_path)
    same_embedder = re.compile(re.escape(name[: name.rfind("-") + 1]) + r"[0-9a-f]{16}\.keys\.npy")
    want = {keys[i].tobytes(): i for i in range(len(keys))}
    found: dict[int, np.ndarray] = {}
    try:
        names = sorted(f for f in os.listdir(folder) if same_embedder.fullmatch(f))
    except OSError:
        return found
    for f in names:
        try:
            theirs = np.load(os.path.join(folder, f))
            vecs = np.load(os.path.join(folder, f[: -len(".keys.npy")] + ".npy"), mmap_mode="r")
        except (OSError, ValueError):
            continue
        if theirs.ndim != 2 or theirs.shape[1] != 16 or vecs.shape[0] != theirs.shape[0]:
            continue
        for j in range(theirs.shape[0]):
            i = want.get(theirs[j].tobytes())
            if i is not None and i not in found:
                found[i] = np.asarray(vecs[j], np.float32)
        if len(found) == len(want):
            break
    return found


def _atomic_save(path: str, arr: np.ndarray) -> None:
    """Save ``arr`` at ``path`` whole or not at all; a cache that cannot be written (a home that is
    a file or read-only) is left unwritten: the run goes on (it stopped with a traceback until
    2026-12-03)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".npy.tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, arr)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


class OracleRetriever:
    """Hands each question's gold supporting paragraphs to the generator (the oracle row).

    Lookup is by question text, so one graph serves every question: the vanilla graph's
    retrieve node asks this retriever with the question and gets its gold paragraphs, in the
    file's order, whatever ``k`` is.
    """

    def __init__(self, examples: Iterable[Any]):
        self.gold: dict[str, list[Passage]] = {}
        for ex in examples:
            ps: list[Passage] = []
            for p in ex.supporting:
                q = dict(p)
                q.pop("meta", None)
                q["score"] = 1.0
                ps.append(cast(Passage, q))
            self.gold[" ".join(ex.question.split())] = ps

    def search(self, query: str, k: int, mode: str = "dense") -> list[Passage]:
        return list(self.gold.get(" ".join((query or "").split()), []))

    def count(self) -> int:
        return sum(len(v) for v in self.gold.values())


class _WithheldTitles:
    """A title index that never hands back the passages its retriever withholds."""

    def __init__(self, base: Any, owner: "WithheldRetriever"):
        self.base, self.owner = base, owner

    def named_in(self, text: str, limit: int | None = None, exclude: Any = ()) -> list[Passage]:
        kept = [p for p in self.base.named_in(text, None, exclude=exclude) if p.get("id") not in self.owner.withheld]
        return kept if limit is None else kept[: max(0, int(limit))]

    def __len__(self) -> int:
        return len(self.base)

    def __getattr__(self, name: str) -> Any:  # the rest reads titles, never hands passages back
        return getattr(self.base, name)


class WithheldRetriever:
    """A retriever that never returns the passages withheld for the question at hand.

    ``withhold(ids)`` names them (``ragraphs eval --withhold-gold`` and ``calibrate-crag
    --misses withheld`` name each question's gold supporting paragraphs before it runs). Each
    search asks the wrapped retriever for ``k`` plus that many results and drops the withheld
    ones. For dense search that is the ranking of a corpus that lacks them (BM25's term weights
    and a fused list's ranks move a little): every retrieval truly misses, as in an open corpus
    that has no page on the answer. The title index is the wrapped one's, with the withheld
    passages left out of what it hands back (DR-RAG's title links brought them back before)."""

    def __init__(self, base: Any):
        self.base = base
        self.withheld: frozenset[str] = frozenset()

    def withhold(self, ids: Iterable[str]) -> None:
        self.withheld = frozenset(ids)

    def _drop(self, hits: Iterable[Passage], k: int) -> list[Passage]:
        return [p for p in hits if p.get("id") not in self.withheld][:k]

    def search(self, query: str, k: int, mode: str = "dense") -> list[Passage]:
        return self._drop(self.base.search(query, k + len(self.withheld), mode=mode), k)

    def search_many(self, queries: Iterable[str], k: int, mode: str = "dense") -> list[list[Passage]]:
        from ..nodes.retrieve import search_many

        return [self._drop(h, k) for h in search_many(self.base, list(queries), k + len(self.withheld), mode)]

    def title_index(self) -> Any:
        index = getattr(self.base, "title_index", None)
        base = index() if callable(index) else None
        return None if base is None else _WithheldTitles(base, self)

    def embed_queries(self, queries: Any) -> np.ndarray:
        return self.base.embed_queries(queries)

    def count(self) -> int:
        return self.base.count()

    @property
    def embeddings(self) -> Any:
        return getattr(self.base, "embeddings", None)
