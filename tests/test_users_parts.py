"""A user's own LangChain parts given to ``Components``: documents read as passages (ids, the
``source`` label), wrong parts refused when the Components is built, wrapped models, a
filter per search through ``as_retriever``, and ERM4's memory of documents without titles."""

from __future__ import annotations

import warnings

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.runnables import ConfigurableField
from langchain_core.vectorstores import InMemoryVectorStore

from fakes import ConstJudge, HashEmbeddings
from ragraphs.components import Components
from ragraphs.errors import ConfigError
from ragraphs.graphs import build_graph
from ragraphs.graphs.retriever import passage_document
from ragraphs.settings import ERM4Context, RAGContext
from ragraphs.state.types import make_passage
from ragraphs.tools.user_retriever import document_passage

QUESTION = "What is the capital of France?"


def test_a_documents_own_id_wins_over_a_chunk_number_in_its_metadata(minilm):
    """Three chunks of three files, each ``metadata["id"] = 1`` (a chunk number per file): three
    passages with the store's ids, found again by ``get_by_ids``. Until 2026-11-30 the metadata id
    won: the three merged into one passage with the int id 1, which the store did not know."""
    store = InMemoryVectorStore(minilm)
    ids = store.add_documents([
        Document("Paris is the capital and largest city of France.", metadata={"source": "a.txt", "id": 1}),
        Document("Berlin is the capital of Germany.", metadata={"source": "b.txt", "id": 1}),
        Document("Madrid is the capital of Spain.", metadata={"source": "c.txt", "id": 1}),
    ])
    c = Components(llm=FakeListChatModel(responses=["Paris"] * 3), vectorstore=store)
    out = build_graph("vanilla", c).invoke({"question": QUESTION}, context=RAGContext(k=3))
    assert sorted(p["id"] for p in out["passages"]) == sorted(ids)
    assert all(store.get_by_ids([p["id"]]) for p in out["passages"])
    assert [p["meta"]["metadata_id"] for p in out["passages"]] == [1, 1, 1]  # the user's own id, kept beside
    scores = [p["score"] for p in out["passages"]]  # the store's cosine similarities (None until 2026-12-02)
    assert out["passages"][0]["text"].startswith("Paris") and scores == sorted(scores, reverse=True)
    assert all(isinstance(x, float) and -1.0 <= x <= 1.0 for x in scores)
    own = document_passage(Document("x", id="u1", metadata={"id": 3, "metadata_id": "mine", "doc_id": "r-1"}))
    assert own["id"] == "u1" and own["meta"] == {"metadata_id": "mine", "doc_id": "r-1"}  # the user's keys as they are
    # no id of its own: the metadata's, as text; neither: one hashed from title and text
    assert document_passage(Document("x", metadata={"id": 7}))["id"] == "7"
    assert document_passage(Document("x", metadata={"title": "T"}))["id"] == make_passage("T", "x")["id"]
    # a document method_retriever made (both ids, the same) reads back as the passage it was
    p = make_passage("Paris", "Paris is in France.", "web", 0.5, url="https://example.org/paris")
    assert document_passage(passage_document(p))["id"] == p["id"]


def test_chunks_numbered_alike_in_several_files_stay_apart_without_a_document_id():
    """A retriever that keeps no ``Document.id`` (BM25Retriever, a search API) over chunks whose
    ``metadata["id"]`` is a chunk number per file: each chunk is its own passage, its id the
    metadata's after its file (``/docs/beta.md#1``), the number kept in ``meta["metadata_id"]``.
    **Was a bug** (until 2026-12-03): the three merged into the first, and the LLM read one file
    of three."""
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.retrievers import BaseRetriever

    class Chunks(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
            return [Document(f"Chunk 1 of {f}: the {f} service starts on port 80{i}.",
                             metadata={"id": 1, "source": f"/docs/{f}.md"}) for i, f in enumerate(("alpha", "beta", "gamma"))]

    c = Components(llm=FakeListChatModel(responses=["80"] * 3), retriever=Chunks())
    out = build_graph("vanilla", c).invoke({"question": "Which port does each service start on?"}, context=RAGContext(k=3))
    assert [p["id"] for p in out["passages"]] == ["/docs/alpha.md#1", "/docs/beta.md#1", "/docs/gamma.md#1"]
    assert [p["meta"] for p in out["passages"]] == [{"path": f"/docs/{f}.md", "metadata_id": 1} for f in ("alpha", "beta", "gamma")]
    # a web page's chunk likewise; a label of a kind's name is no file: the number alone
    assert document_passage(Document("x", metadata={"id": 2, "source": "https://e.org/a"}))["id"] == "https://e.org/a#2"
    assert document_passage(Document("x", metadata={"id": 2, "source": "memory"}))["id"] == "2"


def test_a_users_source_label_is_kept_and_is_no_passage_kind():
    """A user's document whose ``metadata["source"]`` is "memory" or "web" is a corpus passage with
    that label in ``meta["source"]`` (it became a memory passage until 2026-11-30: counted as
    served memory and never written to ERM4's reservoir); a document ragraphs made keeps its kind."""
    for label in ("memory", "web"):
        p = document_passage(Document("Paris is in France.", id="d1", metadata={"source": label, "title": "Paris"}))
        assert p["source"] == "corpus" and p["meta"]["source"] == label and p["title"] == "Paris"
    assert document_passage(Document("x", metadata={"source": "corpus", "title": "T"})).get("meta") is None
    for kind in ("memory", "web"):
        made = passage_document(make_passage("Paris", "Paris is in France.", kind, 0.4))
        assert document_passage(made)["source"] == kind and "source" not in (document_passage(made).get("meta") or {})


def test_erm4_remembers_a_users_document_labelled_memory(tmp_path, minilm):
    store = InMemoryVectorStore(minilm)
    store.add_documents([Document("Paris is the capital and largest city of France.",
                                  metadata={"source": "memory", "title": "Paris"})])
    c = Components(llm=FakeListChatModel(responses=["capital of France**Paris", "Paris"] * 2), vectorstore=store,
                   judges={"nli": ConstJudge(0.9)})
    ctx = ERM4Context(k=1, web="none", reservoir_path=str(tmp_path / "r.sqlite3"), reservoir_collection="mine")
    out = build_graph("erm4", c).invoke({"question": QUESTION}, context=ctx)
    assert [p["source"] for p in out["passages"]] == ["corpus"]
    assert out["memory_update"]["added"] == 1


@pytest.mark.parametrize("kw, said", [
    ({"embeddings": "all-MiniLM-L6-v2"}, r"embeddings must be a LangChain Embeddings instance .* the string 'all-MiniLM"),
    ({"embeddings": object()}, r"embeddings must be .*got object"),
    ({"llm": FakeListChatModel}, r"llm must be .* the class FakeListChatModel \(not an instance"),
    ({"llm": lambda prompt: "Paris"}, r"llm must be .* got function"),
    ({"llm": "openai:gpt-4o-mini"}, r"llm must be .* the string 'openai:gpt-4o-mini'.*make_llm"),
    ({"vectorstore": "/some/path"}, r"vectorstore must be a LangChain VectorStore or BaseRetriever .*store_path="),
    ({"vectorstore": [Document("x")]}, r"vectorstore must be .*got list; add Documents to a vector store"),
    ({"vectorstore": InMemoryVectorStore}, r"vectorstore must be .*the class InMemoryVectorStore"),
])
def test_a_wrong_part_is_refused_when_the_components_are_built(kw, said):
    """Until 2026-11-30 these failed only at a run's first use of them, without naming them: a bare
    AttributeError in ERM4's first memory write, an LLMError that read like a server failure, an
    error at the first retrieval."""
    with pytest.raises(ConfigError, match=said):
        Components(**kw)


def test_wrapped_models_run_and_a_bound_completion_model_is_called_as_one(minilm):
    """``bind``, ``with_retry``, ``with_fallbacks`` and ``configurable_fields`` are accepted; a
    completion model behind ``bind`` is sent the prompt as text (it was called as a chat model
    until 2026-11-30: its plain-text reply failed as ``LLMError``)."""
    store = InMemoryVectorStore(minilm)
    store.add_documents([Document("Paris is the capital of France.", metadata={"title": "Paris"})])
    chat = FakeListChatModel(responses=["Paris"] * 5)
    plain = FakeListLLM(responses=["Paris"] * 5)
    for llm in (chat.bind(stop=["\n"]), chat.with_retry(), chat.with_fallbacks([chat]),
                chat.configurable_fields(responses=ConfigurableField(id="responses")),
                plain.bind(stop=["\n"]), plain.with_retry(), plain.with_fallbacks([plain])):
        out = build_graph("vanilla", Components(llm=llm, vectorstore=store)).invoke(
            {"question": QUESTION}, context=RAGContext(k=1))
        assert out["answer"] == "Paris", type(llm).__name__


def test_a_filter_per_search_through_as_retriever_on_real_chroma(tmp_path, minilm):
    """``store.as_retriever(search_kwargs={"k": 50, "filter": {...}})``: every hit passes the
    filter, and each method gets its own k (the adapter slices the 50)."""
    from langchain_chroma import Chroma

    vs = Chroma(collection_name="mine", embedding_function=minilm, persist_directory=str(tmp_path / "chroma"))
    vs.add_documents([Document(f"Paris is the capital of France ({lang} page {i}).",
                               metadata={"title": f"Paris {lang} {i}", "lang": lang})
                      for lang in ("en", "fr") for i in range(4)])
    retriever = vs.as_retriever(search_kwargs={"k": 50, "filter": {"lang": "en"}})
    c = Components(llm=FakeListChatModel(responses=["Paris"] * 5), vectorstore=retriever)
    for k in (2, 3):
        out = build_graph("vanilla", c).invoke({"question": QUESTION}, context=RAGContext(k=k))
        assert len(out["passages"]) == k and {p["meta"]["lang"] for p in out["passages"]} == {"en"}


def test_erm4_says_it_offered_untitled_documents_and_warns_once(tmp_path, minilm):
    """Documents with neither a title nor a source: the reservoir keys on titles and stores none of
    them; the trace says ``offered`` (it said ``stored`` until 2026-11-30) and a UserWarning says
    why, once per process."""
    from ragraphs.tools import reservoir_entries

    store = InMemoryVectorStore(minilm)
    store.add_documents([Document("Paris is the capital and largest city of France."),
                         Document("France is a country in Western Europe. Its capital is Paris.")])
    c = Components(llm=FakeListChatModel(responses=["capital of France**Paris", "Paris"] * 3), vectorstore=store,
                   judges={"nli": ConstJudge(0.9)})
    ctx = ERM4Context(k=2, web="none", reservoir_path=str(tmp_path / "r.sqlite3"), reservoir_collection="mine")
    reservoir_entries._UNTITLED_WARNED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            out = build_graph("erm4", c).invoke({"question": QUESTION}, context=ctx)
    said = [str(w.message) for w in caught if "not remembered" in str(w.message)]
    assert len(said) == 1 and "keys entries on titles" in said[0]
    update = next(t for t in out["trace"] if t["node"] == "memory_update")
    assert update["offered"] == 2 and update["added"] == 0 and update["skipped"] == 2 and "stored" not in update


@pytest.mark.parametrize("method", ["none", "vanilla", "crag", "dr-rag", "erm4", "migres"])
def test_a_part_given_in_place_of_components_is_refused_when_the_graph_is_built(method, minilm):
    """A vector store, a chat model or a dict given where the builder takes a Components: a
    ConfigError naming its type and the Components argument it belongs in. Until 2026-11-30 the
    graph was built and its first node failed with an AttributeError ('...has no attribute
    retriever'); a dict with nothing in it ran over the embedded defaults."""
    from ragraphs.graphs import get_builder

    store = InMemoryVectorStore(minilm)
    chat = FakeListChatModel(responses=["Paris"])
    builder = get_builder(method).__name__
    for given, said in ((store, r"got InMemoryVectorStore; pass Components\(vectorstore=\.\.\.\)"),
                        (store.as_retriever(), r"got VectorStoreRetriever; pass Components\(vectorstore=\.\.\.\)"),
                        (chat, r"got FakeListChatModel; pass Components\(llm=\.\.\.\)"),
                        ({"llm": chat}, r"got dict; pass Components\(\*\*that_dict\)"),
                        ({}, r"got dict"), (Components, r"the class Components \(not an instance")):
        with pytest.raises(ConfigError, match=f"^{builder}: components must be a ragraphs Components.*{said}"):
            build_graph(method, given)
        with pytest.raises(ConfigError, match=said):
            get_builder(method)(given)


def test_the_chat_graph_refuses_a_part_given_in_place_of_components_too(minilm):
    """The chat graph's builder reads its components as the method builders do: a vector store
    given in their place is a ConfigError when the graph is built (until 2026-11-30 it failed at
    the first turn)."""
    from ragraphs.graphs.chat import build_chat_graph

    with pytest.raises(ConfigError, match=r"^build_chat_graph: components must be a ragraphs Components.*"
                                          r"got InMemoryVectorStore; pass Components\(vectorstore=\.\.\.\)"):
        build_chat_graph(InMemoryVectorStore(minilm))


def test_a_users_vector_store_and_completion_model_reach_the_runs_callbacks(minilm):
    """Review of 2026-12-01: a plain completion model (``BaseLLM``) was called through generate(),
    which reads no run config, and a vector store's search was no run at all: neither reached the
    run's callbacks, event streams or traces. Now both do, as a retriever or chat model does."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Count(BaseCallbackHandler):
        def __init__(self):
            self.seen: dict[str, int] = {}
            self.chats: set = set()

        def _add(self, kind):
            self.seen[kind] = self.seen.get(kind, 0) + 1

        def on_chat_model_start(self, *a, run_id=None, **k):
            self.chats.add(run_id)
            self._add("chat")

        def on_llm_start(self, *a, parent_run_id=None, **k):
            self._add("llm" if parent_run_id in self.chats else "llm outside a chat run")

        def on_retriever_start(self, *a, **k):
            self._add("retriever")

        def on_retriever_end(self, documents, **k):
            self._add(f"retrieved {len(documents)}")

    store = InMemoryVectorStore(minilm)
    store.add_documents([Document("Paris is the capital of France.", metadata={"title": "Paris"}),
                         Document("Lima is the capital of Peru.", metadata={"title": "Lima"})])
    graph = build_graph("vanilla", Components(llm=FakeListLLM(responses=["Paris"] * 3), vectorstore=store))
    count = Count()
    out = graph.invoke({"question": QUESTION}, {"callbacks": [count], "tags": ["mine"]}, context=RAGContext(k=2))
    # the model is called as a chat model (its tokens reach the messages stream, next test), its own run inside that one
    assert out["answer"] == "Paris" and count.seen == {"chat": 1, "llm": 1, "retriever": 1, "retrieved 2": 1}


def test_a_completion_models_tokens_reach_the_messages_stream(minilm):
    """``stream_mode="messages"`` (what Studio shows as a run streams) delivers a completion
    model's tokens as it writes them, tagged with the node that asked; until 2026-12-02 a
    ``BaseLLM``'s calls reached that stream not at all (it carries chat-model runs only)."""
    from langchain_core.language_models.fake import FakeStreamingListLLM

    store = InMemoryVectorStore(minilm)
    store.add_documents([Document("Paris is the capital of France.", metadata={"title": "Paris"})])
    graph = build_graph("vanilla", Components(llm=FakeStreamingListLLM(responses=["Paris"]), vectorstore=store))
    parts = [(m.content, meta["langgraph_node"]) for m, meta in
             graph.stream({"question": QUESTION}, stream_mode="messages", context=RAGContext(k=1)) if m.content]
    assert parts == [(c, "generate") for c in "Paris"]  # the fake writes a character at a time (LangChain ends with an empty chunk)
    out = graph.invoke({"question": QUESTION}, context=RAGContext(k=1))  # a plain run: one call, the same answer
    assert out["answer"] == "Paris" and out["llm_calls"] == 1 and out["output_tokens"] >= 1


def test_a_wrapped_completion_models_tokens_stream_and_its_wrappers_still_hold(minilm):
    """A completion model behind ``with_retry`` and ``with_fallbacks`` streams its tokens to the
    messages stream too, and its retry and fallback still act: a first model that fails is
    retried, then its fallback answers. Until 2026-12-02 (night) a wrapped one answered in one
    piece, outside that stream."""
    from langchain_core.language_models.fake import FakeListLLM, FakeStreamingListLLM

    class Down(FakeListLLM):
        calls: int = 0

        def _call(self, *args, **kwargs):
            self.calls += 1
            raise ConnectionError("server down")

    store = InMemoryVectorStore(minilm)
    store.add_documents([Document("Paris is the capital of France.", metadata={"title": "Paris"})])
    wrapped = FakeStreamingListLLM(responses=["Paris"]).bind(stop=["\n\n"]).with_retry(stop_after_attempt=2)
    graph = build_graph("vanilla", Components(llm=wrapped, vectorstore=store))
    parts = [(m.content, meta["langgraph_node"]) for m, meta in
             graph.stream({"question": QUESTION}, stream_mode="messages", context=RAGContext(k=1)) if m.content]
    assert parts == [(c, "generate") for c in "Paris"]
    down = Down(responses=["never"])
    backed = down.with_retry(stop_after_attempt=2).with_fallbacks([FakeListLLM(responses=["Lyon"])])
    out = build_graph("vanilla", Components(llm=backed, vectorstore=store)).invoke({"question": QUESTION}, context=RAGContext(k=1))
    assert out["answer"] == "Lyon" and down.calls == 2 and out["llm_calls"] == 1


class _Four:
    def search(self, q, k, mode="dense"):
        return [make_passage(f"Doc {i}", f"Paris fact number {i}: Paris is the capital of France.") for i in range(4)]


class _Judge:
    """A judge of the user's own whose scores are given: a list, or a generator of them."""

    def __init__(self, scores, lazy=False, name="mine"):
        self.scores, self.lazy, self.name = scores, lazy, name

    def score_batch(self, pairs):
        return (s for s in self.scores) if self.lazy else self.scores


@pytest.mark.parametrize("scores, said", [
    ([0.9], "gave 1 scores for 4 inputs"),  # three documents were dropped by zip until 2026-12-03
    ([0.9] * 6, "gave 6 scores for 4 inputs"),
    ([0.9, float("nan"), 0.9, 0.9], "gave nan for input 1 of 4"),  # routed to Ambiguous
    ([[0.1, 0.9]] * 4, "gave 8 scores for 4 inputs"),  # two labels per pair
    ("high", "must give one number per input; got str"),
])
def test_a_judge_of_your_own_that_gives_a_wrong_score_count_or_nan_is_one_clear_error(scores, said):
    """A judge of the user's own is checked where the nodes read it: one finite number per input,
    else a ``ConfigError`` naming the role, the judge's type and what it gave. **Was a bug**
    (until 2026-12-03): too few scores dropped the documents past them without a word (CRAG kept
    one of four), too many ran past the documents, NaN routed CRAG to Ambiguous."""
    c = Components(llm=FakeListChatModel(responses=["Paris"] * 4), retriever=_Four(), judges={"evaluator": _Judge(scores)})
    with pytest.raises(ConfigError, match=r"the evaluator judge \(_Judge\.score_batch\) " + said.replace("(", r"\(")):
        build_graph("crag", c).invoke({"question": QUESTION}, context={"web": "none"})


def test_a_judge_of_your_own_that_scores_well_runs_as_given():
    """A good judge runs unchanged: a generator of scores is read, its own attributes (``name``)
    reach the run, and the pair role's ``score_pair`` is checked too."""
    mine = _Judge([0.9, 0.8, 0.7, 0.6], lazy=True)
    c = Components(llm=FakeListChatModel(responses=["Paris"] * 4), retriever=_Four(), judges={"evaluator": mine})
    out = build_graph("crag", c).invoke({"question": QUESTION}, context={"web": "none"})
    assert out["answer"] == "Paris" and out["action"] == "correct" and len(out["scores"]) == 4
    assert c.judge("evaluator").name == "mine" and c.judge("evaluator").inner is mine and c.given_judges["evaluator"] is mine

    class Pair:
        def score_pair(self, q, d1, d2):
            return float("nan")

    c = Components(llm=FakeListChatModel(responses=["Paris"] * 4), retriever=_Four(), judges={"pair": Pair()})
    assert not hasattr(c.judge("pair"), "score_batch")  # what the judge lacks, the checked one lacks
    with pytest.raises(ConfigError, match=r"the pair judge \(Pair\.score_pair\) gave nan"):
        c.judge("pair").score_pair("q", "a", "b")
    assert c.judge("nli") is c.judge("nli") and type(c.judge("nli")).__module__.startswith("ragraphs.tools.judges.")


def test_a_search_hit_of_your_own_takes_the_field_types_the_nodes_read():
    """A retriever of your own whose hits carry every field but of other types (a title of 3, an
    id of 5, a numpy score): the passage has them as text and a float, and DR-RAG's title links
    read it; a ``meta`` that is no dict, or a score that is no number, is a ``ConfigError`` naming
    the retriever and the field. **Was a bug** (until 2026-12-03): such a hit reached the nodes as
    it was, and DR-RAG failed with a TypeError deep in its title index."""
    import numpy as np

    class Mine:
        def __init__(self, **hit):
            self.hit = {"id": 5, "title": 3, "text": "Paris is the capital of France.", "source": "corpus",
                        "score": np.float32(0.75), **hit}

        def search(self, q, k, mode="dense"):
            return [dict(self.hit)]

    for method in ("vanilla", "dr-rag"):
        c = Components(llm=FakeListChatModel(responses=["Paris"] * 3), retriever=Mine(meta={"path": "/docs/fr.md"}))
        (p,) = build_graph(method, c).invoke({"question": QUESTION})["passages"]
        assert (p["id"], p["title"], p["meta"]["path"]) == ("5", "3", "/docs/fr.md") and isinstance(p["score"], float)
    for bad, said in (({"meta": "fr.md"}, "'meta' is str"), ({"score": "high"}, "'score' is str")):
        c = Components(llm=FakeListChatModel(responses=["Paris"]), retriever=Mine(**bad))
        with pytest.raises(ConfigError, match=f"Mine.search returned a hit whose {said}"):
            build_graph("vanilla", c).invoke({"question": QUESTION})


def test_a_chunk_a_retriever_returns_twice_reaches_the_llm_once():
    """A store holding one chunk twice, through a retriever that keeps no ``Document.id`` (so both
    get one id, made of title and text), or a search of your own returning a hit twice: each
    method's prompt reads it once and its budget of k holds three different passages. **Was a
    bug** (until 2026-12-03): DR-RAG's and ERM4's prompts read it twice, in place of another."""
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.retrievers import BaseRetriever

    from fakes import OverlapJudge, ScriptedChat

    seine = Document("The Seine flows through Paris.", metadata={"title": "Paris"})
    docs = [seine, seine, Document("The Danube flows through Vienna.", metadata={"title": "Vienna"}),
            Document("The Spree flows through Berlin.", metadata={"title": "Berlin"})]

    class Twice(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
            return list(docs)

    class Mine:
        def search(self, q, k, mode="dense"):
            return [{"id": "p", "title": "Paris", "text": seine.page_content}] * 2 + [{"id": "v", "title": "Vienna",
                                                                                       "text": docs[2].page_content}]

    prompts: list[str] = []
    judges = {"evaluator": OverlapJudge("evaluator"), "nli": OverlapJudge("nli"), "pair": ConstJudge(0.9)}
    for retriever in (Twice(), Mine()):
        c = Components(llm=ScriptedChat(script=lambda p: prompts.append(p) or "the Seine"), retriever=retriever, judges=judges)
        for method in ("vanilla", "dr-rag", "erm4"):
            ctx = {"k": 3, **({"reservoir_collection": "twice"} if method == "erm4" else {})}
            out = build_graph(method, c).invoke({"question": "Which river flows through Paris?"}, context=ctx)
            ids = [p["id"] for p in out["passages"]]
            assert len(ids) == len(set(ids)) and prompts[-1].count(seine.page_content) <= 1, (method, ids)
            assert len(ids) == (3 if isinstance(retriever, Twice) else 2) or method == "erm4", (method, ids)


def test_a_retriever_that_is_async_only_is_awaited_under_invoke_and_ainvoke():
    """A LangChain retriever over an async client (its ``_get_relevant_documents`` raises
    ``NotImplementedError``) is awaited on an event loop of its own, whether the graph runs with
    ``invoke`` or ``ainvoke``; a sync retriever's own ``NotImplementedError`` still reaches the
    user. **Was a bug** (until 2026-12-03): every run failed, ``ainvoke``'s too."""
    import asyncio

    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.retrievers import BaseRetriever

    class AsyncOnly(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
            raise NotImplementedError("this retriever is async only")

        async def _aget_relevant_documents(self, query: str, *, run_manager) -> list[Document]:
            await asyncio.sleep(0)
            return [Document("The Seine flows through Paris.", metadata={"title": "Paris"})]

    class Unfinished(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
            raise NotImplementedError("not written yet")

    g = build_graph("vanilla", Components(llm=FakeListChatModel(responses=["the Seine"] * 2), retriever=AsyncOnly()))
    question = {"question": "Which river flows through Paris?"}
    assert [p["title"] for p in g.invoke(question)["passages"]] == ["Paris"]
    assert [p["title"] for p in asyncio.run(g.ainvoke(question))["passages"]] == ["Paris"]
    g = build_graph("vanilla", Components(llm=FakeListChatModel(responses=["x"]), retriever=Unfinished()))
    with pytest.raises(NotImplementedError, match="not written yet"):
        g.invoke(question)


def test_a_chat_model_that_is_async_only_is_awaited_under_invoke_and_ainvoke():
    """A chat model with ``_agenerate`` alone (its ``_generate`` raises ``NotImplementedError``)
    answers under ``invoke`` and ``ainvoke``, as an async-only retriever does; a model whose
    sync call is unwritten and has no async one still fails, naming it. **Was a bug** (until
    2026-12-03): ``LLM call failed (AsyncOnly): NotImplementedError`` under both."""
    import asyncio

    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    from ragraphs.errors import LLMError

    class AsyncOnly(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "async-only"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            raise NotImplementedError("async only")

        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            await asyncio.sleep(0)
            return ChatResult(generations=[ChatGeneration(message=AIMessage("the Seine"))])

    class Unfinished(AsyncOnly):
        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            raise NotImplementedError("not written yet")

    retriever = InMemoryVectorStore.from_documents(
        [Document("The Seine flows through Paris.", metadata={"title": "Paris"})], HashEmbeddings(32)).as_retriever()
    question = {"question": "Which river flows through Paris?"}
    g = build_graph("vanilla", Components(llm=AsyncOnly(), retriever=retriever))
    assert g.invoke(question)["answer"] == "the Seine"
    assert asyncio.run(g.ainvoke(question))["answer"] == "the Seine"
    g = build_graph("vanilla", Components(llm=Unfinished(), retriever=retriever))
    with pytest.raises(LLMError, match="not written yet"):
        g.invoke(question)


def test_a_settings_object_changed_after_it_was_made_is_checked_when_a_run_starts(minilm):
    """The settings classes check their values when made; one changed afterwards (``ctx.k = 0``,
    ``ctx.upper = "high"``) ran unchecked into the nodes until 2026-12-03. Now the run's entry
    node checks it again: the same ``ConfigError`` as at construction, before any node runs."""
    from ragraphs.settings import CRAGContext

    c = Components(llm=FakeListChatModel(responses=["Paris"] * 4),
                   retriever=InMemoryVectorStore.from_texts(["Paris is the capital of France."], minilm))
    ctx = RAGContext()
    ctx.k = 0
    with pytest.raises(ConfigError, match="'k' must be a whole number >= 1, got 0"):
        build_graph("vanilla", c).invoke({"question": QUESTION}, context=ctx)
    crag = CRAGContext(web="none")
    crag.upper = "high"  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="run setting 'upper' must be a number"):
        build_graph("crag", c).invoke({"question": QUESTION}, context=crag)
    ctx.k = 1  # set right again: runs
    assert build_graph("vanilla", c).invoke({"question": QUESTION}, context=ctx)["answer"] == "Paris"
