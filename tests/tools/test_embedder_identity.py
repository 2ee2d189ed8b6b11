"""Which embeddings built a store, a reservoir or a cached corpus: the model's name is part of
it, so two models of one class are two embedders (the class's name alone was recorded until
2026-11-30), and the packaged MiniLM keeps the name its users' stores recorded."""

from __future__ import annotations

import sqlite3

import chromadb
import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from ragraphs.errors import ConfigError
from ragraphs.state.types import make_passage
from ragraphs.tools.embeddings import MiniLMEmbeddings, embedder_id, same_embedder
from ragraphs.tools.reservoir import Reservoir
from ragraphs.tools.vectorstore import ChromaCorpus


class ServedModel(Embeddings):
    """One class that serves several models (as OpenAI's or Ollama's does): the vectors do not
    tell the models apart, only ``model`` does."""

    def __init__(self, model: str | None = None, **attrs):
        if model is not None:
            self.model = model
        self.__dict__.update(attrs)

    def embed_documents(self, texts):
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text):
        v = np.zeros(8, np.float32)
        for w in text.lower().split():
            v[sum(map(ord, w)) % 8] += 1.0
        return (v / (np.linalg.norm(v) + 1e-9)).tolist()


def test_the_packaged_embedder_keeps_the_name_its_stores_recorded():
    """Stores, reservoirs and eval caches made before 2026-11-30 recorded these strings: they stay."""
    from ragraphs.evaluation.corpus import corpus_key

    assert embedder_id(MiniLMEmbeddings()) == "all-MiniLM-L6-v2-int8"
    assert embedder_id(MiniLMEmbeddings(fast=False)) == "all-MiniLM-L6-v2"
    assert corpus_key([make_passage("T", "x")], MiniLMEmbeddings()).startswith("all-MiniLM-L6-v2-int8-alone-")
    assert corpus_key([make_passage("T", "x")], MiniLMEmbeddings(fast=False)).startswith("all-MiniLM-L6-v2-")
    assert embedder_id(DeterministicFakeEmbedding(size=8)) == "DeterministicFakeEmbedding"  # names no model


def test_two_models_of_one_class_have_two_names():
    from langchain_openai import OpenAIEmbeddings

    from ragraphs.evaluation.corpus import corpus_key

    small, large = ServedModel("text-embedding-3-small"), ServedModel("text-embedding-3-large")
    assert embedder_id(small) == "ServedModel(model=text-embedding-3-small)" != embedder_id(large)
    assert embedder_id(ServedModel(model_name="BAAI/bge-small-en")) != embedder_id(ServedModel(model_name="BAAI/bge-base-en"))
    assert embedder_id(ServedModel("m", dimensions=256)) == "ServedModel(model=m, dimensions=256)"
    passages = [make_passage("T", "x")]
    assert corpus_key(passages, small) != corpus_key(passages, large)  # evaluation's vector cache
    # LangChain's own (pydantic) class: its default `deployment` is no part of the name; Azure's is
    a = OpenAIEmbeddings(model="text-embedding-3-small", api_key="sk-test")
    b = OpenAIEmbeddings(model="text-embedding-3-large", api_key="sk-test", dimensions=256)
    assert embedder_id(a) == "OpenAIEmbeddings(model=text-embedding-3-small)"
    assert embedder_id(b) == "OpenAIEmbeddings(model=text-embedding-3-large, dimensions=256)"


def test_a_store_built_by_one_model_refuses_another_model_of_its_class(tmp_path):
    path = str(tmp_path / "store")
    ChromaCorpus(path, embeddings=ServedModel("text-embedding-3-small")).add([make_passage("Lima", "Lima is in Peru.")])
    assert ChromaCorpus(path, embeddings=ServedModel("text-embedding-3-small")).count() == 1
    with pytest.raises(ConfigError, match=r"built with embeddings 'ServedModel\(model=text-embedding-3-small\)', "
                                          r"not 'ServedModel\(model=text-embedding-3-large\)'"):
        ChromaCorpus(path, embeddings=ServedModel("text-embedding-3-large"))


def test_a_reservoir_built_by_one_model_refuses_another_model_of_its_class(tmp_path):
    path = str(tmp_path / "r.sqlite3")
    r = Reservoir(path, embeddings=ServedModel(model_name="all-mpnet-base-v2"))
    r.add([make_passage("Lima", "Lima is in Peru.")])
    r.close()
    with pytest.raises(ConfigError, match=r"ServedModel\(model_name=all-mpnet-base-v2\)"):
        Reservoir(path, embeddings=ServedModel(model_name="all-MiniLM-L12-v2"))
    Reservoir(path, embeddings=ServedModel(model_name="all-mpnet-base-v2")).close()


def test_a_record_of_the_class_alone_still_opens(tmp_path):
    """A store or reservoir a user's embeddings built before 2026-11-30 recorded the bare class
    name: any model of that class opens it, as then (which model it was is not known)."""
    assert same_embedder("ServedModel", "ServedModel(model=a)")
    assert not same_embedder("ServedModel(model=b)", "ServedModel(model=a)")
    path = str(tmp_path / "store")
    chromadb.PersistentClient(path=path).create_collection(
        "ragraphs", metadata={"hnsw:space": "cosine", "embedding": "ServedModel"}, embedding_function=None)
    assert ChromaCorpus(path, embeddings=ServedModel("text-embedding-3-small"), create=False).count() == 0
    res = str(tmp_path / "r.sqlite3")
    Reservoir(res, embeddings=ServedModel()).close()  # records "ServedModel", as every model of it did
    with sqlite3.connect(res) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'embedding:default'").fetchone() == ("ServedModel",)
    Reservoir(res, embeddings=ServedModel("text-embedding-3-small")).close()
