"""Each benchmark loader on real rows (the slices in tests/data, in their own formats)."""

import json
import os
from pathlib import Path

import pytest

from ragraphs.datasets import detect_format, iter_rows, load_dataset, pooled_passages
from ragraphs.errors import InputError
from ragraphs.evaluation.runner import RunSpec
from ragraphs.state.types import passage_id


def _rows(data_dir, name):
    return list(iter_rows(str(data_dir / f"{name}.sample.jsonl")))


def test_hotpotqa_original_rows(data_dir):
    exs = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    assert len(exs) == 20
    ex = exs[0]
    assert ex.id == "5a7ce50f55429909bec76869"
    assert ex.answers == ["1974"]
    assert len(ex.paragraphs) == 10
    assert {p["title"] for p in ex.supporting} == {"Carsten Olsen", "S. P. L. Sørensen"}
    olsen = next(p for p in ex.paragraphs if p["title"] == "Carsten Olsen")
    assert "1974" in olsen["text"] and olsen["id"] == passage_id("Carsten Olsen", olsen["text"])
    assert ex.extra["type"] in ("bridge", "comparison") and ex.extra["level"]
    # every question has 2 gold paragraphs in the distractor setting
    assert all(len(e.supporting) == 2 for e in exs)


def test_hotpotqa_hf_style_rows_load_the_same(tmp_path, data_dir):
    """The Hugging Face layout: dict-shaped ``context`` and ``supporting_facts``."""
    rows = _rows(data_dir, "hotpotqa")[:5]
    hf = []
    for r in rows:
        hf.append({
            "id": r["_id"], "question": r["question"], "answer": r["answer"], "type": r["type"], "level": r["level"],
            "supporting_facts": {"title": [t for t, _ in r["supporting_facts"]], "sent_id": [i for _, i in r["supporting_facts"]]},
            "context": {"title": [t for t, _ in r["context"]], "sentences": [s for _, s in r["context"]]},
        })
    path = tmp_path / "hotpot_hf.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in hf) + "\n")
    assert detect_format(hf[0]) == "hotpotqa"
    a = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa", limit=5)
    b = load_dataset(str(path))  # auto-detected
    assert [e.id for e in a] == [e.id for e in b]
    assert [e.answers for e in a] == [e.answers for e in b]
    assert [[p["id"] for p in e.paragraphs] for e in a] == [[p["id"] for p in e.paragraphs] for e in b]
    assert [e.supporting_ids for e in a] == [e.supporting_ids for e in b]


def test_2wikimultihopqa(data_dir):
    exs = load_dataset(str(data_dir / "2wikimultihopqa.sample.jsonl"), "2wikimultihopqa")
    ex = exs[0]
    assert ex.answers == ["School On Fire"]
    assert {p["title"] for p in ex.supporting} == {
        "What Will You Do When You Catch Me?", "Ringo Lam", "School on Fire", "Stanisław Bareja"
    }
    assert ex.extra["type"] == "bridge_comparison"
    # format detection from the row's own keys
    assert detect_format(_rows(data_dir, "2wikimultihopqa")[0]) == "2wikimultihopqa"
    # rows whose supporting facts are Python-literal strings still get their labels
    for e, r in zip(exs, _rows(data_dir, "2wikimultihopqa")):
        if r.get("context"):
            assert e.supporting, e.id


def test_musique_answers_with_aliases_and_labels(data_dir):
    exs = load_dataset(str(data_dir / "musique.sample.jsonl"))  # auto
    ex = exs[0]
    assert ex.dataset == "musique" and ex.id == "2hop__335418_279684"
    assert ex.answers[0] == "Pittsburgh Pirates" and "Baltimore Orioles" in ex.answers
    assert len(ex.paragraphs) == 20
    assert [p["title"] for p in ex.supporting] == ["Anna Benson", "Kris Benson"]
    row = _rows(data_dir, "musique")[0]
    assert len(ex.supporting) == sum(1 for p in row["paragraphs"] if p["is_supporting"])


def test_popqa_uses_the_files_labels(data_dir):
    exs = load_dataset(str(data_dir / "popqa.sample.jsonl"), "popqa")
    ex = exs[0]
    assert ex.question == "In what city was Dale Polley born?"
    assert ex.answers == ["Georgetown", "Georgetown, KY", "Georgetown, Kentucky"]
    assert [p["title"] for p in ex.supporting] == ["Dale Polley", "Georgetown, Kentucky"]
    assert ex.extra["prop"] == "place of birth" and ex.extra["s_pop"] == 81


def test_odqa_nq_rows_in_both_layouts(data_dir):
    exs = load_dataset(str(data_dir / "odqa.sample.jsonl"), "odqa")
    assert len(exs) == 20 and {e.dataset for e in exs} == {"nq"}
    first = exs[0]
    assert first.answers == ["A simple majority", "A simple majority vote"]  # a JSON list
    assert not first.paragraphs  # its context is empty in the file
    # rows with ``short_answers`` stored as a Python-literal string
    gillan = next(e for e in exs if e.question.startswith("who is nebula"))
    assert gillan.answers == ["Karen Gillan"]
    nielsen = next(e for e in exs if "homeland security" in e.question)
    assert nielsen.answers == ["Kirstjen Nielsen"]
    assert len(nielsen.supporting) == 1 and "Kirstjen Nielsen" in nielsen.supporting[0]["text"]
    assert nielsen.supporting[0]["title"] == "United States Secretary of Homeland Security"


def test_triviaqa_row_with_alias_list_as_text(tmp_path, data_dir):
    # the TriviaQA rows of the odqa file carry only question, answer (a list as text), dataset
    row = {"question": "Rahere, an Anglo-Norman monk, founded which London hospital in 1123?",
           "answer": "[\"St. Bartholomew's\", \"St Bartholomew's\", 'Barts']", "dataset": "trivia"}
    path = tmp_path / "tqa.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (ex,) = load_dataset(str(path), "odqa")
    assert ex.answers == ["St. Bartholomew's", "St Bartholomew's", "Barts"]
    assert ex.dataset == "trivia" and ex.id  # an id is made up from the position
    assert detect_format(row) == "odqa"


def test_strategyqa_yes_no_and_facts(data_dir):
    exs = load_dataset(str(data_dir / "strategyqa.sample.jsonl"), "strategyqa")
    ex = exs[0]
    assert ex.question == "Is greed the most prevalent of the Seven Deadly Sins?"
    assert ex.answers == ["no"]
    assert ex.supporting and all(p["title"] == "Greed" for p in ex.supporting)
    assert {tuple(e.answers) for e in exs} <= {("yes",), ("no",)}


def test_flashrag_jsonl(tmp_path, data_dir):
    rows = [
        {"id": f"q{i}", "question": r["question"], "golden_answers": r.get("answer")}
        for i, r in enumerate(_rows(data_dir, "odqa"))
        if isinstance(r.get("answer"), list)
    ][:3]
    path = tmp_path / "flash.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    exs = load_dataset(str(path))
    assert [e.dataset for e in exs] == ["flashrag"] * 3
    assert exs[0].id == "q0" and exs[0].answers == ["A simple majority", "A simple majority vote"]
    assert exs[0].paragraphs == []


def test_plain_question_answer_rows_are_read_and_need_a_store_to_search(tmp_path, data_dir, capsys):
    from conftest import main_captured

    real = [r for r in _rows(data_dir, "odqa") if isinstance(r.get("answer"), list)][:2]
    rows = [{"question": real[0]["question"], "answers": real[0]["answer"]},  # a user's own QA pairs
            {"question": real[1]["question"], "answer": real[1]["answer"][0]}]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert [detect_format(r) for r in rows] == ["flashrag", "flashrag"]
    exs = load_dataset(str(path))
    assert [e.question for e in exs] == [r["question"] for r in rows]
    assert exs[0].answers == real[0]["answer"] and exs[1].answers == [real[1]["answer"][0]]
    # no paragraphs in the file: a method that retrieves needs a store, and says so
    code, out, err = main_captured(capsys, "eval", "--method", "vanilla", "--data", path, "--llm", "fake:x", "--quiet")
    assert code == 2 and out == ""
    assert "its rows hold no paragraphs to search; give a store with --corpus DIR" in err
    code, out, _ = main_captured(capsys, "eval", "--method", "none", "--data", path, "--llm", "fake:x", "--quiet", "--json")
    assert code == 0 and json.loads(out)["n"] == 2 and json.loads(out)["dataset"] == "flashrag"


def test_a_file_of_nq_and_triviaqa_rows_is_named_by_its_format(data_dir, capsys):
    """``eval --data odqa.dev.jsonl`` without ``--dataset``: the run, its report and its
    ``runs/`` folder are named ``odqa``, not ``nq`` (its first row's subset, until 2026-11-30);
    each row keeps its subset for ``--by-subset``."""
    from conftest import main_captured

    path = data_dir / "odqa.mixed.sample.jsonl"
    assert [e.dataset for e in load_dataset(str(path))] == ["nq", "nq", "trivia", "trivia"]
    code, out, _ = main_captured(capsys, "eval", "--method", "none", "--data", path, "--llm", "fake:x", "--quiet", "--json")
    assert code == 0 and json.loads(out)["dataset"] == "odqa" and json.loads(out)["n"] == 4
    code, out, _ = main_captured(capsys, "eval", "--method", "none", "--data", data_dir / "odqa.sample.jsonl",
                                 "--llm", "fake:x", "--quiet", "--json", "--limit", "2")
    assert code == 0 and json.loads(out)["dataset"] == "nq"  # one subset: named by it, as before


def test_answer_objects_numbers_and_missing_answers(tmp_path, data_dir):
    """TriviaQA in Hugging Face's layout (``answer`` an object with ``value`` and ``aliases``,
    the id in ``question_id``), a number as the answer, and rows without an answer (a test
    split): the object's value and aliases are the golds (its keys were, until 2026-11-30), the
    number its text (the row was skipped), and a missing answer no gold at all (it was the gold
    "None", and StrategyQA's "no")."""
    from ragraphs.evaluation.metrics import answer_scores

    # a real question with several answers, in TriviaQA's Hugging Face layout
    trivia = next(r for r in _rows(data_dir, "odqa") if isinstance(r.get("answer"), list) and len(r["answer"]) > 1)
    golds = trivia["answer"]
    rows = [{"question_id": "tc_1", "question": trivia["question"], "question_source": "http://www.example.org/",
             "answer": {"aliases": golds[1:], "value": golds[0], "type": "WikipediaEntity", "normalized_value": golds[0].lower()}},
            {"question": "How many moons does Mars have?", "answer": 2}]
    path = tmp_path / "trivia_hf.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    hf, num = load_dataset(str(path))
    assert hf.id == "tc_1" and hf.answers == list(dict.fromkeys(golds))
    assert answer_scores(golds[0], hf.answers)["em"] == 1.0 and answer_scores("its value", hf.answers)["acc"] == 0.0
    assert num.answers == ["2"]
    # a boolean answer (BoolQ; a StrategyQA export without decomposition) is "yes" / "no", not the text "True"
    path = tmp_path / "bool.jsonl"
    path.write_text(json.dumps({"question": "Is Lima in Peru?", "answer": True}) + "\n"
                    + json.dumps({"question": "Is Lima in Chile?", "answer": False}) + "\n")
    yes, no = load_dataset(str(path))
    assert (yes.answers, no.answers) == (["yes"], ["no"])
    assert answer_scores("Yes", yes.answers)["em"] == 1.0
    hotpot = dict(_rows(data_dir, "hotpotqa")[0])
    hotpot.pop("answer")
    strategy = dict(_rows(data_dir, "strategyqa")[0])
    strategy.pop("answer")
    for name, row in (("hotpotqa", hotpot), ("strategyqa", strategy)):
        path = tmp_path / f"{name}_test_split.jsonl"
        path.write_text(json.dumps(row) + "\n")
        (ex,) = load_dataset(str(path), name)
        assert ex.answers == [], name
        assert answer_scores("none", ex.answers)["em"] is None


def test_pooled_corpus_holds_every_gold_paragraph(data_dir):
    for name in ("hotpotqa", "2wikimultihopqa", "musique", "popqa"):
        exs = load_dataset(str(data_dir / f"{name}.sample.jsonl"), name)
        pool = pooled_passages(exs)
        ids = [p["id"] for p in pool]
        assert len(ids) == len(set(ids))
        assert all("meta" not in p for p in pool)
        for e in exs:
            assert e.supporting_ids <= set(ids)


def test_broken_lines_are_reported_and_skipped(tmp_path, data_dir):
    good = (data_dir / "musique.sample.jsonl").read_text().splitlines()[:2]
    path = tmp_path / "m.jsonl"
    path.write_text(good[0] + "\n{not json\n" + good[1] + "\n")
    warned = []
    exs = load_dataset(str(path), "musique", warn=warned.append)
    assert len(exs) == 2 and len(warned) == 1 and ":2:" in warned[0]
    with pytest.raises(InputError):
        load_dataset(str(tmp_path / "missing.jsonl"))


def test_a_csv_or_many_broken_lines_are_told_in_a_few_lines(tmp_path, capsys):
    """A CSV given as ``eval --data`` / ``train-judge --data``: one line saying the file is not JSONL
    or JSON and what a row looks like; a file with many broken lines among good ones: the first
    five, then "... and N more broken lines". Until 2026-11-30 each printed one warning per line
    (1,001 lines for a CSV of 1,000 questions), and the CSV's eval then said it had no questions."""
    from conftest import main_captured

    csv = tmp_path / "qa.csv"
    csv.write_text("question,answer\n" + "".join(f"q{i},a{i}\n" for i in range(1000)))
    said = f"ragraphs: error: {csv} is not JSONL or JSON: each line must be a JSON object such as " \
           '{"question": ..., "answer": ...}\n'
    code, out, err = main_captured(capsys, "eval", "--data", csv, "--method", "none", "--llm", "fake:x",
                                   "--out", tmp_path / "out")
    assert (code, out, err) == (2, "", said)
    code, out, err = main_captured(capsys, "train-judge", "--data", csv, "--out", tmp_path / "judges")
    assert code == 2 and err.count("is not JSONL or JSON") == 1 and "skipped broken line" not in err
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"question": "q0", "answer": "a"}\n' + "".join(f"bad {i}\n" for i in range(12))
                     + '{"question": "q1", "answer": "b"}\n')
    warned: list[str] = []
    assert [ex.question for ex in load_dataset(str(mixed), warn=warned.append)] == ["q0", "q1"]
    assert [w.split(": skipped")[0] for w in warned[:5]] == [f"{mixed}:{n}" for n in range(2, 7)]
    assert warned[5:] == [f"{mixed}: ... and 7 more broken lines"]


def test_a_row_that_is_no_question_answer_row_is_told_what_it_lacks(tmp_path):
    """A row with a question and no answer, a non-text question, or no question key: the warning
    names what is missing or wrong; all three read "no recognisable question format" until
    2026-11-30."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"question": "Capital of Peru?"}\n{"question": 3, "answer": "Lima"}\n'
                    '{"question": null, "answer": "Lima"}\n{"query": "Capital of Peru?", "answer": "Lima"}\n'
                    '{"question": "Capital of Peru?", "answer": "Lima"}\n')
    warned: list[str] = []
    assert [ex.answers for ex in load_dataset(str(path), warn=warned.append)] == [["Lima"]]
    assert warned == [
        f'{path}: row 1 has a "question" but no "answer" or "answers" (nor a benchmark\'s keys such as "context"); skipped',
        f'{path}: row 2 has a "question" that is a number, not text; skipped',
        f'{path}: row 3 has a "question" that is null, not text; skipped',
        f"{path}: row 4 has no \"question\" key (its keys: 'query', 'answer'); skipped",
    ]


def test_a_dataset_named_for_another_datasets_rows_is_refused(data_dir):
    with pytest.raises(InputError, match="its rows are hotpotqa rows, not musique: drop --dataset"):
        load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "musique")
    with pytest.raises(InputError, match="pass --dataset popqa"):
        load_dataset(str(data_dir / "popqa.sample.jsonl"), "strategyqa")
    # one loader reads both formats of a family: 2Wiki rows as HotpotQA, NQ / TriviaQA rows as odqa
    assert len(load_dataset(str(data_dir / "2wikimultihopqa.sample.jsonl"), "hotpotqa")) == 20
    assert len(load_dataset(str(data_dir / "odqa.sample.jsonl"), "triviaqa")) == 20


@pytest.mark.parametrize("name", ["../../escaped", "ABSOLUTE"])
def test_a_rows_dataset_name_cannot_write_outside_out(tmp_path, capsys, name):
    """A row's ``dataset`` field names the run's folder under ``--out``: ``"../../escaped"`` or
    an absolute path wrote the results outside it (until 2026-11-30). The folder name is now
    made safe (``runs/escaped``, ``runs/tmp_..._abs``); the summary still shows the name."""
    from conftest import main_captured
    from ragraphs.evaluation.records import path_part, run_dir

    if name == "ABSOLUTE":
        name = str(tmp_path / "abs")
    work = tmp_path / "work"
    out = work / "out"
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "What is x?", "answer": ["a"], "dataset": name}) + "\n")
    code, stdout, err = main_captured(capsys, "eval", "--method", "none", "--data", data, "--llm", "fake:a",
                                      "--out", out, "--quiet", "--json")
    assert code == 0, err
    assert json.loads(stdout)["dataset"] == name  # shown as the file names it
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert all(w.startswith("work/out/") or w == "rows.jsonl" for w in written), written
    folder = path_part(name)
    assert (out / "runs" / folder).is_dir() and folder in ("escaped", path_part(str(tmp_path / "abs")))
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "abs").exists()
    assert [path_part(n) for n in ("..", ".", "", "/", "a/../b", "a\\..\\b", "C:x", "hotpotqa", "nq.dev")] == \
        ["dataset", "dataset", "dataset", "dataset", "a___b", "a___b", "C_x" if os.name == "nt" else "C:x", "hotpotqa", "nq.dev"]
    assert run_dir("o", "../x", "none") == str(Path("o") / "runs" / "x" / "none")


def test_a_name_that_stays_one_folder_keeps_its_folder(tmp_path):
    """Names that never left ``--out`` are the folders earlier runs wrote: from 2026-11-30 a
    ``..`` inside a label (a model file's path) or a space in a dataset name was rewritten,
    so a rerun found no results and ran every question again without a word."""
    from ragraphs.evaluation.records import path_part, run_dir

    label = RunSpec("vanilla", llm="llamacpp:../models/gemma-q4.gguf").label
    assert label == "vanilla-llamacpp_.._models_gemma-q4.gguf"
    for name in (label, "my data", "-rf", "a..b", "nq.dev", ".hidden", "Ölçü 2"):
        assert path_part(name) == name
    assert run_dir("o", "my data", label) == os.path.join("o", "runs", "my data", label)
    for name in ("..", "../../escaped", "a/b", "a\\b", str(tmp_path / "abs")):
        part = path_part(name)  # still one folder inside runs/
        assert part not in (".", "..") and "/" not in part and "\\" not in part and not os.path.isabs(part)
        root = tmp_path / "out" / "runs"
        assert os.path.dirname(os.path.normpath(os.path.join(root, part))) == str(root)
