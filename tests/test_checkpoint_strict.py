"""Checkpoint files are read with a strict serializer: a crafted value runs no code.

LangGraph's default ``JsonPlusSerializer`` (without ``LANGGRAPH_STRICT_MSGPACK=true``) imports
and calls any ``module.name(*args)`` a checkpoint blob names, with only a warning: until
2026-11-30 ``ragraphs history t1 --checkpointer evil.sqlite`` on a crafted file ran
``os.system``. Every saver ragraphs opens now rebuilds only LangGraph's safe types
(``checkpoint.strict_serde``); these tests write a thread, plant a call in its checkpoint as
an attacker would, and read it back through ``history``, ``load_history`` and a resumed
graph. The other half: every graph's own threads are read back without one blocked type.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import ormsgpack
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.serde import jsonplus
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_POS_ARGS

from conftest import main_captured
from fakes import RIVER_CONTEXTS, RIVER_QUESTION, river_components
from ragraphs import Components
from ragraphs.checkpoint import close_checkpointer, open_async_checkpointer, open_checkpointer, strict_serde
from ragraphs.errors import ConfigError
from ragraphs.graphs import build_graph
from ragraphs.graphs.chat import build_chat_graph
from ragraphs.state import make_passage

CORPUS = [
    make_passage("Lima", "Lima is the capital and largest city of Peru."),
    make_passage("Paris", "Paris is the capital and largest city of France."),
    make_passage("Seine", "The Seine is a river that flows through Paris in France."),
]
QUESTION, CONTEXTS = RIVER_QUESTION, RIVER_CONTEXTS


def _components() -> Components:
    return river_components(CORPUS)


def _plant(db: Path, marker: Path, channel: str = "question") -> int:
    """Overwrite ``channel`` in every checkpoint of ``db`` with a value that, rebuilt by
    LangGraph's default serializer, calls ``pathlib.Path.touch`` on ``marker`` (a harmless
    stand-in for ``os.system``): ``Path(marker)`` is a safe type, ``.touch`` is not."""
    payload = ormsgpack.Ext(EXT_CONSTRUCTOR_POS_ARGS, ormsgpack.packb(
        ["ragraphs_test_payload", "touch", [str(marker)]]))
    n = 0
    with sqlite3.connect(db) as conn:
        for rowid, blob in conn.execute("SELECT rowid, checkpoint FROM checkpoints").fetchall():
            raw = ormsgpack.unpackb(blob, option=ormsgpack.OPT_NON_STR_KEYS, ext_hook=lambda c, d: ormsgpack.Ext(c, d))
            if channel in raw["channel_values"]:
                raw["channel_values"][channel] = payload
                conn.execute("UPDATE checkpoints SET checkpoint=? WHERE rowid=?",
                             (ormsgpack.packb(raw, option=ormsgpack.OPT_NON_STR_KEYS), rowid))
                n += 1
    return n


@pytest.fixture
def payload_module(monkeypatch, tmp_path):
    """A module ``ragraphs_test_payload`` whose ``touch(path)`` creates the file: what the
    planted value calls if it is rebuilt."""
    import sys
    import types

    mod = types.ModuleType("ragraphs_test_payload")
    mod.touch = lambda p: Path(p).touch()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ragraphs_test_payload", mod)
    monkeypatch.setattr(jsonplus, "_warned_blocked_types", set())  # LangGraph warns once per type and process
    return tmp_path / "pwned"


@pytest.fixture
def serde_events():
    events: list[dict] = []
    unregister = register_serde_event_listener(events.append)
    yield events
    unregister()


def test_the_payload_runs_under_langgraphs_default_serializer(tmp_path, payload_module):
    """The planted value does run code when read with the serializer ragraphs used before
    (the control: without it the tests below would prove nothing)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "cp.sqlite"
    saver = open_checkpointer(str(db))
    build_graph("none", _components(), checkpointer=saver).invoke({"question": QUESTION}, {"configurable": {"thread_id": "t1"}})
    close_checkpointer(saver)
    assert _plant(db, payload_module) >= 1
    with sqlite3.connect(db, check_same_thread=False) as conn:
        list(SqliteSaver(conn).list({"configurable": {"thread_id": "t1"}}))
    assert payload_module.exists()


def test_a_crafted_checkpoint_runs_no_code_in_history_load_history_or_a_resumed_graph(tmp_path, payload_module,
                                                                                        capsys, caplog, serde_events):
    from ragraphs.cli.debug import load_history

    db = tmp_path / "evil.sqlite"
    code, out, err = main_captured(capsys, "ask", QUESTION, "--method", "none", "--llm", "fake:the Seine",
                                   "--thread", "t1", "--checkpointer", db, "--quiet")
    assert code == 0, err
    assert _plant(db, payload_module) >= 1

    code, out, err = main_captured(capsys, "history", "t1", "--checkpointer", db)
    assert not payload_module.exists()
    code, out, err = main_captured(capsys, "history", "t1", "--checkpointer", db, "--json")
    assert not payload_module.exists()

    saver = open_checkpointer(str(db), must_exist=True)
    g = build_graph("none", _components(), checkpointer=saver)
    load_history(g, "t1")
    assert not payload_module.exists()
    cfg = {"configurable": {"thread_id": "t1"}}
    g.get_state(cfg)
    try:
        g.invoke({"question": "And Peru?"}, cfg)  # resumes the thread: reads its latest checkpoint
    except Exception:
        pass  # what the run makes of the raw value is not the point; that nothing ran is
    close_checkpointer(saver)
    assert not payload_module.exists()

    async def read_async():
        async with open_async_checkpointer(str(db)) as asaver:
            return [t async for t in asaver.alist(cfg)]

    assert asyncio.run(read_async())
    assert not payload_module.exists()
    assert {(e["kind"], e["module"], e["name"]) for e in serde_events} == {
        ("msgpack_blocked", "ragraphs_test_payload", "touch")}
    assert "Blocked deserialization of ragraphs_test_payload.touch" in caplog.text


def test_the_server_hook_reads_its_file_strictly(tmp_path, payload_module, monkeypatch):
    """``server_checkpointer`` (``$RAGRAPHS_CHECKPOINTER``, a LangGraph server's hook) opens
    its saver with the strict serializer too."""
    from ragraphs.checkpoint import server_checkpointer

    db = tmp_path / "server.sqlite"
    saver = open_checkpointer(str(db))
    build_graph("none", _components(), checkpointer=saver).invoke({"question": QUESTION}, {"configurable": {"thread_id": "t1"}})
    close_checkpointer(saver)
    assert _plant(db, payload_module) >= 1
    monkeypatch.setenv("RAGRAPHS_CHECKPOINTER", str(db))

    async def read():
        async with server_checkpointer() as s:
            assert s.serde._allowed_msgpack_modules is None  # type: ignore[attr-defined]
            return [t async for t in s.alist({"configurable": {"thread_id": "t1"}})]

    assert asyncio.run(read())
    assert not payload_module.exists()


def test_the_strict_serializer_rebuilds_no_call_langgraph_does_not_list_as_safe():
    s = strict_serde()
    assert s._allowed_msgpack_modules is None  # only LangGraph's SAFE_MSGPACK_TYPES


def test_a_langgraph_checkpoint_without_the_allowlist_keyword_is_one_config_error(tmp_path, monkeypatch):
    # langgraph-checkpoint 3.0.1 and 4.0.0 take no allowed_msgpack_modules (it came in 4.0.1): until
    # 2026-11-30 pyproject allowed them and every saver ended in a TypeError traceback
    class OldSerializer:  # the 4.0.0 signature
        def __init__(self, *, pickle_fallback: bool = False, allowed_json_modules=None,
                     __unpack_ext_hook__=None) -> None:
            pass

    monkeypatch.setattr(jsonplus, "JsonPlusSerializer", OldSerializer)
    with pytest.raises(ConfigError, match=r"need langgraph-checkpoint>=4\.0\.1 \(installed: [^)]+\)") as e:
        open_checkpointer(str(tmp_path / "cp.sqlite"))
    assert "\n" not in str(e.value)
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    # at or above the first of each that takes langgraph-checkpoint 4 (langgraph 1.0.6, sqlite 3.0.2); since
    # 2026-12-02 langgraph 1.2.0 and sqlite 3.1.0, for the chat's DeltaChannel
    for floor in ('"langgraph>=1.2.0', '"langgraph-checkpoint>=4.0.1"', '"langgraph-checkpoint-sqlite>=3.1.0"',
                  '"langgraph-checkpoint-postgres>=3.0.3"'):
        assert floor in pyproject


@pytest.mark.parametrize("method", ["none", "vanilla", "crag", "dr-rag", "erm4", "migres", "chat"])
def test_every_graph_writes_and_reads_back_its_thread_with_nothing_blocked(method, tmp_path, monkeypatch, caplog,
                                                                           serde_events):
    """Each graph runs two questions on one thread in a SQLite file, then the thread is read
    again by a new saver (history and the resumed state): no type the graphs store is one the
    strict serializer blocks, and the values read back are the ones written."""
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))
    monkeypatch.setattr(jsonplus, "_warned_blocked_types", set())
    db = str(tmp_path / "cp.sqlite")
    cfg = {"configurable": {"thread_id": f"t-{method}"}}
    saver = open_checkpointer(db)
    if method == "chat":
        g = build_chat_graph(_components(), checkpointer=saver)
        for q in (QUESTION, "And the capital of Peru?"):
            out = g.invoke({"messages": [HumanMessage(content=q)]}, cfg)
    else:
        g = build_graph(method, _components(), checkpointer=saver)
        context = CONTEXTS.get(method, {})
        g.invoke({"question": "What is the capital of Peru?"}, cfg, context=context)
        out = g.invoke({"question": QUESTION}, cfg, context=context)
    close_checkpointer(saver)

    again = open_checkpointer(db, must_exist=True)
    g2 = build_chat_graph(_components(), checkpointer=again) if method == "chat" else \
        build_graph(method, _components(), checkpointer=again)
    history = list(g2.get_state_history(cfg))
    state = g2.get_state(cfg).values
    close_checkpointer(again)
    assert len(history) > 4
    assert serde_events == [] and "Blocked deserialization" not in caplog.text
    if method == "chat":
        assert [type(m).__name__ for m in state["messages"]] == ["HumanMessage", "AIMessage"] * 2
        assert state["messages"] == out["messages"]
    else:
        assert state["answer"] == out["answer"] and state["passages"] == out["passages"]
        assert state["trace"] == out["trace"]


def test_the_servers_checkpointer_takes_a_cancelled_runs_checkpoints_out(tmp_path, monkeypatch):
    """A LangGraph server over ``server_checkpointer`` (``RAGRAPHS_CHECKPOINTER``) calls
    ``adelete_for_runs`` for double-texting's ``rollback`` and a cancel with ``action="rollback"``:
    the run's checkpoints (its metadata's ``run_id``) and their writes go, the thread's earlier
    run stays whole, the chat's messages too. **Was a bug** (until 2026-12-03): the saver had no
    such method, the server's worker failed with a RuntimeError and the thread stayed busy."""
    from ragraphs.checkpoint import server_checkpointer

    monkeypatch.setenv("RAGRAPHS_CHECKPOINTER", str(tmp_path / "server.sqlite"))
    corpus = [make_passage("Seine", "The Seine flows through Paris.")]

    async def go() -> tuple[list, list, list, int]:
        async with server_checkpointer() as saver:
            chat = build_chat_graph(river_components(corpus), checkpointer=saver)
            cfg = {"configurable": {"thread_id": "t"}}
            for run, q in (("run-1", "Which river flows through Paris?"), ("run-2", "And through Rome?")):
                await chat.ainvoke({"messages": [("user", q)]}, {**cfg, "metadata": {"run_id": run}},
                                   context={"k": 1})
            before = [m.content for m in (await chat.aget_state(cfg)).values["messages"]]
            await saver.adelete_for_runs(["run-2"])
            after = [m.content for m in (await chat.aget_state(cfg)).values["messages"]]
            runs = [t.metadata.get("run_id") async for t in saver.alist(cfg)]
            async with saver.conn.execute("SELECT count(*) FROM writes WHERE checkpoint_id NOT IN "
                                          "(SELECT checkpoint_id FROM checkpoints)") as cur:
                orphans = (await cur.fetchone())[0]
            return before, after, runs, orphans

    before, after, runs, orphans = asyncio.run(go())
    assert before[:2] == after and len(before) == 4 and after[0] == "Which river flows through Paris?"
    assert set(runs) == {"run-1"} and orphans == 0
