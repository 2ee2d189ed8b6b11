"""``ragraphs eval --server URL``: the questions run on a real ``langgraph dev`` on 127.0.0.1
(the repository's ``langgraph.json``), several at a time, and score exactly like a local eval
over the same store; a run that fails on the server is recorded and run again on resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import free_port
from ragraphs.cli import main
from ragraphs.evaluation.runner import read_results
from servers import N_QUESTIONS

pytestmark = pytest.mark.slow



@pytest.fixture(scope="module")
def served(langgraph_server):
    """The session's ``langgraph dev`` (see ``tests/servers.py``): its store holds the
    paragraphs of the first 12 sample questions, and its ``openai:`` LLM is a FlakyLLM."""
    return langgraph_server


def _eval(capsys, argv: list[str]) -> tuple[int, dict]:
    rc = main(["eval", *argv, "--json", "--quiet"])
    out = capsys.readouterr().out.strip().splitlines()
    return rc, json.loads(out[-1])


def _records(out: Path, label: str) -> list[dict]:
    lines = (out / "runs" / "hotpotqa" / label / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_server_eval_matches_local_eval_over_the_same_store(served, tmp_path, capsys):
    common = ["--method", "dr-rag", "--strategy", "cfs", "--k", "3", "--retrieval-only", "--dataset", "hotpotqa",
              "--data", str(served["data"]), "--limit", str(N_QUESTIONS)]
    rc, local = _eval(capsys, common + ["--corpus", str(served["home"] / "chroma"), "--out", str(tmp_path / "local")])
    assert rc == 0 and local["n"] == N_QUESTIONS and local["errors"] == 0
    rc, remote = _eval(capsys, common + ["--server", served["url"], "--concurrency", "4", "--out", str(tmp_path / "remote")])
    assert rc == 0 and remote["n"] == N_QUESTIONS and remote["errors"] == 0
    # the same summary keys (plus where and how it ran), the same scores
    assert set(remote) - set(local) == {"server", "concurrency", "run_s"} and set(local) <= set(remote)
    assert remote["server"] == served["url"] and remote["concurrency"] == 4 and remote["run_s"] > 0
    assert local["corpus_passages"] > 0 and remote["corpus_passages"] is None  # the server's store is not counted from here
    assert remote["label"] == local["label"] == "dr-rag-cfs-k3-retrieval"
    for key in ("recall", "recall_all", "n_with_gold", "docs_avg", "llm_calls_avg", "iterations_avg"):
        assert remote[key] == local[key], key
    assert 0 < local["recall"] <= 1
    loc = {r["id"]: r for r in _records(tmp_path / "local", local["label"])}
    rem = _records(tmp_path / "remote", remote["label"])
    assert len(rem) == N_QUESTIONS and {r["id"] for r in rem} == set(loc)  # each question once
    for r in rem:
        want = loc[r["id"]]
        assert [p["id"] for p in r["passages"]] == [p["id"] for p in want["passages"]], r["question"]
        assert r["recall"] == want["recall"] and r["gold_found"] == want["gold_found"]
        assert [t["node"] for t in r["trace"]] == [t["node"] for t in want["trace"]]
        # the run context reached the server: k=3, and no generation (skip_generation)
        assert 0 < r["docs"] <= 3 and r["llm_calls"] == 0 and r["prediction"] == ""
        assert r["node_s"] and r["wall_s"] >= sum(r["node_s"].values())
    assert served["llm"].prompts == []
    # the same command again: everything resumed, nothing sent
    rc, again = _eval(capsys, common + ["--server", served["url"], "--concurrency", "4", "--out", str(tmp_path / "remote")])
    assert rc == 0 and again["resumed"] == N_QUESTIONS and again["recall"] == remote["recall"]
    assert len(_records(tmp_path / "remote", remote["label"])) == N_QUESTIONS


def test_a_run_failing_on_the_server_is_recorded_and_retried_on_resume(served, tmp_path, capsys):
    llm = served["llm"]
    questions = [json.loads(line) for line in served["data"].read_text().splitlines()[:4]]
    bad_q = questions[2]["question"]  # "Steven Covey, the father of Sean Covey, wrote ..."
    llm.poison, llm.failing = bad_q[:38], True
    start = len(llm.prompts)
    argv = ["--method", "vanilla", "--k", "2", "--llm", "openai:flaky", "--dataset", "hotpotqa",
            "--data", str(served["data"]), "--limit", "4", "--server", served["url"], "--concurrency", "2",
            "--out", str(tmp_path / "out")]
    rc, first = _eval(capsys, argv)
    assert rc == 0 and first["n"] == 4 and first["errors"] == 1 and first["llm_calls_avg"] == 1.0
    label = first["label"]
    recs = {r["id"]: r for r in _records(tmp_path / "out", label)}
    assert len(recs) == 4
    bad = [r for r in recs.values() if r["error"]]
    assert len(bad) == 1 and bad[0]["question"] == bad_q
    assert bad[0]["error"].startswith("RemoteRunError: LLMError")  # the server's error type
    assert bad[0]["em"] == 0.0 and bad[0]["recall"] == 0.0  # a failure scores zero
    assert len(llm.prompts) - start == 4
    # the model is back: the resume runs only the failed question, and counts each question once
    llm.failing = False
    rc, second = _eval(capsys, argv)
    assert rc == 0 and second["resumed"] == 3 and second["errors"] == 0 and second["n"] == 4
    assert len(llm.prompts) - start == 5 and llm.poison in llm.prompts[-1]
    lines = _records(tmp_path / "out", label)
    assert len(lines) == 5  # the failed record stays in the file; the newer one wins
    final = read_results(str(tmp_path / "out" / "runs" / "hotpotqa" / label / "results.jsonl"))
    assert len(final) == 4 and not any(r["error"] for r in final.values())
    assert all(r["prediction"] == "Sørensen" and r["docs"] == 2 for r in final.values())
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"| {label} |" in report


def test_server_that_is_not_there_or_lacks_the_graph_is_one_error_line(served, data_dir, capsys):
    base = ["eval", "--data", str(data_dir / "hotpotqa.sample.jsonl"), "--limit", "1", "--quiet"]
    rc = main(base + ["--server", f"http://127.0.0.1:{free_port()}"])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot reach the LangGraph server" in err and "Traceback" not in err
    rc = main(base + ["--server", served["url"], "--oracle", "--method", "none"])
    err = capsys.readouterr().err
    assert rc == 2 and "the oracle runs locally only" in err
    rc = main(base + ["--server", served["url"], "--corpus", str(served["home"] / "chroma")])
    err = capsys.readouterr().err
    assert rc == 2 and "--corpus, --pool and --web are for local runs" in err
    # --pool too (it was ignored without a word until 2026-11-30)
    rc = main(base + ["--server", f"http://127.0.0.1:{free_port()}", "--pool", str(data_dir / "hotpotqa.sample.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2 and "--corpus, --pool and --web are for local runs" in err


def test_a_server_that_answers_with_an_error_is_not_called_unreachable(tmp_path):
    """A server that answered the assistants search with an HTTP error (a graph it does not
    serve: 404 "Graph 'short' not found") was reported as "cannot reach" until 2026-12-03."""
    import asyncio
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import httpx
    from langgraph_sdk.errors import NotFoundError

    from ragraphs.errors import ConfigError
    from ragraphs.evaluation.remote import _assistant_id

    class Ok(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"

    class Client:
        class assistants:
            @staticmethod
            async def search(**kw):
                response = httpx.Response(404, request=httpx.Request("POST", url + "/assistants/search"))
                raise NotFoundError("Graph 'short' not found", response=response, body=None)

    try:
        with pytest.raises(ConfigError, match=f"the LangGraph server at {url} answered: NotFoundError: Graph 'short'"):
            asyncio.run(_assistant_id(Client(), url, "short"))
    finally:
        server.shutdown()
