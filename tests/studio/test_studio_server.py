"""LangGraph Studio's server: a real ``langgraph dev`` (langgraph-cli[inmem]) on 127.0.0.1 with
the repository's ``langgraph.json``, driven through ``langgraph_sdk``.

The server's graphs are the module-level ``graph`` objects over the embedded defaults; they
find their corpus through ``RAGRAPHS_HOME`` (a store ingested here from a slice of the
bundled sample corpus).
"""

from __future__ import annotations

import threading
import time

import pytest

from servers import get

pytestmark = pytest.mark.slow

METHOD_GRAPHS = ["vanilla", "none", "crag", "dr-rag", "erm4", "migres"]
QUESTION = "What was the Danish chemist S. P. L. Sørensen famous for?"


@pytest.fixture(scope="module")
def server(langgraph_server):
    """The session's ``langgraph dev`` (shared with the ``eval --server`` tests)."""
    return langgraph_server


@pytest.fixture(scope="module")
def client(server):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server["url"], timeout=300)


def _assistants(client) -> dict[str, dict]:
    return {a["graph_id"]: a for a in client.assistants.search(limit=50)}


def test_server_lists_graphs_with_descriptions_and_context_schemas(client):
    from dataclasses import fields

    from ragraphs.graphs import get_context_class

    found = _assistants(client)
    assert set(METHOD_GRAPHS) <= set(found)
    for name in METHOD_GRAPHS:
        a = found[name]
        assert a["description"] and len(a["description"]) > 40
        schemas = client.assistants.get_schemas(a["assistant_id"])
        props = (schemas.get("context_schema") or {}).get("properties") or {}
        # Studio shows every run setting of the method's context
        assert {f.name for f in fields(get_context_class(name))} <= set(props), name
        assert "question" in (schemas["input_schema"].get("properties") or {})
    crag_props = client.assistants.get_schemas(found["crag"]["assistant_id"])["context_schema"]["properties"]
    assert "upper" in crag_props and crag_props["upper"].get("description")


def test_every_graph_runs_to_completion(client):
    found = _assistants(client)
    contexts = {
        # the embedded Gemma for the baselines; the methods with a deterministic stand-in
        # answer so that the six runs stay fast on a small CPU (their retrieval, judges and
        # routing are the real ones)
        "vanilla": {"llm": "gemma", "k": 3},
        "none": {"llm": "gemma"},
        "crag": {"llm": "fake:pH", "k": 3, "web": "none"},
        "dr-rag": {"llm": "fake:pH", "k": 3},
        "erm4": {"llm": "fake:pH", "k": 3},
        "migres": {"llm": "fake:pH", "k": 3},
    }
    # the six runs are in flight at once (the server has job slots for them), then each is joined
    started = {}
    for name in METHOD_GRAPHS:
        thread = client.threads.create()
        run = client.runs.create(
            thread["thread_id"], found[name]["assistant_id"], input={"question": QUESTION}, context=contexts[name]
        )
        started[name] = (thread, run)
    for name, (thread, run) in started.items():
        out = client.runs.join(thread["thread_id"], run["run_id"])
        assert isinstance(out, dict) and "__error__" not in out, (name, out)
        assert isinstance(out.get("answer"), str), (name, out)
        assert out["trace"] and all("node" in e for e in out["trace"]), name
        if name != "none":
            assert out.get("passages") or any("retriev" in e["node"] or "stage" in e["node"] for e in out["trace"]), name
        runs = client.runs.list(thread["thread_id"])
        assert runs and runs[0]["status"] == "success", (name, runs[:1])
        if contexts[name]["llm"] == "gemma":
            assert out["answer"].strip() and out["llm_calls"] >= 1


def test_erm4_keeps_its_reservoir_in_the_servers_store(client):
    """``reservoir="store"``: the server's store, whose vector index langgraph.json gives
    (MiniLM over ``title``), holds what ERM4 kept, and a later run finds it there."""
    erm4 = _assistants(client)["erm4"]["assistant_id"]
    ctx = {"llm": "fake:pH", "k": 3, "filter": "none", "reservoir": "store", "reservoir_collection": "studio-test"}
    out = client.runs.wait(client.threads.create()["thread_id"], erm4, input={"question": QUESTION}, context=ctx)
    assert isinstance(out, dict) and "__error__" not in out, out
    assert out["outside"] and out["memory_update"]["added"] == len(out["passages"]) == 3
    namespace = ["ragraphs", "erm4_reservoir", "studio-test"]
    title = out["passages"][0]["title"]
    items = client.store.search_items(namespace, query=title, limit=10)["items"]
    assert {i["value"]["title"] for i in items} == {p["title"] for p in out["passages"]}
    assert items[0]["value"]["title"] == title and items[0]["score"] > 0.99  # the index's cosine
    # a question that names a stored title is inside the boundary: answered from the store
    again = client.runs.wait(client.threads.create()["thread_id"], erm4, input={"question": title}, context=ctx)
    assert again["inside"] and not again["outside"] and all(p["source"] == "memory" for p in again["passages"])


def test_the_chat_graph_answers_each_message_of_a_thread(client):
    """Studio's chat view: messages in, one AI message per turn, the thread keeping the
    conversation; the embedded Gemma answers through vanilla, then CRAG with a setting of its own."""
    found = _assistants(client)
    chat = found["chat"]["assistant_id"]
    schemas = client.assistants.get_schemas(chat)
    assert "messages" in schemas["input_schema"]["properties"]
    assert {"method", "settings"} <= set(schemas["context_schema"]["properties"])
    thread = client.threads.create()
    turns = [({"method": "vanilla", "llm": "gemma", "k": 2}, QUESTION),
             ({"method": "crag", "llm": "gemma", "k": 2, "settings": {"web": "none"}}, "Who was S. P. L. Sørensen?")]
    for i, (context, question) in enumerate(turns):
        out = client.runs.wait(thread["thread_id"], chat, input={"messages": [{"role": "user", "content": question}]},
                               context=context)
        assert isinstance(out, dict) and "__error__" not in out, out
        msgs = out["messages"]
        assert [m["type"] for m in msgs] == ["human", "ai"] * (i + 1)
        assert msgs[-2]["content"] == question and msgs[-1]["content"].strip() and msgs[-1]["name"] == context["method"]
        assert out["passages"] and len(out["passages"]) <= 2


def test_stream_updates_of_one_run_and_event_loop_stays_free(client, server):
    found = _assistants(client)
    thread = client.threads.create()
    latencies: list[float] = []
    stop = threading.Event()

    def probe():  # the server must keep answering while Gemma and MiniLM work
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                get(server["url"] + "/ok", timeout=10)
                latencies.append(time.perf_counter() - t0)
            except OSError:
                latencies.append(99.0)
            time.sleep(0.2)

    th = threading.Thread(target=probe, daemon=True)
    th.start()
    events: list[tuple[str, object]] = []
    try:
        for part in client.runs.stream(
            thread["thread_id"],
            found["vanilla"]["assistant_id"],
            input={"question": QUESTION},
            context={"llm": "gemma", "k": 3, "max_new_tokens": 24},
            stream_mode=["updates", "custom"],
        ):
            events.append((part.event, part.data))
    finally:
        stop.set()
        th.join(timeout=15)
    updates = [d for e, d in events if e == "updates"]
    custom = [d for e, d in events if e == "custom"]
    # one update per node, in graph order
    assert [next(iter(u)) for u in updates] == ["start", "retrieve", "generate"]
    retrieved = updates[1]["retrieve"]["passages"]
    assert len(retrieved) == 3 and any("Sørensen" in p["title"] for p in retrieved)
    assert updates[2]["generate"]["answer"].strip()
    # the custom events carry every node's details (scores of the retrieved passages)
    assert [c["node"] for c in custom if c.get("event") == "node_trace"] == ["start", "retrieve", "generate"]
    assert all(isinstance(r["score"], float) for r in custom[1]["retrieved"])
    # the server's own checkpointer kept the thread: its state and history are there
    state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["answer"] == updates[2]["generate"]["answer"]
    history = client.threads.get_history(thread["thread_id"], limit=10)
    assert len(history) >= 3
    assert latencies and max(latencies) < 5.0, latencies


def test_a_run_setting_of_the_wrong_kind_fails_the_run_naming_the_setting(client):
    found = _assistants(client)
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], found["crag"]["assistant_id"], input={"question": QUESTION},
                             context={"llm": "fake:pH", "web": "none", "upper": "abc"})
    out = client.runs.join(thread["thread_id"], run["run_id"])
    assert isinstance(out, dict) and "__error__" in out, out
    assert "run setting 'upper' must be a number, got 'abc'" in str(out["__error__"])
    assert client.runs.list(thread["thread_id"])[0]["status"] == "error"


def test_an_empty_question_fails_the_run_with_its_message(client):
    found = _assistants(client)
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], found["vanilla"]["assistant_id"], input={"question": "  "},
                             context={"llm": "fake:pH"})
    out = client.runs.join(thread["thread_id"], run["run_id"])
    assert out.get("__error__", {}).get("message") == "the question is empty", out
