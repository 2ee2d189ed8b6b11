"""The foundation on the real stack: Gemma GGUF via llama-cpp, MiniLM, Chroma on disk."""

import json

import pytest

from ragraphs.components import Components
from ragraphs.datasets import load_dataset
from ragraphs.graphs.none import build_none_graph
from ragraphs.graphs.vanilla import build_vanilla_graph
from ragraphs.ingest import ingest
from ragraphs.settings import RAGContext
from ragraphs.tools.vectorstore import ChromaCorpus

pytestmark = pytest.mark.slow


def test_minilm_embeddings_are_normalised_and_semantic(minilm):
    v = minilm.encode(["The cat sat on the mat.", "A cat is sitting on a rug.", "Stock markets fell sharply."])
    assert v.shape == (3, 384)
    assert abs(float((v[0] ** 2).sum()) - 1.0) < 1e-3
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_fast_embeddings_stay_close_to_exact():
    from ragraphs.tools.embeddings import MiniLMEmbeddings

    texts = ["Paris is the capital of France.", "Gustave Eiffel was a French civil engineer."]
    fast, exact = MiniLMEmbeddings(fast=True).encode(texts), MiniLMEmbeddings(fast=False).encode(texts)
    cos = (fast * exact).sum(axis=1)
    assert cos.min() > 0.95


def test_ingest_is_idempotent_and_retrieves(tmp_path, data_dir, minilm):
    store = str(tmp_path / "chroma")
    corpus = ChromaCorpus(store, collection="hotpot", embeddings=minilm)
    r1 = ingest([str(data_dir / "hotpotqa.sample.jsonl")], corpus, progress=False)
    assert r1.added == r1.passages > 150
    r2 = ingest([str(data_dir / "hotpotqa.sample.jsonl")], corpus, progress=False)
    assert r2.added == 0 and corpus.count() == r1.passages
    # a fresh handle on the same directory sees the same data (persistent)
    again = ChromaCorpus(store, collection="hotpot", embeddings=minilm)
    assert again.count() == r1.passages
    hits = again.search("Danish chemist who introduced the concept of pH", 4)
    assert "S. P. L. Sørensen" in [h["title"] for h in hits]
    bm = again.search("Danish chemist pH", 4, mode="bm25")
    assert "S. P. L. Sørensen" in [h["title"] for h in bm]
    hy = again.search("Danish chemist concept of pH", 4, mode="hybrid")
    assert len(hy) == 4 and len({h["id"] for h in hy}) == 4


def test_vanilla_graph_answers_with_real_gemma(tmp_path, data_dir, minilm, gemma):
    exs = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    corpus = ChromaCorpus(str(tmp_path / "chroma"), collection="vanilla", embeddings=minilm)
    ingest([str(data_dir / "hotpotqa.sample.jsonl")], corpus, progress=False)
    c = Components(llm=gemma, retriever=corpus, embeddings=minilm)
    g = build_vanilla_graph(c)
    ex = next(e for e in exs if e.answers == ["Manhattan"])
    out = g.invoke({"question": ex.question}, context=RAGContext(k=4))
    assert out["llm_calls"] == 1 and out["input_tokens"] > 50
    assert isinstance(out["answer"], str) and out["answer"].strip()
    assert [t["node"] for t in out["trace"]] == ["start", "retrieve", "generate"]
    assert len(out["passages"]) == 4
    # the supporting paragraph that holds the answer was retrieved and handed over
    assert any("Manhattan" in p["text"] for p in out["passages"])


def test_none_graph_makes_one_call_and_no_retrieval(gemma):
    g = build_none_graph(Components(llm=gemma))
    out = g.invoke({"question": "What is the capital city of France?"})
    assert out["llm_calls"] == 1 and not out.get("passages")
    assert "paris" in out["answer"].lower()


def test_cli_ingest_and_ask_json(cli, data_dir):
    r = cli("ingest", data_dir / "hotpotqa.sample.jsonl", "--quiet", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["added"] == summary["passages"] > 150
    r = cli("ask", "Where is the magazine headquartered that Robert W. McElroy writes for?", "--json", "--trace")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["answer"] and out["llm_calls"] == 1 and len(out["passages"]) == 4
    assert set(out["node_times"]) == {"start", "retrieve", "generate"}
    assert "--- [" in r.stderr and "retrieve" in r.stderr  # the streamed trace
    # the models load before the run, so the first node's time is its own
    assert out["load_s"] > 0 and "models loaded before the run" in r.stderr
    # the passages DR-RAG would hand the model, whole, and no call to it
    q = "Where is the magazine headquartered that Robert W. McElroy writes for?"
    r = cli("ask", q, "--method", "dr-rag", "--retrieval-only", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["retrieval_only"] and out["answer"] == "" and out["llm_calls"] == 0 and len(out["passages"]) == 4
    r = cli("ask", q, "--method", "dr-rag", "--retrieval-only", "--quiet")
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 0 and lines[0] == "passages:" and len(lines) == 5
    assert [line.split(" (corpus")[0] for line in lines[1:]] == [f"  [{i}] {p['title']}" for i, p in enumerate(out["passages"], 1)]
    assert all(" ".join(p["text"].split()) in r.stdout for p in out["passages"])  # whole, not cut at 160
    r = cli("ask", q, "--method", "none", "--retrieval-only")
    assert r.returncode == 2 and "method 'none' answers without retrieving" in r.stderr


def test_cli_ask_dr_rag_and_migres_on_the_whole_stack(cli, data_dir):
    """DR-RAG and MIGRES as a user meets them: the default Chroma store, the embedded Gemma and
    the shipped ONNX judges (the pair classifier, the evaluator, NLI), answering."""
    r = cli("ingest", data_dir / "hotpotqa.sample.jsonl", "--quiet", "--json")
    assert r.returncode == 0, r.stderr
    q = "Where is the magazine headquartered that Robert W. McElroy writes for?"
    r = cli("ask", q, "--method", "dr-rag", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["answer"].strip() and out["llm_calls"] == 1 and 1 <= len(out["passages"]) <= 4
    select = next(t for t in out["trace"] if t["node"] == "forward_select")
    assert select["n_scored"] > 0 and not select["judge"].startswith("cosine")  # the shipped pair classifier
    r = cli("ask", q, "--method", "migres", "--set", "max_iterations=2", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    nodes = [t["node"] for t in out["trace"]]
    assert out["answer"].strip() and 1 <= nodes.count("main_judge") <= 2 and out["parse_failures"] == 0
    assert nodes[:3] == ["start", "retrieve", "filter_knowledge"]
    kept = next(t for t in out["trace"] if t["node"] == "filter_knowledge")
    assert kept["scored"] > 0 and all(isinstance(p["score"], float) for p in kept["kept"])  # the shipped evaluator's re-rank


def test_the_demo_ingests_the_sample_and_answers(cli, tmp_path):
    """``ragraphs demo`` (what ``make demo`` runs), into a store of its own."""
    store = tmp_path / "demo-store"
    r = cli("demo", "--store", store)
    assert r.returncode == 0, r.stderr
    assert "$ ragraphs ingest " in r.stdout and f"--store {store} --collection demo" in r.stdout
    assert "store now holds" in r.stdout and "passages:" in r.stdout and "llm calls: 1;" in r.stdout
    again = cli("demo", "--store", store)  # idempotent: nothing new, nothing removed
    assert again.returncode == 0 and " 0 new, " in again.stdout and "removed" not in again.stdout


def test_each_limit_is_a_view_of_one_loaded_model(gemma):
    """``make_llm("gemma", max_tokens=N)`` for a new N shares the loaded llama.cpp model, its
    contexts and its lock (each N loaded Gemma again, about 375 MB, and ran beside the others
    on every core, until 2026-11-30); each view keeps its own default limit."""
    from langchain_core.messages import HumanMessage

    from ragraphs.tools.llm import make_llm

    other = make_llm("gemma", max_tokens=5)
    assert other is not gemma and other is make_llm("gemma", max_tokens=5)
    assert other._loaded is gemma._loaded and other._lock is gemma._lock and other._pool is gemma._pool
    msgs = [HumanMessage("Write a list of three fruits:\n1.")]
    assert other.invoke(msgs).usage_metadata["output_tokens"] <= 5
    assert gemma.invoke(msgs).usage_metadata["output_tokens"] == 32
    assert other._loaded["llama"] is gemma._loaded["llama"]


def test_the_embedded_model_streams_the_text_it_returns(gemma):
    """``stream`` yields token pieces whose text is ``invoke``'s (same context, warm), with the
    token counts on the last chunk; under a grammar too."""
    from langchain_core.messages import HumanMessage

    from ragraphs.tools import structured as S

    msgs = [HumanMessage("Write a list of three fruits:\n1.")]
    gemma.invoke(msgs)  # a prompt's first call evaluates it whole; later ones reuse its prefix
    whole = gemma.invoke(msgs)
    chunks = list(gemma.stream(msgs))
    assert len([c for c in chunks if c.content]) > 3
    assert "".join(c.content for c in chunks) == whole.content
    last = chunks[-1]
    assert last.usage_metadata["input_tokens"] == whole.usage_metadata["input_tokens"]
    assert last.usage_metadata["output_tokens"] == whole.usage_metadata["output_tokens"] == 32
    assert last.response_metadata["finish_reason"] == "length"

    grammar = S.gbnf(S.Keywords)
    prompt = [HumanMessage("Keywords for: Where was the author of Killing Pablo born?\n")]
    gemma.invoke(prompt, grammar=grammar)
    fixed = gemma.invoke(prompt, grammar=grammar).content
    streamed = "".join(c.content for c in gemma.stream(prompt, grammar=grammar))
    assert streamed == fixed
    S.Keywords.model_validate_json(streamed)


_MANY_ASYNC_STREAMS = """
import asyncio, os, sys
from langchain_core.messages import HumanMessage
from ragraphs.tools.llm import make_llm

llm = make_llm("gemma", max_tokens=6)
n = min(32, (os.cpu_count() or 1) + 4) + 3  # more callers than the event loop's executor has threads
prompts = [[HumanMessage(f"Question: What is {i} plus {i}?\\nAnswer:")] for i in range(n)]
alone = [llm.invoke(p).content for p in prompts]


async def streamed(p):
    return "".join([c.content async for c in llm.astream(p)])


async def first_piece(p):
    async for c in llm.astream(p):
        return c.content  # the consumer stops early: the decoding ends, the lock is freed


async def main():
    try:
        outs = await asyncio.wait_for(asyncio.gather(*map(streamed, prompts)), 150)
        await asyncio.wait_for(first_piece(prompts[0]), 60)
        after = await asyncio.wait_for(asyncio.to_thread(llm.invoke, prompts[1]), 60)
    except asyncio.TimeoutError:
        print("HUNG", flush=True)
        os._exit(1)
    print("SAME" if outs == alone and after.content == alone[1] else f"DIFFERENT {outs} {alone}", flush=True)
    os._exit(0)


asyncio.run(main())
"""


def test_the_embedded_model_streams_to_more_async_callers_than_executor_threads():
    """Concurrent ``astream`` calls of the embedded model, more than the event loop's executor
    has threads, each get the text ``invoke`` gives (greedy), and one that stops reading early
    frees the model; they hung for good until 2026-12-03 (each chunk was read by an executor
    thread while the lock was held, and waiting callers took every thread). In a child
    process: a hang must fail the test, not the test run."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-c", _MANY_ASYNC_STREAMS], capture_output=True, text=True,
                       timeout=400, env=env)
    assert r.stdout.strip() == "SAME", (r.stdout[-2000:], r.stderr[-2000:])


def test_a_graph_streams_its_answer_through_langgraph_messages(tmp_path, data_dir, minilm, gemma):
    """LangGraph's ``stream_mode="messages"`` gets the embedded model's answer as it is
    written, tagged with the node that asked; the state's answer is cut from that text."""
    corpus = ChromaCorpus(str(tmp_path / "chroma"), collection="stream", embeddings=minilm)
    ingest([str(data_dir / "hotpotqa.sample.jsonl")], corpus, progress=False)
    g = build_vanilla_graph(Components(llm=gemma, retriever=corpus, embeddings=minilm))
    q = {"question": "Which borough of New York City is the setting of the novel?"}
    pieces, final = [], None
    for mode, chunk in g.stream(q, context=RAGContext(k=2), stream_mode=["messages", "values"]):
        if mode == "messages":
            message, meta = chunk
            assert meta["langgraph_node"] == "generate"
            pieces.append(message.content)
        else:
            final = chunk
    assert len([p for p in pieces if p]) >= 1 and final["answer"].strip()
    assert final["answer"].strip() in "".join(pieces)
