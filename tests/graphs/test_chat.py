"""The chat graph: any method answering user messages, one AI message per turn.

langchain_core's fake chat model and fake embeddings stand in for Gemma and MiniLM over an
in-memory corpus (numpy dense + real BM25), as in ``test_default_context.py``; the real stack
runs it through ``langgraph dev`` in ``tests/studio/test_studio_server.py``.
"""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from fakes import ConstJudge
from ragraphs.components import Components
from ragraphs.errors import ConfigError, InputError
from ragraphs.graphs.chat import build_chat_graph
from ragraphs.nodes.chat import last_user_text
from ragraphs.settings import ChatContext, CRAGContext
from ragraphs.state.types import make_passage
from ragraphs.tools.vectorstore import InMemoryCorpus

DOCS = [
    ("Vienna", "Vienna is the capital of Austria. The Danube flows through Vienna."),
    ("Rome", "Rome is the capital of Italy. The Tiber flows through Rome."),
    ("Salzburg", "Salzburg lies on the Salzach river."),
    ("Elbe", "The Elbe flows through Dresden and Hamburg."),
]


@pytest.fixture(scope="module")
def corpus():
    return InMemoryCorpus([make_passage(t, x) for t, x in DOCS], embeddings=DeterministicFakeEmbedding(size=32))


@pytest.fixture(autouse=True)
def _no_web(monkeypatch):  # RAGRAPHS_HOME is the test's own already (tests/conftest.py)
    monkeypatch.delenv("RAGRAPHS_WEB", raising=False)


def _chat(corpus, replies, checkpointer=None, **judges):
    c = Components(llm=FakeListChatModel(responses=list(replies)), retriever=corpus, embeddings=corpus.embeddings,
                   judges=judges)
    return build_chat_graph(c, checkpointer=checkpointer)


def test_each_user_message_is_answered_by_the_method_in_a_thread(corpus):
    g = _chat(corpus, ["the Danube", "the Tiber"], checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    out = g.invoke({"messages": [("user", "Which river flows through Vienna?")]}, cfg, context=ChatContext(k=2))
    assert [(m.type, m.content) for m in out["messages"]] == [
        ("human", "Which river flows through Vienna?"), ("ai", "the Danube")]
    assert out["messages"][-1].name == "vanilla" and out["messages"][-1].response_metadata["llm_calls"] == 1
    assert len(out["passages"]) == 2  # the answer's passages, k of them
    # the next turn keeps the conversation and answers the new message on its own
    out = g.invoke({"messages": [("user", "And through Rome?")]}, cfg, context=ChatContext(k=2))
    assert [m.content for m in out["messages"]] == [
        "Which river flows through Vienna?", "the Danube", "And through Rome?", "the Tiber"]
    (entry,) = [e for e in g.get_state(cfg).values["trace"][-1:]]
    assert entry["node"] == "answer" and entry["question"] == "And through Rome?" and entry["method"] == "vanilla"
    assert [e["node"] for e in entry["run"]] == ["retrieve", "generate"]  # the method's own trace rides along


def test_the_method_and_its_own_settings_come_from_the_run_context(corpus):
    g = _chat(corpus, ["Danube river Vienna", "the Danube"], evaluator=ConstJudge(0.4))
    ctx = {"method": "crag", "k": 3, "settings": {"upper": 0.3, "web": "none"}}
    final: dict = {}
    for final in g.stream({"messages": [HumanMessage("Which river flows through Vienna?")]}, context=ctx,
                          stream_mode="values"):
        pass
    assert isinstance(final["messages"][-1], AIMessage) and final["messages"][-1].name == "crag"
    run = final["trace"][-1]["run"]  # CRAG's own trace
    ev = next(e for e in run if e["node"] == "evaluate")
    assert CRAGContext().upper != 0.3 and ev["upper"] == 0.3 and ev["action"] == "correct"  # 0.4 > 0.3
    assert next(e for e in run if e["node"] == "retrieve")["k"] == 3


def test_bad_input_and_settings_are_clear_errors(corpus):
    g = _chat(corpus, ["x"])
    with pytest.raises(InputError, match="no user message"):
        g.invoke({"messages": [AIMessage("hello")]})
    with pytest.raises(ConfigError, match=r"method 'crag' has no setting 'uper' \(did you mean 'upper'\?\)"):
        g.invoke({"messages": [("user", "q?")]}, context={"method": "crag", "settings": {"uper": 0.5}})
    with pytest.raises(ConfigError, match="'upper' must be a number"):
        g.invoke({"messages": [("user", "q?")]}, context={"method": "crag", "settings": {"upper": "high"}})
    with pytest.raises(ConfigError, match="'method' must be one of"):
        ChatContext(method="self-rag")


def test_the_last_user_message_is_read_as_text():
    msgs = [HumanMessage("first"), AIMessage("a"), HumanMessage([{"type": "text", "text": "second"},
                                                                  {"type": "image_url", "image_url": {"url": "x"}}])]
    assert last_user_text(msgs) == "second"
    assert last_user_text(msgs[:2]) == "first"
