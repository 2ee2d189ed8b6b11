"""``ragraphs eval --server URL``: every question is one run on a LangGraph server.

The questions, the scoring, the results file (``--out``, resume) and the summary are the
local runner's (:mod:`ragraphs.evaluation.runner`); only the place where the graph runs
changes. Each question is a threadless run (``runs.wait`` with no thread) of the graph
named like the method in the server's ``langgraph.json``, with the run settings of the
spec (``--k``, ``--strategy``, ``--retrieval-only``, ``--set`` ...) as the run's context.
``concurrency`` runs are in flight at once (an asyncio semaphore over the async client).

A run that fails on the server (or never reaches it) is recorded with its error, scores
zero, and is run again by the next ``--out`` resume, like a local failure. The time of a
question is the client's: queueing on the server and the network are in it.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Callable

from ..errors import ConfigError, without_userinfo
from .provenance import provenance
from .records import Recorder, open_results, read_results
from .runner import ORACLE, RunSpec, build_context, error_record, finish_run, score_example


class RemoteRunError(RuntimeError):
    """The server ran the question and reported an error."""


def _server_error(out: Any) -> str | None:
    """The error a ``runs.wait`` answer carries, if any."""
    if isinstance(out, dict) and "__error__" in out:
        err = out["__error__"]
        if isinstance(err, dict):
            return f"{err.get('error') or 'Error'}: {err.get('message') or ''}".strip()
        return str(err)
    if not isinstance(out, dict):
        return f"the server returned a {type(out).__name__}, not the run's final state"
    return None


async def _assistant_id(client, url: str, graph_id: str) -> str:
    import httpx

    shown = without_userinfo(url)  # errors name the server, not its credentials
    try:  # one quick look first: the SDK's client retries a refused connection for seconds
        async with httpx.AsyncClient(timeout=10) as probe:
            await probe.get(url.rstrip("/") + "/ok")
    except httpx.TransportError as e:
        raise ConfigError(f"cannot reach the LangGraph server at {shown}: {type(e).__name__}: "
                          f"{str(e).replace(url, shown)}") from e
    try:
        found = await client.assistants.search(graph_id=graph_id, limit=10)
    except Exception as e:  # reached: an answer of the server's (a graph it does not serve: "cannot reach" until 2026-12-03)
        answered = getattr(e, "response", None) is not None
        said = f"the LangGraph server at {shown} answered" if answered else f"cannot reach the LangGraph server at {shown}"
        raise ConfigError(f"{said}: {type(e).__name__}: {str(e).replace(url, shown)}") from e
    if not found:
        try:
            served = sorted({a["graph_id"] for a in await client.assistants.search(limit=100)})
        except Exception:
            served = []
        raise ConfigError(f"the server at {shown} serves no graph {graph_id!r} (it serves: {', '.join(served) or 'none'})")
    # the server's own assistant of the graph (created from langgraph.json) when there are several
    own = [a for a in found if (a.get("metadata") or {}).get("created_by") == "system"]
    return (own or found)[0]["assistant_id"]


async def _served_assistant(url: str, graph_id: str, timeout: float) -> str:
    """The server's assistant of ``graph_id``; a :class:`ConfigError` when the server cannot be
    reached or serves no such graph."""
    from langgraph_sdk import get_client

    return await _assistant_id(get_client(url=url, timeout=timeout), url, graph_id)


async def _run_remote(url: str, assistant: str, spec: RunSpec, context: dict, rec: Recorder, concurrency: int,
                      timeout: float) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url, timeout=timeout)
    gate = asyncio.Semaphore(concurrency)

    async def one(ex) -> None:
        async with gate:
            t0 = time.perf_counter()
            try:
                out = await client.runs.wait(None, assistant, input={"question": ex.question}, context=context,
                                             raise_error=False)
                err = _server_error(out)
                if err or not isinstance(out, dict):
                    raise RemoteRunError(str(err))
                r = score_example(ex, out, time.perf_counter() - t0, retrieval_only=spec.retrieval_only)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # recorded; the question is run again on resume
                r = error_record(ex, e, time.perf_counter() - t0, retrieval_only=spec.retrieval_only)
            rec.add(r)  # one event loop: records are written one at a time

    await asyncio.gather(*(one(ex) for ex in rec.todo))


def run_spec_remote(
    spec: RunSpec,
    examples: list,
    url: str,
    *,
    concurrency: int = 4,
    dataset: str = "",
    data: str = "",
    out_dir: str | None = None,
    resume: bool = True,
    progress: bool = True,
    timeout: float = 600.0,
    on_record: Callable[[dict], None] | None = None,
) -> tuple[dict, list[dict]]:
    """:func:`ragraphs.evaluation.runner.run_spec` with the graph on the LangGraph server at
    ``url``; returns (summary, records in file order). The summary adds ``server``,
    ``concurrency`` and ``run_s`` (the wall time of this call's questions); its
    ``corpus_passages`` is None (the corpus is the server's store, not counted from here)."""
    if spec.method == ORACLE:
        raise ConfigError("the oracle runs locally only (it reads the gold paragraphs of the data file); drop it with --server")
    if concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    ctx = build_context(spec)  # a setting the method lacks is refused before any question is sent
    origin = provenance(ctx, local=False)  # this side's versions and settings: the model and judges are the server's
    context = spec.context_values()
    # the server asked first when a question is left to run: a mistyped address wrote its folder's
    # config.json, which then refused the corrected run as "another corpus", until 2026-12-01 (a
    # finished folder's report needs no server)
    finished = read_results(os.path.join(out_dir, "results.jsonl")) if out_dir and resume else {}
    left = any(ex.id not in finished or finished[ex.id].get("error") for ex in examples)
    assistant = asyncio.run(_served_assistant(url.rstrip("/"), spec.graph_method, timeout)) if left else ""
    # the server's store is the corpus: a local run's --out is not resumed from here, nor the reverse
    results_path, done = open_results(spec, out_dir, resume=resume, dataset=dataset, data=data,
                                      corpus={"server": without_userinfo(url.rstrip("/"))}, provenance=origin)
    t0 = time.perf_counter()
    with Recorder(spec, examples, done, results_path, progress=progress, on_record=on_record) as rec:
        if rec.todo:
            asyncio.run(_run_remote(url.rstrip("/"), assistant, spec, context, rec, concurrency, timeout))
    run_s = time.perf_counter() - t0
    extra = {"server": without_userinfo(url), "concurrency": concurrency, "run_s": round(run_s, 3), "corpus_passages": None,
             "provenance": origin}
    return finish_run(spec, examples, rec.records, done, out_dir=out_dir, dataset=dataset, data=data, extra=extra)
