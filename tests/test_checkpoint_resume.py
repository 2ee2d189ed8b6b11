"""Kill a run mid-way and resume it from its SQLite checkpoint to the same final answer.

The run is the real CLI (``ragraphs ask --thread``) in a child process, on the real stack:
MiniLM + Chroma over a slice of the bundled sample corpus, and the embedded Gemma served by an
OpenAI-compatible HTTP endpoint on 127.0.0.1 that this test runs. The endpoint holds its
answers behind a gate, so the child is killed (SIGKILL) while ``generate`` waits for the model,
after ``retrieve``'s checkpoint is on disk. The run is then resumed in this process with
``graph.invoke(None, config)`` and compared with an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from importlib import resources
from pathlib import Path

import pytest

from servers import ChatEndpoint, chat_completion, prompt_of

pytestmark = pytest.mark.slow

QUESTION = "Which Danish chemist introduced the concept of pH?"


class GatedOpenAIServer(ChatEndpoint):
    """A chat endpoint over a LangChain chat model, whose replies wait until :attr:`gate` is
    set. Requests pending when :meth:`drop_pending` is called are answered with an error
    instead (their client was killed)."""

    def __init__(self, llm):
        self.llm = llm
        self.gate = threading.Event()
        self.arrived = threading.Event()
        self.served = 0
        self._generation = 0
        super().__init__(self._respond)

    def _respond(self, body, headers):
        from langchain_core.messages import HumanMessage

        gen = self._generation
        self.arrived.set()
        self.gate.wait(timeout=300)
        if gen != self._generation:
            return 503, {"error": {"message": "client gone"}}
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or 32
        msg = self.llm.invoke([HumanMessage(content=prompt_of(body, "\n\n"))], stop=body.get("stop") or None,
                              max_tokens=max_tokens)
        usage = msg.usage_metadata or {}
        self.served += 1
        return 200, chat_completion(msg.content, body.get("model", "gemma"), usage.get("input_tokens", 0),
                                    usage.get("output_tokens", 0), id=f"cmpl-{self.served}")

    def drop_pending(self):
        self._generation += 1
        self.gate.set()

    def close(self):
        self.gate.set()
        super().close()


@pytest.fixture
def llm_server(gemma):
    srv = GatedOpenAIServer(gemma)
    yield srv
    srv.close()


@pytest.fixture
def sample_home(tmp_path, minilm, monkeypatch):
    """$RAGRAPHS_HOME with a Chroma store of the first three questions of the bundled sample."""
    from ragraphs.ingest import ingest
    from ragraphs.tools.vectorstore import ChromaCorpus

    home = tmp_path / "home"
    lines = (resources.files("ragraphs") / "data" / "sample" / "hotpotqa_sample.jsonl").read_text("utf-8").splitlines()
    src = tmp_path / "slice" / "hotpotqa_sample.jsonl"
    src.parent.mkdir(parents=True)
    src.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    corpus = ChromaCorpus(str(home / "chroma"), collection="ragraphs", embeddings=minilm)
    ingest([str(src)], corpus, progress=False)
    monkeypatch.setenv("RAGRAPHS_HOME", str(home))
    return home, corpus


def _checkpoint_steps(db: Path, thread: str) -> list[int]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            rows = conn.execute("SELECT metadata FROM checkpoints WHERE thread_id = ?", (thread,)).fetchall()
    except sqlite3.OperationalError:  # tables not created yet, or locked
        return []
    return sorted(json.loads(m)["step"] for (m,) in rows)


def test_killed_run_resumes_from_sqlite_checkpoint_to_the_same_answer(tmp_path, sample_home, llm_server, minilm, monkeypatch):
    from ragraphs.checkpoint import open_checkpointer
    from ragraphs.components import Components
    from ragraphs.cli.debug import load_history
    from ragraphs.graphs.vanilla import build_vanilla_graph
    from ragraphs.settings import RAGContext
    from ragraphs.tools.llm import make_llm

    home, corpus = sample_home
    db = tmp_path / "runs.sqlite"
    env = {
        **os.environ,
        "RAGRAPHS_HOME": str(home),
        "OPENAI_BASE_URL": llm_server.url,
        "OPENAI_API_KEY": "local",
        "RAGRAPHS_LLM_RETRIES": "0",
        "HF_HUB_OFFLINE": "1",
    }
    cmd = [sys.executable, "-m", "ragraphs", "ask", QUESTION, "--method", "vanilla", "--llm", "openai:gemma-local",
           "--k", "3", "--thread", "run-1", "--checkpointer", str(db), "--quiet"]
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        # wait until generate has asked the model (start and retrieve are done: step 2 is on disk)
        deadline = time.monotonic() + 180
        while not (llm_server.arrived.is_set() and 2 in _checkpoint_steps(db, "run-1")):
            if child.poll() is not None:
                pytest.fail("the run ended before it was killed: " + child.stderr.read().decode()[-2000:])
            if time.monotonic() > deadline:
                pytest.fail("the run did not reach generate in 180 s")
            time.sleep(0.2)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    llm_server.drop_pending()  # the killed client's request is never answered
    assert _checkpoint_steps(db, "run-1") == [-1, 0, 1, 2]

    # the same graph, rebuilt in this process over the same checkpointer
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    llm = make_llm("openai:gemma-local", max_tokens=32)
    c = Components(llm=llm, retriever=corpus, embeddings=minilm)
    graph = build_vanilla_graph(c, checkpointer=open_checkpointer(str(db)))
    config = {"configurable": {"thread_id": "run-1"}}
    before = graph.get_state(config)
    assert before.next == ("generate",)
    assert [e["node"] for e in before.values["trace"]] == ["start", "retrieve"] and not before.values.get("answer")
    assert before.metadata["ragraphs_method"] == "vanilla"  # kept for `ragraphs replay`
    kept = [p["id"] for p in before.values["passages"]]
    assert len(kept) == 3

    llm_server.gate = threading.Event()
    llm_server.gate.set()
    served = llm_server.served
    resumed = graph.invoke(None, config, context=RAGContext(k=3))
    assert llm_server.served == served + 1  # only generate ran again
    assert [e["node"] for e in resumed["trace"]] == ["start", "retrieve", "generate"]
    assert [p["id"] for p in resumed["passages"]] == kept
    assert resumed["answer"].strip()

    # an uninterrupted run of the same question on a fresh thread
    fresh = graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "run-2"}}, context=RAGContext(k=3))
    assert fresh["answer"] == resumed["answer"]
    assert [p["id"] for p in fresh["passages"]] == kept

    rows = load_history(graph, "run-1")
    assert [r["step"] for r in rows] == [-1, 0, 1, 2, 3]
    assert [e["node"] for r in rows for e in r["ran"]] == ["start", "retrieve", "generate"]
    assert rows[-1]["answer"] == resumed["answer"] and rows[-1]["next"] == []
