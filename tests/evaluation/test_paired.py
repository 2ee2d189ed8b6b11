"""The paired bootstrap that tells a run's difference from a reference apart from its sample's noise."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragraphs.evaluation.paired import format_difference, paired_differences
from ragraphs.evaluation.report import paired_runs, paired_section, plot_paired


def _recs(values: list[float], start: int = 0, **extra) -> list[dict]:
    return [{"id": f"q{start + i}", "em": v, "f1": v, "acc": v, **extra} for i, v in enumerate(values)]


def test_identical_runs_differ_by_exactly_nothing():
    run = _recs([1, 0, 1, 1, 0] * 8)
    for p in paired_differences(run, run):
        assert (p.n, p.mean, p.low, p.high, p.settled) == (40, 0.0, 0.0, 0.0, False)


def test_a_run_right_where_the_reference_is_wrong_is_settled():
    ref = _recs([0] * 40)
    run = _recs([1] * 30 + [0] * 10)
    em = paired_differences(run, ref, metrics=["em"])[0]
    assert em.n == 40 and em.mean == pytest.approx(0.75)
    assert 0 < em.low < 0.75 < em.high <= 1 and em.settled
    assert format_difference(em).startswith("+75.0 [+") and format_difference(em).endswith(" *")


def test_wins_and_losses_that_cancel_are_not_settled():
    ref = _recs([0] * 10 + [1] * 10 + [1] * 20)
    run = _recs([1] * 10 + [0] * 10 + [1] * 20)  # 10 questions won, 10 lost
    em = paired_differences(run, ref, metrics=["em"])[0]
    assert em.mean == 0.0 and em.low < 0 < em.high and not em.settled
    assert not format_difference(em).endswith("*")


def test_a_handful_of_questions_settles_nothing():
    em = paired_differences(_recs([1] * 9), _recs([0] * 9), metrics=["em"])[0]
    assert (em.n, em.mean, em.low, em.high) == (9, 1.0, 1.0, 1.0) and not em.settled
    assert paired_differences(_recs([1] * 10), _recs([0] * 10), metrics=["em"])[0].settled


def test_the_bootstrap_is_seeded():
    ref, run = _recs([0, 1, 0, 1, 1, 0] * 5), _recs([1, 1, 0, 0, 1, 1] * 5)
    assert paired_differences(run, ref, seed=3) == paired_differences(run, ref, seed=3)


def test_only_questions_both_runs_answered_are_paired():
    ref = _recs([0] * 10)
    run = _recs([1] * 8)  # q0..q7
    run.append({"id": "elsewhere", "em": 1.0, "f1": 1.0, "acc": 1.0})
    ps = paired_differences(run, ref)
    assert [p.metric for p in ps] == ["em", "f1", "acc"] and all(p.n == 8 and p.mean == 1.0 for p in ps)


def test_a_failed_question_is_paired_with_its_zero_as_the_summary_counts_it():
    """The runner scores a failed question 0 ("errors must not flatter a method"); the pairing
    takes it so (it was left out until 2026-11-30: 6 failures of 20 read +0.0 against a
    reference right on all 20, while the summary said 70 against 100)."""
    from ragraphs.evaluation.runner import error_record
    from ragraphs.datasets import Example

    ref = _recs([1] * 20)
    run = _recs([1] * 14)
    for i in range(14, 20):
        ex = Example(id=f"q{i}", question="q?", answers=["a"], dataset="x")
        run.append(error_record(ex, RuntimeError("boom"), 0.1, retrieval_only=False))
    em = paired_differences(run, ref, metrics=["em"])[0]
    assert em.n == 20 and abs(em.mean + 0.3) < 1e-9 and em.settled
    # a metric a run does not score (retrieval-only: no answer) is left out
    only_f1 = paired_differences(_recs([1] * 4, em=None), _recs([0] * 4), metrics=["em", "f1", "recall"])
    assert [(p.metric, p.n, p.mean) for p in only_f1] == [("f1", 4, 1.0)]


def test_the_report_compares_every_run_with_vanilla():
    summaries = [{"label": "none", "method": "none"}, {"label": "vanilla-k2", "method": "vanilla"},
                 {"label": "crag", "method": "crag"}]
    records = {"none": _recs([0] * 20), "vanilla-k2": _recs([0] * 10 + [1] * 10), "crag": _recs([1] * 20)}
    lines = paired_section(summaries, records)
    assert lines[0] == "## Against vanilla-k2, question by question"
    rows = [line for line in lines if line.startswith(("| none", "| crag"))]
    assert rows[0].startswith("| none | 20 | -50.0 [") and rows[1].startswith("| crag | 20 | +50.0 [")
    assert not any(line.startswith("| vanilla-k2") for line in lines)
    # one run: nothing to compare
    assert paired_section(summaries[:1], records) == []
    # recall pairs only the questions with gold paragraphs: its cell says how many (the row's n is the most)
    with_recall = {label: [{**r, "recall": (1.0 if label == "crag" else 0.0) if i < 12 else None} for i, r in enumerate(recs)]
                   for label, recs in records.items()}
    (crag,) = [line for line in paired_section(summaries, with_recall) if line.startswith("| crag")]
    assert crag.startswith("| crag | 20 | +50.0 [") and crag.rstrip(" |").endswith("(n = 12)")


def test_the_paired_plot_draws_every_run_against_the_reference(tmp_path):
    summaries = [{"label": "none", "method": "none", "dataset": "musique"}, {"label": "vanilla-k2", "method": "vanilla"},
                 {"label": "crag", "method": "crag"}]
    records = {"none": _recs([0] * 20), "vanilla-k2": _recs([0] * 10 + [1] * 10), "crag": _recs([1] * 20)}
    path = tmp_path / "paired.png"
    assert plot_paired(summaries, records, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the same differences as the report's table: vanilla is the reference, each run settled
    ref, runs = paired_runs(summaries, records)
    assert ref == "vanilla-k2" and [label for label, _ in runs] == ["none", "crag"]
    assert [round(d["em"].mean, 2) for _, d in runs] == [-0.5, 0.5] and all(d["em"].settled for _, d in runs)
    # another reference by name (bench/paired.py --ref); one not run, or a single run, draws nothing
    ref, runs = paired_runs(summaries, records, ref="none")
    assert ref == "none" and [(label, d["em"].mean) for label, d in runs] == [("vanilla-k2", 0.5), ("crag", 1.0)]
    assert not plot_paired(summaries, records, str(tmp_path / "x.png"), ref="oracle")
    assert not plot_paired(summaries[:1], records, str(tmp_path / "y.png"))
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "y.png").exists()


def test_a_k_sweep_pairs_each_run_with_vanilla_at_its_own_k():
    # `eval --compare vanilla,crag --k 2,4`: crag at k 2 against vanilla at k 2, not the last vanilla
    summaries = [{"label": f"{m}-k{k}", "method": m, "k": k} for m in ("vanilla", "crag") for k in (2, 4)]
    records = {"vanilla-k2": _recs([0] * 20), "vanilla-k4": _recs([1] * 20),
               "crag-k2": _recs([1] * 20), "crag-k4": _recs([1] * 20)}
    ref, runs = paired_runs(summaries, records)
    assert ref == "vanilla"
    assert [(label, d["em"].mean) for label, d in runs] == [("crag-k2 (against vanilla-k2)", 1.0),
                                                            ("crag-k4 (against vanilla-k4)", 0.0)]
    assert paired_section(summaries, records)[0] == "## Against vanilla, question by question"


def _em_rows(em: list[int]) -> list[dict]:
    return [{"id": f"q{i}", "question": f"question {i}?", "em": v, "f1": v, "acc": v} for i, v in enumerate(em)]


def _script_run(root, label: str, rows: list[dict], summary: dict | None = None) -> None:
    """OUT/runs/musique/LABEL as `ragraphs eval --out OUT` leaves it: results.jsonl, summary.json."""
    run = root / "runs" / "musique" / label
    run.mkdir(parents=True)
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if summary is not None:
        (run / "summary.json").write_text(json.dumps({"label": label, **summary}), encoding="utf-8")


def _paired_script(*args) -> str:
    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, str(root / "bench" / "paired.py"), *map(str, args), "--metrics", "em"],
                          capture_output=True, text=True, cwd=root, check=True).stdout


def test_the_paired_script_scores_slim_copies_it_reads(tmp_path):
    """``bench/paired.py`` over copies that keep only id, question, gold and prediction (as
    ``bench/results`` stores them): each record is scored with the package's metrics and paired,
    and the output says how many were (they paired 0 questions, every cell '-', until 2026-12-01)."""
    answers = {"vanilla": ["Lima", "wrong", "wrong", "Oslo"], "crag": ["Lima", "Quito", "Bern", "Oslo"]}
    golds = [["Lima"], ["Quito"], ["Bern"], ["Oslo"]]
    for label, preds in answers.items():
        _script_run(tmp_path, label, [{"id": f"q{i}", "question": f"question {i}?", "gold": g, "prediction": p, "error": None}
                                      for i, (p, g) in enumerate(zip(preds, golds))])
    stdout = _paired_script(tmp_path)
    (row,) = [line for line in stdout.splitlines() if line.startswith("| musique | crag |")]
    assert row.startswith("| musique | crag | 4 | +50.0 [")
    assert "8 records kept no scores" in stdout


def test_the_paired_script_pairs_the_questions_the_last_run_covers(tmp_path):
    """A run resumed with a smaller ``--limit`` keeps 8 records while its summary and report cover
    5: the script pairs the 5 its ``summary.json`` names (it paired all 8 until 2026-12-02, where
    the report said n = 5); an older summary that names none pairs all, and says so."""
    ids = [f"q{i}" for i in range(5)]
    _script_run(tmp_path / "new", "vanilla", _em_rows([0] * 8), {"method": "vanilla", "n": 5, "ids": ids})
    _script_run(tmp_path / "new", "crag", _em_rows([0] * 5 + [1] * 3), {"method": "crag", "n": 5, "ids": ids})
    out = _paired_script(tmp_path / "new")
    (row,) = [line for line in out.splitlines() if line.startswith("| musique | crag |")]
    assert row.startswith("| musique | crag | 5 | +0.0 [")
    assert "the 5 questions its last run covers (summary.json ids) are paired, not all 8" in out
    _script_run(tmp_path / "old", "vanilla", _em_rows([0] * 8), {"method": "vanilla", "n": 5})
    _script_run(tmp_path / "old", "crag", _em_rows([0] * 5 + [1] * 3), {"method": "crag", "n": 5})
    out = _paired_script(tmp_path / "old")
    (row,) = [line for line in out.splitlines() if line.startswith("| musique | crag |")]
    assert row.startswith("| musique | crag | 8 | +37.5 [")
    assert "results.jsonl holds 8 questions, its summary.json (the last run) 5, and names none" in out


def test_the_paired_script_pairs_a_k_sweep_with_vanilla_at_each_runs_own_k(tmp_path):
    """``eval --compare vanilla,crag --k 2,4`` labels no run plain ``vanilla``: the script pairs each
    run with the vanilla run of its own k, as the report does (until 2026-12-02 it printed an empty
    table without a word, and with ``--ref vanilla-k2`` paired crag at k 4 against k 2)."""
    for m, k, em in (("vanilla", 2, [0] * 20), ("vanilla", 4, [1] * 20), ("crag", 2, [1] * 20), ("crag", 4, [1] * 20)):
        _script_run(tmp_path, f"{m}-k{k}", _em_rows(em), {"method": m, "k": k, "n": 20})
    rows = [line for line in _paired_script(tmp_path).splitlines() if line.startswith("| musique |")]
    assert [row.rstrip(" |").split(" | ")[1:4] for row in rows] == [["crag-k2 (against vanilla-k2)", "20", "+100.0 [+100.0, +100.0] *"],
                                                       ["crag-k4 (against vanilla-k4)", "20", "+0.0 [+0.0, +0.0]"]]
    # a label as --ref is that run, for every other run
    rows = [line for line in _paired_script(tmp_path, "--ref", "vanilla-k2").splitlines() if line.startswith("| musique |")]
    assert [row.split(" | ")[1:3] for row in rows] == [["crag-k2", "20"], ["crag-k4", "20"], ["vanilla-k4", "20"]]
    # no run of that label or method: said, with the labels there are
    out = _paired_script(tmp_path, "--ref", "erm4")
    assert not [line for line in out.splitlines() if line.startswith("| musique |")]
    assert "musique: no run is labelled 'erm4' or of method 'erm4', so nothing is paired (runs: crag-k2, crag-k4" in out


def test_the_parts_of_a_file_run_into_their_own_folders_are_pooled(tmp_path, data_dir, capsys):
    """``--data FILE@0/2`` and ``FILE@1/2``, each into its own ``--out``: ``bench/paired.py`` pairs
    the whole file's questions and says it pooled them; ``bench/collect.py`` names each row's part.
    **Was a bug** (until 2026-12-03): the later folder replaced the earlier, half the questions
    dropped without a word, and the two rows read alike."""
    from ragraphs.cli import main

    data = str(data_dir / "hotpotqa.sample.jsonl")
    for k in (0, 1):
        assert main(["eval", "--compare", "none,oracle", "--data", f"{data}@{k}/2", "--llm", "fake:1974",
                     "--out", str(tmp_path / f"p{k}"), "--quiet", "--json"]) == 0
    capsys.readouterr()
    n = sum(1 for line in open(data, encoding="utf-8") if line.strip())
    out = _paired_script(tmp_path, "--ref", "none")
    (row,) = [line for line in out.splitlines() if line.startswith("| hotpotqa | oracle")]
    assert row.split("|")[3].strip() == str(n)
    assert f"the records of 2 folders pooled ({n} questions)" in out
    root = Path(__file__).resolve().parents[2]
    table = subprocess.run([sys.executable, str(root / "bench" / "collect.py"), str(tmp_path)],
                           capture_output=True, text=True, check=True).stdout
    assert "(part 0/2)" in table and "(part 1/2)" in table
