"""The evaluation runner and ``ragraphs eval`` on real questions with a scripted LLM.

These tests are fast: the LLM is the deterministic ``FakeAnswerChat`` and the embeddings a
word-hashing stand-in, so they check the harness itself (scores, recall, timing, resume,
errors, report); tests/evaluation/test_eval_e2e.py runs the real stack.
"""

import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

from fakes import HashEmbeddings
from ragraphs.cli import main
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.evaluation.corpus import OracleRetriever, PooledCorpus, _passage_text
from ragraphs.evaluation.runner import RunSpec, read_results, run_spec, summarize
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.tools.vectorstore import InMemoryCorpus


@pytest.fixture(scope="module")
def hotpot(data_dir):
    return load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")


@pytest.fixture(scope="module")
def corpus(hotpot):
    return InMemoryCorpus(pooled_passages(hotpot), embeddings=HashEmbeddings(256, 'strip'))


class _SlowChat(FakeAnswerChat):
    def _generate(self, *args, **kwargs):
        time.sleep(0.2)
        return super()._generate(*args, **kwargs)


def test_a_nodes_time_is_the_time_spent_in_it(hotpot, corpus):
    """The model's 0.2 s lands in ``generate``'s time, inside the question's wall time, not in
    ``retrieve`` nor in the overhead."""
    comps = Components(llm=_SlowChat(responses=["1974"]), retriever=corpus)
    summary, recs = run_spec(RunSpec("vanilla", k=3), hotpot[:2], comps, dataset="hotpotqa", progress=False)
    for r in recs:
        assert 0.2 <= r["node_s"]["generate"] <= r["wall_s"]
        # relations, not a speed limit: the model's sleep counted anywhere else would make it the larger
        assert r["node_s"]["retrieve"] < r["node_s"]["generate"] and r["overhead_s"] < r["node_s"]["generate"]
    assert summary["node_s_avg"]["generate"] >= 0.2


def test_vanilla_run_scores_times_and_recall(hotpot, corpus):
    llm = FakeAnswerChat(responses=["1974"])
    comps = Components(llm=llm, retriever=corpus)
    summary, recs = run_spec(RunSpec("vanilla", k=3), hotpot[:4], comps, dataset="hotpotqa", progress=False)
    assert summary["n"] == 4 and summary["errors"] == 0 and len(llm.prompts) == 4
    # only the first question's answer is 1974
    assert [r["em"] for r in recs] == [1.0, 0.0, 0.0, 0.0]
    assert summary["em"] == 0.25 and summary["acc"] == 0.25
    assert summary["docs_avg"] == 3 and summary["llm_calls_avg"] == 1
    for r in recs:
        assert r["docs"] == 3 and len(r["passages"]) == 3
        assert set(r["node_s"]) == {"start", "retrieve", "generate"}
        assert [t["node"] for t in r["trace"]] == ["start", "retrieve", "generate"]
        # recall agrees with the gold flags on the passages
        assert r["recall"] == pytest.approx(sum(p["gold"] for p in r["passages"]) / r["n_gold"])
        assert r["input_tokens"] > 0
    assert 0 <= summary["recall"] <= 1 and summary["n_with_gold"] == 4
    assert set(summary["node_s_avg"]) == {"start", "retrieve", "generate"}
    assert summary["overhead_pct"] is not None and summary["k"] == 3
    assert summary["empty_answers"] == 0


def test_empty_answers_are_counted_among_the_scored_questions(hotpot, corpus):
    """The embedded model abstains by leaving its answer empty; ``empty_answers`` counts those
    questions (since 2026-12-02), and is None where nothing was answered (retrieval only)."""
    comps = Components(llm=FakeAnswerChat(responses=["."]), retriever=corpus)  # "." cleans to an empty answer
    summary, recs = run_spec(RunSpec("vanilla", k=3), hotpot[:3], comps, progress=False)
    assert [r["prediction"] for r in recs] == ["", "", ""] and summary["empty_answers"] == 3 and summary["em"] == 0
    from ragraphs.evaluation.report import summary_table

    head, _, row = summary_table([summary]).splitlines()
    assert "| acc | empty answers | recall |" in head and row.split(" | ")[5] == "3"


def test_retrieval_only_skips_generation(hotpot, corpus):
    llm = FakeAnswerChat(responses=["x"])
    comps = Components(llm=llm, retriever=corpus)
    summary, recs = run_spec(RunSpec("vanilla", k=10, retrieval_only=True), hotpot[:3], comps, progress=False)
    assert llm.prompts == [] and summary["llm_calls_avg"] == 0
    assert summary["em"] is None and summary["f1"] is None and summary["acc"] is None
    assert summary["docs_avg"] == 10 and summary["recall"] is not None and summary["empty_answers"] is None


def test_oracle_hands_over_the_gold_paragraphs(hotpot):
    llm = FakeAnswerChat(responses=["1974"])
    comps = Components(llm=llm, retriever=OracleRetriever(hotpot[:3]))
    summary, recs = run_spec(RunSpec("oracle"), hotpot[:3], comps, progress=False)
    assert summary["recall"] == 1.0 and summary["recall_all"] == 1.0 and summary["docs_avg"] == 2
    assert "Carsten Olsen" in llm.prompts[0] and "S. P. L. Sørensen" in llm.prompts[0]

    class NoReranker:
        def score_batch(self, pairs):
            raise AssertionError("the oracle must not re-rank its gold paragraphs")

    # a re-ranker the run sets kept the best k of the gold (k=1: half the gold) until 2026-11-30
    comps = Components(llm=FakeAnswerChat(responses=["1974"]), retriever=OracleRetriever(hotpot[:3]),
                       judges={"evaluator": NoReranker()})
    spec = RunSpec("oracle", k=1, settings={"rerank": "evaluator", "link_question": True})
    summary, _ = run_spec(spec, hotpot[:3], comps, progress=False)
    assert summary["recall"] == 1.0 and summary["docs_avg"] == 2


def test_the_closed_book_and_the_oracle_run_once_whatever_the_k_list():
    from ragraphs.evaluation.runner import iter_specs

    specs = iter_specs(["none", "vanilla", "oracle"], [2, 4, 6], [None])
    assert [s.label for s in specs] == ["none-k2", "vanilla-k2", "vanilla-k4", "vanilla-k6", "oracle-k2"]


class FlakyRetriever:
    """Fails on one question, like a broken tool would."""

    def __init__(self, inner, bad_question):
        self.inner, self.bad = inner, bad_question

    def search(self, query, k, mode="dense"):
        if query == self.bad:
            raise RuntimeError("index shard unavailable")
        return self.inner.search(query, k, mode)


def test_failures_are_recorded_and_resume_skips_finished(tmp_path, hotpot, corpus):
    out = str(tmp_path / "run")
    llm = FakeAnswerChat(responses=["1974"])
    flaky = FlakyRetriever(corpus, hotpot[1].question)
    comps = Components(llm=llm, retriever=flaky)
    s1, recs = run_spec(RunSpec("vanilla"), hotpot[:3], comps, out_dir=out, progress=False)
    assert s1["errors"] == 1 and s1["n"] == 3
    bad = recs[1]
    assert "index shard unavailable" in bad["error"] and bad["em"] == 0.0 and bad["recall"] == 0.0
    assert recs[2]["error"] is None and len(llm.prompts) == 2  # the run went on
    assert len(read_results(os.path.join(out, "results.jsonl"))) == 3
    # a re-run with more questions: the 2 finished ones are skipped, the failed one retried
    comps2 = Components(llm=llm, retriever=corpus)
    s2, recs2 = run_spec(RunSpec("vanilla"), hotpot[:5], comps2, out_dir=out, progress=False)
    assert s2["resumed"] == 2 and s2["errors"] == 0 and s2["n"] == 5
    assert len(llm.prompts) == 2 + 3
    assert [r["id"] for r in recs2] == [e.id for e in hotpot[:5]]
    # other settings in the same directory are refused
    from ragraphs.errors import ConfigError

    with pytest.raises(ConfigError):
        run_spec(RunSpec("vanilla", k=7), hotpot[:2], comps2, out_dir=out, progress=False)


def test_summary_counts_subsets_and_errors():
    recs = [
        {"subset": "nq", "em": 1.0, "f1": 1.0, "acc": 1.0, "recall": 1.0, "docs": 2, "llm_calls": 1, "wall_s": 2.0, "node_s": {"g": 1.9}, "overhead_s": 0.1},
        {"subset": "trivia", "em": 0.0, "f1": 0.5, "acc": 1.0, "recall": None, "docs": 2, "llm_calls": 1, "wall_s": 1.0, "node_s": {"g": 1.0}, "overhead_s": 0.0,
         "web_error": "web search 'x' failed: TimeoutError"},
        {"subset": "trivia", "em": 0.0, "f1": 0.0, "acc": 0.0, "recall": None, "wall_s": 0.5, "error": "LLMError: down"},
    ]
    s = summarize(recs, dataset="odqa")
    assert s["n"] == 3 and s["errors"] == 1 and s["web_errors"] == 1  # answered without the web it was given
    assert s["em"] == pytest.approx(1 / 3, abs=1e-4) and s["f1"] == pytest.approx(0.5)
    assert s["recall"] == 1.0 and s["n_with_gold"] == 1
    assert s["latency_s_avg"] == 1.5  # failed questions are left out of cost and time
    assert s["overhead_pct"] == pytest.approx(100 * 0.1 / 3.0, abs=1e-3)
    assert s["by_subset"]["trivia"]["n"] == 2 and s["by_subset"]["nq"]["em"] == 1.0


def test_pooled_corpus_is_cached_on_disk(hotpot):
    emb = HashEmbeddings(256, 'strip')
    passages = pooled_passages(hotpot[:5])
    a = PooledCorpus(passages, emb, quiet=True)
    assert not a.cached and os.path.exists(a.cache_path)
    b = PooledCorpus(passages, emb, quiet=True)
    assert b.cached and np.allclose(a.vectors, b.vectors)
    q = hotpot[0].question
    assert [p["id"] for p in a.search(q, 3)] == [p["id"] for p in b.search(q, 3)]


class _CountingEmbeddings(HashEmbeddings):
    """HashEmbeddings that count the texts they embed; ``per_text`` as the int8 MiniLM declares it."""

    def __init__(self, per_text: bool):
        super().__init__(256, "strip")
        self.per_text, self.embedded = per_text, []

    def embed_documents(self, texts):
        self.embedded += list(texts)
        return super().embed_documents(texts)


def test_a_new_pool_takes_the_vectors_other_cached_corpora_hold(hotpot):
    first, more = pooled_passages(hotpot[:3]), pooled_passages(hotpot[3:5])
    emb = _CountingEmbeddings(per_text=True)
    a = PooledCorpus(first, emb, quiet=True)
    assert len(emb.embedded) == len(first) and os.path.exists(a.cache_path[: -len(".npy")] + ".keys.npy")
    # another pool (new passages, the old ones in another order): only the new ones are embedded
    emb.embedded = []
    pool = more + first[::-1]
    b = PooledCorpus(pool, emb, quiet=True)
    assert not b.cached and len(emb.embedded) == len(more)
    by_id = dict(zip([p["id"] for p in first], a.vectors))
    assert all(np.array_equal(b.vectors[i], by_id[p["id"]]) for i, p in enumerate(pool) if p["id"] in by_id)
    fresh = HashEmbeddings(256, "strip").embed_documents([_passage_text(p) for p in pool])
    assert np.allclose(b.vectors, np.asarray(fresh, np.float32))  # the same vectors as embedding all of them
    # an embedder whose vectors depend on their batch reuses nothing across corpora
    batched = _CountingEmbeddings(per_text=False)
    other = first + more[::-1]  # an order no corpus was cached in
    c = PooledCorpus(other, batched, quiet=True)
    assert not c.cached and len(batched.embedded) == len(other)
    # a corpus cached before the digests were kept gets them the next time it is loaded
    os.remove(a.cache_path[: -len(".npy")] + ".keys.npy")
    assert PooledCorpus(first, emb, quiet=True).cached and os.path.exists(a.cache_path[: -len(".npy")] + ".keys.npy")


# ---------------------------------------------------------------- the command
def _last_json(capsys):
    out = capsys.readouterr().out.strip().splitlines()
    return json.loads(out[-1])


def test_cli_eval_json_report_and_resume(tmp_path, data_dir, capsys):
    out = str(tmp_path / "out")
    argv = ["eval", "--method", "none", "--oracle", "--dataset", "musique", "--data", str(data_dir / "musique.sample.jsonl"),
            "--limit", "3", "--llm", "fake:Pittsburgh Pirates", "--out", out, "--json", "--quiet"]
    assert main(argv) == 0
    res = _last_json(capsys)
    assert res["dataset"] == "musique" and res["n"] == 3
    runs = {r["method"]: r for r in res["runs"]}
    assert set(runs) == {"none", "oracle"}
    for r in runs.values():
        for key in ("method", "dataset", "n", "em", "f1", "acc", "recall", "docs_avg", "llm_calls_avg", "latency_s_avg"):
            assert key in r
        assert r["em"] == pytest.approx(1 / 3, abs=1e-4)  # question 1's gold is Pittsburgh Pirates
    assert runs["oracle"]["recall"] == 1.0 and runs["none"]["recall"] == 0.0
    report = Path(os.path.join(out, "report.md")).read_text(encoding="utf-8")
    assert runs["none"]["label"] == "none-fake_Pittsburgh_Pirates"  # the LLM is part of the run's name
    assert all(f"| {r['label']} |" in report for r in runs.values()) and "plots/answers.png" in report
    for png in ("answers.png", "recall.png", "node_times.png"):
        with open(os.path.join(out, "plots", png), "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    lines = Path(os.path.join(out, "runs", "musique", runs["none"]["label"], "results.jsonl")).read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[0])
    assert {"question", "gold", "prediction", "passages", "trace", "node_s", "overhead_s"} <= set(rec)
    # the same command again answers nothing new
    assert main(argv) == 0
    again = _last_json(capsys)
    assert all(r["resumed"] == 3 for r in again["runs"])
    results = Path(os.path.join(out, "runs", "musique", runs["none"]["label"], "results.jsonl"))
    assert len(results.read_text(encoding="utf-8").splitlines()) == 3
    # a record cut by a crash (no newline at the end): the run goes on, its next record on a line
    # of its own, and a later resume reads every finished question (one was glued and lost)
    with results.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "cut-by-a-crash", "predic')
    longer = [a if a != "3" else "5" for a in argv]
    assert main(longer) == 0
    assert {r["method"]: r["resumed"] for r in _last_json(capsys)["runs"]}["none"] == 3
    assert main(longer) == 0
    assert all(r["resumed"] == 5 for r in _last_json(capsys)["runs"])


def test_cli_single_method_prints_one_summary(tmp_path, data_dir, capsys):
    argv = ["eval", "--method", "oracle", "--dataset", "popqa", "--data", str(data_dir / "popqa.sample.jsonl"),
            "--limit", "2", "--llm", "fake:Georgetown", "--json", "--quiet"]
    assert main(argv) == 0
    res = _last_json(capsys)
    assert res["method"] == "oracle" and res["n"] == 2 and res["acc"] == 0.5 and res["docs_avg"] == 2


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--method", "no-such-method"], "unknown method"),
        (["--method", "vanilla", "--strategy", "qdc"], "has no setting 'strategy'"),
        (["--method", "none", "--set", "nonexistent=3"], "has no setting 'nonexistent'"),
        (["--method", "none", "--set", "novalue"], "--set expects KEY=VALUE"),
        (["--method", "none", "--k", "two"], "--k expects integers"),
        # an empty item: refused (dropped, or no run at all for `,`, until 2026-12-03)
        (["--method", "vanilla", "--k", "2,,4"], "--k has an empty item in '2,,4' (a comma too many?)"),
        (["--method", "vanilla", "--k", ","], "--k has an empty item"),
        (["--compare", "none,,vanilla"], "--compare has an empty item"),
        (["--method", "none,"], "--method has an empty item"),
        (["--method", "dr-rag", "--strategy", "qdc,"], "--strategy has an empty item"),
        (["--method", "none", "--limit", "0"], "--limit must be at least 1"),
    ],
)
def test_cli_eval_user_errors_are_one_line(data_dir, capsys, extra, message):
    rc = main(["eval", "--data", str(data_dir / "hotpotqa.sample.jsonl"), "--llm", "fake:x", "--quiet"] + extra)
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_cli_eval_missing_data_file(tmp_path, capsys):
    rc = main(["eval", "--method", "none", "--data", str(tmp_path / "nope.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2 and "no such file" in err


def test_cli_eval_pools_files_of_other_formats(data_dir, capsys):
    """--pool reads each file in its own format: a MuSiQue run can pool HotpotQA and 2Wiki
    paragraphs as distractors, and the summary counts the corpus it searched."""
    musique = load_dataset(str(data_dir / "musique.sample.jsonl"))
    others = [load_dataset(str(data_dir / f)) for f in ("hotpotqa.sample.jsonl", "2wikimultihopqa.sample.jsonl")]
    argv = ["eval", "--method", "vanilla", "--retrieval-only", "--dataset", "musique", "--limit", "3",
            "--data", str(data_dir / "musique.sample.jsonl"), "--json", "--quiet"]
    assert main(argv) == 0
    alone = _last_json(capsys)
    assert main(argv + ["--pool", str(data_dir / "hotpotqa.sample.jsonl"), "--pool", str(data_dir / "2wikimultihopqa.sample.jsonl")]) == 0
    pooled = _last_json(capsys)
    assert alone["corpus_passages"] == len(pooled_passages(musique))
    assert pooled["corpus_passages"] == len(pooled_passages(musique + others[0] + others[1])) > alone["corpus_passages"] + 200
    assert pooled["n"] == alone["n"] == 3 and pooled["dataset"] == "musique"  # the questions still come from --data
    assert main(argv + ["--pool", str(data_dir / "nope.jsonl")]) == 2
    assert "--pool: no such file" in capsys.readouterr().err


def test_set_skip_generation_is_a_retrieval_only_run_in_the_same_folder(tmp_path, data_dir, capsys):
    """``--set skip_generation=true --set k=2`` is ``--retrieval-only --k 2``: no answer scores
    (EM, F1 and accuracy read 0 for answers never written until 2026-12-02), the same label,
    so the second run resumes the first's folder and answers nothing again."""
    out = str(tmp_path / "out")
    common = ["eval", "--method", "vanilla", "--dataset", "hotpotqa", "--data", str(data_dir / "hotpotqa.sample.jsonl"),
              "--limit", "2", "--out", out, "--json", "--quiet"]
    assert main(common + ["--set", "skip_generation=true", "--set", "k=2"]) == 0
    by_set = _last_json(capsys)
    assert by_set["label"] == "vanilla-k2-retrieval" and by_set["retrieval_only"] is True and by_set["k"] == 2
    assert by_set["em"] is None and by_set["f1"] is None and by_set["acc"] is None and by_set["n"] == 2
    assert main(common + ["--retrieval-only", "--k", "2"]) == 0
    again = _last_json(capsys)
    assert again["label"] == by_set["label"] and again["resumed"] == 2 and again["recall"] == by_set["recall"]
    assert os.listdir(os.path.join(out, "runs", "hotpotqa")) == ["vanilla-k2-retrieval"]


def test_erm4_runs_get_a_memory_of_their_own(tmp_path, hotpot, corpus, monkeypatch):
    """ERM4 remembers across questions: each evaluation run gets its own reservoir (beside its
    results, or a temporary one), so no score depends on earlier runs or the user's reservoir."""
    import tempfile

    from fakes import ConstJudge
    from ragraphs.tools.reservoir import default_reservoir_path, open_reservoir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    emb = HashEmbeddings(256, "strip")
    comps = Components(llm=FakeAnswerChat(responses=["1974"]), retriever=corpus, embeddings=emb,
                       judges={"evaluator": ConstJudge(0.9), "nli": ConstJudge(0.9)})
    spec = RunSpec("erm4", k=2)
    out = tmp_path / "out"
    summary, _ = run_spec(spec, hotpot[:3], comps, dataset="hotpotqa", out_dir=str(out), progress=False)
    assert summary["n"] == 3 and summary["errors"] == 0
    three = open_reservoir(str(out / "reservoir.sqlite3"), embeddings=emb).count()
    assert three > 0  # what the run stored lies beside its results
    assert not os.path.exists(default_reservoir_path())  # the user's reservoir was never opened
    # --fresh starts from an empty memory: one question stores less than three did
    run_spec(spec, hotpot[:1], comps, dataset="hotpotqa", out_dir=str(out), resume=False, progress=False)
    one = open_reservoir(str(out / "reservoir.sqlite3"), embeddings=emb).count()
    assert 0 < one < three
    # without an output directory: a temporary reservoir, removed after the run
    summary, _ = run_spec(spec, hotpot[:2], comps, dataset="hotpotqa", progress=False)
    assert summary["errors"] == 0 and os.listdir(tmp_path / "tmp") == []
    assert not os.path.exists(default_reservoir_path())
    # a reservoir named in the settings is the one used
    mine = tmp_path / "mine.sqlite3"
    run_spec(RunSpec("erm4", k=2, settings={"reservoir_path": str(mine)}), hotpot[:1], comps, progress=False)
    assert open_reservoir(str(mine), embeddings=emb).count() == one
    # reservoir=store: the run's own in-memory LangGraph store, indexed over titles in the run's
    # embeddings (256-d here): the same memory as a file gives, question by question
    def memory(records):
        return [[(p["title"], p["source"]) for p in r["passages"]] for r in records]

    wide = {"tau": -1.0}  # every stored title matches: a later question is answered from memory
    _, with_file = run_spec(RunSpec("erm4", k=2, settings=wide), hotpot[:3], comps, progress=False)
    store_run, with_store = run_spec(RunSpec("erm4", k=2, settings={**wide, "reservoir": "store"}), hotpot[:3], comps,
                                     progress=False)
    assert store_run["errors"] == 0 and os.listdir(tmp_path / "tmp") == []  # no file of its own
    assert memory(with_store) == memory(with_file)
    assert any(src == "memory" for r in memory(with_store) for _, src in r)  # what earlier questions stored


def test_records_say_how_each_passage_was_picked(hotpot, corpus):
    from fakes import ConstJudge

    comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=corpus,
                       judges={"pair": ConstJudge(0.9), "evaluator": ConstJudge(0.5), "nli": ConstJudge(0.5)})
    _, recs = run_spec(RunSpec("dr-rag", k=4, strategy="cfs", retrieval_only=True), hotpot[:2], comps, progress=False)
    for r in recs:
        metas = [p["meta"] for p in r["passages"]]
        assert [m["stage"] for m in metas][:2] == [1, 1] and len(metas) == 4
        added = [m for m in metas if m["stage"] == 2]
        assert added and all(m["pair_score"] == pytest.approx(0.9) and m["via"] for m in added)
        json.dumps(r)  # the record stays JSON


def test_a_resume_over_another_corpus_is_refused(tmp_path, data_dir, capsys):
    """The questions' records hold what they retrieved: another --pool (or --corpus, --web) under
    the same --out would mix two corpora in one table (it did, silently)."""
    out = str(tmp_path / "out")
    data = str(data_dir / "hotpotqa.sample.jsonl")
    argv = ["eval", "--method", "vanilla", "--data", data, "--limit", "2", "--llm", "fake:yes", "--out", out, "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(argv + ["--pool", str(data_dir / "musique.sample.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "holds results retrieved from another corpus (the data file, now {'pool': [" in err
    assert main(argv) == 0  # the same corpus: resumes
    # a damaged config.json (a crash while it was written): the results beside it are refused, not kept
    # unchecked (until 2026-12-01 every check was skipped, and the pooled run resumed over them)
    (cfg,) = list((tmp_path / "out").rglob("config.json"))
    cfg.write_text(cfg.read_text()[:200], encoding="utf-8")
    capsys.readouterr()
    assert main(argv + ["--pool", str(data_dir / "musique.sample.jsonl")]) == 2
    assert "cannot be read (damaged or not a JSON object)" in capsys.readouterr().err
    assert main(argv + ["--fresh"]) == 0 and json.loads(cfg.read_text())["spec"]["method"] == "vanilla"
    assert not list((tmp_path / "out").rglob("config.json.tmp"))


def test_a_run_of_another_openai_endpoint_does_not_resume_over_the_first(tmp_path, monkeypatch):
    """Two servers may serve one model name: the results folder records the endpoint (without
    credentials) and refuses to mix their answers (review of 2026-11-30)."""
    import json as _json

    from ragraphs.errors import ConfigError
    from ragraphs.evaluation.records import open_results

    out = str(tmp_path / "run")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:pw@127.0.0.1:8001/v1")
    open_results(RunSpec("none", llm="openai:m"), out, resume=True)
    assert _json.load(open(os.path.join(out, "config.json")))["llm_endpoint"] == "http://127.0.0.1:8001/v1"
    open_results(RunSpec("none", llm="openai:m"), out, resume=True)  # the same endpoint resumes
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8002/v1")
    with pytest.raises(ConfigError, match="holds answers of http://127.0.0.1:8001/v1"):
        open_results(RunSpec("none", llm="openai:m"), out, resume=True)
    open_results(RunSpec("none", llm="openai:m"), out, resume=False)  # --fresh starts over


def test_a_crash_while_config_json_is_written_leaves_the_old_one_whole(tmp_path, monkeypatch):
    """``config.json`` is written to a side file and moved over the old one: a crash half way
    (here ``json.dump`` failing after its first bytes) leaves the previous one as it was."""
    import json as _json

    from ragraphs.evaluation import records

    out = str(tmp_path / "run")
    records.open_results(RunSpec("none", llm="fake:x"), out, resume=True)
    before = open(os.path.join(out, "config.json"), encoding="utf-8").read()

    def half(obj, fh, **kw):
        fh.write('{"spec": {"meth')
        raise OSError("disk full")

    monkeypatch.setattr(records.json, "dump", half)
    with pytest.raises(OSError, match="disk full"):
        records.open_results(RunSpec("none", llm="fake:x"), out, resume=False)
    monkeypatch.undo()
    after = open(os.path.join(out, "config.json"), encoding="utf-8").read()
    assert after == before and _json.loads(after)["spec"]["method"] == "none"


def test_a_server_url_with_credentials_is_recorded_without_them(tmp_path, capsys, monkeypatch, data_dir):
    """``eval --server http://user:pw@host`` : config.json, the summaries and the error line
    name the server without its ``user:password@`` (until 2026-11-30 they held the URL as
    given), as ``llm_endpoint`` records ``OPENAI_BASE_URL``."""
    from conftest import free_port
    from ragraphs.evaluation import remote
    from ragraphs.evaluation.runner import score_example

    port = free_port()
    url = f"http://ops:s3cretpw@127.0.0.1:{port}"
    base = ["eval", "--method", "none", "--data", str(data_dir / "hotpotqa.sample.jsonl"), "--limit", "2",
            "--quiet", "--server", url]
    rc = main(base + ["--out", str(tmp_path / "run")])  # nothing listens there
    err = capsys.readouterr().err
    assert rc == 2 and f"cannot reach the LangGraph server at http://127.0.0.1:{port}" in err and "s3cretpw" not in err
    # nothing written: the corrected run in the same folder is not refused as "another corpus"
    # (the unreachable server's config.json refused it until 2026-12-01)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]

    async def served(url, graph_id, timeout):
        return "assistant-1"

    async def answered(url, assistant, spec, context, rec, concurrency, timeout):  # the server's part, not its network
        for ex in rec.todo:
            state = {"question": ex.question, "answer": "yes", "passages": [], "llm_calls": 1, "trace": []}
            rec.add(score_example(ex, state, 0.0, retrieval_only=spec.retrieval_only))

    monkeypatch.setattr(remote, "_served_assistant", served)
    monkeypatch.setattr(remote, "_run_remote", answered)
    rc = main(base + ["--out", str(tmp_path / "run"), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert json.loads(out)["server"] == f"http://127.0.0.1:{port}"  # one run: its summary
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "config.json" for p in files) and any(p.name == "summary.json" for p in files)
    assert not [str(p) for p in files if "s3cretpw" in p.read_text(errors="replace")]
    # a finished folder's report again: the server is not asked (it may be down by then)

    async def down(url, graph_id, timeout):
        raise AssertionError("a finished run asked the server")

    monkeypatch.setattr(remote, "_served_assistant", down)
    assert main(base + ["--out", str(tmp_path / "run"), "--json"]) == 0


def test_the_model_a_run_records_is_the_one_its_context_holds(tmp_path, data_dir, capsys, monkeypatch):
    """``--set llm=...`` is the run's model: the summary's ``llm`` said ``gemma`` and no
    endpoint was recorded (a resume against another server was let through); ``RAGRAPHS_LLM``,
    which a run does not read, was recorded as the endpoint of a run of Gemma, and a later
    resume refused. Both until 2026-11-30."""
    from ragraphs.errors import ConfigError
    from ragraphs.evaluation.records import open_results

    out = str(tmp_path / "out")
    data = str(data_dir / "hotpotqa.sample.jsonl")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8001/v1")
    monkeypatch.setenv("RAGRAPHS_LLM", "openai:m")
    argv = ["eval", "--method", "none", "--data", data, "--limit", "1", "--set", "llm=fake:x", "--out", out, "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["llm"] == "fake:x"
    cfg = json.load(open(os.path.join(out, "runs", "hotpotqa", RunSpec("none", settings={"llm": "fake:x"}).label,
                                      "config.json")))
    assert "llm_endpoint" not in cfg  # RAGRAPHS_LLM is not the run's model
    run = str(tmp_path / "run")
    open_results(RunSpec("none", settings={"llm": "openai:m"}), run, resume=True)
    assert json.load(open(os.path.join(run, "config.json")))["llm_endpoint"] == "http://127.0.0.1:8001/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8002/v1")
    with pytest.raises(ConfigError, match="holds answers of http://127.0.0.1:8001/v1"):
        open_results(RunSpec("none", settings={"llm": "openai:m"}), run, resume=True)


def test_a_folder_the_old_code_wrote_under_ragraphs_llm_resumes(tmp_path, monkeypatch):
    """Before 2026-11-30 a run of Gemma recorded ``RAGRAPHS_LLM``'s endpoint when that was set
    to an ``openai:`` model; those answers are Gemma's, so such a folder resumes (it was
    refused: "holds answers of https://api.openai.com/v1, not none"). An ``openai`` spec's
    endpoint is still guarded."""
    from dataclasses import asdict

    from ragraphs.errors import ConfigError
    from ragraphs.evaluation.records import open_results

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("RAGRAPHS_LLM", raising=False)
    for spec in (RunSpec("vanilla"), RunSpec("vanilla", llm="gemma", settings={"k": 3})):
        run = tmp_path / spec.label
        run.mkdir()
        old = {"label": spec.label, "spec": asdict(spec), "dataset": "d", "data": "", "corpus": {},
               "llm_endpoint": "https://api.openai.com/v1"}  # as the old code wrote it
        (run / "config.json").write_text(json.dumps(old), encoding="utf-8")
        (run / "results.jsonl").write_text(json.dumps({"id": "q1", "answer": "a"}) + "\n", encoding="utf-8")
        assert list(open_results(spec, str(run), resume=True, dataset="d")[1]) == ["q1"]
        assert "llm_endpoint" not in json.loads((run / "config.json").read_text(encoding="utf-8"))
    for spec in (RunSpec("vanilla", llm="openai:m"), RunSpec("vanilla", settings={"llm": "OpenAI-completion:m"})):
        run = tmp_path / spec.label
        run.mkdir()
        old = {"label": spec.label, "spec": asdict(spec), "dataset": "d", "data": "", "corpus": {},
               "llm_endpoint": "http://127.0.0.1:8001/v1"}
        (run / "config.json").write_text(json.dumps(old), encoding="utf-8")
        with pytest.raises(ConfigError, match="holds answers of http://127.0.0.1:8001/v1, not https://api.openai.com/v1"):
            open_results(spec, str(run), resume=True, dataset="d")


def test_a_resume_under_another_web_search_or_judges_is_refused(tmp_path, hotpot, corpus, data_dir, monkeypatch):
    """``RAGRAPHS_WEB``, ``RAGRAPHS_RERANKER`` and ``RAGRAPHS_JUDGES_DIR`` choose what a run
    searches and judges with: ``config.json`` records them, and a resume under others is
    refused as one against another LLM endpoint is (until 2026-11-30 the answers were mixed
    without a word). A folder written before they were recorded resumes as before."""
    import shutil

    from fakes import ConstJudge
    from ragraphs.errors import ConfigError
    from ragraphs.evaluation.records import build_context, open_results, run_sources

    snapshot = str(data_dir / "popqa.web.sample.jsonl")
    other = str(tmp_path / "other.web.jsonl")
    shutil.copy(snapshot, other)
    comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=corpus,
                       judges={"evaluator": ConstJudge(-0.9)})
    out = str(tmp_path / "run")
    spec = RunSpec("crag", k=2)
    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR", raising=False)
    monkeypatch.setenv("RAGRAPHS_WEB", f"offline:{snapshot}")
    s, _ = run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)
    assert s["errors"] == 0
    cfg = json.load(open(os.path.join(out, "config.json")))
    assert cfg["web_search"] == f"offline:{os.path.abspath(snapshot)}" and cfg["judges"] == {"evaluator": "given: ConstJudge"}
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["resumed"] == 1
    monkeypatch.setenv("RAGRAPHS_WEB", f"offline:{other}")
    with pytest.raises(ConfigError, match=f"holds answers with the web search offline:{os.path.abspath(snapshot)}, "
                                          f"not offline:{os.path.abspath(other)}; use another --out or --fresh"):
        run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)
    monkeypatch.setenv("RAGRAPHS_WEB", "none")
    with pytest.raises(ConfigError, match="not none;"):
        run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)
    monkeypatch.setenv("RAGRAPHS_WEB", f"offline:{snapshot}")
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", str(tmp_path))
    # the evaluator is given: the variable is not read; a run of the shipped judges reads it
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["resumed"] == 1
    shipped = str(tmp_path / "shipped")
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR")
    open_results(spec, shipped, resume=True, sources=run_sources(spec, build_context(spec), Components()))
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match=f"holds answers of the judges the shipped ones, not RAGRAPHS_JUDGES_DIR={tmp_path}"):
        open_results(spec, shipped, resume=True, sources=run_sources(spec, build_context(spec), Components()))
    # a folder written before these were recorded resumes under any of them
    cfg.pop("web_search"), cfg.pop("judges"), cfg.pop("judge_sha256")
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"))
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["resumed"] == 1


def test_the_judge_variables_are_recorded_only_where_the_run_loads_a_judge(tmp_path, hotpot, corpus, monkeypatch):
    """Vanilla without a re-ranker loads no judge, so a resume under another ``RAGRAPHS_RERANKER``
    goes on (it was refused from 2026-11-30, when both variables were recorded for every
    method); CRAG with an evaluator given to the components does not read the variable either
    and goes on (refused until 2026-11-30); CRAG with the default evaluator is refused."""
    from fakes import ConstJudge
    from ragraphs.errors import ConfigError
    from ragraphs.evaluation.records import build_context, judge_roles, open_results, run_sources

    comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=corpus,
                       judges={"evaluator": ConstJudge(0.9)})
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR", raising=False)
    monkeypatch.setenv("RAGRAPHS_WEB", "none")
    monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/a")
    for spec in (RunSpec("vanilla", k=2), RunSpec("crag", k=2)):
        out = str(tmp_path / spec.label)
        monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/a")
        assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["errors"] == 0
        monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/b")
        assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["resumed"] == 1
    crag, run = RunSpec("crag", k=2), str(tmp_path / "default-evaluator")  # the evaluator from the variable
    monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/a")
    open_results(crag, run, resume=True, sources=run_sources(crag, build_context(crag), Components()))
    monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/b")
    with pytest.raises(ConfigError, match="holds answers of the judges RAGRAPHS_RERANKER=cross-encoder/a, "
                                          "not RAGRAPHS_RERANKER=cross-encoder/b;"):
        open_results(crag, run, resume=True, sources=run_sources(crag, build_context(crag), Components()))
    roles = {(m, tuple(sorted(v.items()))): judge_roles(m, build_context(RunSpec(m, settings=v))) for m, v in (
        ("vanilla", {}), ("vanilla", {"rerank": "evaluator"}), ("vanilla", {"rerank": "some/model"}),
        ("crag", {}), ("dr-rag", {}), ("dr-rag", {"strategy": "qdc"}), ("dr-rag", {"strategy": "sm", "rerank": "evaluator"}),
        ("erm4", {}), ("erm4", {"filter": "none"}), ("erm4", {"filter": "none", "trigger": "evaluator"}),
        ("erm4", {"filter_judge": "nli"}), ("migres", {}))}
    assert list(roles.values()) == [set(), {"evaluator"}, set(), {"evaluator"}, {"pair"}, set(), {"evaluator"},
                                    {"evaluator"}, set(), {"evaluator"}, {"nli"}, {"evaluator", "nli"}]
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", str(tmp_path))
    ctx = build_context(RunSpec("dr-rag"))  # the pair judge: RAGRAPHS_JUDGES_DIR only
    assert run_sources(RunSpec("dr-rag"), ctx, comps)["judges"] == {"RAGRAPHS_JUDGES_DIR": str(tmp_path)}
    assert run_sources(RunSpec("erm4", settings={"filter": "none"}), build_context(RunSpec("erm4", settings={"filter": "none"})),
                       comps)["judges"] == {}
    # the judge files' sha256 likewise: none for vanilla; for DR-RAG the pair judge's (shipped), not the evaluator's
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR")
    assert run_sources(RunSpec("vanilla"), build_context(RunSpec("vanilla")), comps)["judge_sha256"] == {}
    assert set(run_sources(RunSpec("dr-rag"), ctx, comps)["judge_sha256"]) == {"shipped"}
    assert set(run_sources(RunSpec("crag"), build_context(RunSpec("crag")), comps)["judge_sha256"]) == set()  # the evaluator given: an object


def test_a_method_added_to_methods_records_its_judges_or_every_judge(tmp_path, hotpot, corpus, monkeypatch):
    """A method a contributor registers in METHODS: with a ``judge_roles`` classmethod on its
    context class, those roles (and the evaluator for ``rerank=evaluator``); without one, every
    judge, so a resume under another ``RAGRAPHS_JUDGES_DIR`` is refused. Until 2026-11-30 such a
    method recorded no judge, and the resume went on, mixing two judges' answers."""
    from dataclasses import dataclass

    import ragraphs.settings
    from ragraphs import graphs
    from ragraphs.errors import ConfigError
    from ragraphs.evaluation.records import build_context, judge_roles, run_sources

    @dataclass(kw_only=True)
    class NliOnlyContext(ragraphs.settings.RAGContext):
        @classmethod
        def judge_roles(cls, ctx):
            return {"nli"}

    monkeypatch.setattr(ragraphs.settings, "NliOnlyContext", NliOnlyContext, raising=False)
    monkeypatch.setitem(graphs.METHODS, "nli-only", ("ragraphs.graphs.vanilla", "build_vanilla_graph",
                                                     "ragraphs.settings:NliOnlyContext"))
    monkeypatch.setitem(graphs.METHODS, "plain-rag", ("ragraphs.graphs.vanilla", "build_vanilla_graph",
                                                      "ragraphs.settings:RAGContext"))
    roles = [judge_roles(m, build_context(RunSpec(m, settings=v)))
             for m, v in (("nli-only", {}), ("nli-only", {"rerank": "evaluator"}), ("plain-rag", {}))]
    assert roles == [{"nli"}, {"evaluator", "nli"}, {"evaluator", "pair", "nli"}]
    assert judge_roles("vanilla", build_context(RunSpec("vanilla"))) == set()  # the built-ins' table stands

    comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=corpus)
    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    spec, out = RunSpec("plain-rag", k=2), str(tmp_path / "plain-rag")
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", str(tmp_path / "a"))
    assert run_sources(spec, build_context(spec), comps)["judges"] == {"RAGRAPHS_JUDGES_DIR": str(tmp_path / "a")}
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["errors"] == 0
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", str(tmp_path / "b"))
    with pytest.raises(ConfigError, match="holds answers of the judges RAGRAPHS_JUDGES_DIR="):
        run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)


def test_a_blank_web_setting_reads_ragraphs_web(monkeypatch, data_dir):
    """A ``web`` setting of spaces is "use ``RAGRAPHS_WEB``", as the settings check and
    ``make_web_search`` read it; the graphs ran with no web search until 2026-11-30."""
    from ragraphs.nodes.web import web_spec
    from ragraphs.settings import CRAGContext

    snapshot = f"offline:{data_dir / 'popqa.web.sample.jsonl'}"
    monkeypatch.setenv("RAGRAPHS_WEB", snapshot)
    assert web_spec(CRAGContext(web="  ")) == snapshot and web_spec(CRAGContext()) == snapshot
    assert web_spec(CRAGContext(web="none")) == ""


def test_eval_runs_when_its_vector_cache_cannot_be_written(data_dir, tmp_path, monkeypatch, capsys, minilm):
    """``$RAGRAPHS_HOME`` a file (or read-only): the pooled corpus's vector cache is not written
    and the run goes on, its results as without the cache. **Was a bug** (until 2026-12-03): a
    traceback ending ``NotADirectoryError: .../eval-cache``, exit 1 (``calibrate-crag`` too)."""
    home = tmp_path / "home-is-a-file"
    home.write_text("x")
    monkeypatch.setenv("RAGRAPHS_HOME", str(home))
    rc = main(["eval", "--data", str(data_dir / "hotpotqa.sample.jsonl"), "--limit", "3", "--retrieval-only", "--quiet",
               "--out", str(tmp_path / "out")])
    cap = capsys.readouterr()
    assert rc == 0 and "Traceback" not in cap.err and (tmp_path / "out" / "report.md").exists()
    assert home.read_text() == "x"


def test_a_value_named_twice_in_a_comma_list_runs_once(data_dir, capsys):
    """``--k 4,04,4`` (or ``--strategy cfs,cfs``) ran the same configuration again and printed it
    twice until 2026-12-03; like ``--compare``'s methods, each is run once, in the order given."""
    argv = ["eval", "--data", str(data_dir / "hotpotqa.sample.jsonl"), "--limit", "1", "--retrieval-only", "--quiet",
            "--json"]
    assert main(argv + ["--k", "4,04,2,4"]) == 0
    assert [r["k"] for r in _last_json(capsys)["runs"]] == [4, 2]
    assert main(argv + ["--method", "dr-rag", "--strategy", "cfs,sm,cfs", "--k", "2"]) == 0
    assert [r["label"].split("-")[2] for r in _last_json(capsys)["runs"]] == ["cfs", "sm"]


def test_a_later_command_into_the_same_out_leaves_no_picture_of_the_earlier_one(data_dir, tmp_path, capsys):
    """``report.md`` covers the last command's runs; a ``plots/paired.png`` of an earlier
    ``--compare`` stayed beside it, named by no report, until 2026-12-03. Each run's own folder stays."""
    out = tmp_path / "out"
    argv = ["eval", "--data", str(data_dir / "popqa.sample.jsonl"), "--dataset", "popqa", "--limit", "2",
            "--llm", "fake:x", "--quiet", "--out", str(out)]
    assert main(argv + ["--compare", "none,vanilla"]) == 0
    assert (out / "plots" / "paired.png").exists()
    assert main(argv + ["--method", "vanilla", "--k", "3"]) == 0
    capsys.readouterr()
    report = (out / "report.md").read_text()
    assert not (out / "plots" / "paired.png").exists() and "paired.png" not in report
    lines = report.splitlines()
    head = next(line for line in lines if line.startswith("| run |")).split(" | ")
    row = next(line for line in lines if line.startswith("| vanilla-k3-fake_x |")).split(" | ")
    tokens = row[head.index("input tokens")]
    assert tokens.isdigit(), tokens  # a mean of whole tokens, not 514.30
    assert sorted(p.name for p in (out / "runs" / "popqa").iterdir()) == ["none-fake_x", "vanilla-fake_x",
                                                                           "vanilla-k3-fake_x"]


def test_a_judge_that_cannot_load_is_refused_before_the_run(tmp_path, data_dir, capsys, monkeypatch):
    """``eval`` of CRAG with ``RAGRAPHS_JUDGES_DIR`` naming nothing (or a ``rerank`` folder that is
    not there): one line, exit 2, nothing written; until 2026-12-03 every question failed on it
    and the corrected command into the same ``--out`` was refused ("holds answers of the judges ...")."""
    data = str(data_dir / "hotpotqa.sample.jsonl")
    out = tmp_path / "out"
    argv = ["eval", "--method", "crag", "--retrieval-only", "--data", data, "--limit", "2", "--quiet", "--out", str(out)]
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", str(tmp_path / "nonexist"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"ragraphs: error: judge model not found: {tmp_path / 'nonexist'} (from RAGRAPHS_JUDGES_DIR)"]
    assert not list(out.rglob("results.jsonl"))
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR")
    assert main(["eval", "--method", "dr-rag", "--retrieval-only", "--data", data, "--limit", "2", "--quiet",
                 "--out", str(tmp_path / "o2"), "--set", f"rerank={tmp_path / 'nonexist'}"]) == 2
    assert "run setting 'rerank': judge model not found" in capsys.readouterr().err
    assert main(argv) == 0
    recs = [json.loads(line) for line in next(out.rglob("results.jsonl")).read_text().splitlines()]
    assert len(recs) == 2 and not any(r.get("error") for r in recs)


def _rows(data_dir, n: int) -> list[dict]:
    with open(data_dir / "hotpotqa.sample.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line, _ in zip(fh, range(n))]


def test_repeated_ids_become_distinct_ones_past_the_ids_the_file_holds(tmp_path, data_dir, capsys):
    """A file whose ids are ``a, a, a#1, b``: four distinct ids, the summary over the four
    records. **Was a bug** (until 2026-12-03): the second ``a`` was renamed ``a#1``, two records
    shared it, the summary counted one twice and the other not at all, and a resume never ran it."""
    rows = _rows(data_dir, 4)
    for row, i in zip(rows, ["a", "a", "a#1", "b"]):
        row["_id"] = i
    data = tmp_path / "collide.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["eval", "--method", "none", "--data", str(data), "--llm", "fake:Cymbeline", "--out", str(out), "--json", "--quiet"]
    assert main(argv) == 0
    res = _last_json(capsys)
    (results,) = out.rglob("results.jsonl")
    recs = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["id"] for r in recs) == ["a", "a#1", "a#2", "b"]
    assert res["n"] == 4 and res["em"] == pytest.approx(sum(r["em"] for r in recs) / 4) == 0.25
    assert main(argv) == 0 and _last_json(capsys)["resumed"] == 4


def test_a_comparison_checks_every_runs_folder_before_its_first_question(tmp_path, data_dir, capsys):
    """``--compare none,vanilla`` into a folder whose vanilla run had other settings is refused
    before ``none`` answers anything. **Was a bug** (until 2026-12-03): ``none`` ran every question
    first, and the refusal came after its work."""
    data, out = str(data_dir / "hotpotqa.sample.jsonl"), str(tmp_path / "out")
    base = ["eval", "--data", data, "--limit", "2", "--llm", "fake:1974", "--out", out, "--quiet", "--json"]
    assert main(base[:2] + [data + "@0/2"] + base[3:] + ["--method", "vanilla"]) == 0  # a part run of the file
    capsys.readouterr()
    assert main(base + ["--compare", "none,vanilla"]) == 2
    assert "holds results of other settings or another data file" in capsys.readouterr().err
    assert not list(Path(out).rglob("none-*"))  # nothing of `none` run or written


def test_rows_whose_question_is_blank_or_no_text_are_skipped_when_the_file_is_read(tmp_path, data_dir, capsys):
    """A question of spaces, a number or null is said and skipped when the data file is read (a
    user's file). **Was a bug** (until 2026-12-03): each was a failed question of every method,
    counted 0 and run again on each resume."""
    rows = _rows(data_dir, 4)
    rows[1]["question"], rows[2]["question"], rows[3]["question"] = "   ", 42, None
    data = tmp_path / "badq.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["eval", "--method", "none", "--data", str(data), "--llm", "fake:1974", "--json"]) == 0
    got = capsys.readouterr()
    res, err = json.loads(got.out.strip().splitlines()[-1]), got.err
    assert res["n"] == 1 and res["errors"] == 0 and res["em"] == 1.0
    assert "row 2 has an empty \"question\"; skipped" in err and "row 3 has a \"question\" that is a number" in err


def test_the_report_names_its_results_files_keeps_rows_whole_and_counts_the_scored(tmp_path, data_dir, capsys):
    """A run of the dataset ``nq/dev`` is written under ``runs/nq_dev``: the report names that file;
    a question with a line break stays one table row; rows with no gold answer leave EM over
    fewer questions than ``n``, and the table and the summary line say over how many.
    **Were bugs** (until 2026-12-03): ``runs/nq/dev/...`` (no such file), a broken table, and
    ``n 3 | EM 100.0`` with one question scored, nothing said."""
    rows = [{"id": "q1", "question": "Where is\nthe Eiffel Tower?", "answers": ["Paris"], "dataset": "nq/dev"},
            {"id": "q2", "question": "Who?", "answers": [], "dataset": "nq/dev"},
            {"id": "q3", "question": "What?", "answers": [], "dataset": "nq/dev"}]
    data = tmp_path / "nq.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["eval", "--method", "none", "--data", str(data), "--llm", "fake:Paris", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    report = (out / "report.md").read_text(encoding="utf-8")
    (where,) = re.findall(r"Per-question results: `([^`]+)`", report)
    assert (out / where).is_file()
    from ragraphs.evaluation.report import _run_lines

    assert "Per-question results: `runs/nq_dev/none-x/results.jsonl`." in _run_lines({"label": "none-x"}, [], "nq/dev")
    assert "| Where is the Eiffel Tower? | Paris | Paris |" in report
    summary = json.loads(((out / where).parent / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == 3 and summary["n_scored"] == 1 and summary["em"] == 1.0
    assert "| 3 | 100.0 (1) |" in report and "(EM, F1, acc over 1 with a gold answer)" in err


def test_the_progress_bar_keeps_running_means_of_the_records():
    """The bar's figures are running sums (recomputed over every record at each one until
    2026-12-03, quadratic in the run's size): the same means, failures counted apart."""
    from ragraphs.evaluation.progress import Progress

    done = [{"em": 1.0, "f1": 1.0, "wall_s": 2.0}, {"error": "boom", "em": 0.0, "wall_s": 9.0}]
    bar = Progress(3, "run", True, done)
    for rec in ({"em": 0.0, "f1": 0.5, "recall": 1.0, "wall_s": 1.0}, {"em": 1.0, "f1": 0.0, "wall_s": 3.0}):
        bar.update(rec)
    assert bar.bar is not None
    post = dict(item.split("=") for item in bar.bar.postfix.split(", "))
    bar.close()
    assert post == {"em": "50.0", "f1": "50.0", "recall": "100.0", "s/q": "2.00", "err": "1"}


@pytest.mark.parametrize("in_the_way", ["plots-file", "results-folder", "run-file"])
def test_a_path_in_the_way_under_out_is_one_line_before_any_question(tmp_path, data_dir, capsys, in_the_way):
    """A file at ``OUT/plots`` or at a run's folder, a folder at its ``results.jsonl``: one error
    line naming the path, exit 2, before the first question. **Was a bug** (until 2026-12-03): a
    traceback (exit 1), the ``plots`` one after every question had run."""
    out = tmp_path / "out"
    run = out / "runs" / "hotpotqa" / "none-fake_1974"
    if in_the_way == "plots-file":
        out.mkdir()
        (out / "plots").write_text("x")
    elif in_the_way == "results-folder":
        (run / "results.jsonl").mkdir(parents=True)
    else:
        run.parent.mkdir(parents=True)
        run.write_text("x")
    argv = ["eval", "--method", "none", "--data", str(data_dir / "hotpotqa.sample.jsonl"), "--limit", "2",
            "--llm", "fake:1974", "--out", str(out), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is in the way" in err or "is a folder where the run writes a file" in err
    assert "Traceback" not in err and not list(out.rglob("config.json"))
