"""Graphs embedded in a LangChain app (examples/langchain_app.py) with the user's own parts."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest


@pytest.fixture(scope="module")
def app_module(example):
    return example("langchain_app")


@pytest.mark.slow
def test_graph_as_a_chain_step_with_users_model_store_and_checkpointer(app_module, gemma, minilm, tmp_path):
    from langchain_core.vectorstores import InMemoryVectorStore

    from ragraphs.checkpoint import open_checkpointer

    docs, examples = app_module.sample_documents(3)
    store = InMemoryVectorStore(minilm)
    store.add_documents(docs)
    doc_ids = {d.metadata["id"] for d in docs}
    graph, rag, chain = app_module.build_app(
        "vanilla", llm=gemma, embeddings=minilm, vectorstore=store,
        checkpointer=open_checkpointer(str(tmp_path / "t.sqlite")), max_new_tokens=16,
    )
    q1, q2 = examples[0].question, examples[1].question
    cfg = lambda t: {"configurable": {"thread_id": t}}  # noqa: E731

    b = chain.batch([q1, q2], [cfg("b1"), cfg("b2")])
    assert all(isinstance(a, str) and a for a in b)
    # the chain streams too: the graph hands on its state, not its node updates (KeyError 'answer'
    # until 2026-12-01)
    assert list(chain.stream(q1, cfg("c1"))) == [b[0]]
    # async: the same app over an async checkpointer on the same SQLite file
    from ragraphs.checkpoint import open_async_checkpointer

    async def async_run():
        async with open_async_checkpointer(str(tmp_path / "t.sqlite")) as saver:
            _, _, achain = app_module.build_app(
                "vanilla", llm=gemma, embeddings=minilm, vectorstore=store, checkpointer=saver, max_new_tokens=16
            )
            return await achain.ainvoke(q2, cfg("u2"))

    assert asyncio.run(async_run()) == b[1]
    # stream node by node; the passages come from the user's vector store
    updates = list(rag.stream({"question": q1}, cfg("s1"), stream_mode="updates"))
    assert [next(iter(u)) for u in updates] == ["start", "retrieve", "generate"]
    got = updates[1]["retrieve"]["passages"]
    assert len(got) == 3 and {p["id"] for p in got} <= doc_ids
    # the same answer as the batch call (the model decodes greedily)
    assert updates[2]["generate"]["answer"].strip() == b[0]
    # the user's checkpointer kept every thread, the async one's too
    for t in ("b1", "b2", "c1", "u2", "s1"):
        st = graph.get_state(cfg(t))
        assert st.values["answer"] and st.next == ()
    assert len(list(graph.get_state_history(cfg("b1")))) == 5  # input, __start__, start, retrieve, generate


def test_a_methods_documents_feed_the_users_own_chain(app_module, minilm):
    """DR-RAG's retriever, with the shipped judges, inside the user's prompt | model chain: the
    model is asked once, by the user's prompt, with exactly the documents DR-RAG chose."""
    from langchain_core.vectorstores import InMemoryVectorStore

    from fakes import ScriptedChat

    docs, examples = app_module.sample_documents(3)
    store = InMemoryVectorStore(minilm)
    store.add_documents(docs)
    llm = ScriptedChat(script=lambda prompt: "an answer")
    retriever, chain = app_module.retrieval_chain("dr-rag", llm=llm, embeddings=minilm, vectorstore=store, k=3)
    q = examples[0].question
    chosen = retriever.invoke(q)
    assert 1 <= len(chosen) <= 3 and {d.metadata["id"] for d in chosen} <= {d.metadata["id"] for d in docs}
    assert llm.prompts == []  # the retriever asked no model
    assert chain.invoke(q) == "an answer"
    assert len(llm.prompts) == 1 and "Answer each question from its context" in llm.prompts[0]
    assert all(f"{d.metadata['title']}: {d.page_content}" in llm.prompts[0] for d in chosen) and q in llm.prompts[0]


class LowJudge:
    """A user's retrieval evaluator: every document is irrelevant."""

    def __init__(self):
        self.calls = 0

    def score_batch(self, pairs):
        self.calls += 1
        return np.full(len(pairs), -0.99)

    def score(self, question, passage):
        return -0.99


class UserWeb:
    name = "user-web"

    def __init__(self):
        self.queries: list[str] = []

    def search(self, query, k):
        from ragraphs.state import make_passage

        self.queries.append(query)
        return [make_passage("Lima", "Lima is the capital and largest city of Peru.", source="web", score=1.0)]


def test_crag_takes_the_users_judge_and_web_search_and_explains_its_route():
    from ragraphs.components import Components
    from ragraphs.graphs.crag import CRAGContext, build_crag_graph
    from ragraphs.state import make_passage
    from ragraphs.tools.llm import FakeAnswerChat

    class TinyRetriever:  # a user's retriever: anything with search(query, k, mode)
        def search(self, query, k, mode="dense"):
            return [make_passage("Cusco", "Cusco is a city in the Peruvian Andes.", score=0.4)][:k]

    judge, web = LowJudge(), UserWeb()
    c = Components(
        llm=FakeAnswerChat(responses=["capital of Peru"]),
        retriever=TinyRetriever(),
        web_search=web,
        judges={"evaluator": judge},
    )
    g = build_crag_graph(c)
    events, updates = [], []
    for mode, chunk in g.stream(
        {"question": "What is the capital of Peru?"},
        context=CRAGContext(k=1, fetch_pages=False),
        stream_mode=["custom", "updates"],
    ):
        (events if mode == "custom" else updates).append(chunk)
    by_node = {e["node"]: e for e in events if e.get("event") == "node_trace"}
    # the trace explains the branch: the judge's scores, the thresholds and the route taken
    ev = by_node["evaluate"]
    assert [s["score"] for s in ev["scores"]] == [-0.99]
    assert ev["route"] == "incorrect" and ev["lower"] == CRAGContext().lower
    assert judge.calls >= 1
    assert "web_search" in by_node and by_node["web_search"]["backend"] == "user-web"
    assert web.queries
    nodes = [next(iter(u)) for u in updates]
    assert "rewrite" in nodes and "web_search" in nodes and nodes[-1] == "generate"
    assert "refine" not in nodes  # the Correct/Ambiguous branch was not taken


@pytest.mark.slow
def test_the_program_runs_each_step_it_documents(app_module, tmp_path, capsys):
    """``python examples/langchain_app.py``: invoke, batch, stream, ainvoke, a parallel branch,
    the thread's checkpoints, DR-RAG's documents in the user's chain, each printed."""
    import ast
    import sqlite3

    db = tmp_path / "threads.sqlite"
    assert app_module.main(["--checkpoints", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in lines if ":" in line}
    assert said["invoke"] and said["ainvoke"] and said["your chain"]
    assert len(ast.literal_eval(said["batch"])) == 2  # both questions answered
    assert [line.split(":")[0].strip() for line in lines if line.startswith("  ")] == ["start", "retrieve", "generate"]
    parallel = ast.literal_eval(said["parallel"])
    assert parallel["rag"] and parallel["n_words"] > 3
    (thread,) = [line for line in lines if line.startswith("thread vanilla-ada has ")]
    assert int(thread.split()[3]) >= 3 and thread.endswith(str(db))
    titles = ast.literal_eval(said["dr-rag documents"])
    assert titles and all(isinstance(t, str) and t for t in titles)
    with sqlite3.connect(db) as con:  # the users' threads are in the file the program named
        threads = {row[0] for row in con.execute("select distinct thread_id from checkpoints")}
    assert {"vanilla-ada", "vanilla-bob", "batch-0", "batch-1", "stream-1", "parallel-1"} <= threads


def test_an_unknown_method_is_refused_before_the_models_load(app_module, capsys):
    """``python examples/langchain_app.py --method foo``: argparse's error naming the choices (a
    traceback after 20 s of loading and embedding until 2026-12-03)."""
    with pytest.raises(SystemExit) as e:
        app_module.main(["--method", "foo"])
    assert e.value.code == 2 and "invalid choice: 'foo'" in capsys.readouterr().err
