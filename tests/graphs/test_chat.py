"""The chat graph: any method answering user messages, one AI message per turn.

langchain_core's fake chat model and fake embeddings stand in for Gemma and MiniLM over an
in-memory corpus (numpy dense + real BM25), as in ``test_default_context.py``; the real stack
runs it through ``langgraph dev`` in ``tests/studio/test_studio_server.py``.
"""

from __future__ import annotations

import pytest
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from fakes import ConstJudge, small_corpus
from ragraphs.components import Components
from ragraphs.errors import ConfigError, InputError
from ragraphs.graphs.chat import build_chat_graph
from ragraphs.nodes.chat import earlier_turns, follow_up_prompt, last_user_text
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.settings import ChatContext, CRAGContext

DOCS = [
    ("Vienna", "Vienna is the capital of Austria. The Danube flows through Vienna."),
    ("Rome", "Rome is the capital of Italy. The Tiber flows through Rome."),
    ("Salzburg", "Salzburg lies on the Salzach river."),
    ("Elbe", "The Elbe flows through Dresden and Hamburg."),
]


@pytest.fixture(scope="module")
def corpus():
    return small_corpus(DOCS)


@pytest.fixture(autouse=True)
def _no_web(monkeypatch):  # RAGRAPHS_HOME is the test's own already (tests/conftest.py)
    monkeypatch.delenv("RAGRAPHS_WEB", raising=False)


def _chat(corpus, replies, checkpointer=None, **judges):
    c = Components(llm=FakeListChatModel(responses=list(replies)), retriever=corpus, embeddings=corpus.embeddings,
                   judges=judges)
    return build_chat_graph(c, checkpointer=checkpointer)


def _final(g, inputs, **kw) -> dict:
    """The whole state after the run (the output schema leaves the trace out)."""
    final: dict = {}
    for final in g.stream(inputs, stream_mode="values", **kw):
        pass
    return final


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
    assert [e["node"] for e in entry["run"]] == ["start", "retrieve", "generate"]  # the method's own trace rides along
    # the method's graph writes no checkpoints of its own into the chat's thread (it wrote its state at
    # every step under "answer:<task>", which nothing read, until 2026-11-30)
    saver = g.checkpointer
    spaces = {c.config["configurable"].get("checkpoint_ns", "") for c in saver.list({"configurable": {"thread_id": "t"}})}
    assert spaces == {""}


def test_each_turn_starts_its_trace_afresh_and_the_history_keeps_the_earlier_ones(corpus):
    """The thread's state holds the latest turn's trace; the earlier turns' are in its
    checkpoints. The whole conversation's trace, rewritten at every checkpoint, grew with the
    square of the turns until 2026-11-30."""
    g = _chat(corpus, ["the Danube", "the Tiber", "the Seine"], checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "long"}}
    for q in ("Which river flows through Vienna?", "And through Rome?", "And through Paris?"):
        g.invoke({"messages": [("user", q)]}, cfg, context=ChatContext(k=2))
    trace = g.get_state(cfg).values["trace"]
    assert [e["node"] for e in trace] == ["question", "answer"] and trace[-1]["question"] == "And through Paris?"
    asked = {e["question"] for snap in g.get_state_history(cfg) for e in snap.values.get("trace", []) if e["node"] == "answer"}
    assert asked == {"Which river flows through Vienna?", "And through Rome?", "And through Paris?"}


def _sqlite_saver(tmp_path):
    """A SQLite checkpointer on a file of the test's own, as ``ragraphs chat --thread`` uses."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(str(tmp_path / "chat.sqlite"), check_same_thread=False))


def test_a_long_threads_checkpoints_hold_each_message_once(corpus, tmp_path):
    """The messages are a ``DeltaChannel``: a checkpoint stores the step's new messages, not the
    whole list. Until 2026-12-02 a SQLite checkpointer wrote every message at every step, 37 MB
    after 160 short turns (3 MB since). Every checkpoint still reads as the conversation was then."""
    turns = 30
    saver = _sqlite_saver(tmp_path)
    g = _chat(corpus, [f"answer {i}" for i in range(turns)], checkpointer=saver)
    cfg = {"configurable": {"thread_id": "long"}}
    for i in range(turns):
        g.invoke({"messages": [("user", f"question {i}?")]}, cfg, context=ChatContext(k=1))
    messages = g.get_state(cfg).values["messages"]
    assert [m.content for m in messages] == [t for i in range(turns) for t in (f"question {i}?", f"answer {i}")]
    stored = [t.checkpoint["channel_values"].get("messages") for t in saver.list(cfg)]
    assert len(stored) >= 3 * turns  # the input, question and answer steps of every turn
    # the whole list at every step held 3,600 messages here
    assert sum(len(v) for v in stored if isinstance(v, list)) <= 2 * turns
    lengths = [len(snap.values.get("messages", [])) for snap in g.get_state_history(cfg)]  # newest first
    assert lengths == sorted(lengths, reverse=True) and set(range(2, 2 * turns + 1, 2)) <= set(lengths)


def test_a_user_message_keeps_its_id_so_it_can_be_edited_or_removed(corpus, tmp_path):
    """The channel folds the writes again on every read: a message sent without an id (a tuple,
    a server's dict) got a new random id each time until 2026-12-03, so ``RemoveMessage`` of it
    failed and an edit by its id was added as a new message. The AI answer's id was stable."""
    from langchain_core.messages import RemoveMessage

    saver = _sqlite_saver(tmp_path)
    g = _chat(corpus, ["the Danube", "the Tiber"], checkpointer=saver)
    cfg = {"configurable": {"thread_id": "ids"}}
    out = g.invoke({"messages": [("user", "Which river flows through Vienna?")]}, cfg, context=ChatContext(k=1))
    g.invoke({"messages": [{"role": "user", "content": "Which river flows through Vienna?"}]}, cfg,
             context=ChatContext(k=1))  # the same words again: another message, another id
    ids = [m.id for m in g.get_state(cfg).values["messages"]]
    assert ids[:2] == [m.id for m in out["messages"]] and len(set(ids)) == 4
    assert ids == [m.id for m in g.get_state(cfg).values["messages"]]  # read again: the same ids
    g.update_state(cfg, {"messages": [HumanMessage("Which river flows through Rome?", id=ids[2])]})
    assert [m.content for m in g.get_state(cfg).values["messages"]][2:] == ["Which river flows through Rome?", "the Tiber"]
    g.update_state(cfg, {"messages": [RemoveMessage(id=ids[0]), RemoveMessage(id=ids[1])]})
    assert [m.id for m in g.get_state(cfg).values["messages"]] == ids[2:]


def test_a_question_asked_again_after_a_trim_is_a_new_message(corpus, tmp_path):
    """The oldest turn removed, the question that was second asked again lands on the place it
    had when it was sent: a new message with an id of its own (it took the old one's id and
    replaced it, and the turn was refused as "nothing new to answer", until 2026-12-03)."""
    from langchain_core.messages import RemoveMessage

    g = _chat(corpus, ["the Danube", "the Tiber", "the Tiber again"], checkpointer=_sqlite_saver(tmp_path))
    cfg = {"configurable": {"thread_id": "trim"}}
    for q in ("Which river flows through Vienna?", "Which river flows through Rome?"):
        g.invoke({"messages": [("user", q)]}, cfg, context=ChatContext(k=1))
    ids = [m.id for m in g.get_state(cfg).values["messages"]]
    g.update_state(cfg, {"messages": [RemoveMessage(id=ids[0]), RemoveMessage(id=ids[1])]})
    g.invoke({"messages": [("user", "Which river flows through Rome?")]}, cfg, context=ChatContext(k=1))
    after = g.get_state(cfg).values["messages"]
    assert [m.content for m in after] == ["Which river flows through Rome?", "the Tiber",
                                          "Which river flows through Rome?", "the Tiber again"]
    assert [m.id for m in after][:2] == ids[2:] and len({m.id for m in after}) == 4
    assert [m.id for m in after] == [m.id for m in g.get_state(cfg).values["messages"]]  # stable on a new read


def test_a_thread_the_plain_messages_state_wrote_goes_on(corpus, tmp_path):
    """A thread written before the messages became a ``DeltaChannel`` (whole lists in each
    checkpoint) keeps its conversation when the chat answers on it."""
    from langgraph.graph import START, MessagesState, StateGraph

    saver = _sqlite_saver(tmp_path)
    old = StateGraph(MessagesState)
    old.add_node("answer", lambda s: {"messages": [AIMessage("the Danube")]})
    old.add_edge(START, "answer")
    cfg = {"configurable": {"thread_id": "old"}}
    old.compile(checkpointer=saver).invoke({"messages": [("user", "Which river flows through Vienna?")]}, cfg)
    g = _chat(corpus, ["the Tiber"], checkpointer=saver)
    out = g.invoke({"messages": [("user", "Which river flows through Rome?")]}, cfg, context=ChatContext(k=1))
    assert [m.content for m in out["messages"]] == ["Which river flows through Vienna?", "the Danube",
                                                    "Which river flows through Rome?", "the Tiber"]
    assert [m.content for m in g.get_state(cfg).values["messages"]][-1] == "the Tiber"


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


def test_each_method_keeps_its_own_defaults_where_the_chat_leaves_a_shared_setting_alone():
    """The chat's shared settings (``k``, ``retrieval``, ...) reach the method only where they
    were changed: DR-RAG in a chat is the DR-RAG of the README's recall table, not one with
    RAGContext's dense retrieval and no title links."""
    from ragraphs.cli.chat import chat_context
    from ragraphs.graphs.chat import method_context
    from ragraphs.settings import DRRAGContext, ERM4Context, MIGRESContext

    assert method_context(ChatContext(method="dr-rag")) == DRRAGContext()
    assert method_context(ChatContext(method="migres")) == MIGRESContext()  # k 8, 600 characters
    assert method_context(ChatContext(method="erm4")) == ERM4Context()
    assert method_context(ChatContext(method="migres", k=6)).k == 6
    assert method_context(ChatContext(method="migres", settings={"k": 4})).k == 4
    assert method_context(ChatContext(method="dr-rag", retrieval="bm25")).retrieval == "bm25"
    assert method_context(ChatContext(method="dr-rag", settings={"retrieval": "dense"})).retrieval == "dense"
    # on the command line a shared setting given is taken as given, the shared default's value too
    assert method_context(chat_context("migres", {"k": 4, "llm": None})).k == 4
    assert method_context(chat_context("migres", {"k": None})).k == MIGRESContext().k == 8
    assert method_context(chat_context("dr-rag", {"follow_up": "rewrite"})) == DRRAGContext()


def test_bad_input_and_settings_are_clear_errors(corpus):
    g = _chat(corpus, ["x"])
    with pytest.raises(InputError, match="no user message"):
        g.invoke({"messages": [AIMessage("hello")]})
    # a thread whose last message is not the user's has nothing new to answer (the old question
    # was answered again until 2026-11-30)
    with pytest.raises(InputError, match="last message is the ai's, not the user's"):
        g.invoke({"messages": [("user", "q?"), AIMessage("an answer")]})
    with pytest.raises(ConfigError, match=r"method 'crag' has no setting 'uper' \(did you mean 'upper'\?\)"):
        g.invoke({"messages": [("user", "q?")]}, context={"method": "crag", "settings": {"uper": 0.5}})
    with pytest.raises(ConfigError, match="'upper' must be a number"):
        g.invoke({"messages": [("user", "q?")]}, context={"method": "crag", "settings": {"upper": "high"}})
    # a method METHODS lacks: one line naming the registered ones, when the message is read
    with pytest.raises(ConfigError, match=r"^unknown method 'self-rag'; choose from none, vanilla, crag, dr-rag, erm4, migres(\n|$)"):
        g.invoke({"messages": [("user", "q?")]}, context=ChatContext(method="self-rag"))


def test_a_method_added_to_methods_answers_in_the_chat(corpus, monkeypatch):
    """``method`` is checked against METHODS when the run reads its message, so a method a
    contributor registers answers (``ragraphs chat --method NEW`` and the chat graph refused it
    until 2026-11-30: the setting was a fixed list of the six)."""
    from ragraphs import graphs
    from ragraphs.cli.chat import chat_context
    from ragraphs.graphs.chat import method_context
    from ragraphs.settings import RAGContext

    monkeypatch.setitem(graphs.METHODS, "plain-rag",
                        ("ragraphs.graphs.vanilla", "build_vanilla_graph", "ragraphs.settings:RAGContext"))
    assert method_context(chat_context("plain-rag", {"k": 2})) == RAGContext(k=2)  # the command line's path
    g = _chat(corpus, ["the Danube"])
    out = g.invoke({"messages": [("user", "Which river flows through Vienna?")]}, context={"method": "plain-rag", "k": 2})
    assert out["messages"][-1].content == "the Danube" and out["messages"][-1].name == "plain-rag"
    assert len(out["passages"]) == 2
    with pytest.raises(ConfigError, match=r"choose from none, vanilla, crag, dr-rag, erm4, migres, plain-rag(\n|$)"):
        g.invoke({"messages": [("user", "q?")]}, context={"method": "plainrag"})
    # Studio's form: a text field whose description and examples name the built-in methods; the
    # method's own settings an empty object by default (no default was shown until 2026-12-02)
    props = g.get_context_jsonschema()["properties"]
    prop = props["method"]
    assert prop["type"] == "string" and "crag" in prop["description"] and "METHODS" in prop["description"]
    assert prop["examples"] == ["none", "vanilla", "crag", "dr-rag", "erm4", "migres"] == list(graphs.METHODS)[:6]
    assert props["settings"]["default"] == {} and props["settings"]["type"] == "object"


def test_the_last_user_message_is_read_as_text():
    msgs = [HumanMessage("first"), AIMessage("a"), HumanMessage([{"type": "text", "text": "second"},
                                                                  {"type": "image_url", "image_url": {"url": "x"}}])]
    assert last_user_text(msgs) == "second"
    assert last_user_text(msgs[:2]) == "first"


def test_a_follow_up_is_rewritten_from_the_earlier_turns_before_the_method_reads_it(corpus):
    llm = FakeAnswerChat(responses=["the Danube", '{"question": "Which sea does the Danube flow into?"}', "the Black Sea"])
    c = Components(llm=llm, retriever=corpus, embeddings=corpus.embeddings)
    g = build_chat_graph(c, checkpointer=InMemorySaver())
    cfg, ctx = {"configurable": {"thread_id": "f"}}, ChatContext(k=2, follow_up="rewrite")
    out = g.invoke({"messages": [("user", "Which river flows through Vienna?")]}, cfg, context=ctx)
    # the first turn has nothing to refer to: no rewrite, one LLM call
    assert out["question"] == "Which river flows through Vienna?" and len(llm.prompts) == 1
    assert [e["node"] for e in g.get_state(cfg).values["trace"]] == ["question", "answer"]
    out = g.invoke({"messages": [("user", "Which sea does it flow into?")]}, cfg, context=ctx)
    rewrite_prompt = llm.prompts[1]
    assert rewrite_prompt.endswith("Conversation:\nUser: Which river flows through Vienna?\nAssistant: the Danube\n"
                                   "Last message: Which sea does it flow into?\nStanding alone:")
    assert out["question"] == "Which sea does the Danube flow into?"
    assert out["messages"][-1].content == "the Black Sea"
    meta = out["messages"][-1].response_metadata
    assert meta["question"] == "Which sea does the Danube flow into?" and meta["llm_calls"] == 2  # rewrite + answer
    rewrite, answer = g.get_state(cfg).values["trace"][-2:]
    assert rewrite["node"] == "rewrite" and rewrite["turns_read"] == 1 and rewrite["parse_failures"] == 0
    assert answer["question"] == "Which sea does the Danube flow into?"
    assert "Which sea does the Danube flow into?" in llm.prompts[2]  # what the method was asked


def test_the_rewrite_decision_stays_out_of_the_messages_stream(corpus):
    """Studio's chat view and SDK chat clients read ``stream_mode="messages"``: the follow-up
    rewrite's JSON is no reply (it streamed before the answer until 2026-11-30)."""
    llm = FakeAnswerChat(responses=["the Danube", '{"question": "Which sea does the Danube flow into?"}', "the Black Sea"])
    c = Components(llm=llm, retriever=corpus, embeddings=corpus.embeddings)
    g = build_chat_graph(c, checkpointer=InMemorySaver())
    cfg, ctx = {"configurable": {"thread_id": "s"}}, ChatContext(k=2, follow_up="rewrite")
    g.invoke({"messages": [("user", "Which river flows through Vienna?")]}, cfg, context=ctx)
    streamed = [(meta.get("langgraph_node"), chunk.content) for chunk, meta in
                g.stream({"messages": [("user", "Which sea does it flow into?")]}, cfg, context=ctx, stream_mode="messages")]
    assert len(llm.prompts) == 3  # the rewrite ran
    assert not any("{" in str(text) for _, text in streamed), streamed
    assert streamed and all(node == "answer" for node, _ in streamed)


def test_a_failed_rewrite_answers_the_message_as_written(corpus):
    llm = FakeAnswerChat(responses=["no idea", "still no idea", "the Black Sea"])
    c = Components(llm=llm, retriever=corpus, embeddings=corpus.embeddings)
    g = build_chat_graph(c)
    msgs = [("user", "Which river flows through Vienna?"), ("ai", "the Danube"), ("user", "Which sea does it flow into?")]
    out = _final(g, {"messages": msgs}, context={"follow_up": "rewrite"})
    assert out["question"] == "Which sea does it flow into?" and out["messages"][-1].content == "the Black Sea"
    assert "Question: Which sea does it flow into?" in llm.prompts[2]
    rewrite = next(e for e in out["trace"] if e["node"] == "rewrite")
    assert rewrite["parsed"] == "failed" and rewrite["calls"] == 2 and rewrite["parse_failures"] == 1
    assert "answered as written" in rewrite["note"]


def test_a_rewrite_that_repeats_an_earlier_question_is_not_taken(corpus):
    llm = FakeAnswerChat(responses=['{"question": "which river flows through Vienna"}', "Passau"])
    c = Components(llm=llm, retriever=corpus, embeddings=corpus.embeddings)
    msgs = [("user", "Which river flows through Vienna?"), ("ai", "the Danube"), ("user", "Where does it rise?")]
    out = _final(build_chat_graph(c), {"messages": msgs}, context={"follow_up": "rewrite"})
    assert out["question"] == "Where does it rise?"
    assert "repeated an earlier message" in next(e for e in out["trace"] if e["node"] == "rewrite")["note"]


def test_alone_is_the_default_and_never_calls_the_llm_to_rewrite(corpus):
    llm = FakeAnswerChat(responses=["the Tiber"])
    c = Components(llm=llm, retriever=corpus, embeddings=corpus.embeddings)
    msgs = [("user", "Which river flows through Vienna?"), ("ai", "the Danube"), ("user", "And through Rome?")]
    out = _final(build_chat_graph(c), {"messages": msgs}, context=ChatContext(k=2))
    assert out["question"] == "And through Rome?" and len(llm.prompts) == 1
    assert [e["node"] for e in out["trace"]] == ["question", "answer"]


def test_earlier_turns_pair_messages_with_their_answers_and_keep_the_last_ones():
    msgs = [HumanMessage("q1"), AIMessage("a1"), HumanMessage("q2"), HumanMessage("q3"), AIMessage("a3"),
            HumanMessage("now")]
    # q2 was never answered (its turn failed): no turn to read (a turn answered with nothing until 2026-11-30)
    assert earlier_turns(msgs, 5) == [("q1", "a1"), ("q3", "a3")]
    assert earlier_turns(msgs, 1) == [("q3", "a3")]
    assert earlier_turns(msgs[:1], 3) == []
    prompt = follow_up_prompt([("q2", "")], "now")
    assert prompt.endswith("User: q2\nAssistant: (no answer)\nLast message: now\nStanding alone:")
    assert prompt.count('{"question": ') == 3  # the examples are written in the decision's JSON


def test_follow_up_settings_are_checked():
    with pytest.raises(ConfigError, match="'follow_up' must be one of"):
        ChatContext(follow_up="always")
    with pytest.raises(ConfigError, match="history_turns"):
        ChatContext(history_turns=0)


@pytest.mark.slow
def test_the_embedded_model_rewrites_a_follow_up_held_to_the_schema(gemma, minilm):
    """The real Gemma under the Standalone grammar: valid JSON at the first try, a question written."""
    corpus = small_corpus(DOCS, minilm)
    g = build_chat_graph(Components(llm=gemma, retriever=corpus, embeddings=minilm))
    msgs = [("user", "Which river flows through Vienna?"), ("ai", "the Danube"), ("user", "Which sea does it flow into?")]
    out = _final(g, {"messages": msgs}, context=ChatContext(k=2, follow_up="rewrite"))
    rewrite = next(e for e in out["trace"] if e["node"] == "rewrite")
    assert rewrite["decision_mode"] == "grammar" and rewrite["parsed"] == "strict" and rewrite["parse_failures"] == 0
    assert len(out["question"].split()) >= 3 and out["question"] == rewrite["question"]
    assert out["messages"][-1].response_metadata["llm_calls"] == 2 and out["messages"][-1].content


def test_the_rewrite_asks_the_model_the_settings_name_and_the_answer_carries_its_sources(corpus):
    """``settings={"llm": ...}`` is the model the method answers with, and the follow-up rewrite's
    too (it ran the embedded Gemma beside it until 2026-11-30); the AI message carries the
    answer's passages (id, title, source, score) for a chat view."""
    c = Components(retriever=corpus, embeddings=corpus.embeddings)  # no model of its own: specs decide
    spec = 'fake:{"question": "Which sea does the Danube flow into?"}'
    msgs = [("user", "Which river flows through Vienna?"), ("ai", "the Danube"), ("user", "Which sea does it flow into?")]
    out = _final(build_chat_graph(c), {"messages": msgs},
                 context={"follow_up": "rewrite", "k": 2, "settings": {"llm": spec}})
    assert out["question"] == "Which sea does the Danube flow into?"
    sources = out["messages"][-1].response_metadata["passages"]
    assert [s["id"] for s in sources] == [p["id"] for p in out["passages"]] and len(sources) == 2
    assert set(sources[0]) == {"id", "title", "source", "score"}


def test_the_methods_settings_are_checked_before_the_rewrite_calls_a_model(corpus, monkeypatch):
    """A locked ``llm`` or a bad value in ``settings`` stops the turn at its first node: the
    follow-up rewrite called the model ``settings["llm"]`` named (a server's lock passed by) and
    read ``max_new_tokens`` with int() (a ValueError) until 2026-12-01."""
    import ragraphs.components as components_module

    made: list = []
    real = components_module.make_llm
    monkeypatch.setattr(components_module, "make_llm", lambda spec, **kw: made.append(spec) or real(spec, **kw))
    c = Components(retriever=corpus, embeddings=corpus.embeddings)
    msgs = [("user", "Which river flows through Vienna?"), ("ai", "the Danube"), ("user", "Which sea does it flow into?")]
    spec = 'fake:{"question": "Which sea does the Danube flow into?"}'
    monkeypatch.setenv("RAGRAPHS_LOCKED_SETTINGS", "llm")
    with pytest.raises(ConfigError, match="'llm' is locked here"):
        _final(build_chat_graph(c), {"messages": msgs}, context={"follow_up": "rewrite", "settings": {"llm": spec}})
    assert made == []
    monkeypatch.delenv("RAGRAPHS_LOCKED_SETTINGS")
    for bad in ("abc", 1e400):
        with pytest.raises(ConfigError, match="'max_new_tokens' must be a whole number"):
            _final(build_chat_graph(c), {"messages": msgs},
                   context={"follow_up": "rewrite", "settings": {"llm": spec, "max_new_tokens": bad}})
    assert made == []


class AsyncOnlySaver(InMemorySaver):
    """A checkpointer with async methods only, as a LangGraph server wraps a custom one
    (langgraph-api's adapter): each sync method raises, as BaseCheckpointSaver's do."""

    def get_tuple(self, config):
        raise NotImplementedError

    def put(self, *args, **kwargs):
        raise NotImplementedError

    def put_writes(self, *args, **kwargs):
        raise NotImplementedError

    def list(self, *args, **kwargs):
        raise NotImplementedError

    async def aget_tuple(self, config):
        return InMemorySaver.get_tuple(self, config)

    async def aput(self, *args, **kwargs):
        return InMemorySaver.put(self, *args, **kwargs)

    async def aput_writes(self, *args, **kwargs):
        return InMemorySaver.put_writes(self, *args, **kwargs)

    async def alist(self, *args, **kwargs):
        for item in InMemorySaver.list(self, *args, **kwargs):
            yield item


def test_a_chat_under_an_async_only_checkpointer_answers_with_ainvoke(corpus):
    """The method inside the chat's answer node runs with ainvoke under ainvoke: its nested
    invoke asked a server's async-only checkpointer for get_tuple, and every turn failed with
    NotImplementedError until 2026-12-01 (`langgraph dev` with the PostgreSQL hook)."""
    import asyncio

    g = _chat(corpus, ["Vienna", "the Danube"], checkpointer=AsyncOnlySaver())
    cfg = {"configurable": {"thread_id": "t1"}}

    async def turns():
        first = await g.ainvoke({"messages": [("user", "Which city lies on the Danube?")]}, cfg, context={"k": 2})
        second = await g.ainvoke({"messages": [("user", "Which river flows through Vienna?")]}, cfg, context={"k": 2})
        return first, second

    first, second = asyncio.run(turns())
    assert first["messages"][-1].content == "Vienna" and second["messages"][-1].content == "the Danube"
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    # one node run in a trace (a RunnableLambda in its place showed answer inside answer)
    async def answer_events():
        return [e["event"] async for e in g.astream_events({"messages": [("user", "Which city?")]},
                                                           {"configurable": {"thread_id": "t3"}}, version="v2")
                if e["name"] == "answer"]

    g = _chat(corpus, ["Vienna"], checkpointer=AsyncOnlySaver())
    assert [e for e in asyncio.run(answer_events()) if e != "on_chain_stream"] == ["on_chain_start", "on_chain_end"]
    with pytest.raises(NotImplementedError):  # the same saver under invoke: the sync path, as before
        g.invoke({"messages": [("user", "Which river?")]}, {"configurable": {"thread_id": "t2"}})


def test_the_answers_sources_carry_their_address_file_and_page(minilm):
    """A loader's ``source`` (a page's address, a file) and ``page`` reach the AI message's
    passages, as the method tool's message shows them (only id, title, source and score until
    2026-11-30); other metadata stays in the state's passages."""
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(minilm)
    store.add_documents([
        Document("Paris is the capital of France.", id="p1",
                 metadata={"source": "https://en.wikipedia.org/wiki/Paris", "page": 2, "author": "x"}),
        Document("Berlin is the capital of Germany.", id="b1", metadata={"source": "/docs/germany.pdf", "page": 5}),
    ])
    g = build_chat_graph(Components(llm=FakeListChatModel(responses=["Paris"]), vectorstore=store))
    out = g.invoke({"messages": [HumanMessage("What is the capital of France?")]}, context={"method": "vanilla", "k": 2})
    by_id = {s["id"]: s for s in out["messages"][-1].response_metadata["passages"]}
    assert by_id["p1"]["url"] == "https://en.wikipedia.org/wiki/Paris" and by_id["p1"]["page"] == 2
    assert by_id["b1"]["path"] == "/docs/germany.pdf" and by_id["b1"]["page"] == 5
    assert "author" not in by_id["p1"] and "path" not in by_id["p1"] and "url" not in by_id["b1"]


def test_a_turn_stopped_inside_the_method_resumes_where_it_stopped(monkeypatch):
    """The method's graph runs inside the chat's step with durability "exit": it keeps no
    checkpoints when it finishes (above), and keeps them when it stops early, so each of its
    interrupts can be answered in turn (compiled without a checkpointer, for one afternoon of
    2026-11-30, its second interrupt came back for ever) and a failed turn resumes at the failed
    step, not from the method's start."""
    import collections

    from langgraph.types import Command, interrupt

    from fakes import ConstJudge, small_corpus

    monkeypatch.setenv("RAGRAPHS_LLM_RETRIES", "0")
    corpus = small_corpus([("Vienna", "Vienna is the capital of Austria. The Danube flows through Vienna."),
                           ("Danube", "The Danube flows into the Black Sea."), ("Rome", "Rome is on the Tiber.")])
    calls = collections.Counter()

    class AskingRetriever:  # asks before each search: DR-RAG searches in two steps
        def search(self, query, k, mode="dense"):
            interrupt({"approve": query[:40]})
            calls["search"] += 1
            return corpus.search(query, k, mode=mode)

    class Flaky(FakeAnswerChat):
        def _generate(self, *a, **kw):
            calls["llm"] += 1
            if calls["llm"] == 1:
                raise RuntimeError("503")
            return super()._generate(*a, **kw)

    ctx = ChatContext(k=3, method="dr-rag", settings={"retrieval": "dense"})
    cfg = {"configurable": {"thread_id": "t"}}
    c = Components(llm=FakeAnswerChat(responses=["the Black Sea"]), retriever=AskingRetriever(),
                   embeddings=corpus.embeddings, judges={"pair": ConstJudge(0.9)})
    g = build_chat_graph(c, checkpointer=InMemorySaver())
    out = g.invoke({"messages": [("user", "Where does the river through Vienna end?")]}, cfg, context=ctx)
    asked = 0
    while out.get("__interrupt__") and asked < 10:
        asked += 1
        out = g.invoke(Command(resume="yes"), cfg, context=ctx)
    assert asked >= 2 and out["messages"][-1].content == "the Black Sea"

    calls.clear()

    class Counting:
        def search(self, query, k, mode="dense"):
            calls["search"] += 1
            return corpus.search(query, k, mode=mode)

    c = Components(llm=Flaky(responses=["the Black Sea"]), retriever=Counting(), embeddings=corpus.embeddings,
                   judges={"pair": ConstJudge(0.9)})
    g = build_chat_graph(c, checkpointer=InMemorySaver())
    with pytest.raises(Exception, match="503"):
        g.invoke({"messages": [("user", "Where does the river through Vienna end?")]}, cfg, context=ctx)
    searched = calls["search"]
    # the stopped method's checkpoints are in the thread, under their own namespace; history reads the chat's own
    from ragraphs.cli.debug import _nested

    rows = list(g.checkpointer.list(cfg))
    assert any(_nested(r) for r in rows) and not all(_nested(r) for r in rows)
    out = g.invoke(None, cfg, context=ctx)
    assert out["messages"][-1].content == "the Black Sea"
    assert calls["search"] == searched and calls["llm"] == 2  # the searches were not run again


def test_an_interrupt_inside_the_llm_pauses_the_run_and_is_no_llm_error():
    """A chat model wrapper that asks a human first (LangGraph's interrupt()) pauses the run; the
    LLM layer's error handling read it as a failed call until 2026-11-30."""
    from langgraph.types import Command, interrupt

    from fakes import small_corpus
    from ragraphs.graphs.vanilla import build_vanilla_graph

    class Approving(FakeAnswerChat):
        def _generate(self, *a, **kw):
            if interrupt({"approve": "generation"}) != "yes":
                raise RuntimeError("refused")
            return super()._generate(*a, **kw)

    c = Components(llm=Approving(responses=["Lima"]), retriever=small_corpus([("Lima", "Lima is the capital of Peru.")]))
    g = build_vanilla_graph(c, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "a"}}
    out = g.invoke({"question": "Capital of Peru?"}, cfg)
    assert [i.value for i in out["__interrupt__"]] == [{"approve": "generation"}]
    assert g.invoke(Command(resume="yes"), cfg)["answer"] == "Lima"
