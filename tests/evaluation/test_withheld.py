"""Withheld gold: ``eval --withhold-gold`` and ``calibrate-crag --misses withheld`` retrieve,
for each question, from the pooled corpus without that question's gold paragraphs (a
retrieval that truly missed), on real MiniLM embeddings and real benchmark questions."""

from __future__ import annotations

import json

import pytest

from ragraphs.cli import main
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.evaluation.corpus import WithheldRetriever
from ragraphs.tools.embeddings import MiniLMEmbeddings
from ragraphs.tools.vectorstore import InMemoryCorpus


def test_withheld_search_ranks_as_a_corpus_without_the_gold(data_dir):
    examples = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"))
    passages = pooled_passages(examples)
    emb = MiniLMEmbeddings()
    whole = InMemoryCorpus(passages, emb)
    held = WithheldRetriever(whole)
    checked = 0
    for ex in examples[:6]:
        gold = ex.supporting_ids
        assert gold
        without = InMemoryCorpus([p for p in passages if p["id"] not in gold], emb)
        held.withhold(gold)
        for mode in ("dense", "bm25"):
            got = held.search(ex.question, 4, mode=mode)
            assert len(got) == 4 and not {p["id"] for p in got} & gold
            if mode == "dense":  # BM25's term weights change a little without the passages
                assert [p["id"] for p in got] == [p["id"] for p in without.search(ex.question, 4)]
        many = held.search_many([ex.question, ex.question], 4)
        assert [p["id"] for p in many[0]] == [p["id"] for p in held.search(ex.question, 4)] == [p["id"] for p in many[1]]
        # the corpus as it is still ranks some gold paragraph first or near it
        checked += bool({p["id"] for p in whole.search(ex.question, 4)} & gold)
    assert checked >= 4
    held.withhold([])
    assert [p["id"] for p in held.search(examples[0].question, 4)] == [p["id"] for p in whole.search(examples[0].question, 4)]
    assert held.title_index().base is whole.title_index() and held.count() == whole.count()


def _eval(capsys, tmp_path, data, *extra) -> tuple[int, dict | None, str]:
    argv = ["eval", "--method", "vanilla", "--k", "4", "--retrieval-only", "--dataset", "hotpotqa",
            "--data", data, "--out", str(tmp_path / "out"), "--json", "--quiet", *extra]
    rc = main(argv)
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    return rc, (json.loads(lines[-1]) if rc == 0 and lines else None), cap.err


def test_eval_withhold_gold_makes_every_retrieval_miss(tmp_path, data_dir, capsys):
    data = str(data_dir / "hotpotqa.sample.jsonl")
    rc, plain, _ = _eval(capsys, tmp_path, data)
    assert rc == 0 and plain["recall"] > 0.5
    rc, held, _ = _eval(capsys, tmp_path, data, "--withhold-gold")
    assert rc == 0 and held["n"] == plain["n"] and held["errors"] == 0
    assert held["recall"] == 0.0 and held["docs_avg"] == 4
    run = tmp_path / "out" / "runs" / "hotpotqa" / "vanilla-k4-retrieval-withheld"
    gold = {ex.question: ex.supporting_ids for ex in load_dataset(data)}
    recs = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert len(recs) == held["n"]
    for r in recs:
        assert len(r["passages"]) == 4 and not {p["id"] for p in r["passages"]} & gold[r["question"]]
    assert json.loads((run / "config.json").read_text())["spec"]["withhold_gold"] is True
    # the oracle reads the gold paragraphs: refused with a clear error
    rc, _, err = _eval(capsys, tmp_path, data, "--withhold-gold", "--oracle")
    assert rc != 0 and "--withhold-gold leaves the oracle nothing to read" in err


def test_calibrate_crag_fits_on_withheld_misses(tmp_path, data_dir, capsys):
    data = str(data_dir / "popqa.sample.jsonl")
    n = len(load_dataset(data))
    common = ["calibrate-crag", "--data", data, "--judge", "cosine", "--quiet"]
    # on these questions every retrieval holds a gold paragraph: the misses as they come leave
    # nothing irrelevant to fit the lower threshold on
    assert main(common) != 0  # the default: --misses retrieved
    err = capsys.readouterr().err
    assert "needs both relevant and irrelevant samples" in err and f"all {n} retrievals hold" in err
    assert "--misses withheld" in err
    out = tmp_path / "withheld.json"
    assert main([*common, "--misses", "withheld", "--lower", "rule", "--out", str(out)]) == 0
    capsys.readouterr()
    w = json.loads(out.read_text())
    assert w["misses"] == "withheld" and w["withheld_misses"] == n and w["retrieval_has_gold"] == 1.0
    # every question adds one sample: its retrieval with its gold withheld, labelled irrelevant
    assert w["calibrated"]["n"] == 2 * n and w["calibrated"]["n_relevant"] == n
    assert -1.0 <= w["calibrated"]["lower"] <= w["calibrated"]["upper"] <= 1.0
    sh = w["shares_withheld_calibrated"]
    assert sh["n"] == n and abs(sh["correct"] + sh["ambiguous"] + sh["incorrect"] - 1.0) < 1e-3
    # cosine scores a true miss lower than a retrieval that holds the gold: most misses land
    # under the fitted lower threshold
    assert sh["incorrect"] > 0.5
    assert w["calibrated"]["lower_from"] == "rule" and "lower_rule" not in w["calibrated"]
    # the default lower threshold is the judge's own relevance cut (cosine's: 0), at most the
    # upper one; the rule's fit is kept beside it, and the upper threshold does not move
    out2 = tmp_path / "judge.json"
    assert main([*common, "--misses", "withheld", "--out", str(out2)]) == 0
    said = capsys.readouterr().out
    assert "the evaluator's own relevance cut" in said
    # the cosine baseline's cuts: no `use:` line (it set them on the trained evaluator until 2026-12-03)
    assert "use: ragraphs ask" not in said and "the cosine baseline's cuts" in said
    assert json.loads(out2.read_text())["use"] is None
    j = json.loads(out2.read_text())["calibrated"]
    assert j["lower_from"] == "judge" and j["lower_rule"] == w["calibrated"]["lower"]
    assert j["lower"] == min(0.0, j["upper"]) and j["upper"] == w["calibrated"]["upper"]
    # how far the rule's cuts move over resampled questions, reported beside them
    b = json.loads(out2.read_text())["bootstrap_90"]
    assert b["resamples"] > 0 and b["upper"][0] <= b["upper"][1] and b["lower_rule"][0] <= b["lower_rule"][1]


def test_eval_withhold_gold_over_an_ingested_store(tmp_path, data_dir, capsys):
    """With ``--corpus``, a store ingested from the benchmark file keeps its paragraphs' ids, so
    withholding works there; a store of other documents is refused with a clear error."""
    data = str(data_dir / "hotpotqa.sample.jsonl")
    bench_store, other_store = tmp_path / "bench", tmp_path / "other"
    assert main(["ingest", data, "--store", str(bench_store), "--quiet"]) == 0
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nThe river flows north past the old mill and the stone bridge.\n", encoding="utf-8")
    assert main(["ingest", str(notes), "--store", str(other_store), "--quiet"]) == 0
    capsys.readouterr()
    rc, held, _ = _eval(capsys, tmp_path, data, "--withhold-gold", "--corpus", str(bench_store))
    assert rc == 0 and held["errors"] == 0 and held["recall"] == 0.0 and held["docs_avg"] == 4
    rc, _, err = _eval(capsys, tmp_path / "o", data, "--withhold-gold", "--corpus", str(other_store))
    assert rc != 0 and "holds none of the questions' gold paragraphs" in err


def test_a_run_written_before_withhold_gold_existed_still_resumes(tmp_path, data_dir, capsys):
    """Results written before ``RunSpec.withhold_gold`` existed lack the key in their config;
    it reads as its default (False), so such a run resumes, and a withheld run is still refused."""
    data = str(data_dir / "hotpotqa.sample.jsonl")
    rc, first, _ = _eval(capsys, tmp_path, data)
    assert rc == 0
    run = tmp_path / "out" / "runs" / "hotpotqa" / "vanilla-k4-retrieval"
    cfg = json.loads((run / "config.json").read_text())
    del cfg["spec"]["withhold_gold"]
    (run / "config.json").write_text(json.dumps(cfg))
    rc, again, _ = _eval(capsys, tmp_path, data)
    assert rc == 0 and again["resumed"] == first["n"] and again["recall"] == first["recall"]
    # the same folder holding a run of other settings is refused
    from ragraphs.errors import ConfigError
    from ragraphs.evaluation.records import open_results
    from ragraphs.evaluation.runner import RunSpec

    cfg = json.loads((run / "config.json").read_text())
    spec = RunSpec(**{**cfg["spec"], "withhold_gold": True})
    with pytest.raises(ConfigError, match="holds results of other settings"):
        open_results(spec, str(run), resume=True, data=data)


def test_title_links_never_bring_a_withheld_paragraph_back(data_dir):
    """DR-RAG's title links read the corpus's title index: withheld, it leaves out the gold as
    the searches do (a linked gold paragraph gave DR-RAG 26.7% recall with --withhold-gold on 30
    HotpotQA dev questions, every other method 0)."""
    from fakes import HashEmbeddings

    examples = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"))
    passages = pooled_passages(examples)
    whole = InMemoryCorpus(passages, HashEmbeddings())
    held = WithheldRetriever(whole)
    brought = 0
    for ex in examples:
        gold = ex.supporting_ids
        held.withhold(gold)
        index = held.title_index()
        for p in passages:
            if p["id"] in gold:
                continue
            named = whole.title_index().named_in(p["text"])
            brought += sum(1 for q in named if q["id"] in gold)  # what the links would bring unwithheld
            assert not {q["id"] for q in index.named_in(p["text"])} & gold
            assert len(index.named_in(p["text"], limit=1)) <= 1
    assert brought > 0  # the corpus's links do reach gold paragraphs: the check above has teeth
