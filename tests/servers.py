"""Helpers for the tests that start real servers: ``langgraph dev`` on 127.0.0.1 with the
repository's ``langgraph.json``, offline, over a store ingested from the bundled sample, and
an OpenAI-compatible chat endpoint that fails on demand. The Studio and ``eval --server``
tests share one such server (the ``langgraph_server`` fixture of ``conftest.py``). Every
test's OpenAI-compatible chat endpoint is a :class:`ChatEndpoint`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path

import pytest

from conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "langgraph.json"
N_QUESTIONS = 12  # sample questions whose paragraphs the shared server's store holds


def offline_env(home: Path) -> dict[str, str]:
    """Environment for a server that must not reach the network."""
    env = {
        **os.environ,
        "RAGRAPHS_HOME": str(home),
        "RAGRAPHS_WEB": "none",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "LANGSMITH_API_KEY": "",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "PYTHONUNBUFFERED": "1",
    }
    return env


def ingest_sample_slice(home: Path, embeddings, n_questions: int = 3, *, store_url: str | None = None,
                        collection: str = "ragraphs") -> int:
    """Ingest the first questions' paragraphs of the bundled sample into $home/chroma (or into
    the Chroma server at ``store_url``)."""
    from ragraphs.ingest import ingest
    from ragraphs.tools.vectorstore import ChromaCorpus

    sample = resources.files("ragraphs") / "data" / "sample" / "hotpotqa_sample.jsonl"
    lines = sample.read_text(encoding="utf-8").splitlines()[:n_questions]
    src = home / "sample_slice" / "hotpotqa_sample.jsonl"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus = ChromaCorpus(None if store_url else str(home / "chroma"), url=store_url, collection=collection,
                          embeddings=embeddings)
    ingest([str(src)], corpus, progress=False)
    return corpus.count()


def get(url: str, timeout: float = 2.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def _with_absolute_store_index(config: Path, cwd: Path) -> Path:
    """``langgraph dev`` reads the store index's ``./file.py:name`` from its working directory
    (the repository root, as the docs run it); the tests run it elsewhere, so they serve a copy
    of the config whose path is absolute."""
    cfg = json.loads(config.read_text())
    embed = cfg.get("store", {}).get("index", {}).get("embed", "")
    if not embed.startswith("./"):
        return config
    cfg["store"]["index"]["embed"] = str(ROOT / embed[2:])
    copy = cwd / config.name
    copy.write_text(json.dumps(cfg))
    return copy


@contextlib.contextmanager
def langgraph_dev(config: Path, home: Path, cwd: Path, extra_env: dict | None = None, timeout: float = 180,
                  jobs: int = 8):
    """Run ``langgraph dev`` on a free port of 127.0.0.1 with ``jobs`` runs at once (its own
    default is one: concurrent runs would wait in its queue); yields its URL; always stops it."""
    port = free_port()
    logpath = cwd / "server.log"
    config = _with_absolute_store_index(config, cwd)
    exe = Path(sys.executable).parent / "langgraph"
    cmd = [str(exe), "dev", "--config", str(config), "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload",
           "--n-jobs-per-worker", str(jobs)]
    env = {**offline_env(home), **(extra_env or {})}
    with open(logpath, "w") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                pytest.fail("langgraph dev exited early:\n" + logpath.read_text()[-4000:])
            try:
                if json.loads(get(url + "/ok")).get("ok"):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start in {timeout:.0f} s:\n" + logpath.read_text()[-4000:])
            time.sleep(0.5)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def chat_completion(content: str, model: str = "stub", prompt_tokens: int = 0, completion_tokens: int = 0,
                    id: str = "chatcmpl-1") -> dict:
    """An OpenAI ``chat.completion`` response body with one assistant message."""
    return {
        "id": id, "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def prompt_of(body: dict, sep: str = "\n") -> str:
    """The text of a chat request's messages."""
    return sep.join(m["content"] for m in body["messages"] if isinstance(m.get("content"), str))


class ChatEndpoint:
    """An OpenAI-compatible ``/v1/chat/completions`` on 127.0.0.1 (a real HTTP server in a
    thread): ``respond(body, headers)`` returns ``(status, response body)`` for each request.
    Every request body is kept in :attr:`bodies`."""

    def __init__(self, respond):
        self.bodies: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                outer.bodies.append(body)
                status, out = respond(body, self.headers)
                data = json.dumps(out).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client went away
                    pass

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.srv.daemon_threads = True
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}/v1"

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


class FlakyLLM(ChatEndpoint):
    """Answers "Sørensen", except with HTTP 500 for prompts containing :attr:`poison` while
    :attr:`failing` is set."""

    def __init__(self):
        self.poison: str | None = None
        self.failing = True
        self.prompts: list[str] = []
        super().__init__(self._respond)

    def _respond(self, body, headers):
        prompt = prompt_of(body)
        self.prompts.append(prompt)
        if self.failing and self.poison and self.poison in prompt:
            return 500, {"error": {"message": "model crashed", "type": "server_error"}}
        return 200, chat_completion("Sørensen", body.get("model"), 50, 2)


@contextlib.contextmanager
def shared_langgraph_server(tmp_path_factory, embeddings):
    """A store with the paragraphs of the first :data:`N_QUESTIONS` sample questions and a
    ``langgraph dev`` over it whose ``openai:`` models are a :class:`FlakyLLM` (the embedded
    Gemma stays the default)."""
    home = tmp_path_factory.mktemp("server_home")
    assert ingest_sample_slice(home, embeddings, N_QUESTIONS) >= 100
    llm = FlakyLLM()
    env = {"OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "sk-test", "RAGRAPHS_LLM_RETRIES": "0"}
    cwd = tmp_path_factory.mktemp("server_cwd")
    try:
        with langgraph_dev(CONFIG, home, cwd, extra_env=env) as url:
            yield {"url": url, "home": home, "data": home / "sample_slice" / "hotpotqa_sample.jsonl", "llm": llm,
                   "log": cwd / "server.log"}
    finally:
        llm.close()
