"""MIGRES on the real stack: Gemma 3 270M (llama.cpp), MiniLM, an in-memory corpus of real
HotpotQA paragraphs, and the shipped judges."""

from __future__ import annotations

import pytest

from conftest import DATA
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.graphs.migres import MIGRESContext, build_migres_graph
from ragraphs.tools.judges import load_default_judge
from ragraphs.tools.vectorstore import InMemoryCorpus

pytestmark = pytest.mark.slow

QUESTION = "Where is the author of Killing Pablo: The Hunt for the World's Greatest Outlaw (2001) born?"
LLM_NODES = {"leaf_extract", "main_judge", "generate_queries", "knowledge_prompt", "final_answer", "reader_answer"}


@pytest.fixture(scope="module")
def stack(minilm):
    exs = load_dataset(str(DATA / "hotpotqa.sample.jsonl"), "hotpotqa")
    # the paragraphs of four questions (40 real passages, distractors included)
    chosen = [e for e in exs if e.answers[0] in ("St. Louis, Missouri", "1974", "Manhattan", "Victoria")]
    corpus = InMemoryCorpus(pooled_passages(chosen), embeddings=minilm)
    # the shipped judges, committed with the package: a load failure fails the test
    judges = {name: load_default_judge(name, embeddings=minilm) for name in ("evaluator", "nli")}
    return corpus, judges


def test_migres_runs_on_gemma_and_stays_bounded(stack, gemma, minilm):
    corpus, judges = stack
    c = Components(llm=gemma, retriever=corpus, embeddings=minilm, judges=judges)
    g = build_migres_graph(c)
    out = g.invoke({"question": QUESTION}, context=MIGRESContext(max_iterations=2))
    nodes = [t["node"] for t in out["trace"]]
    assert 1 <= out["iterations"] <= 2 == MIGRESContext(max_iterations=2).max_iterations
    assert nodes.count("main_judge") == out["iterations"]
    assert out["final"] in ("answered", "exhausted", "guard")
    assert (out["final"] in ("exhausted", "guard")) == ("final_answer" in nodes)
    assert isinstance(out["answer"], str)
    # every LLM call is counted once, with its tokens (a structured decision says how many it took)
    assert out["llm_calls"] == sum(t.get("calls", 1) for t in out["trace"] if t["node"] in LLM_NODES and not t.get("skipped"))
    # the grammar holds Gemma to each decision's schema: nothing needed the lenient reader
    assert out["parse_failures"] == 0
    assert {t["decision_mode"] for t in out["trace"] if "decision_mode" in t} == {"grammar"}
    assert out["input_tokens"] > 200
    # the question's first hop is found by dense retrieval and handed over, sentence-filtered
    assert "Killing Pablo" in [p["title"] for p in out["passages"]]
    loop_read = {i for t in out["trace"] if t["node"] == "memory" for i in t["read"]}
    assert out["passages_fed"] >= len(loop_read) >= 1
    # the reader reads the question's own top passages first, then what the loop's own queries
    # found and kept (reader_evidence="followups"), five in all; the run's passages are exactly
    # what the loop read and what the reader read
    reader = next(t for t in out["trace"] if t["node"] in ("final_answer", "reader_answer"))
    top = [p["id"] for p in corpus.search(QUESTION, 4)]
    assert reader["evidence"][:4] == top and len(reader["evidence"]) <= 5
    followups = set(reader["evidence"][4:])
    assert all((p.get("meta") or {}).get("query") != QUESTION for p in out["passages"] if p["id"] in followups)
    assert {p["id"] for p in out["passages"]} == loop_read | set(reader["evidence"])
    assert all(len(p["text"]) > 0 for p in out["passages"])
    for u in out["useful_info"]:
        assert u["support_ids"] and u["nli"] >= 0.0


def test_real_nli_judge_drops_an_unsupported_statement(stack, minilm):
    from ragraphs.tools.judges import baseline_judge
    from ragraphs.tools.llm import FakeAnswerChat

    corpus, judges = stack
    # the real NLI judge checks the citations; the passage re-rank reads the cosine baseline, so
    # that the test does not rest on one ranking: the retrained evaluator (2026-11-26) puts an
    # unrelated "Pablo Salvador" paragraph (0.76) above "Killing Pablo" (0.53) for this question
    judges = {**judges, "evaluator": baseline_judge("evaluator", minilm)}
    leaf = (
        '{"useful_information": [{"info": "Killing Pablo is a book by Mark Bowden.", "support_passages": [0]}, '
        '{"info": "The Eiffel Tower was painted green by Napoleon in 1620.", "support_passages": [0]}]}'
    )
    # leaf, main verdict, then the reader's answer (answer_with="reader", the default)
    llm = FakeAnswerChat(responses=[leaf, '{"answer": "Mark Bowden", "missing_information": ""}', "Mark Bowden"])
    g = build_migres_graph(Components(llm=llm, retriever=corpus, embeddings=minilm, judges=judges))
    out = g.invoke({"question": "Who wrote the book Killing Pablo?"}, context=MIGRESContext(max_passages=1))
    assert out["passages"][0]["title"] == "Killing Pablo"
    infos = [u["info"] for u in out["useful_info"]]
    assert infos == ["Killing Pablo is a book by Mark Bowden."]
    leaf_trace = next(t for t in out["trace"] if t["node"] == "leaf_extract")
    assert [d[0] for d in leaf_trace["dropped_by_nli"]] == ["The Eiffel Tower was painted green by Napoleon in 1620."]
    assert out["answer"] == "Mark Bowden" and out["llm_calls"] == 3 and out["final"] == "answered"
    assert [t["node"] for t in out["trace"]][-2:] == ["main_judge", "reader_answer"]
