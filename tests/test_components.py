"""``Components.warm_up``: the models a run will use load before its clock starts."""

import pytest

from ragraphs.components import Components
from ragraphs.settings import RAGContext


class CountingRetriever:
    def __init__(self):
        self.embedded = []

    def embed_queries(self, queries):
        self.embedded.extend(queries)
        return [[0.0] for _ in queries]


class LazyModel:
    loads = 0

    def invoke(self, messages, config=None, **kwargs):  # an llm is checked for it when Components is built
        raise AssertionError("not called")

    def _load(self):
        LazyModel.loads += 1


def test_warm_up_embeds_a_query_and_loads_the_llm_once():
    retriever, llm = CountingRetriever(), LazyModel()
    c = Components(retriever=retriever, llm=llm)
    LazyModel.loads = 0
    took = c.warm_up(RAGContext())
    assert retriever.embedded == ["warm up"] and LazyModel.loads == 1
    assert took >= 0.0


def test_warm_up_skips_the_llm_of_a_retrieval_only_run_and_opens_no_store(tmp_path):
    llm = LazyModel()
    c = Components(llm=llm, store_path=str(tmp_path / "never"))
    LazyModel.loads = 0
    c.warm_up(RAGContext(skip_generation=True))
    assert LazyModel.loads == 0
    assert c._retriever is None and not (tmp_path / "never").exists()  # no store was built


def test_a_failing_load_is_left_to_the_run():
    class Broken:
        def embed_queries(self, queries):
            raise RuntimeError("no model file")

    assert Components(retriever=Broken()).warm_up(RAGContext(skip_generation=True)) >= 0.0


def test_a_langchain_vector_store_given_as_the_retriever_is_searched_the_langchain_way():
    # a VectorStore has a search() of its own, search(query, search_type): it must not be
    # taken for ragraphs' search(query, k, mode)
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from ragraphs.nodes.retrieve import search_many

    vs = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    vs.add_texts(["Paris is the capital of France.", "Tokyo is in Japan."],
                 metadatas=[{"title": "Paris"}, {"title": "Tokyo"}])
    hits = search_many(Components(retriever=vs).retriever, ["Paris is the capital of France."], 1, "dense")
    assert [p["title"] for p in hits[0]] == ["Paris"]
    assert hits[0][0]["text"] == "Paris is the capital of France."


def test_a_langchain_stores_metadata_rides_along_and_its_runs_say_they_searched_dense():
    """A loader's metadata (its ``source`` path, ``page``) reaches the passage's ``meta`` and the
    documents of ``method_retriever``; the title falls back to the file or page; a store with no
    BM25 index beside it serves dense, and the trace says dense, not the hybrid DR-RAG asks for."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models.fake import FakeListLLM
    from langchain_core.vectorstores import InMemoryVectorStore

    from ragraphs.graphs import build_graph
    from ragraphs.graphs.retriever import method_retriever

    vs = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    vs.add_documents([
        Document("Lima is the capital of Peru.", metadata={"source": "/docs/handbook.pdf", "page": 3, "raw": object()}),
        Document("Paris is the capital of France.", metadata={"source": "https://example.org/fr", "title": "France"}),
    ])
    docs = method_retriever("vanilla", Components(vectorstore=vs), k=2).invoke("Lima is the capital of Peru.")
    by_title = {d.metadata["title"]: d.metadata for d in docs}
    assert by_title["handbook.pdf"]["path"] == "/docs/handbook.pdf" and by_title["handbook.pdf"]["page"] == 3
    assert "raw" not in by_title["handbook.pdf"]  # not a plain value: left out of the state
    assert by_title["France"]["url"] == "https://example.org/fr"
    assert {m["source"] for m in by_title.values()} == {"corpus"}
    out = build_graph("dr-rag", Components(vectorstore=vs, llm=FakeListLLM(responses=["Lima"] * 3))).invoke(
        {"question": "Lima is the capital of Peru."})
    assert [(t["node"], t["mode"]) for t in out["trace"] if "mode" in t] == [("first_stage", "dense"), ("second_stage", "dense")]


def test_a_retriever_that_cannot_search_is_refused_by_name():
    import pytest

    from ragraphs.errors import ConfigError

    with pytest.raises(ConfigError, match="retriever must be .* got dict"):
        Components(retriever={"not": "a retriever"}).retriever


def test_judges_given_as_a_crossencoder_a_path_or_anything_else():
    import numpy as np
    import pytest
    from sentence_transformers import CrossEncoder

    from ragraphs.errors import ConfigError
    from ragraphs.tools.embeddings import minilm_path
    from ragraphs.tools.judges import CrossEncoderJudge, weights_dir

    # a sentence-transformers CrossEncoder of the user's: the evaluator, read as a plain re-ranker
    ce = CrossEncoder(minilm_path(), num_labels=1, device="cpu", local_files_only=True)
    evaluator = Components(judges={"evaluator": ce}).judge("evaluator")
    assert isinstance(evaluator, CrossEncoderJudge) and evaluator.prefix == "" and evaluator.model is ce
    scores = evaluator.score_batch([("Where is Cusco?", "Cusco is in Peru."), ("Where is Cusco?", "")])
    assert scores.shape == (2,) and np.all(np.abs(scores) <= 1.0)
    with pytest.raises(ConfigError, match="evaluator only, not as the nli judge"):
        Components(judges={"nli": ce})
    # a model directory: loaded on first use, once
    c = Components(judges={"nli": str(weights_dir())})
    assert isinstance(c.judges["nli"], str)
    nli = c.judge("nli")
    assert isinstance(nli, CrossEncoderJudge) and c.judge("nli") is nli and nli.role == "nli"
    with pytest.raises(ConfigError, match="the pair judge must have score_batch"):
        Components(judges={"pair": object()})


def test_a_users_retriever_may_return_documents_or_passages_without_ids():
    """A ``search(query, k, mode)`` of the user's that returns LangChain ``Document``s, or dicts
    without an ``id``: read as passages (a bare ``TypeError`` / ``KeyError`` inside ``retrieve``
    until 2026-11-30); one that takes no ``mode`` is refused naming the signature it needs."""
    from langchain_core.documents import Document

    from ragraphs.errors import ConfigError
    from ragraphs.graphs import build_graph
    from ragraphs.tools.llm import FakeAnswerChat

    class Docs:
        def search(self, query, k, mode="dense"):
            return [Document("Paris is the capital of France.", metadata={"title": "Paris"}),
                    Document("Lima is the capital of Peru.", metadata={"source": "/notes/peru.md"})][:k]

    class NoIds:
        title_index = "the user's own attribute"

        def search(self, query, k, mode="dense"):
            return [{"title": "Paris", "text": "Paris is the capital of France."}]

    class TwoArgs:
        def search(self, query, k):
            return []

    for retriever, titles in ((Docs(), ["Paris", "peru.md"]), (NoIds(), ["Paris"])):
        c = Components(llm=FakeAnswerChat(responses=["Paris"]), retriever=retriever)
        out = build_graph("vanilla", c).invoke({"question": "What is the capital of France?"}, context={"k": 2})
        assert [p["title"] for p in out["passages"]] == titles and out["answer"] == "Paris"
        assert all(p["id"] and p["source"] == "corpus" for p in out["passages"])
    assert Components(retriever=NoIds()).retriever.title_index == "the user's own attribute"
    with pytest.raises(ConfigError, match=r"TwoArgs.search must take \(query, k, mode\)"):
        Components(retriever=TwoArgs()).retriever


def test_warm_up_builds_the_indexes_and_loads_the_judge_the_run_will_read(tmp_path):
    """DR-RAG's defaults read BM25 (hybrid), the title index (title links) and the cross-encoder:
    built before the clock starts (inside the first node until 2026-11-30); a dense run without links or judges builds none of them."""
    from fakes import HashEmbeddings

    from ragraphs.settings import DRRAGContext
    from ragraphs.state.types import make_passage
    from ragraphs.tools.judges import CrossEncoderJudge
    from ragraphs.tools.vectorstore import ChromaCorpus

    def store(name):
        corpus = ChromaCorpus(str(tmp_path / name), embeddings=HashEmbeddings())
        corpus.add([make_passage("Alpha", "alpha apple", "corpus"), make_passage("Beta", "beta banana", "corpus")])
        corpus._bm25 = None
        return corpus

    plain = store("plain")
    c = Components(retriever=plain)
    c.warm_up(RAGContext(skip_generation=True))
    assert plain._bm25 is None and plain._titles is None and "evaluator" not in c.judges
    dr = store("dr")
    c = Components(retriever=dr)
    c.warm_up(DRRAGContext(skip_generation=True))
    assert dr._bm25 is not None and dr._titles is not None
    assert isinstance(c.judges.get("evaluator"), CrossEncoderJudge)
