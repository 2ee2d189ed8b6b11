"""The shipped evaluator as a LangChain document compressor (``JudgeCompressor``): the same
scores CRAG's evaluate node reads, the judge's own cut, and LangChain's
``ContextualCompressionRetriever`` over a user's vector store."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.errors import ConfigError
from ragraphs.tools.judges import load_default_judge
from ragraphs.tools.judges.compressor import JudgeCompressor


@pytest.fixture(scope="module")
def sample(data_dir):
    exs = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa", limit=5)
    docs = [Document(page_content=p["text"], metadata={"title": p["title"], "id": p["id"]}, id=p["id"])
            for p in pooled_passages(exs)]
    return exs, docs


def test_the_evaluator_ranks_and_cuts_documents_as_crag_scores_them(sample):
    exs, docs = sample
    ex = exs[0]
    mine = [d for d in docs if d.metadata["id"] in {p["id"] for p in ex.paragraphs}]  # the question's 10 paragraphs
    judge = load_default_judge("evaluator")
    expected = [float(s) for s in judge.score_batch([(ex.question, f"{d.metadata['title']}\n{d.page_content}") for d in mine])]
    every = JudgeCompressor(top_n=None, threshold=None).compress_documents(mine, ex.question)
    assert len(every) == len(mine)
    assert [d.metadata["relevance_score"] for d in every] == sorted(expected, reverse=True)
    assert {d.id for d in every} == {d.id for d in mine} and all(d.page_content for d in every)
    # the judge's own cut (-0.0499, CRAG's lower cut) and top_n
    kept = JudgeCompressor(top_n=3).compress_documents(mine, ex.question)
    above = [s for s in sorted(expected, reverse=True) if s >= -0.0499]
    assert [d.metadata["relevance_score"] for d in kept] == above[:3]
    # a gold supporting paragraph comes first: the bundled sample's first question
    gold = {p["id"] for p in ex.supporting}
    assert kept and kept[0].id in gold
    assert JudgeCompressor().compress_documents([], ex.question) == []


def test_in_langchains_contextual_compression_retriever(sample, minilm):
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.vectorstores import InMemoryVectorStore

    exs, docs = sample
    store = InMemoryVectorStore(minilm)
    store.add_documents(docs)
    base = store.as_retriever(search_kwargs={"k": 10})
    retriever = ContextualCompressionRetriever(base_compressor=JudgeCompressor(top_n=2), base_retriever=base)
    q = exs[1].question
    got = retriever.invoke(q)
    candidates = base.invoke(q)
    assert 1 <= len(got) <= 2 and {d.id for d in got} <= {d.id for d in candidates}
    scores = JudgeCompressor(top_n=None, threshold=None).scores(candidates, q)
    best = sorted(zip(scores, [d.id for d in candidates]), key=lambda t: -t[0])[: len(got)]
    assert [d.id for d in got] == [i for _, i in best]


def test_a_judge_of_your_own_and_bad_settings():
    class Lengthy:  # any object with score_batch: here, longer is better
        def score_batch(self, pairs):
            return [float(len(p)) for _, p in pairs]

    docs = [Document(page_content="x" * n) for n in (3, 9, 5)]
    got = JudgeCompressor(judge=Lengthy(), top_n=2, threshold=4).compress_documents(docs, "q")
    assert [len(d.page_content) for d in got] == [9, 5]
    assert [d.page_content for d in JudgeCompressor(judge=Lengthy(), top_n=None).compress_documents(docs, "q")] == [
        "x" * 9, "x" * 5, "x" * 3]  # a judge without its own cut keeps every document
    # pydantic reports a bad field as its ValidationError, a ValueError, with our message
    with pytest.raises(ValueError, match="top_n must be at least 1"):
        JudgeCompressor(top_n=0)
    with pytest.raises(ValueError, match="threshold must be a number, 'judge' or None"):
        JudgeCompressor(threshold="high")
    with pytest.raises(ConfigError, match="the evaluator judge must have score_batch"):
        JudgeCompressor(judge=42).compress_documents(docs, "q")
