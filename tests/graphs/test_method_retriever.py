"""A method's retrieval as a LangChain retriever (``ragraphs.graphs.retriever``): the documents
are those the method hands its LLM, the answer's LLM call is left out, and the retriever works
where LangChain takes one (``invoke``, ``ainvoke``, an LCEL chain)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from fakes import ScriptedChat, small_corpus
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.errors import ConfigError
from ragraphs.graphs import build_graph
from ragraphs.graphs.dr_rag import DRRAGContext
from ragraphs.graphs.retriever import MethodRetriever, method_retriever
from ragraphs.state.types import make_passage
from ragraphs.tools.vectorstore import InMemoryCorpus


def _no_llm(prompt: str) -> str:
    raise AssertionError(f"the LLM was called: {prompt[:80]}")


@pytest.fixture(scope="module")
def hotpot(data_dir, minilm):
    exs = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa", limit=10)
    return exs, InMemoryCorpus(pooled_passages(exs), embeddings=minilm)


def test_dr_rag_retriever_returns_what_the_method_hands_its_llm_without_calling_it(hotpot, minilm):
    """The real stack but the LLM: MiniLM, the shipped judges, the real HotpotQA sample."""
    exs, corpus = hotpot
    ex = exs[0]
    retriever = method_retriever("dr-rag", Components(llm=ScriptedChat(script=_no_llm), retriever=corpus,
                                                      embeddings=minilm), k=4)
    assert isinstance(retriever, MethodRetriever) and retriever.method == "dr-rag"
    docs = retriever.invoke(ex.question)
    assert 1 <= len(docs) <= 4 and all(isinstance(d, Document) for d in docs)
    assert all(d.metadata["source"] == "corpus" and d.id == d.metadata["id"] for d in docs)
    by_id = {p["id"]: p for p in corpus.passages}
    assert all(by_id[d.id]["text"] == d.page_content and by_id[d.id]["title"] == d.metadata["title"] for d in docs)

    # the same documents, in the same order, as a whole run hands its LLM
    answering = ScriptedChat(script=lambda prompt: "an answer")
    full = build_graph("dr-rag", Components(llm=answering, retriever=corpus, embeddings=minilm)).invoke(
        {"question": ex.question}, context=DRRAGContext(k=4))
    assert [d.id for d in docs] == [p["id"] for p in full["passages"]]
    assert len(answering.prompts) == 1 and all(d.page_content in answering.prompts[0] for d in docs)


def test_the_retriever_serves_in_a_chain_and_async(hotpot, minilm):
    exs, corpus = hotpot
    retriever = method_retriever("vanilla", Components(llm=ScriptedChat(script=_no_llm), retriever=corpus,
                                                       embeddings=minilm), k=3)
    chain = retriever | RunnableLambda(lambda docs: "\n\n".join(f"{d.metadata['title']}: {d.page_content}" for d in docs))
    context = chain.invoke(exs[1].question)
    hits = corpus.search(exs[1].question, 3)
    assert context.split("\n\n") == [f"{p['title']}: {p['text']}" for p in hits]
    docs = asyncio.run(retriever.ainvoke(exs[1].question))
    assert [d.id for d in docs] == [p["id"] for p in hits]
    assert [[d.id for d in ds] for ds in retriever.batch([exs[1].question, exs[2].question])] == [
        [p["id"] for p in corpus.search(q, 3)] for q in (exs[1].question, exs[2].question)]


def test_crag_retriever_returns_the_web_pages_of_its_incorrect_route():
    class LowJudge:  # every retrieved document judged irrelevant: CRAG's Incorrect route
        name = "low"

        def score_batch(self, pairs):
            return [-1.0 for _ in pairs]

    class Web:
        name = "web"

        def search(self, query, k=5):
            return [make_passage("Lima", f"Lima is the capital of Peru ({query}).", "web", url="https://example.org/lima")]

    corpus = small_corpus([("Cusco", "Cusco is a city in the Peruvian Andes.")])
    llm = ScriptedChat(script=lambda prompt: "capital of Peru")  # the keyword rewrite; no answer asked
    retriever = method_retriever("crag", Components(llm=llm, retriever=corpus, web_search=Web(),
                                                    judges={"evaluator": LowJudge()}), k=1, fetch_pages=False)
    docs = retriever.invoke("What is the capital of Peru?")
    assert [(d.metadata["title"], d.metadata["source"], d.metadata["url"]) for d in docs] == [
        ("Lima", "web", "https://example.org/lima")]
    assert "(capital of Peru)" in docs[0].page_content  # searched with the rewritten query
    assert len(llm.prompts) == 1  # the rewrite; generation was skipped


def test_the_method_keeps_no_checkpoints_inside_a_callers_thread():
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    retriever = method_retriever("vanilla", Components(llm=ScriptedChat(script=lambda p: "Lima"),
                                                       retriever=small_corpus([("Lima", "Lima is the capital of Peru.")])), k=1)

    class S(TypedDict):
        q: str
        n: int

    g = StateGraph(S)
    g.add_node("rag", lambda s: {"n": len(retriever.invoke(s["q"]))})
    g.add_edge(START, "rag")
    g.add_edge("rag", END)
    saver = InMemorySaver()
    assert g.compile(checkpointer=saver).invoke({"q": "Capital of Peru?"}, {"configurable": {"thread_id": "t"}})["n"] == 1
    spaces = {c.config["configurable"].get("checkpoint_ns", "") for c in saver.list({"configurable": {"thread_id": "t"}})}
    assert spaces == {""}  # it wrote its state under "rag:<task>" at every step until 2026-11-30


def test_crag_documents_keep_the_stores_metadata():
    """A LangChain store's documents carry a path, a page, the user's own keys: CRAG's refined
    passages keep them (only the url did until 2026-11-30), as the other methods' do."""
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from fakes import HashEmbeddings

    class High:
        name = "high"

        def score_batch(self, pairs):
            return [0.9 for _ in pairs]

    store = InMemoryVectorStore(HashEmbeddings(64, "words"))
    store.add_documents([Document("Lima is the capital and largest city of Peru.",
                                  metadata={"source": "/docs/Lima.txt", "page": 3, "team": "geo", "title": "Lima"})])
    c = Components(llm=ScriptedChat(script=lambda prompt: "Lima"), retriever=store, judges={"evaluator": High()})
    (doc,) = method_retriever("crag", c, k=1).invoke("What is the capital of Peru?")
    assert doc.metadata["page"] == 3 and doc.metadata["team"] == "geo" and doc.metadata["strips"]
    assert doc.metadata["source"] == "corpus" and doc.metadata["title"] == "Lima"


def test_retriever_errors_name_the_method_or_setting():
    with pytest.raises(ConfigError, match="method 'none' answers without retrieving"):
        method_retriever("none")
    with pytest.raises(ConfigError, match="unknown method 'drrag'"):
        method_retriever("drrag")
    with pytest.raises(ConfigError, match=r"method 'dr-rag' has no setting 'strategie' \(did you mean 'strategy'"):
        method_retriever("dr-rag", strategie="cfs")
