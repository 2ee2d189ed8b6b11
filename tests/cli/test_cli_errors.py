"""Bad input gives one clear line and a non-zero exit, never a traceback."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("q", ["", "   ", "\n\t"])
def test_empty_question(cli, q):
    r = cli("ask", q)
    assert r.returncode != 0
    assert r.stderr.strip() == "ragraphs: error: the question is empty"


def test_unknown_method(cli):
    r = cli("ask", "who?", "--method", "nope")
    assert r.returncode != 0 and "unknown method 'nope'" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_missing_path(cli, tmp_path):
    r = cli("ingest", str(tmp_path / "missing.txt"))
    assert r.returncode != 0 and "no such file or directory" in r.stderr and "Traceback" not in r.stderr


def test_corrupt_jsonl_line_is_reported_and_rest_ingested(cli, tmp_path):
    f = tmp_path / "docs.jsonl"
    f.write_text('{"title": "Alpha", "text": "Alpha is the first letter of the Greek alphabet."}\n{broken\n'
                 '{"title": "Beta", "text": "Beta is the second letter of the Greek alphabet."}\n')
    r = cli("ingest", str(f), "--quiet", "--json", "--store", str(tmp_path / "s"))
    assert r.returncode == 0, r.stderr
    assert "docs.jsonl:2: skipped broken line" in r.stderr
    assert '"added": 2' in r.stdout


def test_unreadable_file_skipped_others_ingested(cli, tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "good.md").write_text("# Good\n\nThe good file has text in it.\n")
    (tmp_path / "d" / "bin.txt").write_bytes(b"\x00\x01\x02binary")
    r = cli("ingest", str(tmp_path / "d"), "--quiet", "--store", str(tmp_path / "s"))
    assert r.returncode == 0, r.stderr
    assert "skipped:" in r.stderr and "binary file" in r.stderr
    assert "1 new" in r.stdout


def test_llm_endpoint_refusing_connections(cli, port):
    r = cli(
        "ask", "What is the capital of France?", "--method", "none", "--llm", "openai:some-model",
        OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
        OPENAI_API_KEY="sk-test",
        RAGRAPHS_LLM_RETRIES="0",
    )
    assert r.returncode == 3, r.stderr
    assert r.stderr.startswith("ragraphs: error: LLM call failed") and "Traceback" not in r.stderr
    assert "sk-test" not in r.stderr


def test_unknown_llm_spec(cli):
    r = cli("ask", "Who?", "--method", "none", "--llm", "gpt9000")
    assert r.returncode == 2 and "unknown LLM spec" in r.stderr and "Traceback" not in r.stderr


def test_a_file_that_is_no_gguf_model_is_named_before_any_call(tmp_path, capsys):
    """``--llm llamacpp:notes.csv``: one line naming the file (review of 2026-12-01: llama.cpp's load
    error came as "LLM call failed", exit 3, once a chat turn); a missing file as before."""
    from conftest import main_captured

    notes = tmp_path / "notes.csv"
    notes.write_text("a,b\n1,2\n")
    code, out, err = main_captured(capsys, "ask", "Who?", "--method", "none", "--llm", f"llamacpp:{notes}")
    assert code == 2 and f"{notes} is not a GGUF model file" in err and "LLM call failed" not in err
    code, out, err = main_captured(capsys, "ask", "Who?", "--method", "none", "--llm", f"llamacpp:{tmp_path / 'no.gguf'}")
    assert code == 2 and "GGUF model file not found" in err
    # from Python too: make_llm refuses the file itself, before a graph holds the model
    from ragraphs.errors import ConfigError
    from ragraphs.tools.llm import make_llm

    with pytest.raises(ConfigError, match="is not a GGUF model file"):
        make_llm(f"llamacpp:{notes}")


def test_every_name_of_one_gguf_file_shares_one_loaded_model():
    """"gemma", "Gemma", "llamacpp:" and "gguf:" the same file: one model in memory (review of
    2026-12-01: each spec as typed loaded another copy, about 370 MB each, for the process)."""
    from ragraphs.tools import llm as L

    path = L.gemma_gguf_path()
    first = L.make_llm("gemma", max_tokens=64)
    for spec in ("Gemma", f"llamacpp:{path}", f"GGUF:{path}"):  # each a view of one model, any limit
        for limit in (64, 8):
            assert L.make_llm(spec, max_tokens=limit)._loaded is first._loaded, spec


def test_the_fake_model_a_process_keeps_keeps_its_last_prompts_only():
    """``--llm fake:TEXT`` (dry runs, a server's clients) is kept for the process: it recorded every
    prompt, without bound, until 2026-12-01; now its last 100."""
    from ragraphs.tools.llm import FakeAnswerChat, make_llm

    assert make_llm("fake:a dry run").keep_prompts == 100
    fake = FakeAnswerChat(responses=["x"], keep_prompts=3)
    for i in range(5):
        fake.invoke(f"question {i}")
    assert fake.prompts == ["question 2", "question 3", "question 4"]


def test_bad_llm_threads_setting(tmp_path):
    # new processes (all at once): the setting is read when the model loads, and this one's
    # may be loaded
    procs = {}
    for threads in ("zero", "0", "-2"):
        env = {**os.environ, "RAGRAPHS_HOME": str(tmp_path / "home"), "RAGRAPHS_LLM_THREADS": threads}
        procs[threads] = subprocess.Popen([sys.executable, "-m", "ragraphs", "ask", "Who wrote Hamlet?", "--method", "none"],
                                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for threads, p in procs.items():
        _, stderr = p.communicate(timeout=300)
        assert p.returncode != 0 and "Traceback" not in stderr, threads
        assert stderr.startswith("ragraphs: error: RAGRAPHS_LLM_THREADS must be a positive integer"), (threads, stderr)


def test_llm_threads_setting_reaches_llama_cpp(monkeypatch):
    from ragraphs.tools import llm as L

    monkeypatch.setenv("RAGRAPHS_LLM_THREADS", "1")
    chat = L.LlamaCppCompletionChat(model_path=L.gemma_gguf_path(), max_tokens=4)
    llama = chat._load()
    assert llama.n_threads == 1 and llama.n_threads_batch == 1  # prompts too, not only generation


def test_bad_llm_retries_setting(cli, port):
    r = cli("ask", "Who wrote Hamlet?", "--method", "none", "--llm", "openai:m",
            OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", RAGRAPHS_LLM_RETRIES="abc")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("ragraphs: error: RAGRAPHS_LLM_RETRIES must be a whole number")


def test_remote_model_client_follows_its_endpoint_settings(monkeypatch):
    from ragraphs.tools.llm import make_llm

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    a = make_llm("openai:m")
    assert make_llm("openai:m") is a  # built once per settings
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:10/v1")
    b = make_llm("openai:m")
    assert b is not a and "127.0.0.1:10" in str(b.openai_api_base)
    monkeypatch.setenv("RAGRAPHS_LLM_TIMEOUT", "7")
    assert make_llm("openai:m") is not b


def test_mistyped_setting_name_is_refused_with_the_closest_names(cli, tmp_path):
    r = cli("ask", "who?", "--method", "dr-rag", "--set", "pair_treshold=0.5", "--store", str(tmp_path / "s"))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1
    assert "method 'dr-rag' has no setting 'pair_treshold' (did you mean 'pair_threshold'?)" in err


@pytest.mark.parametrize("setting, message", [
    ("upper=abc", "run setting 'upper' must be a number, got 'abc'"),
    ("k2=-3", "run setting 'k2' must be a whole number >= 1, got -3"),
    ("strategy=xyz", "run setting 'strategy' must be one of sm | qdc | cis | cfs, got 'xyz'"),
])
def test_setting_of_the_wrong_type_is_refused_before_any_node_runs(cli, tmp_path, setting, message):
    method = "crag" if setting.startswith("upper") else "dr-rag"
    r = cli("ask", "who?", "--method", method, "--set", setting, "--store", str(tmp_path / "s"))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"ragraphs: error: {message}"


def test_ingest_of_an_empty_directory_says_nothing_was_found(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    r = cli("ingest", str(tmp_path / "empty"), "--quiet", "--store", str(tmp_path / "s"))
    assert r.returncode == 0, r.stderr
    assert f"warning: no files found in {tmp_path / 'empty'}" in r.stderr
    assert "ingested 0 file(s)" in r.stdout


def test_methods_shows_a_methods_settings_with_defaults_and_descriptions(capsys):
    import json

    from ragraphs.cli import main
    from ragraphs.settings import CRAGContext

    assert main(["methods", "crag"]) == 0
    out = capsys.readouterr().out
    assert f"  upper = {CRAGContext().upper}  (a number)" in out
    assert "  web_fallback = " in out and "one of " in out
    assert main(["methods", "dr-rag", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["strategy"]["kind"] == "one of sm | qdc | cis | cfs" and rows["strategy"]["default"] == "cfs"
    assert all(r["description"] for r in rows.values()), "every setting is described"
    assert main(["methods", "--json"]) == 0
    assert "pair_threshold" in json.loads(capsys.readouterr().out)["dr-rag"]
    assert main(["methods", "nope"]) != 0
    # the chat graph's settings, the method's own as an object
    assert main(["methods", "chat", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["follow_up"]["kind"] == "one of alone | rewrite" and rows["follow_up"]["default"] == "alone"
    assert rows["settings"]["kind"] == "an object of names and values" and rows["method"]["default"] == "vanilla"
    assert all(r["description"] for r in rows.values()), "every setting is described"


@pytest.mark.parametrize("n", ["0", "-5"])
def test_ingest_with_chunks_of_no_words_is_refused(cli, tmp_path, n):
    f = tmp_path / "a.txt"
    f.write_text("Alpha is the first letter of the Greek alphabet.\n")
    r = cli("ingest", str(f), "--chunk-words", n, "--quiet", "--store", str(tmp_path / "s"))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"ragraphs: error: --chunk-words must be at least 1, got {n}"


def test_question_answer_rows_say_what_each_verb_needs(tmp_path, capsys):
    """A user's own {question, answers} file holds no paragraphs: calibrate-crag, judge-eval and
    train-judge each say what is missing in one line, before any model loads."""
    from conftest import main_captured

    f = tmp_path / "mine.jsonl"
    f.write_text('{"question": "Who wrote Hamlet?", "answers": ["Shakespeare"]}\n'
                 '{"question": "What is the capital of Peru?", "answer": "Lima"}\n')
    code, _, err = main_captured(capsys, "calibrate-crag", "--data", f)
    assert code == 2 and err.strip() == (f"ragraphs: error: {f}: its rows hold no paragraphs, so there is no retrieval "
                                         "to calibrate on; use a benchmark file whose rows carry their paragraphs "
                                         "(PopQA, HotpotQA, 2Wiki, MuSiQue)")
    code, _, err = main_captured(capsys, "judge-eval", "--judge", "evaluator", "--data", f)
    assert code == 2 and err.strip() == f"ragraphs: error: no labelled items for the evaluator judge in {f}"
    code, _, err = main_captured(capsys, "train-judge", "--data", f, "--out", tmp_path / "judges")
    assert code == 2 and err.strip().endswith(f"ragraphs: error: no labelled items for any judge in {f}")
    assert not (tmp_path / "judges").exists()


def test_a_byte_order_mark_does_not_cost_the_first_row(tmp_path, capsys):
    """A UTF-8 byte-order mark before the first line: the first passage and the first question
    are read (they were reported as a broken line and dropped)."""
    from conftest import main_captured

    from ragraphs.datasets import load_dataset

    bom = b"\xef\xbb\xbf"
    docs = tmp_path / "docs.jsonl"
    docs.write_bytes(bom + b'{"title": "Alpha", "text": "Alpha is the first letter."}\n'
                     b'{"title": "Beta", "text": "Beta is the second letter."}\n')
    code, out, err = main_captured(capsys, "ingest", docs, "--store", tmp_path / "s", "--json", "--quiet")
    assert code == 0 and '"added": 2' in out and "broken" not in err
    sample = Path(__file__).resolve().parents[1] / "data" / "hotpotqa.sample.jsonl"
    lines = sample.read_bytes().splitlines(keepends=True)[:2]
    for name, body in (("rows.jsonl", b"".join(lines)), ("rows.json", b"[" + b",".join(lines) + b"]")):
        f = tmp_path / name
        f.write_bytes(bom + body)
        assert len(load_dataset(str(f), "hotpotqa")) == 2, name


def test_a_utf16_jsonl_file_is_read_as_utf8_is(tmp_path, capsys):
    """What Windows PowerShell 5.1's ``>`` writes (UTF-16 with a byte-order mark): every line was
    refused as broken until 2026-11-30, though a UTF-16 text file was read."""
    from conftest import main_captured

    from ragraphs.datasets import load_dataset

    docs = tmp_path / "docs.jsonl"
    docs.write_bytes(('{"title": "Zoë", "text": "Zoë is the first name."}\r\n'
                      '{"title": "Beta", "text": "Beta is the second letter."}\r\n').encode("utf-16"))
    code, out, err = main_captured(capsys, "ingest", docs, "--store", tmp_path / "s", "--json", "--quiet")
    assert code == 0 and '"added": 2' in out and "broken" not in err
    sample = Path(__file__).resolve().parents[1] / "data" / "hotpotqa.sample.jsonl"
    lines = sample.read_text(encoding="utf-8").splitlines(keepends=True)[:2]
    for name, body, enc in (("rows.jsonl", "".join(lines), "utf-16"), ("rows.json", "[" + ",".join(lines) + "]", "utf-16-be")):
        f = tmp_path / name
        f.write_bytes((b"\xfe\xff" if enc == "utf-16-be" else b"") + body.encode(enc))
        rows = load_dataset(str(f), "hotpotqa")
        assert len(rows) == 2 and rows[0].question == json.loads(lines[0])["question"], name


def test_utf16_text_without_a_byte_order_mark_is_read_not_called_binary(tmp_path, capsys):
    """UTF-16 with no byte-order mark (as some Windows tools write it) was refused as a binary
    file until 2026-12-03; a file of NULs and bytes that is no UTF-16 still is."""
    from conftest import main_captured

    from ragraphs.ingest import read_file

    text = "Zoë Okapi\r\n\r\nThe okapi is a giraffid of the Congo, first described in 1901.\r\n"
    for enc in ("utf-16-le", "utf-16-be"):
        f = tmp_path / f"{enc}.txt"
        f.write_bytes(text.encode(enc))
        (p,) = read_file(str(f))
        assert "The okapi is a giraffid of the Congo" in p["text"] and "\x00" not in p["text"], enc
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes('{"title": "Zoë", "text": "Zoë is a first name."}\n{"title": "B", "text": "Beta."}\n'.encode("utf-16-le"))
    assert [p["title"] for p in read_file(str(rows))] == ["Zoë", "B"]
    (tmp_path / "data.bin").write_bytes(bytes([0x41, 0, 0xD8, 0] * 40 + [0, 0, 7, 1] * 10))
    code, out, err = main_captured(capsys, "ingest", tmp_path, "--store", tmp_path / "s", "--json", "--quiet")
    assert code == 0 and '"added": 4' in out and "data.bin: binary file, not text" in err


def test_a_named_pipe_is_skipped_not_waited_on(tmp_path, capsys):
    from conftest import main_captured

    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.txt").write_text("The first file has some text in it.\n")
    os.mkfifo(folder / "pipe")
    code, out, err = main_captured(capsys, "ingest", folder, "--store", tmp_path / "s", "--json", "--quiet")
    assert code == 0 and '"added": 1' in out
    assert "pipe: not a regular file (a pipe, socket or device)" in err


def test_paths_and_counts_are_checked_before_the_work(tmp_path, capsys):
    """An --out that cannot be written is refused before the corpus is embedded (eval) or the
    thresholds are fitted (calibrate-crag); a batch or limit of 0 is refused too."""
    from conftest import main_captured

    data = Path(__file__).resolve().parents[1] / "data"
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    cases = [
        (("eval", "--data", data / "hotpotqa.sample.jsonl", "--method", "none", "--llm", "fake:x", "--out", a_file),
         f"--out {a_file} is a file; give a folder"),
        (("eval", "--data", data / "hotpotqa.sample.jsonl", "--method", "none", "--llm", "fake:x", "--out", a_file / "sub"),
         f"--out {a_file / 'sub'}: {a_file} is a file, not a folder; give a folder"),  # "cannot make the folder" until 2026-11-30
        (("calibrate-crag", "--data", data / "popqa.sample.jsonl", "--out", tmp_path / "no" / "such" / "x.json"),
         "is not a writable folder"),
        (("calibrate-crag", "--data", data / "popqa.sample.jsonl", "--limit", "0"), "--limit must be at least 1"),
        (("judge-eval", "--judge", "evaluator", "--data", data / "hotpotqa.sample.jsonl", "--batch", "0"), "--batch must be >= 1"),
        (("judge-eval", "--judge", "evaluator", "--data", data / "hotpotqa.sample.jsonl", "--limit", "0"), "--limit must be >= 1"),
    ]
    for argv, message in cases:
        code, out, err = main_captured(capsys, *argv)
        assert code == 2 and err.startswith("ragraphs: error: ") and message in err, (argv, err)
        assert "Traceback" not in err and not out


def test_train_judge_refuses_an_out_folder_holding_other_files(tmp_path):
    """Writing a judge replaces its folder's contents: a folder with other files in it is refused
    before any training (it was emptied after it), a judges folder is replaced as before."""
    from ragraphs.errors import InputError
    from ragraphs.tools.judges.train import check_out_dir

    precious = tmp_path / "precious"
    (precious / "sub").mkdir(parents=True)
    (precious / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="holds files that are not a judge's"):
        check_out_dir(precious)
    assert (precious / "notes.txt").read_text() == "mine"
    with pytest.raises(InputError, match="is a file"):
        check_out_dir(precious / "notes.txt")
    judges = tmp_path / "judges"
    judges.mkdir()
    (judges / "ragraphs_judge.json").write_text("{}")
    (judges / "model.safetensors").write_text("")
    check_out_dir(judges)
    check_out_dir(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    check_out_dir(tmp_path / "empty")


def test_a_mistyped_store_or_collection_is_an_error_not_a_new_empty_one(tmp_path, capsys):
    """ask (and chat, replay) read a store: a collection or store folder that is not there is
    named with what is there, and nothing is created (an empty one was, and the run answered
    from nothing)."""
    from conftest import main_captured

    docs = tmp_path / "d.jsonl"
    docs.write_text('{"title": "Lima", "text": "Lima is the capital of Peru."}\n')
    store = tmp_path / "store"
    assert main_captured(capsys, "ingest", docs, "--store", store, "--collection", "demo", "--quiet")[0] == 0
    code, out, err = main_captured(capsys, "ask", "Capital of Peru?", "--llm", "fake:x", "--store", store,
                                   "--collection", "dem0")
    assert code == 2 and not out
    assert err.strip() == (f"ragraphs: error: no collection 'dem0' in the store at {store} (its collections: demo); "
                           "`ragraphs ingest PATH --collection dem0` makes one")
    missing = tmp_path / "nowhere"
    code, out, err = main_captured(capsys, "ask", "Capital of Peru?", "--llm", "fake:x", "--store", missing)
    assert code == 2 and err.startswith(f"ragraphs: error: no store at {missing}") and not missing.exists()
    # a folder of the user's that is no store is left as it was (Chroma wrote its file there
    # until 2026-11-30, and ingest skipped that folder as a store from then on)
    code, out, err = main_captured(capsys, "ask", "Capital of Peru?", "--llm", "fake:x", "--store", tmp_path)
    assert code == 2 and err.startswith(f"ragraphs: error: no store at {tmp_path}")
    assert not (tmp_path / "chroma.sqlite3").exists()
    assert "give `ragraphs ingest YOUR_DOCS --store NEW_FOLDER` a new folder" in err  # not this folder
    # ...and ingest will not make a store inside the folder it reads, nor in a folder of other files
    # (following the old advice made the documents folder a store that every later ingest skipped)
    code, out, err = main_captured(capsys, "ingest", tmp_path, "--store", tmp_path, "--quiet")
    assert code == 2 and "is the folder being ingested" in err and not (tmp_path / "chroma.sqlite3").exists()
    others = tmp_path.parent / f"{tmp_path.name}-others"
    others.mkdir()
    (others / "notes.txt").write_text("mine")
    code, out, err = main_captured(capsys, "ingest", docs, "--store", others, "--quiet")
    assert code == 2 and "a folder of other files, not a store" in err and not (others / "chroma.sqlite3").exists()
    fresh = tmp_path.parent / f"{tmp_path.name}-fresh"  # made ahead, with only a hidden file: a new store's place
    fresh.mkdir()
    (fresh / ".DS_Store").write_text("")
    assert main_captured(capsys, "ingest", docs, "--store", fresh, "--quiet")[0] == 0 and (fresh / "chroma.sqlite3").exists()
    code, out, _ = main_captured(capsys, "ask", "Capital of Peru?", "--llm", "fake:Lima", "--store", store,
                                 "--collection", "demo", "--quiet")
    assert code == 0 and out.strip() == "Lima"


def test_eval_says_why_its_questions_failed(tmp_path, capsys, monkeypatch, port):
    """A run whose questions fail prints the first failure's message, not only a count."""
    from conftest import main_captured

    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RAGRAPHS_LLM_RETRIES", "0")
    data = Path(__file__).resolve().parents[1] / "data" / "hotpotqa.sample.jsonl"
    code, out, err = main_captured(capsys, "eval", "--data", data, "--limit", "2", "--method", "none",
                                   "--llm", "openai:some-model", "--quiet")
    assert code == 1 and "| none-openai_some-model | 2 |" in out
    assert "none-openai_some-model: 2 of 2 questions failed; the first (" in err
    assert "LLM call failed" in err and "sk-test" not in err


def test_more_mistakes_each_one_line(tmp_path, capsys):
    from conftest import main_captured

    docs = tmp_path / "d.jsonl"
    docs.write_text('{"title": "Lima", "text": "Lima is the capital of Peru."}\n')
    store = ["--store", tmp_path / "store", "--collection", "demo"]
    assert main_captured(capsys, "ingest", docs, *store, "--quiet")[0] == 0
    cases = [
        (("ask", "Who?", *store, "--k", "-2"), "run setting 'k' must be a whole number >= 1, got -2"),
        (("ask", "Who?", *store, "--k", "0"), "run setting 'k' must be a whole number >= 1, got 0"),
        (("ask", "Who?", *store, "--llm", "fake:x", "--set", "rerank=no-such-model"),
         "run setting 'rerank': 'no-such-model' is not none, evaluator, a folder here or a model in the local Hugging Face cache"),
        (("ask", "Who?", *store, "--llm", "fake:x", "--set", "rerank=org/no-such-model"),  # a name: left to the loader
         "run setting 'rerank': judge model 'org/no-such-model': no such folder, and no model of that name in the local "
         "Hugging Face cache"),
        (("ask", "Who?", *store, "--llm", "fake:x", "--checkpointer", tmp_path / "c.sqlite"),
         "--checkpointer keeps a run under a --thread ID"),
        (("eval", "--data", tmp_path, "--method", "none"), f"--data {tmp_path} is a folder"),
        (("demo", "--method", "nope", "--store", tmp_path / "demo"), "unknown method 'nope'"),
    ]
    for argv, message in cases:
        code, out, err = main_captured(capsys, *argv)
        assert code == 2 and err.startswith("ragraphs: error: ") and message in err, (argv, err)
        assert len(err.strip().splitlines()) == 1 and not out, (argv, err)
    assert not (tmp_path / "demo").exists() and not (tmp_path / "c.sqlite").exists()  # nothing done first


def test_blank_values_and_options_a_run_would_not_read_are_refused(tmp_path, capsys, data_dir):
    """Review of 2026-12-01: a blank value (an unset shell variable) read as "not given" (eval kept
    nothing, ask kept no checkpoint, ``--method ,`` ran vanilla), and eval ran past options it
    ignored (``--method`` beside ``--compare``, ``--concurrency`` without ``--server``, ``--fresh``
    without ``--out``, ``--collection`` without ``--corpus``)."""
    from conftest import main_captured

    data = str(data_dir / "hotpotqa.sample.jsonl")
    ev = ("eval", "--data", data, "--limit", "1", "--retrieval-only", "--quiet")
    cases = [
        ((*ev, "--out", ""), "--out is blank (an unset shell variable?)"),
        ((*ev, "--corpus", " "), "--corpus is blank"),
        ((*ev, "--method", ","), "--method is blank"),
        ((*ev, "--compare", ""), "--compare is blank"),
        (("ask", "Who?", "--llm", "fake:x", "--thread", ""), "--thread is blank"),
        (("calibrate-crag", "--data", data, "--out", ""), "--out is blank"),
        ((*ev, "--compare", "dr-rag,crag", "--method", "none"), "--method and --compare both name the methods"),
        ((*ev, "--concurrency", "-2"), "--concurrency is the questions in flight on a --server"),
        ((*ev, "--fresh"), "--fresh starts an --out folder over"),
        ((*ev, "--collection", "foo"), "--collection names the collection of --corpus"),
    ]
    for argv, message in cases:
        code, out, err = main_captured(capsys, *argv)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out, (argv, err)
    # a data file eval refuses leaves no empty --out folder behind
    bad = tmp_path / "data.csv"
    bad.write_text("question,answer\nWho?,x\n")
    code, out, err = main_captured(capsys, "eval", "--data", bad, "--out", tmp_path / "o", "--quiet")
    assert code == 2 and not (tmp_path / "o").exists(), err


def test_retrieval_only_leaves_out_the_method_that_retrieves_nothing(capsys):
    """`none` under --retrieval-only would still ask its LLM for every question: it is left out
    of a comparison, and refused alone."""
    from conftest import main_captured

    data = Path(__file__).resolve().parents[1] / "data" / "hotpotqa.sample.jsonl"
    code, out, err = main_captured(capsys, "eval", "--data", data, "--method", "none", "--retrieval-only", "--limit", "1")
    assert code == 2 and "method 'none' answers without retrieving" in err
    code, out, err = main_captured(capsys, "eval", "--data", data, "--compare", "none,oracle", "--retrieval-only",
                                   "--limit", "1", "--llm", "fake:x", "--json")
    assert code == 0 and "method 'none' left out" in err
    assert json.loads(out)["method"] == "oracle"  # one run left: its summary alone


def test_calibrate_crag_by_document_where_every_retrieval_holds_gold(capsys, tmp_path):
    from conftest import main_captured

    # the error's own advice (--unit doc) used to fail on the comparison fit by question
    data = Path(__file__).resolve().parents[1] / "data" / "popqa.sample.jsonl"
    code, out, _ = main_captured(capsys, "calibrate-crag", "--data", str(data), "--unit", "doc", "--bootstrap", "0", "--json")
    report = json.loads(out)
    assert code == 0 and report["unit"] == "doc" and report["calibrated_question"] is None
    assert report["calibrated"]["upper"] is not None


@pytest.mark.parametrize("args, message", [
    (("--warmup", "1"), "--warmup is a share of the steps"),
    (("--threads", "-1"), "--threads must be >= 0"),
    (("--max-length", "0"), "--max-length must be from 16 to the model's 512 positions"),
    (("--mine-k", "-1"), "--mine-k and --pair-mine-k must be >= 0"),
    (("--layers", "9"), "MiniLM has 6"),
    (("--init", "/no/such/folder"), "--init: no such folder"),
    (("--teachers", "/no/such/teacher"), "--teachers: no such folder"),
])
def test_train_judge_checks_its_training_options_before_building_anything(capsys, tmp_path, args, message):
    from conftest import main_captured

    data = Path(__file__).resolve().parents[1] / "data" / "hotpotqa.sample.jsonl"
    code, _, err = main_captured(capsys, "train-judge", "--data", str(data), "--out", str(tmp_path / "j"), *args)
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "j").exists()


def test_judge_eval_refuses_a_file_for_weights_and_pair_tokens_it_would_not_use(capsys):
    from conftest import main_captured

    root = Path(__file__).resolve().parents[2]
    data = root / "tests" / "data" / "hotpotqa.sample.jsonl"
    onnx = root / "ragraphs" / "data" / "judges" / "onnx" / "model_qint8.onnx"
    code, _, err = main_captured(capsys, "judge-eval", "--judge", "evaluator", "--data", str(data), "--weights", str(onnx))
    assert code == 2 and "--weights takes the judges' folder" in err
    code, _, err = main_captured(capsys, "judge-eval", "--judge", "evaluator", "--data", str(data), "--pair-tokens", "96")
    assert code == 2 and "--pair-tokens is for --judge pair" in err
    code, _, err = main_captured(capsys, "judge-eval", "--judge", "pair", "--data", str(data), "--pair-tokens", "-5")
    assert code == 2 and "at least 16 tokens" in err


def test_judge_eval_says_which_file_gave_no_items(capsys):
    from conftest import main_captured

    data = Path(__file__).resolve().parents[1] / "data"
    code, out, err = main_captured(capsys, "judge-eval", "--judge", "pair", "--data", str(data / "hotpotqa.sample.jsonl"),
                                   str(data / "popqa.sample.jsonl"), "--limit", "5", "--no-timing")
    assert code == 0 and "popqa.sample.jsonl: no labelled items for the pair judge; left out" in err
    assert "on hotpotqa.sample.jsonl:" in out and "popqa" not in out.split("\n")[0]


def test_retrieval_settings_given_to_the_no_retrieval_baseline_are_named(tmp_path, capsys):
    """``ask --method none --k 9 --set rerank=evaluator``: the answer, and a warning that those
    settings change nothing (they were taken without a word until 2026-11-30)."""
    from conftest import main_captured

    code, out, err = main_captured(capsys, "ask", "Who wrote Hamlet?", "--method", "none", "--llm", "fake:Shakespeare",
                                   "--k", "9", "--set", "rerank=evaluator", "--set", "max_new_tokens=8")
    assert code == 0 and out.splitlines()[0] == "Shakespeare"
    assert "warning: method 'none' retrieves nothing, so k, rerank change nothing" in err
    code, out, err = main_captured(capsys, "ask", "Who wrote Hamlet?", "--method", "none", "--llm", "fake:Shakespeare",
                                   "--k", "3")
    assert code == 0 and "warning: method 'none' retrieves nothing, so k changes nothing" in err
    code, out, err = main_captured(capsys, "ask", "Who wrote Hamlet?", "--method", "none", "--llm", "fake:Shakespeare")
    assert code == 0 and "warning" not in err


def test_a_file_given_as_the_store_or_the_checkpointers_folder_is_named_as_a_file(tmp_path, capsys, monkeypatch):
    """``--store FILE`` (or a folder under a file), and ``--checkpointer FILE/cp.sqlite``: one line
    saying the file is no folder, from ask, chat, ingest and history, and from the Python API.
    Until 2026-11-30 ask advised `ragraphs ingest YOUR_DOCS --store FILE`, which then failed with
    a raw FileExistsError (NotADirectoryError under a file)."""
    from conftest import main_captured

    from ragraphs.components import Components
    from ragraphs.errors import ConfigError

    docs = tmp_path / "d.jsonl"
    docs.write_text('{"title": "Lima", "text": "Lima is the capital of Peru."}\n')
    monkeypatch.chdir(tmp_path)  # the paths as a user types them, relative
    for verb in (["ask", "Capital of Peru?", "--llm", "fake:x"], ["chat", "--llm", "fake:x"], ["ingest", "d.jsonl"]):
        code, out, err = main_captured(capsys, *verb, "--store", "d.jsonl")
        assert (code, out, err) == (2, "", "ragraphs: error: --store d.jsonl is a file; give a folder\n"), verb
        code, out, err = main_captured(capsys, *verb, "--store", "d.jsonl/sub")
        assert err == "ragraphs: error: --store d.jsonl/sub: d.jsonl is a file, not a folder; give a folder\n", verb
    assert main_captured(capsys, "ingest", "d.jsonl", "--store", "store", "--quiet")[0] == 0
    for verb in (["ask", "Capital of Peru?", "--llm", "fake:x", "--store", "store", "--thread", "t"], ["history", "t"]):
        code, out, err = main_captured(capsys, *verb, "--checkpointer", "d.jsonl/cp.sqlite")
        assert (code, err) == (2, "ragraphs: error: --checkpointer d.jsonl/cp.sqlite: d.jsonl is a file, not a "
                                  "folder; give a file name in a folder\n"), verb
    with pytest.raises(ConfigError, match=r"^store d.jsonl is a file; give a folder$"):
        _ = Components(store_path="d.jsonl").retriever
    assert docs.read_text().startswith('{"title": "Lima"')



def test_an_address_or_a_broken_link_as_store_is_named_for_what_it_is(tmp_path, capsys, monkeypatch):
    """``--store http://host:8000`` made a local folder named ``http:/host:8000`` and filled it (the
    empty-store warning for a Chroma server advised it until 2026-11-30): now one line pointing to
    ``--store-url``, and the warning names ``--store-url``; a broken symbolic link as the store, or
    in its path, is called one (it read "is a file")."""
    import warnings

    from conftest import main_captured

    from ragraphs.tools import vectorstore

    (tmp_path / "d.jsonl").write_text('{"title": "Lima", "text": "Lima is the capital of Peru."}\n')
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    monkeypatch.chdir(tmp_path)
    for verb in (["ask", "Capital of Peru?", "--llm", "fake:x"], ["ingest", "d.jsonl"]):
        code, out, err = main_captured(capsys, *verb, "--store", "http://127.0.0.1:8000")
        assert (code, err) == (2, "ragraphs: error: --store http://127.0.0.1:8000 is an address; give a Chroma "
                                  "server as --store-url http://127.0.0.1:8000\n"), verb
        code, out, err = main_captured(capsys, *verb, "--store", "broken/sub")
        assert err == ("ragraphs: error: --store broken/sub: broken is a link to nothing (a broken symbolic "
                       "link), not a folder; give a folder\n"), verb
    assert not any(p.name.startswith("http") for p in tmp_path.iterdir())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vectorstore._warn_empty("http://127.0.0.1:8000", "nothing-here", url=True)
    assert "--store-url http://127.0.0.1:8000 --collection nothing-here" in str(caught[0].message)

def test_an_option_and_set_giving_one_setting_two_values_are_refused(tmp_path, capsys, monkeypatch):
    """``--k 5 --set k=1``, ``--llm X --set llm=Y`` (and chat's ``--history-turns``): one line naming
    both, exit 2, before any store or model is opened. Until 2026-11-30 ``--set`` won and the
    option was dropped without a word. The same value twice (``--k 5 --set k=5``) is taken."""
    from conftest import main_captured

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    nowhere = tmp_path / "nowhere"  # no store: a refused clash never gets as far as opening one
    cases = [
        (["ask", "Who?", "--k", "5", "--set", "k=1"], "--k 5 and --set k=1 give k two values; give one of them"),
        (["ask", "Who?", "--llm", "fake:x", "--set", "llm=gemma"],
         "--llm fake:x and --set llm=gemma give llm two values; give one of them"),
        (["ask", "Who?", "--method", "crag", "--retrieval", "bm25", "--set", "crag.retrieval=dense"],
         "--retrieval bm25 and --set crag.retrieval=dense give retrieval two values; give one of them"),
        (["ask", "Who?", "--retrieval-only", "--set", "skip_generation=false"],
         "--retrieval-only and --set skip_generation=false give skip_generation two values; give one of them"),
        (["chat", "--k", "5", "--set", "k=1"], "--k 5 and --set k=1 give k two values; give one of them"),
        (["chat", "--history-turns", "2", "--set", "history_turns=3"],
         "--history-turns 2 and --set history_turns=3 give history_turns two values; give one of them"),
    ]
    for argv, said in cases:
        code, out, err = main_captured(capsys, *argv, "--store", nowhere)
        assert (code, out, err) == (2, "", f"ragraphs: error: {said}\n"), argv
    code, out, err = main_captured(capsys, "ask", "Who?", "--llm", "fake:x", "--k", "5", "--set", "k=5", "--store", nowhere)
    assert code == 2 and err.startswith(f"ragraphs: error: no store at {nowhere}")  # past the check
    assert not nowhere.exists()


def test_eval_refuses_an_option_and_set_giving_one_setting_two_values(tmp_path, capsys):
    """``eval --k 4 --set k=6`` ran with k = 6 in a folder named for k = 4 until 2026-11-30 (night):
    now one line, exit 2, before the data file is read. A list (``--k 2,4``) clashes with any
    ``--set k``; a scoped ``dr-rag.strategy`` with ``--strategy`` (quoted as typed); ``--set
    skip_generation=false`` with ``--retrieval-only`` (generation ran); the same value twice is taken."""
    from conftest import main_captured

    missing = tmp_path / "missing.jsonl"  # never read: the clash is refused first
    cases = [
        (["--k", "4", "--set", "k=6"], "--k 4 and --set k=6 give k two values"),
        (["--k", "2,4", "--set", "k=2"], "--k 2,4 and --set k=2 give k two values"),
        (["--method", "dr-rag", "--strategy", "cfs", "--set", "dr-rag.strategy=cis"],
         "--strategy cfs and --set dr-rag.strategy=cis give strategy two values"),
        (["--compare", "vanilla,crag", "--retrieval", "bm25", "--set", "crag.retrieval=dense"],
         "--retrieval bm25 and --set crag.retrieval=dense give retrieval two values"),
        (["--retrieval-only", "--set", "skip_generation=false"],
         "--retrieval-only and --set skip_generation=false give skip_generation two values"),
        (["--llm", "fake:x", "--set", "llm=gemma"], "--llm fake:x and --set llm=gemma give llm two values"),
    ]
    for extra, said in cases:
        code, out, err = main_captured(capsys, "eval", "--data", str(missing), *extra)
        assert (code, out, err) == (2, "", f"ragraphs: error: {said}; give one of them\n"), extra
    code, out, err = main_captured(capsys, "eval", "--data", str(missing), "--k", "4", "--set", "k=4")
    assert (code, err) == (2, f"ragraphs: error: --data: no such file: {missing}\n")  # past the check


def test_a_leading_tilde_in_a_path_option_is_the_home_folder(tmp_path, capsys, monkeypatch, data_dir):
    """``--store=~/x`` (which no shell expands) made a folder ``./~/x`` until 2026-12-03, while
    ``--checkpointer=~/x`` was the home folder's: every path option now reads ``~`` alike."""
    from conftest import main_captured

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(), work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    (home / "notes.md").write_text("# Okapi\n\nThe okapi is a giraffid of the Congo.\n", encoding="utf-8")
    code, out, err = main_captured(capsys, "ingest", "~/notes.md", "--store=~/st", "--quiet", "--json")
    assert code == 0 and json.loads(out)["added"] == 1, err
    assert (home / "st").is_dir() and not (work / "~").exists()
    code, out, _ = main_captured(capsys, "ask", "What is an okapi?", "--store=~/st", "--llm", "fake:a giraffid",
                                 "--retrieval-only", "--quiet")
    assert code == 0 and "The okapi is a giraffid" in out
    (home / "data.jsonl").write_text((data_dir / "popqa.sample.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err = main_captured(capsys, "eval", "--data=~/data.jsonl", "--method", "none", "--limit", "1",
                                 "--llm", "fake:x", "--out=~/runs", "--quiet")
    assert code == 0 and (home / "runs").is_dir() and not (work / "~").exists(), err


def test_escape_sequences_in_documents_names_and_answers_are_shown_not_run(tmp_path, capsys, monkeypatch):
    """A document, a file name or an answer with a terminal's escape sequences (ESC, OSC's bell,
    a carriage return) reached the terminal raw until 2026-12-03: it could recolour, retitle or
    rewrite it, and a line break in a file name split ``sources:`` over two lines."""
    from conftest import main_captured

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "okapi.md").write_text("# Okapi \x1b[31mred\x1b[0m\n\nThe okapi \x1b]0;pwned\x07 is a giraffid.\r of the Congo.\n",
                                   encoding="utf-8")
    (docs / "zebra\x1b[2J\nname.txt").write_text("The zebra is striped.\n", encoding="utf-8")
    store = tmp_path / "store"
    code, out, err = main_captured(capsys, "ingest", docs, "--store", store, "--quiet")
    assert code == 0 and "\x1b" not in out + err, err
    code, out, err = main_captured(capsys, "ask", "What is an okapi?", "--store", store, "--llm", "fake:\x1b[2Ja giraffid\x07",
                                   "--k", "2")
    assert code == 0 and not any(c in out + err for c in "\x1b\x07\r"), out
    assert out.splitlines()[0] == "\\x1b[2Ja giraffid\\x07"
    assert "Okapi \\x1b[31mred\\x1b[0m (corpus" in out and "zebra\\x1b[2J\\x0aname" in out
    monkeypatch.setattr("sys.stdin", io.StringIO("What is a zebra?\n"))
    code, out, err = main_captured(capsys, "chat", "--store", store, "--llm", "fake:striped", "--k", "2")
    assert code == 0 and not any(c in out + err for c in "\x1b\x07\r"), out
    sources = [line for line in out.splitlines() if line.startswith("  sources: ")]
    assert len(sources) == 1 and "zebra\\x1b[2J\\x0aname.txt" in sources[0]


def test_the_demo_refuses_a_model_spec_before_it_ingests(tmp_path, capsys):
    """``demo --llm nope:x`` ingested the sample first and failed after (until 2026-12-03)."""
    from conftest import main_captured

    code, out, err = main_captured(capsys, "demo", "--llm", "nope:x", "--store", tmp_path / "demo")
    assert code == 2 and "unknown LLM spec 'nope:x'" in err and "ingest" not in out
    assert not (tmp_path / "demo").exists()


@pytest.mark.parametrize("command", [["ingest", "README.md"], ["ask", "Where is Lima?"], ["chat"], ["replay", "t1"]])
def test_a_store_folder_and_a_store_server_together_are_refused(command, tmp_path, capsys):
    """``--store DIR --store-url URL``: one or the other (the usage line's ``|``); with both, the
    folder was left out without a word and the documents went to the server (until 2026-12-03)."""
    from conftest import main_captured

    with pytest.raises(SystemExit) as stop:
        main_captured(capsys, *command, "--store", tmp_path / "s", "--store-url", "http://127.0.0.1:9")
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--store-url: not allowed with argument --store" in err
    assert not (tmp_path / "s").exists()


def test_set_skip_generation_in_ask_is_retrieval_only(tmp_path, capsys):
    """``ask --set skip_generation=true`` is ``--retrieval-only`` by its setting's name: the passages
    without a "no answer" line, ``retrieval_only`` in ``--json``, and refused for ``none``; until
    2026-12-03 it said the model gave no answer (never asked) and ran ``none``."""
    from conftest import main_captured

    doc = tmp_path / "lima.txt"
    doc.write_text("Lima is the capital and largest city of Peru.")
    assert main_captured(capsys, "ingest", doc, "--store", tmp_path / "s", "--quiet")[0] == 0
    ask = ("ask", "Capital of Peru?", "--store", tmp_path / "s", "--llm", "fake:x")
    said = [main_captured(capsys, *ask, *flag) for flag in (["--retrieval-only"], ["--set", "skip_generation=true"])]
    assert said[0][0] == said[1][0] == 0 and "no answer" not in said[1][1] and "lima" in said[1][1]
    assert said[0][1].split("llm calls")[0] == said[1][1].split("llm calls")[0]
    code, out, _ = main_captured(capsys, *ask, "--set", "skip_generation=true", "--json")
    assert code == 0 and json.loads(out)["retrieval_only"] is True
    code, _, err = main_captured(capsys, "ask", "Who?", "--method", "none", "--llm", "fake:x", "--set", "skip_generation=true")
    assert code == 2 and "method 'none' answers without retrieving" in err
