"""What a results folder records of where its answers came from, and the resumes it refuses:
the sha256 of the data, ``--pool`` and ``--web`` files and of a judge folder's
``ragraphs_judge.json`` (guarded), the ``provenance`` block (informational)."""

import hashlib
import json
import os
import shutil

import pytest

from fakes import ConstJudge, HashEmbeddings
from ragraphs.cli import main
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.errors import ConfigError
from ragraphs.evaluation.runner import RunSpec, run_spec
from ragraphs.tools.judges import weights_dir
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.tools.vectorstore import InMemoryCorpus


def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _edit_first_gold(path: str) -> None:
    """The file's first question with another gold answer (the same path, the same ids)."""
    lines = open(path, encoding="utf-8").read().splitlines()
    row = json.loads(lines[0])
    row["answer"] = "something else entirely"
    lines[0] = json.dumps(row)
    open(path, "w", encoding="utf-8").write("\n".join(lines) + "\n")


def test_a_resume_over_an_edited_data_or_pool_file_is_refused(tmp_path, data_dir, capsys):
    """The records hold scores against the file's gold: a file edited at the same path was
    resumed over, its old records kept against the old gold (until 2026-11-30 only the path
    was compared). ``config.json`` records each file's sha256; a folder without them resumes."""
    data = str(tmp_path / "hotpotqa.jsonl")
    pool = str(tmp_path / "pool.jsonl")
    shutil.copy(data_dir / "hotpotqa.sample.jsonl", data)
    shutil.copy(data_dir / "musique.sample.jsonl", pool)
    out = str(tmp_path / "out")
    argv = ["eval", "--method", "vanilla", "--data", data, "--pool", pool, "--limit", "2", "--llm", "fake:yes",
            "--out", out, "--quiet", "--json"]
    assert main(argv) == 0
    capsys.readouterr()
    run = os.path.join(out, "runs", "hotpotqa", RunSpec("vanilla", llm="fake:yes").label)
    cfg = json.load(open(os.path.join(run, "config.json")))
    assert cfg["data_sha256"] == {os.path.abspath(data): _sha(data), os.path.abspath(pool): _sha(pool)}
    assert main(argv) == 0  # the same files: resumes
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["resumed"] == 2

    _edit_first_gold(data)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"holds results of another version of {os.path.abspath(data)} (its sha256 differs" in err
    assert "use another --out or --fresh" in err
    assert main(argv + ["--fresh"]) == 0  # starts over, against the new gold
    capsys.readouterr()
    _edit_first_gold(pool)  # a pooled file's passages are what the questions retrieve from
    open(pool, "a", encoding="utf-8").write(open(str(data_dir / "musique.sample.jsonl"), encoding="utf-8").readline())
    assert main(argv) == 2
    assert f"another version of {os.path.abspath(pool)}" in capsys.readouterr().err
    # a folder written before the hashes were recorded resumes as before
    cfg = json.load(open(os.path.join(run, "config.json")))
    cfg.pop("data_sha256")
    json.dump(cfg, open(os.path.join(run, "config.json"), "w"))
    assert main(argv) == 0


def test_config_and_summary_record_the_runs_provenance(tmp_path, data_dir, monkeypatch):
    """``config.json`` and ``summary.json`` say which versions, model file, judges, settings and
    thread counts made the answers; the summary's other keys stay as they were."""
    monkeypatch.setenv("RAGRAPHS_LLM_THREADS", "1")
    monkeypatch.setenv("RAGRAPHS_LLM_CONTEXTS", "2")
    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR", raising=False)
    hotpot = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=InMemoryCorpus(pooled_passages(hotpot), embeddings=HashEmbeddings(256, "strip")))
    out = str(tmp_path / "run")
    summary, _ = run_spec(RunSpec("vanilla", k=2), hotpot[:1], comps, out_dir=out, progress=False)
    cfg = json.load(open(os.path.join(out, "config.json")))
    saved = json.load(open(os.path.join(out, "summary.json")))
    for prov in (cfg["provenance"], saved["provenance"], summary["provenance"]):
        assert prov["versions"]["ragraphs"] and prov["versions"]["langgraph"] and prov["versions"]["langchain-core"]
        assert prov["settings"]["k"] == 2 and prov["settings"]["llm"] == "gemma" and "rerank" in prov["settings"]
        assert prov["llm"]["file"] == "gemma-3-270m-q4_k_m.gguf" and prov["llm"]["bytes"] > 100_000_000
        assert prov["environment"]["RAGRAPHS_LLM_THREADS"] == "1" and prov["environment"]["RAGRAPHS_LLM_CONTEXTS"] == "2"
        shipped = prov["judges"]["shipped"]
        assert shipped["roles"] == ["evaluator", "pair", "nli"] and shipped["name"]
        assert shipped["sha256"] == _sha(weights_dir() / "ragraphs_judge.json")
    assert cfg["judge_sha256"] == {}  # guarded only where the run loads a judge: vanilla without rerank=evaluator loads none
    assert {"method", "label", "n", "em", "f1", "acc", "recall", "errors", "resumed", "corpus_passages"} <= set(saved)
    # the file names the questions it covers (bench/paired.py pairs those); the summary returned does not
    assert saved["ids"] == [hotpot[0].id] and "ids" not in summary


def _judge_copy(folder) -> str:
    """A judge folder of the shipped model's files (linked) and a copy of its
    ``ragraphs_judge.json``, to edit in place."""
    folder.mkdir()
    for name in os.listdir(weights_dir()):
        if name != "ragraphs_judge.json":
            os.symlink(weights_dir() / name, folder / name)
    shutil.copy(weights_dir() / "ragraphs_judge.json", folder / "ragraphs_judge.json")
    return str(folder)


def _edit_thresholds(folder: str) -> None:
    path = os.path.join(folder, "ragraphs_judge.json")
    meta = json.loads(open(path, encoding="utf-8").read())
    meta["thresholds"] = {**(meta.get("thresholds") or {}), "evaluator": 0.5}
    open(path, "w", encoding="utf-8").write(json.dumps(meta))


def test_a_resume_with_an_edited_judge_folder_is_refused(tmp_path, data_dir, monkeypatch):
    """A copy of a judge folder edited in place (other thresholds) is another judge under the
    same ``RAGRAPHS_JUDGES_DIR``: the sha256 of its ``ragraphs_judge.json`` is guarded; versions
    and thread counts are not (a resume under another ``RAGRAPHS_LLM_THREADS`` goes on)."""
    judges = _judge_copy(tmp_path / "judges")
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", judges)
    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    monkeypatch.setenv("RAGRAPHS_WEB", "none")
    hotpot = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=InMemoryCorpus(pooled_passages(hotpot), embeddings=HashEmbeddings(256, "strip")))
    out = str(tmp_path / "run")
    spec = RunSpec("crag", k=2)
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["errors"] == 0
    monkeypatch.setenv("RAGRAPHS_LLM_THREADS", "3")  # informational only
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["resumed"] == 1
    old = _sha(os.path.join(judges, "ragraphs_judge.json"))
    _edit_thresholds(judges)
    with pytest.raises(ConfigError, match=f"holds answers of judges with another ragraphs_judge.json "
                                          f"\\(sha256 RAGRAPHS_JUDGES_DIR={old[:12]}, not RAGRAPHS_JUDGES_DIR="):
        run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)
    assert run_spec(spec, hotpot[:1], comps, out_dir=out, resume=False, progress=False)[0]["resumed"] == 0


def test_a_given_judge_folder_or_rerank_path_is_recorded_and_not_the_variables(tmp_path, data_dir, monkeypatch):
    """A judge given to the components as a folder, or a ``rerank`` path, is the judge the run
    loads: ``config.json`` records its folder and the sha256 of its ``ragraphs_judge.json`` (an
    edit is refused), and not ``RAGRAPHS_RERANKER`` / ``RAGRAPHS_JUDGES_DIR``, which such a run
    does not read (until 2026-11-30 the variables were recorded, so a resume under another one
    was refused and an edited given folder was not); an object given is ``given: TypeName``."""
    from ragraphs.evaluation.records import build_context, run_sources

    judges = _judge_copy(tmp_path / "judges")
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR", raising=False)
    monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/a")
    monkeypatch.setenv("RAGRAPHS_WEB", "none")
    hotpot = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    corpus = InMemoryCorpus(pooled_passages(hotpot), embeddings=HashEmbeddings(256, "strip"))
    for spec, given in ((RunSpec("crag", k=2), {"evaluator": judges}),
                        (RunSpec("vanilla", k=2, settings={"rerank": judges}), None)):
        comps = Components(llm=FakeAnswerChat(responses=["x"]), retriever=corpus, judges=given)
        out = str(tmp_path / spec.method)
        assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["errors"] == 0
        cfg = json.load(open(os.path.join(out, "config.json")))
        source = "evaluator" if given else "rerank"
        sha = _sha(os.path.join(judges, "ragraphs_judge.json"))
        assert cfg["judges"] == {source: judges} and cfg["judge_sha256"] == {source: sha}
        assert cfg["provenance"]["judges"][source]["folder"] == judges
        monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/b")  # not read
        monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", str(tmp_path))
        assert run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)[0]["resumed"] == 1
        _edit_thresholds(judges)
        with pytest.raises(ConfigError, match=f"another ragraphs_judge.json \\(sha256 {source}={sha[:12]}, not {source}="):
            run_spec(spec, hotpot[:1], comps, out_dir=out, progress=False)
        shutil.copy(weights_dir() / "ragraphs_judge.json", os.path.join(judges, "ragraphs_judge.json"))
        monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/a")
        monkeypatch.delenv("RAGRAPHS_JUDGES_DIR")
    comps = Components(judges={"evaluator": ConstJudge(0.9)})
    sources = run_sources(RunSpec("crag"), build_context(RunSpec("crag")), comps)
    assert sources["judges"] == {"evaluator": "given: ConstJudge"} and sources["judge_sha256"] == {}


def test_an_old_judges_record_with_more_entries_resumes(tmp_path, monkeypatch):
    """A folder written before 2026-11-30 recorded ``RAGRAPHS_RERANKER`` for runs that load no
    judge, and the whole record was compared, so the same run in the same environment was
    refused. The entries the current run records are compared: an old extra one is ignored, a
    differing one, or a variable set now and not then (or set then and unset now, where the run
    reads it), is refused; an empty record of a run without a judge reads "no judge loaded"."""
    from dataclasses import asdict

    from ragraphs.evaluation.records import open_results

    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR", raising=False)
    comps = Components()
    from ragraphs.evaluation.records import build_context, run_sources

    def write(spec, run, **recorded):
        os.makedirs(run, exist_ok=True)
        old = {"label": spec.label, "spec": asdict(spec), "dataset": "d", "data": "", "corpus": {}, **recorded}
        open(os.path.join(run, "config.json"), "w", encoding="utf-8").write(json.dumps(old))

    def resume(spec, run):
        return open_results(spec, run, resume=True, dataset="d",
                            sources=run_sources(spec, build_context(spec), comps))

    vanilla, crag = RunSpec("vanilla", k=2), RunSpec("crag", k=2)
    extra = {"judges": {"RAGRAPHS_RERANKER": "cross-encoder/a"}, "judge_sha256": {"shipped": "0" * 64}}
    write(vanilla, str(tmp_path / "v"), **extra)
    resume(vanilla, str(tmp_path / "v"))  # loads no judge: the old entries are ignored
    write(crag, str(tmp_path / "c"), judges={})
    resume(crag, str(tmp_path / "c"))  # the shipped judges, as recorded (no sha256 then: not compared)
    monkeypatch.setenv("RAGRAPHS_RERANKER", "cross-encoder/b")
    with pytest.raises(ConfigError, match="judges the shipped ones, not RAGRAPHS_RERANKER=cross-encoder/b;"):
        resume(crag, str(tmp_path / "c"))
    write(crag, str(tmp_path / "c2"), judges={"RAGRAPHS_RERANKER": "cross-encoder/a", "RAGRAPHS_JUDGES_DIR": "x"})
    with pytest.raises(ConfigError, match="RAGRAPHS_RERANKER=cross-encoder/a, RAGRAPHS_JUDGES_DIR=x, not "
                                          "RAGRAPHS_RERANKER=cross-encoder/b;"):
        resume(crag, str(tmp_path / "c2"))  # a differing entry
    monkeypatch.delenv("RAGRAPHS_RERANKER")
    with pytest.raises(ConfigError, match="not the shipped ones;"):
        resume(crag, str(tmp_path / "c2"))  # set then, unset now: the run reads it
    write(vanilla, str(tmp_path / "v2"), judges={"RAGRAPHS_RERANKER": "cross-encoder/a"})
    from ragraphs.evaluation.records import _named

    assert _named({}, "no judge loaded") == "no judge loaded"
    resume(vanilla, str(tmp_path / "v2"))


def test_a_calibrate_crag_report_records_every_argument_and_the_judge_file(tmp_path, data_dir, capsys, monkeypatch):
    """``calibrate-crag --out``: the report lacked ``--alpha``, ``--retrieval``, ``--limit``,
    ``--lower``, ``--dataset`` and the bootstrap count, and named the judge by its ``name``,
    which every ``train-judge`` output shares (until 2026-11-30); it now keeps every argument,
    the judge's folder and the sha256 of its ``ragraphs_judge.json``."""
    monkeypatch.delenv("RAGRAPHS_RERANKER", raising=False)
    monkeypatch.delenv("RAGRAPHS_JUDGES_DIR", raising=False)
    out = tmp_path / "cal.json"
    data = str(data_dir / "popqa.sample.jsonl")
    argv = ["calibrate-crag", "--data", data, "--dataset", "popqa", "--limit", "6", "--retrieval", "bm25", "--alpha", "0.5",
            "--lower", "rule", "--misses", "withheld", "--bootstrap", "7", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    report = json.loads(out.read_text(encoding="utf-8"))
    args = report["args"]
    assert (args["data"], args["dataset"], args["limit"], args["retrieval"], args["alpha"], args["lower"],
            args["bootstrap"], args["k"], args["unit"], args["judge"]) == (data, "popqa", 6, "bm25", 0.5, "rule", 7, 4,
                                                                          "question", "default")
    assert "func" not in args
    src = report["judge_source"]
    assert src["variable"] == "shipped" and src["folder"] == os.path.abspath(str(weights_dir()))
    assert src["sha256"] == _sha(weights_dir() / "ragraphs_judge.json") and "evaluator" in src["roles"]
    assert report["versions"]["ragraphs"]


def test_a_part_runs_data_file_is_hashed_and_an_edit_refused(tmp_path, data_dir, capsys):
    """``--data FILE@K/N`` recorded no sha256 (the spec is not a file), so a part run resumed
    over an edited file until 2026-11-30; the part's file is hashed as a whole run's is."""
    data = str(tmp_path / "hotpotqa.jsonl")
    shutil.copy(data_dir / "hotpotqa.sample.jsonl", data)
    out = str(tmp_path / "out")
    argv = ["eval", "--method", "vanilla", "--data", f"{data}@0/2", "--limit", "2", "--llm", "fake:yes",
            "--out", out, "--quiet", "--json"]
    assert main(argv) == 0
    capsys.readouterr()
    configs = [os.path.join(d, "config.json") for d, _, files in os.walk(out) if "config.json" in files]
    assert len(configs) == 1
    assert json.load(open(configs[0]))["data_sha256"] == {os.path.abspath(data): _sha(data)}
    assert main(argv) == 0
    capsys.readouterr()
    _edit_first_gold(data)
    assert main(argv) == 2
    assert f"holds results of another version of {os.path.abspath(data)}" in capsys.readouterr().err


def test_erm4s_recorded_settings_name_its_reservoir(tmp_path, data_dir, monkeypatch):
    """The provenance was built before the run's own reservoir was set, so ERM4's recorded
    ``reservoir_path`` was null (until 2026-11-30); it is the reservoir beside the results."""
    monkeypatch.setenv("RAGRAPHS_WEB", "none")
    hotpot = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    emb = HashEmbeddings(256, "strip")
    comps = Components(llm=FakeAnswerChat(responses=["x"]), embeddings=emb,
                       retriever=InMemoryCorpus(pooled_passages(hotpot), embeddings=emb),
                       judges={"evaluator": ConstJudge(0.9), "pair": ConstJudge(0.9), "nli": ConstJudge(0.9)})
    out = str(tmp_path / "run")
    summary, _ = run_spec(RunSpec("erm4", k=2), hotpot[:1], comps, out_dir=out, progress=False)
    cfg = json.load(open(os.path.join(out, "config.json")))
    for prov in (cfg["provenance"], summary["provenance"]):
        assert prov["settings"]["reservoir_path"] == os.path.join(out, "reservoir.sqlite3")
