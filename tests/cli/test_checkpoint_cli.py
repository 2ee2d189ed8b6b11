"""``ragraphs ask --thread``, ``history`` and ``replay`` on the default SQLite checkpointer.

These run the real CLI entry point in this process with a deterministic model (``fake:``),
so they need no model weights; the real-model runs are in test_checkpoint_resume.py.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import free_port, main_captured


def test_thread_history_and_time_travel_on_the_default_sqlite_file(tmp_path, capsys):
    code, out, _ = main_captured(capsys, "ask", "What is the capital of Peru?", "--method", "none", "--llm", "fake:Lima",
                        "--set", "max_new_tokens=8", "--thread", "peru", "--quiet")
    assert code == 0 and out.strip() == "Lima"
    db = tmp_path / "home" / "checkpoints.sqlite"  # $RAGRAPHS_HOME/checkpoints.sqlite
    assert db.exists()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id='peru'").fetchone()[0] == 4

    code, out, _ = main_captured(capsys, "history", "peru")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("thread peru: method none; 4 checkpoints in ") and lines[0].endswith(str(db))
    assert "question: What is the capital of Peru?" in out
    assert "settings: llm=fake:Lima, max_new_tokens=8" in out
    assert "input received" in out and "ran start (" in out and "ran generate (" in out and "answer: Lima" in out
    assert out.index("step  -1") < out.index("step   0") < out.index("step   1") < out.index("step   2")

    # time travel: from step 0 (before start and generate) with another model; the settings kept in
    # the thread (max_new_tokens) still apply, --set overrides the model
    code, out, err = main_captured(capsys, "replay", "peru", "--from", "0", "--set", "llm=fake:Cusco", "--trace")
    assert code == 0 and out.splitlines()[0] == "Cusco"
    assert "replaying thread peru (none) from step 0" in err
    assert "--- [" in err and "] generate (" in err and '"raw": "Cusco"' in err
    code, out, _ = main_captured(capsys, "history", "peru", "--json")
    hist = json.loads(out)
    assert hist["context"] == {"llm": "fake:Cusco", "max_new_tokens": 8}  # the latest run's
    assert hist["contexts"] == [{"llm": "fake:Lima", "max_new_tokens": 8}, {"llm": "fake:Cusco", "max_new_tokens": 8}]
    code, out, _ = main_captured(capsys, "history", "peru")  # not the whole thread's (until 2026-11-30)
    assert "settings of the latest run (the thread's runs had 2 different ones; --json lists them): llm=fake:Cusco" in out
    answers = [c["answer"] for c in hist["checkpoints"] if not c["next"]]
    assert answers == ["Lima", "Cusco"]  # both branches stay in the thread
    fork = [c for c in hist["checkpoints"] if c["source"] == "fork"]
    assert len(fork) == 1 and fork[0]["parent_id"] == hist["checkpoints"][1]["checkpoint_id"]

    # the fork put a second checkpoint at step 1 (the first run's end is the other): a step
    # number no longer names one (the newest was taken silently until 2026-11-30)
    code, out, err = main_captured(capsys, "replay", "peru", "--from", "1", "--set", "llm=fake:Cusco")
    at1 = [c["checkpoint_id"] for c in hist["checkpoints"] if c["step"] == 1]
    assert code == 2 and len(at1) == 2 and "step 1 is on 2 branches of this thread" in err
    assert all(cid in err for cid in at1) and "give --from the checkpoint id" in err

    # replay from a checkpoint id prefix works too, with the settings of the run that wrote
    # that checkpoint (the first run's, llm=fake:Lima), not the latest replay's --set (until 2026-11-30)
    first_done = next(c for c in hist["checkpoints"] if c["answer"] == "Lima" and not c["next"])
    code, out, err = main_captured(capsys, "replay", "peru", "--from", hist["checkpoints"][1]["checkpoint_id"][:30], "--json")
    rep = json.loads(out)
    assert code == 0 and rep["answer"] == "Lima" and rep["from_step"] == 0
    assert first_done["checkpoint_id"] != rep["checkpoint_id"]

    # a complete thread has nothing to continue, nor has a run's last checkpoint
    code, out, err = main_captured(capsys, "replay", "peru")
    assert code == 0 and "is complete" in err
    code, out, err = main_captured(capsys, "replay", "peru", "--from", first_done["checkpoint_id"])
    assert code == 2 and "ends its run (nothing to re-run)" in err
    # --method is for threads that did not record theirs: another one is refused
    code, out, err = main_captured(capsys, "history", "peru", "--method", "vanilla")
    assert code == 2 and "holds runs of method 'none', not 'vanilla'" in err


def test_a_replay_says_an_empty_answer_as_ask_does(tmp_path, capsys):
    """A replay whose model abstains (an empty answer; ``fake:.`` is a lone full stop, which the
    answer cleaning leaves empty) says so, as ``ask`` and ``chat`` do; it printed a blank line until
    2026-12-02. ``--quiet`` and ``--json`` keep the bare, empty answer."""
    from ragraphs.cli.common import NO_ANSWER

    code, out, _ = main_captured(capsys, "ask", "What is the capital of Peru?", "--method", "none", "--llm", "fake:Lima",
                                 "--thread", "abstain", "--quiet")
    assert code == 0 and out.strip() == "Lima"
    code, out, _ = main_captured(capsys, "replay", "abstain", "--from", "0", "--set", "llm=fake:.")
    assert code == 0 and out.splitlines()[0] == NO_ANSWER and out.splitlines()[2].startswith("re-ran: ")
    code, out, _ = main_captured(capsys, "replay", "abstain", "--from", "0", "--set", "llm=fake:.", "--quiet")
    assert code == 0 and out == "\n"
    code, out, _ = main_captured(capsys, "replay", "abstain", "--from", "0", "--set", "llm=fake:.", "--json")
    assert code == 0 and json.loads(out)["answer"] == "" and json.loads(out)["from_step"] == 0


def test_a_replay_says_which_set_settings_no_rerun_node_read(tmp_path, capsys):
    """``replay --from`` a step after retrieval with ``--set k=2`` re-runs only the answer, which
    reads no ``k``: one warning names it (until 2026-12-02, night, the replay ran as without it
    and said nothing); from a step before retrieval, ``k`` is read, two passages kept, and no
    warning. The model's setting, read by ``generate``, is never warned of."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"title": "Lima", "text": "Lima is the capital of Peru."}) + "\n"
                      + json.dumps({"title": "Paris", "text": "Paris is the capital of France."}) + "\n")
    store = ["--store", str(tmp_path / "store")]
    assert main_captured(capsys, "ingest", str(corpus), *store, "--quiet")[0] == 0
    code, _, _ = main_captured(capsys, "ask", "What is the capital of Peru?", "--method", "vanilla", "--llm", "fake:Lima",
                               "--k", "1", *store, "--thread", "kk", "--quiet")
    assert code == 0
    hist = json.loads(main_captured(capsys, "history", "kk", "--json")[1])
    before_generate = next(c["checkpoint_id"] for c in hist["checkpoints"] if c["next"] == ["generate"])
    code, out, err = main_captured(capsys, "replay", "kk", "--from", before_generate, "--set", "k=2", "--set",
                                   "llm=fake:Cusco", "--quiet")
    assert code == 0 and out.strip() == "Cusco"
    warned = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 1 and warned[0].startswith("warning: --set k: no node that re-ran read it, so it changed nothing")
    code, out, err = main_captured(capsys, "replay", "kk", "--from", "0", "--set", "k=2", "--set", "llm=fake:Cusco", "--json")
    assert code == 0 and json.loads(out)["answer"] == "Cusco" and "warning" not in err
    from ragraphs.checkpoint import open_checkpointer
    from ragraphs.cli.debug import _checkpoints_only
    from ragraphs.graphs import build_graph

    graph = build_graph("vanilla", _checkpoints_only(), checkpointer=open_checkpointer(str(tmp_path / "home" / "checkpoints.sqlite")))
    state = graph.get_state({"configurable": {"thread_id": "kk"}}).values
    assert state["answer"] == "Cusco" and len(state["passages"]) == 2 and hist["context"]["k"] == 1


def test_a_second_question_on_a_thread_is_its_own_run_and_history_shows_both(tmp_path, capsys):
    """``ask --thread`` twice: the second run's passages, calls and trace are its own, not
    added to the first run's; ``history`` shows each question where its run begins."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"title": "Lima", "text": "Lima is the capital of Peru."}) + "\n"
                      + json.dumps({"title": "Paris", "text": "Paris is the capital of France."}) + "\n")
    store = ["--store", str(tmp_path / "store"), "--collection", "caps"]
    code, _, err = main_captured(capsys, "ingest", str(corpus), *store, "--quiet")
    assert code == 0, err
    runs = []
    for q, model in (("What is the capital of Peru?", "fake:Lima"), ("What is the capital of France?", "fake:Paris")):
        code, out, _ = main_captured(capsys, "ask", q, "--method", "vanilla", "--llm", model, "--k", "1", *store,
                                     "--thread", "two", "--json", "--quiet")
        assert code == 0
        runs.append(json.loads(out))
    first, second = runs
    assert [p["title"] for p in first["passages"]] == ["Lima"]
    assert [p["title"] for p in second["passages"]] == ["Paris"]  # not Lima and Paris
    assert second["llm_calls"] == 1 and second["answer"] == "Paris"
    code, out, _ = main_captured(capsys, "history", "two")
    assert code == 0
    assert "question: What is the capital of Peru?" in out.splitlines()[1]
    later = out.index("question: What is the capital of France?")
    assert out.index("answer: Lima") < later < out.index("answer: Paris")
    assert out.count("ran retrieve (") == 2 and out.count("ran generate (") == 2
    # --trace says so in one line, not with every key it emptied
    code, out, err = main_captured(capsys, "ask", "And Peru?", "--method", "vanilla", "--llm", "fake:Lima", "--k", "1",
                                   *store, "--thread", "two", "--trace")
    assert code == 0 and "a new question on this thread: the earlier run's state set back to empty" in err
    assert 'answer: ""' not in err and "llm_calls: 0" not in err
    assert err.count("a new question on this thread") == 1  # under the first node only
    # a run on no thread, or the first on a thread, resets nothing and says nothing of it (every
    # run said so, under each node that replaced a list, until 2026-11-30)
    for thread in ([], ["--thread", "three"]):
        code, out, err = main_captured(capsys, "ask", "And Peru?", "--method", "crag", "--llm", "fake:Lima", "--k", "1",
                                       *store, *thread, "--trace", "--set", "web=none")
        assert code == 0 and "--- [" in err and "a new question on this thread" not in err
        # each route event in the block of the node it names (under the node before until 2026-12-01)
        blocks = err.split("--- [")[1:]
        routes = [(b.split("] ", 1)[1].split(" (", 1)[0], json.loads(line.split("event: ", 1)[1]))
                  for b in blocks for line in b.splitlines() if line.strip().startswith("event: ")]
        assert routes and all(e["node"] == node for node, e in routes), routes
        assert "evaluate" in [node for node, _ in routes]
    # a thread is one method's: another method on it is refused, the thread left as it was
    code, out, err = main_captured(capsys, "ask", "Who?", "--method", "none", "--llm", "fake:x", *store, "--thread", "two")
    assert code == 2 and not out
    assert err.strip() == ("ragraphs: error: thread 'two' holds runs of method 'vanilla'; a thread is one graph's: "
                           "give another --thread id, or --method vanilla")
    # the chat on that thread: no --method of the chat's matches, so it is not advised (it was until 2026-11-30)
    code, out, err = main_captured(capsys, "chat", "--llm", "fake:x", *store, "--thread", "two")
    assert code == 2 and "--method vanilla`" in err and "give the chat another --thread id" in err


def test_a_failed_run_continues_from_its_last_checkpoint(tmp_path, capsys, monkeypatch):
    """The model is unreachable at generate: the run stops after its step-1 checkpoint (start's);
    ``replay ID`` (no --from) continues it once a model is given."""
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.setenv("RAGRAPHS_LLM_RETRIES", "0")
    db = tmp_path / "cp" / "runs.sqlite"
    code, out, err = main_captured(capsys, "ask", "Who wrote Hamlet?", "--method", "none", "--llm", "openai:down",
                          "--thread", "t1", "--checkpointer", str(db))
    assert code != 0 and err.startswith("ragraphs: error: LLM call failed")
    code, out, _ = main_captured(capsys, "history", "t1", "--checkpointer", str(db), "--json")
    last = json.loads(out)["checkpoints"][-1]
    assert last["next"] == ["generate"] and last["answer"] is None

    code, out, err = main_captured(capsys, "replay", "t1", "--checkpointer", str(db), "--set", "llm=fake:Shakespeare", "--json")
    rep = json.loads(out)
    assert code == 0 and rep["answer"] == "Shakespeare" and [e["node"] for e in rep["ran"]] == ["generate"]
    assert rep["from_checkpoint"] == last["checkpoint_id"]
    assert [e["event"] for e in rep["events"]] == ["node_trace"]


def test_the_command_line_reads_the_servers_checkpointer_variable(tmp_path, capsys, monkeypatch):
    """``$RAGRAPHS_CHECKPOINTER`` (a server's) is the default of ``--checkpointer`` for ask, history
    and replay, as ``RAGRAPHS_STORE_URL`` is of ``--store-url``; until 2026-12-01 history looked in
    the default file and said only "no checkpoints for thread", not where it had looked."""
    db = tmp_path / "server.sqlite"
    monkeypatch.setenv("RAGRAPHS_CHECKPOINTER", str(db))
    code, out, err = main_captured(capsys, "ask", "Q?", "--method", "none", "--llm", "fake:A", "--thread", "srv")
    assert code == 0 and db.exists() and not (tmp_path / "home" / "checkpoints.sqlite").exists()
    code, out, err = main_captured(capsys, "history", "srv")
    assert code == 0 and out.splitlines()[0].endswith(f"checkpoints in {db}")
    code, out, err = main_captured(capsys, "replay", "srv", "--from", "0", "--set", "llm=fake:B", "--json")
    assert code == 0 and json.loads(out)["answer"] == "B"
    code, out, err = main_captured(capsys, "history", "other")
    assert err.strip() == f"ragraphs: error: no checkpoints for thread 'other' in {db}"
    monkeypatch.setenv("RAGRAPHS_CHECKPOINTER", "  ")  # blank: the default file, as before
    code, out, err = main_captured(capsys, "history", "srv")
    assert code != 0 and str(tmp_path / "home" / "checkpoints.sqlite") in err


def test_clear_errors(tmp_path, capsys):
    db = tmp_path / "home" / "checkpoints.sqlite"
    code, out, err = main_captured(capsys, "history", "nothing-here")  # no file yet: none is made
    assert code != 0 and err.strip() == (f"ragraphs: error: no checkpoints in {db}: "
                                         "`ragraphs ask ... --thread ID` keeps a run there")
    assert not db.exists()
    main_captured(capsys, "ask", "Q?", "--method", "none", "--llm", "fake:A", "--thread", "t")
    code, out, err = main_captured(capsys, "history", "nothing-here")
    assert code != 0 and err.strip() == f"ragraphs: error: no checkpoints for thread 'nothing-here' in {db}"
    code, out, err = main_captured(capsys, "replay", "t", "--from", "7")
    assert code != 0 and err.strip() == "ragraphs: error: no checkpoint at step 7; steps: -1, 0, 1, 2"
    code, out, err = main_captured(capsys, "replay", "t", "--from", "zz-not-an-id")
    assert code != 0 and "is no checkpoint of this thread" in err
    bad = tmp_path / "not-a-db.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    code, out, err = main_captured(capsys, "history", "t", "--checkpointer", str(bad))
    assert code != 0 and err.startswith(f"ragraphs: error: cannot use {bad} as a SQLite checkpointer")
    code, out, err = main_captured(capsys, "history", "t", "--checkpointer", str(tmp_path))
    assert code != 0 and "is a directory" in err


def test_history_infers_the_method_of_a_thread_without_ragraphs_metadata(tmp_path):
    from ragraphs.checkpoint import open_checkpointer
    from ragraphs.components import Components
    from ragraphs.cli.debug import _graph_for
    from ragraphs.graphs.none import build_none_graph
    from ragraphs.tools.llm import FakeAnswerChat

    saver = open_checkpointer(str(tmp_path / "x.sqlite"))
    g = build_none_graph(Components(llm=FakeAnswerChat(responses=["ok"])), checkpointer=saver)
    g.invoke({"question": "q?"}, {"configurable": {"thread_id": "plain"}})
    _, method, _ = _graph_for("plain", saver, None)
    assert method == "none"
    assert Path(tmp_path / "x.sqlite").exists()


def test_routing_decisions_are_custom_stream_events():
    """``graphs._common.routed`` makes a conditional edge's choice a custom event."""
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from ragraphs.graphs._common import routed, timed

    class S(TypedDict):
        score: float

    def judge(state, runtime):
        return {"score": state["score"], "_trace": {"score": state["score"]}}

    def keep(state, runtime):
        return {}

    paths = {"high": "keep", "low": END}
    g = StateGraph(S)
    g.add_node("judge", timed("judge", judge))
    g.add_node("keep", timed("keep", keep))
    g.add_edge(START, "judge")
    g.add_conditional_edges("judge", routed("judge", lambda s: "high" if s["score"] > 0.5 else "low", paths), paths)
    g.add_edge("keep", END)
    graph = g.compile()
    ev = [c for m, c in graph.stream({"score": 0.9}, stream_mode=["custom"])]
    assert ev == [
        {"event": "node_trace", "node": "judge", "elapsed_s": ev[0]["elapsed_s"], "score": 0.9},
        {"event": "route", "node": "judge", "route": "high", "to": "keep"},
        {"event": "node_trace", "node": "keep", "elapsed_s": ev[2]["elapsed_s"]},
    ]
    ev = [c for m, c in graph.stream({"score": 0.1}, stream_mode=["custom"])]
    assert ev[-1] == {"event": "route", "node": "judge", "route": "low", "to": END}
    # outside a run the router still routes
    assert routed("judge", lambda s: "low", paths)({"score": 0.0}) == "low"


def test_history_and_replay_neither_make_nor_read_an_empty_store(tmp_path, capsys):
    """``history`` reads checkpoints only, and ``replay`` of a thread whose store is not here
    says so: until 2026-11-30 building the thread's graph made an empty default store, which
    ``replay`` then answered from."""
    from fakes import small_corpus
    from ragraphs.checkpoint import open_checkpointer
    from ragraphs.cli.debug import _checkpoints_only
    from ragraphs.components import Components
    from ragraphs.graphs import build_graph, method_names
    from ragraphs.graphs.vanilla import build_vanilla_graph
    from ragraphs.tools.llm import FakeAnswerChat

    home = tmp_path / "home"  # $RAGRAPHS_HOME (tests/conftest.py)
    for method in method_names():  # building any method's graph opens nothing
        build_graph(method, _checkpoints_only())
    assert not (home / "chroma").exists()
    corpus = small_corpus([("Peru", "Lima is the capital of Peru.")])
    db = tmp_path / "server.sqlite"
    saver = open_checkpointer(str(db))
    c = Components(llm=FakeAnswerChat(responses=["Lima"]), retriever=corpus, embeddings=corpus.embeddings)
    for thread in ("srv1", "srv2"):
        build_vanilla_graph(c, checkpointer=saver).invoke({"question": "Capital of Peru?"}, {"configurable": {"thread_id": thread}})
    code, out, _ = main_captured(capsys, "history", "srv1", "--checkpointer", db)
    assert code == 0 and "thread srv1: method vanilla" in out and not (home / "chroma").exists()
    # a thread that names no store (a server's) is replayed over the server's, RAGRAPHS_STORE_URL
    import os
    from unittest import mock

    with mock.patch.dict(os.environ, {"RAGRAPHS_STORE_URL": f"http://127.0.0.1:{free_port()}"}):
        code, out, err = main_captured(capsys, "replay", "srv1", "--from", "0", "--checkpointer", db, "--set", "llm=fake:x")
    assert code == 4 and "cannot reach Chroma server at http://127.0.0.1:" in err, err
    assert "names no store" not in err
    code, out, err = main_captured(capsys, "replay", "srv2", "--from", "0", "--checkpointer", db, "--set", "llm=fake:x")
    assert code == 2 and "no store at" in err and not (home / "chroma").exists()
    # without RAGRAPHS_STORE_URL, one line says where the server's store would be given (until
    # 2026-12-01 only "no store at ...; ragraphs ingest YOUR_DOCS", the wrong advice for a server's thread)
    assert "thread 'srv2' names no store (a LangGraph server's run)" in err and "--store-url" in err


def test_a_threads_store_is_kept_as_an_absolute_path(tmp_path, monkeypatch):
    """``replay`` from another directory reads the store the run read (a relative ``--store``
    was kept as typed until 2026-11-30: "no store at store", or another folder's store)."""
    import argparse
    import os

    from ragraphs.cli.debug import store_of

    monkeypatch.chdir(tmp_path)
    kept = store_of(argparse.Namespace(store="store", store_url=None, collection="caps"))
    assert kept == {"store": str(tmp_path / "store"), "store_url": None, "collection": "caps"}
    assert os.path.isabs(kept["store"]) and store_of(argparse.Namespace())["store"] is None


def test_history_refuses_a_sqlite_file_that_holds_no_checkpoints_and_leaves_it_as_it_was(tmp_path, capsys):
    """Review of 2026-11-30: ``history`` / ``replay`` on another program's SQLite file gave it
    LangGraph's tables and WAL mode; it is now read read-only and refused."""
    import sqlite3

    other = tmp_path / "app.sqlite3"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    before = other.read_bytes()
    for verb in ("history", "replay"):
        code, out, err = main_captured(capsys, verb, "t1", "--checkpointer", str(other))
        assert code == 2 and "is not a checkpoint file" in err
    assert other.read_bytes() == before
    with sqlite3.connect(other) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["users"]


def test_threads_written_from_python_replay_with_their_state_settings_and_foreign_ones_are_refused(tmp_path, capsys):
    """Review of 2026-11-30: a thread a user's own code wrote (no ragraphs metadata) replays with
    the settings its state kept (``run_settings``), not the defaults; a thread of another
    LangGraph app (no ragraphs trace) is refused instead of being taken for vanilla; an update_state
    checkpoint is named; a checkpoint id from another thread is said to be none of this one's."""
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    from ragraphs.components import Components
    from ragraphs.graphs import build_graph
    from ragraphs.settings import RAGContext

    db = tmp_path / "mine.sqlite"
    with sqlite3.connect(db, check_same_thread=False) as conn:
        saver = SqliteSaver(conn)
        g = build_graph("none", Components(), checkpointer=saver)
        cfg = {"configurable": {"thread_id": "py-1"}}
        g.invoke({"question": "Capital of Peru?"}, cfg, context=RAGContext(llm="fake:Lima", max_new_tokens=8))
        g.update_state(cfg, {"answer": "edited"})

        class S(TypedDict, total=False):
            question: str
            answer: str

        other = StateGraph(S)
        other.add_node("retrieve", lambda s: {"question": s["question"]})
        other.add_node("generate", lambda s: {"answer": "theirs"})
        other.add_edge(START, "retrieve")
        other.add_edge("retrieve", "generate")
        other.add_edge("generate", END)
        other.compile(checkpointer=saver).invoke({"question": "q"}, {"configurable": {"thread_id": "user-42"}})
    code, out, err = main_captured(capsys, "replay", "py-1", "--from", "0", "--checkpointer", str(db), "--json")
    assert code == 0 and json.loads(out)["answer"] == "Lima"  # fake:Lima from the state, not the default Gemma
    code, out, err = main_captured(capsys, "history", "py-1", "--checkpointer", str(db))
    assert code == 0 and "state edited (update_state)" in out
    before = db.read_bytes()
    code, out, err = main_captured(capsys, "history", "user-42", "--checkpointer", str(db))
    assert code == 2 and "holds no ragraphs trace" in err
    code, out, err = main_captured(capsys, "replay", "user-42", "--from", "1", "--checkpointer", str(db))
    assert code == 2 and "holds no ragraphs trace" in err and db.read_bytes() == before
    code, out, err = main_captured(capsys, "replay", "py-1", "--from", "ffffffff-0000", "--checkpointer", str(db))
    assert code == 2 and "is no checkpoint of this thread" in err


def test_the_async_checkpointer_refuses_a_directory_and_a_corrupt_file_by_name(tmp_path):
    """The server hook's opener has the sync opener's checks (raw sqlite3 errors until 2026-11-30)."""
    import asyncio

    import pytest

    from ragraphs.checkpoint import open_async_checkpointer
    from ragraphs.errors import ConfigError

    async def open_(path):
        async with open_async_checkpointer(str(path)) as saver:
            return saver

    (tmp_path / "dir").mkdir()
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ConfigError, match="is a directory"):
        asyncio.run(open_(tmp_path / "dir"))
    with pytest.raises(ConfigError, match="cannot use .*bad.sqlite as a SQLite checkpointer"):
        asyncio.run(open_(bad))
    assert asyncio.run(open_(tmp_path / "new.sqlite")) is not None


def test_history_from_async_code_over_the_async_checkpointer(tmp_path):
    """A FastAPI-style app over ``open_async_checkpointer`` reads a thread's history with
    ``aload_history``; the sync ``load_history`` there (it raised a raw InvalidStateError until
    2026-11-30, with docs/debugging.md naming no async form) is one line naming the async one."""
    import asyncio

    import pytest
    from fakes import ScriptedChat, small_corpus

    from ragraphs.checkpoint import open_async_checkpointer
    from ragraphs.cli.debug import aload_history, load_history
    from ragraphs.components import Components
    from ragraphs.errors import ConfigError
    from ragraphs.graphs.vanilla import build_vanilla_graph

    corpus = small_corpus([("Lima", "Lima is the capital of Peru."), ("Paris", "Paris is the capital of France.")])
    c = Components(llm=ScriptedChat(script=lambda p: "Lima"), retriever=corpus)
    cfg = {"configurable": {"thread_id": "t"}}

    async def run():
        async with open_async_checkpointer(str(tmp_path / "a.sqlite")) as saver:
            graph = build_vanilla_graph(c, checkpointer=saver)
            out = await graph.ainvoke({"question": "What is the capital of Peru?"}, cfg)
            rows = await aload_history(graph, "t")
            with pytest.raises(ConfigError, match=r"from inside the event loop .* await ragraphs\.cli\.debug\.aload_history"):
                load_history(graph, "t")
            return out, rows

    out, rows = asyncio.run(run())
    assert out["answer"] == "Lima"
    assert rows[-1]["answer"] == "Lima" and rows[-1]["next"] == []
    assert [e["node"] for r in rows for e in r["ran"]] == [e["node"] for e in out["trace"]]
    assert rows[0]["step"] == -1 and rows[-1]["step"] == len(rows) - 2


def test_a_checkpointer_closes_on_request_and_a_windows_share_reads_read_only(tmp_path):
    """``close_checkpointer`` frees what ``open_checkpointer`` opened (each call kept a
    connection until exit, until 2026-11-30); a file on a Windows share is opened read-only by
    an empty-authority URI (SQLite refuses ``file://server/...``)."""
    import os
    from pathlib import PureWindowsPath

    from ragraphs.checkpoint import _OPEN, close_checkpointer, open_checkpointer, read_only_uri

    def fds():
        return len(os.listdir("/proc/self/fd"))

    path = str(tmp_path / "c.sqlite")
    close_checkpointer(open_checkpointer(path))  # the tables made, the first time's files
    before, held = fds(), len(_OPEN)
    for _ in range(10):
        close_checkpointer(open_checkpointer(path))
    assert fds() == before and len(_OPEN) == held
    assert read_only_uri(PureWindowsPath(r"\\fileserver\team\runs\checkpoints.sqlite")) == \
        "file:////fileserver/team/runs/checkpoints.sqlite?mode=ro"
    assert read_only_uri(PureWindowsPath(r"C:\runs\checkpoints.sqlite")) == "file:///C:/runs/checkpoints.sqlite?mode=ro"
    assert read_only_uri(tmp_path / "c.sqlite").startswith("file:///")


def test_a_replay_over_a_store_named_wrong_is_refused_before_it_forks_the_thread(tmp_path, capsys):
    """``replay ID --from 1 --collection nope`` wrote its fork, recording ``nope``, then failed:
    every later plain ``replay ID`` resumed that dead branch and failed alike, and a replay from
    ``generate`` took the wrong name silently (until 2026-12-03). Now refused before any checkpoint."""
    docs = tmp_path / "peru.md"
    docs.write_text("# Peru\n\nLima is the capital of Peru.\n", encoding="utf-8")
    store = tmp_path / "store"
    assert main_captured(capsys, "ingest", docs, "--store", store, "--quiet")[0] == 0
    code, out, _ = main_captured(capsys, "ask", "What is the capital of Peru?", "--store", store, "--llm", "fake:Lima",
                                 "--thread", "wrong", "--quiet")
    assert code == 0 and out.strip() == "Lima"
    db = tmp_path / "home" / "checkpoints.sqlite"

    def count() -> int:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id='wrong'").fetchone()[0]

    before = count()
    for step, option in (("1", ("--collection", "nope")), ("2", ("--store", str(tmp_path / "elsewhere")))):
        code, out, err = main_captured(capsys, "replay", "wrong", "--from", step, *option)
        assert code == 2 and ("no collection 'nope'" in err or "no store at" in err) and "replaying" not in err, err
    assert count() == before
    code, out, err = main_captured(capsys, "replay", "wrong")
    assert code == 0 and "is complete (answer: 'Lima')" in err
