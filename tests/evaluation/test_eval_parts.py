"""``--data FILE@K/N``: part K of N of a file's questions, the same stable split that
``train-judge`` and ``calibrate-crag`` read, so that judges can be measured cross-fitted."""

from __future__ import annotations

import json

import pytest

from ragraphs.cli import main
from ragraphs.datasets import load_dataset, select_part
from ragraphs.tools.judges.data import _row_examples


@pytest.mark.parametrize("name", ["hotpotqa", "2wikimultihopqa", "musique", "popqa"])
def test_eval_and_train_judge_split_a_file_the_same_way(data_dir, name):
    path = str(data_dir / f"{name}.sample.jsonl")
    examples = load_dataset(path)
    halves = [select_part(examples, k, 2) for k in (0, 1)]
    assert all(halves) and sum(map(len, halves)) == len(examples)
    for k, half in enumerate(halves):
        judged = [ex.question for _row, ex in _row_examples(f"{path}@{k}/2")]
        assert [ex.question for ex in half] == judged


def _run(capsys, out, data) -> tuple[dict, dict[str, dict]]:
    argv = ["eval", "--method", "vanilla", "--k", "2", "--retrieval-only", "--dataset", "hotpotqa",
            "--data", data, "--out", str(out), "--json", "--quiet"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    lines = (out / "runs" / "hotpotqa" / "vanilla-k2-retrieval" / "results.jsonl").read_text().splitlines()
    return res, {r["id"]: r for r in map(json.loads, lines)}


def test_eval_reads_one_part_over_the_whole_files_corpus(tmp_path, data_dir, capsys):
    path = data_dir / "hotpotqa.sample.jsonl"
    _, whole = _run(capsys, tmp_path / "whole", str(path))
    parts = []
    for k in (0, 1):
        res, recs = _run(capsys, tmp_path / f"part{k}", f"{path}@{k}/2")
        assert res["n"] == len(recs) > 0 and res["errors"] == 0
        assert {r["question"] for r in recs.values()} == {ex.question for ex in select_part(load_dataset(str(path)), k, 2)}
        parts.append(recs)
    assert not set(parts[0]) & set(parts[1]) and set(parts[0]) | set(parts[1]) == set(whole)
    # each part retrieves from the whole file's corpus: the same passages as the whole run, so
    # the two parts' records pooled are the whole file's
    for recs in parts:
        for qid, r in recs.items():
            assert [p["id"] for p in r["passages"]] == [p["id"] for p in whole[qid]["passages"]]
            assert r["recall"] == whole[qid]["recall"]


def test_eval_rejects_a_part_out_of_range(data_dir, capsys):
    rc = main(["eval", "--method", "vanilla", "--retrieval-only", "--data", f"{data_dir / 'hotpotqa.sample.jsonl'}@2/2"])
    assert rc != 0 and "use FILE@K/N with 0 <= K < N" in capsys.readouterr().err
