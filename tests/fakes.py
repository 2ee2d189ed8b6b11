"""Test doubles shared by the tests: a scripted chat model, a BM25 retriever, a retriever that
counts its queries, bag-of-words hash embeddings (instant, deterministic, and texts that share
words are near), two judges (word overlap and a constant), two failing web backends, and a
helper that runs a function in several threads. Child processes import them too:
see :data:`IMPORT_FAKES`."""

from __future__ import annotations

import hashlib
import re
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from ragraphs.tools.bm25 import BM25Index
from ragraphs.tools.llm import render_messages


class ScriptedChat(BaseChatModel):
    """Answers each prompt with ``script(prompt)``; records the prompts."""

    script: Any
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _prompts: list = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def prompts(self) -> list[str]:
        """Every prompt it was sent, in order."""
        return self._prompts

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        prompt = render_messages(messages)
        with self._lock:
            self._prompts.append(prompt)
        text = self.script(prompt)
        msg = AIMessage(content=text, usage_metadata={"input_tokens": len(prompt.split()), "output_tokens": len(text.split()), "total_tokens": 0})
        return ChatResult(generations=[ChatGeneration(message=msg)])


class LexicalRetriever:
    """BM25 over the given passages, behind the retriever interface."""

    def __init__(self, passages):
        self.index = BM25Index(passages)

    def search(self, query: str, k: int, mode: str = "dense"):
        return self.index.search(query, k)


class CountingRetriever:
    """Wraps a retriever and records every query it is asked."""

    def __init__(self, inner):
        self.inner, self.queries = inner, []

    def search(self, query, k, mode="dense"):
        self.queries.append(query)
        return self.inner.search(query, k, mode=mode)


TOKENIZERS = {
    "split": lambda t: t.lower().split(),
    "words": lambda t: re.findall(r"\w+", t.lower()),
    "strip": lambda t: [w.strip(".,?!\"'()") for w in t.lower().split()],
}


class HashEmbeddings(Embeddings):
    """Each token hashed (MD5) into one of ``dim`` buckets, the counts L2-normalised.

    ``tokens`` picks how text splits: ``split`` (whitespace), ``words`` (``\\w+``) or
    ``strip`` (whitespace, surrounding punctuation dropped)."""

    def __init__(self, dim: int = 64, tokens: str = "split"):
        self.dim, self._tokens = dim, TOKENIZERS[tokens]
        self.name = f"hash-{tokens}-{dim}"

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(self.dim, np.float32)
        for w in self._tokens(text):
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
        return (v / (np.linalg.norm(v) + 1e-9)).tolist()

    def embed_documents(self, texts):
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)


class OverlapJudge:
    """Word-overlap stand-in for a cross-encoder judge: the share of the first text's words
    (less ``stop``) found in the second. ``evaluator`` maps it to [-1, 1] like the relevance
    judge; ``nli`` reads (premise, hypothesis) and scores the hypothesis' words found in the
    premise, in [0, 1]. Records the size of every batch it scores."""

    def __init__(self, kind: str = "evaluator", *, stop=(), pattern: str = r"\w+", name: str | None = None):
        self.kind, self.stop, self._pattern = kind, frozenset(stop), re.compile(pattern)
        self.name = name or f"overlap-{kind}"
        self.batches: list[int] = []

    def _words(self, text: str) -> set[str]:
        return {w for w in self._pattern.findall(text.lower()) if w not in self.stop}

    def score_batch(self, pairs):
        self.batches.append(len(pairs))
        out = []
        for a, b in pairs:
            if self.kind == "nli":
                a, b = b, a
            wa, wb = self._words(a), self._words(b)
            frac = len(wa & wb) / max(1, len(wa))
            out.append(2 * frac - 1 if self.kind == "evaluator" else frac)
        return np.asarray(out, dtype=np.float32)


class ConstJudge:
    """Scores every input the same: as a pair judge (``score_batch``) and as the pair
    classifier (``score_pairs``)."""

    def __init__(self, score: float, name: str = "const"):
        self.score, self.name = score, name

    def score_batch(self, pairs):
        return np.full(len(pairs), self.score, dtype=np.float32)

    def score_pairs(self, triples):
        return np.full(len(triples), self.score, dtype=np.float32)


class RaisingWeb:
    """A web search backend whose network is down."""

    name = "raising"

    def search(self, query, k=5):
        raise ConnectionError("network is unreachable")


class SleepingWeb:
    """A web search backend that answers ``results`` after ``seconds``."""

    name = "sleeping"

    def __init__(self, seconds: float = 3.0, results=()):
        self.seconds, self.results = seconds, list(results)

    def search(self, query, k=5):
        time.sleep(self.seconds)
        return [dict(r) for r in self.results]


def run_in_threads(target, n: int) -> list[BaseException]:
    """``target(i)`` in ``n`` threads at once; returns what they raised."""
    errors: list[BaseException] = []

    def run(i):
        try:
            target(i)
        except Exception as e:  # reported to the caller
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


IMPORT_FAKES = f"import sys\nsys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\nfrom fakes import HashEmbeddings\n"
"""Source that a ``python -c`` child process runs first to use these doubles."""


def small_corpus(docs: list[tuple[str, str]], embeddings: Embeddings | None = None):
    """An in-memory corpus (numpy dense + real BM25) of ``(title, text)`` pairs, embedded by
    langchain_core's deterministic fake embeddings unless ``embeddings`` are given."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from ragraphs.state.types import make_passage
    from ragraphs.tools.vectorstore import InMemoryCorpus

    return InMemoryCorpus([make_passage(t, x) for t, x in docs], embeddings=embeddings or DeterministicFakeEmbedding(size=32))


RIVER_QUESTION = "Which river flows through the capital of France?"
RIVER_CONTEXTS = {"erm4": {"use_memory": False}, "crag": {"web_fallback": "internal"}}


def _river_reply(prompt: str) -> str:
    if "missing_information" in prompt:  # MIGRES's Main Module never commits: the loop runs
        return '{"answer": "unanswerable", "missing_information": "the river of Paris"}'
    return "the Seine"


def river_components(corpus: list) -> Any:
    """Every graph's parts without a model: a scripted chat that answers "the Seine" (MIGRES's Main
    Module never commits), a lexical retriever over ``corpus`` and word-overlap judges; with
    :data:`RIVER_QUESTION` and :data:`RIVER_CONTEXTS` (the settings that keep every method local)."""
    from ragraphs import Components

    judges = {"evaluator": OverlapJudge("evaluator"), "nli": OverlapJudge("nli"), "pair": ConstJudge(0.9)}
    return Components(llm=ScriptedChat(script=_river_reply), retriever=LexicalRetriever(corpus), judges=judges)


def migres_prompt_kind(prompt: str) -> str:
    """Which MIGRES module a prompt is for, read from its last block: "queries" (Query
    Generator), "main" (Main Module), "leaf" (Leaf Module) or "other" (the reader, knowledge)."""
    tail = prompt.rsplit("\n\n", 1)[-1]
    if tail.startswith("Original Question:"):
        return "queries"
    if tail.startswith("Information:"):
        return "main"
    if "Passage 0:" in tail:
        return "leaf"
    return "other"
