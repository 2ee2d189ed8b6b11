"""ERM4 on the real stack: Gemma 3 270M (llama.cpp), MiniLM, Chroma as the external corpus,
the shipped evaluator as the Knowledge Filter, the SQLite reservoir on disk."""

import subprocess
import sys

import pytest

from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.graphs.erm4 import ERM4Context, build_erm4_graph
from ragraphs.tools.reservoir import Reservoir, title_key
from ragraphs.tools.vectorstore import ChromaCorpus

pytestmark = pytest.mark.slow


def test_erm4_real_stack_fills_a_persistent_reservoir(tmp_path, data_dir, minilm, gemma):
    exs = load_dataset(str(data_dir / "2wikimultihopqa.sample.jsonl"), "2wikimultihopqa")
    corpus = ChromaCorpus(str(tmp_path / "chroma"), collection="erm4", embeddings=minilm)
    corpus.add(pooled_passages(exs))
    res_path = tmp_path / "erm4" / "reservoir.sqlite3"
    res = Reservoir(res_path, embeddings=minilm)
    # the default Knowledge Filter: the shipped evaluator (ONNX int8) at its own cut
    c = Components(llm=gemma, retriever=corpus, embeddings=minilm, extra={"reservoir": res})
    g = build_erm4_graph(c)
    ex = next(e for e in exs if "Henrik Selberg" in e.question)
    out = g.invoke({"question": ex.question}, context=ERM4Context(trigger="title"))
    filt = next(t for t in out["trace"] if t["node"] == "filter")
    assert filt["filter"] == "judge" and filt["judge"] == "evaluator" and not c.judge("evaluator").name.startswith("cosine")

    nodes = [t["node"] for t in out["trace"]]
    assert nodes[:5] == ["start", "rewrite", "memory_check", "retrieve", "filter"] and nodes[-1] == "memory_update"
    assert out["llm_calls"] == 2 and out["input_tokens"] > 200  # one rewrite call, one answer call
    assert out["rewritten_question"].strip() and 1 <= len(out["queries"]) <= 3
    # empty reservoir: every query is outside the boundary and retrieves k=5 from Chroma
    assert not out["inside"] and len(out["outside"]) == len(out["queries"])
    assert out["external_knowledge"] and all(p["source"] == "corpus" for p in out["external_knowledge"])
    ext_ids = {p["id"] for p in out["external_knowledge"]}
    assert {p["id"] for p in out["passages"]} <= ext_ids
    assert out["filtered_out"] + len(out["passages"]) == min(10, len(ext_ids))
    assert isinstance(out["answer"], str) and out["answer"].strip()
    # what the filter kept is in the reservoir, once per title
    kept_titles = {title_key(p["title"]) for p in out["passages"]}
    assert res.count() == len(kept_titles)
    assert out["backoff"] == (not kept_titles)
    # the reservoir file outlives this process: a fresh process reads the same entries
    code = (
        "from ragraphs.tools.reservoir import Reservoir\n"
        "class E:\n name = %r\n def embed_documents(self, t): raise AssertionError('no embedding needed')\n"
        "print(Reservoir(%r, embeddings=E()).count())\n" % (minilm.name, str(res_path))
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.strip().splitlines()[-1]) == len(kept_titles)
