"""``ragraphs chat``: each line read is a user message answered by the method; ``--thread``
keeps the conversation for a later command and for ``ragraphs history``.

The real CLI entry point runs in this process with a deterministic model (``fake:``) over a
small store ingested here (the real MiniLM and Chroma); the chat graph's answers with the
embedded Gemma are checked through ``langgraph dev`` in tests/studio/test_studio_server.py.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import main_captured

pytestmark = pytest.mark.slow  # the real MiniLM and Chroma hold the store


@pytest.fixture
def store(tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d) for d in [
        {"title": "S. P. L. Sørensen", "text": "Søren Peder Lauritz Sørensen was a Danish chemist who introduced the concept of pH."},
        {"title": "Lima", "text": "Lima is the capital of Peru."},
        {"title": "Vienna", "text": "Vienna is the capital of Austria."},
    ]) + "\n")
    code, _, _ = main_captured(capsys, "ingest", docs, "--store", tmp_path / "store")
    assert code == 0
    return str(tmp_path / "store")


def src(store: str, *titles: str) -> str:
    """The sources line of an answer read from the fixture's file: each title once, with the file."""
    return "  sources: " + "; ".join(f"{t} ({Path(store).parent / 'docs.jsonl'})" for t in titles)


def _chat(capsys, monkeypatch, lines: str, *args):
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    return main_captured(capsys, "chat", "--store", *args)


def test_an_empty_answer_is_said_not_printed_as_a_blank_line(store, capsys, monkeypatch):
    """The embedded model abstains by opening its answer with a line break (an empty answer; here
    a lone full stop, which the answer cleaning leaves empty);
    ``ask`` and ``chat`` printed a blank line for it until 2026-12-02. ``--quiet`` and ``--json``
    keep the bare, empty answer for scripts."""
    from ragraphs.cli.common import NO_ANSWER

    code, out, _ = main_captured(capsys, "ask", "Who introduced pH?", "--store", store, "--llm", "fake:.", "--k", "1")
    assert code == 0 and out.splitlines()[0] == NO_ANSWER == "(no answer: the model gave none)"
    assert "S. P. L. Sørensen" in out  # the passages it was given are still shown
    code, out, _ = main_captured(capsys, "ask", "Who introduced pH?", "--store", store, "--llm", "fake:.", "--k", "1", "--quiet")
    assert code == 0 and out == "\n"
    code, out, _ = main_captured(capsys, "ask", "Who introduced pH?", "--store", store, "--llm", "fake:.", "--k", "1", "--json")
    assert json.loads(out.splitlines()[-1])["answer"] == ""
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced pH?\n", store, "--llm", "fake:.", "--k", "1")
    assert code == 0 and out.splitlines() == [NO_ANSWER, src(store, "S. P. L. Sørensen")]
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced pH?\n", store, "--llm", "fake:.", "--k", "1", "--quiet")
    assert code == 0 and out == "\n"


def test_an_answer_with_no_passage_kept_says_so(store, capsys, monkeypatch):
    """ERM4 answers on the model's own when its Knowledge Filter keeps nothing (its back-off);
    ``ask`` and ``chat`` showed that answer as if it were read from the store until 2026-12-02."""
    nothing_kept = ["--method", "erm4", "--llm", "fake:Sørensen", "--k", "1", "--set", "filter_threshold=1.0"]
    code, out, _ = main_captured(capsys, "ask", "Who introduced pH?", "--store", store, *nothing_kept)
    assert code == 0 and out.splitlines()[:3] == ["Sørensen", "", "passages: none kept; the answer is the model's own"]
    code, out, _ = main_captured(capsys, "ask", "Who introduced pH?", "--store", store, *nothing_kept, "--quiet")
    assert out == "Sørensen\n"
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced pH?\n", store, *nothing_kept)
    assert code == 0 and out.splitlines() == ["Sørensen", "  sources: none kept; the answer is the model's own"]
    code, out, _ = main_captured(capsys, "ask", "Who introduced pH?", "--store", store, "--method", "none", "--llm", "fake:x")
    assert "none kept" not in out  # the no-retrieval baseline reads no passage by design


def test_each_line_is_answered_and_an_empty_line_skipped(store, capsys, monkeypatch):
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced pH?\n\nWhat is the capital of Peru?\n", store,
                         "--llm", "fake:Sørensen", "--k", "1")
    assert code == 0
    assert out.splitlines() == ["Sørensen", src(store, "S. P. L. Sørensen"), "Sørensen", src(store, "Lima")]
    # one JSON line per answer, every turn in the same thread; `exit` ends before the next line
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced pH?\nexit\nnever read\n", store,
                         "--llm", "fake:x", "--k", "2", "--json")
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["question"] == "Who introduced pH?" and row["answer"] == "x" and row["llm_calls"] == 1
    assert row["thread"] is None  # no --thread: kept in memory only, no id `history` could read
    assert [p["title"] for p in row["passages"]][0] == "S. P. L. Sørensen" and len(row["passages"]) == 2
    # each with its file, as the sources line and the chat graph's message give it (titles only until 2026-12-02)
    assert {p["path"] for p in row["passages"]} == {str(Path(store).parent / "docs.jsonl")}


def test_each_source_is_named_once_with_where_it_comes_from(tmp_path, capsys, monkeypatch):
    """Two chunks of one file are one source, named with its path; until 2026-12-02 the sources
    line gave each passage's title, so a file read twice was named twice ("ragraphs; Judges;
    ragraphs; Judges" over this repository's docs) and never its path."""
    doc = tmp_path / "ph.md"
    doc.write_text("# Acidity\n\n" + "Søren Sørensen introduced the pH scale in 1909 at the Carlsberg Laboratory. " * 12
                   + "\n\n" + "The pH of pure water at 25 degrees is seven, neither acid nor base. " * 12 + "\n", encoding="utf-8")
    other = tmp_path / "lima.md"
    other.write_text("# Lima\n\nLima is the capital of Peru.\n", encoding="utf-8")
    code, _, _ = main_captured(capsys, "ingest", doc, other, "--store", tmp_path / "store", "--chunk-words", "60")
    assert code == 0
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced the pH scale?\n", str(tmp_path / "store"), "--llm", "fake:Sørensen", "--k", "3")
    assert code == 0
    sources = out.splitlines()[1]
    assert sources == f"  sources: Acidity ({doc})"  # its three chunks are the top 3
    code, out, _ = main_captured(capsys, "ask", "Who introduced the pH scale?", "--store", tmp_path / "store", "--llm", "fake:x", "--k", "3")
    assert out.count(f", {doc}): ") == 3  # ask still lists each passage, with the same path


def test_follow_up_rewrite_prints_how_a_later_message_was_read(store, capsys, monkeypatch):
    # the fake model writes the rewrite's JSON for every call, so the answer is that text too
    rewrite = '{"question": "Where was Sørensen from?"}'
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced pH?\nWhere was he from?\n", store,
                         "--llm", f"fake:{rewrite}", "--k", "1", "--follow-up", "rewrite")
    assert code == 0
    assert out.splitlines() == [rewrite, src(store, "S. P. L. Sørensen"),
                                rewrite, "  read as: Where was Sørensen from?", src(store, "S. P. L. Sørensen")]
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced pH?\nWhere was he from?\n", store,
                         "--llm", f"fake:{rewrite}", "--k", "1", "--follow-up", "rewrite", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["read_as"] for r in rows] == ["Who introduced pH?", "Where was Sørensen from?"]
    assert [r["llm_calls"] for r in rows] == [1, 2]
    # the same by --set, as `ragraphs methods chat` lists them (dropped until 2026-11-30), and checked
    code, out, _ = _chat(capsys, monkeypatch, "Who introduced pH?\nWhere was he from?\n", store,
                         "--llm", f"fake:{rewrite}", "--k", "1", "--set", "follow_up=rewrite", "--json")
    assert code == 0 and [json.loads(line)["read_as"] for line in out.splitlines()][1] == "Where was Sørensen from?"
    code, _, err = _chat(capsys, monkeypatch, "q\n", store, "--llm", "fake:x", "--set", "history_turns=0")
    assert code == 2 and "history_turns" in err
    # the turns the rewrite reads, given with no rewrite: refused, not ignored (until 2026-12-03)
    code, out, err = _chat(capsys, monkeypatch, "q\n", store, "--llm", "fake:x", "--history-turns", "5")
    assert (code, out) == (2, "") and "--history-turns is read only by --follow-up rewrite" in err
    code, _, err = _chat(capsys, monkeypatch, "q\n", store, "--llm", "fake:x", "--set", "history_turns=5",
                         "--follow-up", "alone")
    assert code == 2 and "--set history_turns is read only by --follow-up rewrite" in err
    code, _, _ = _chat(capsys, monkeypatch, "q\n", store, "--llm", "fake:x", "--k", "1", "--history-turns", "5",
                       "--set", "follow_up=rewrite")
    assert code == 0


def test_a_thread_goes_on_later_and_history_shows_its_turns(store, tmp_path, capsys, monkeypatch):
    db = tmp_path / "threads.sqlite"
    for q in ("Who introduced pH?", "What is the capital of Austria?"):
        code, out, err = _chat(capsys, monkeypatch, q + "\n", store, "--llm", "fake:ok", "--k", "1", "--method", "crag",
                               "--set", "web=none", "--thread", "c1", "--checkpointer", db, "--quiet")
        assert code == 0 and out.strip() == "ok"
    assert "chat with crag, thread c1 (2 earlier messages)" in err  # the second command went on with it
    code, out, _ = main_captured(capsys, "history", "c1", "--checkpointer", db)
    assert code == 0 and out.startswith("thread c1: method chat; ")
    assert "settings: method=crag, llm=fake:ok, k=1, web=none" in out
    assert out.count("ran answer (") == 2 and out.count("answer: ok") == 2
    assert '"question": "What is the capital of Austria?"' in out
    code, _, err = main_captured(capsys, "replay", "c1", "--checkpointer", db)
    assert code == 2 and "is a chat; go on with it with `ragraphs chat --thread c1`" in err


def test_a_checkpointer_without_a_thread_is_refused(tmp_path, capsys, monkeypatch):
    """As ``ask`` refuses it: the conversation would have gone to memory and been lost."""
    db = tmp_path / "cp.sqlite"
    code, _, err = _chat(capsys, monkeypatch, "q\n", "unused", "--llm", "fake:x", "--checkpointer", db)
    assert code == 2 and "--checkpointer keeps a chat under a --thread ID" in err and not db.exists()


def test_settings_are_checked_before_anything_loads(capsys, monkeypatch):
    code, _, err = _chat(capsys, monkeypatch, "q\n", "unused", "--method", "crag", "--set", "uper=0.5", "--llm", "fake:x")
    assert code == 2 and "method 'crag' has no setting 'uper' (did you mean 'upper'?)" in err
    code, _, err = _chat(capsys, monkeypatch, "q\n", "unused", "--method", "self-rag")
    assert code == 2 and "unknown method 'self-rag'" in err


def test_in_a_terminal_it_prompts_and_ctrl_d_ends(store, tmp_path):
    """The interactive path, in a real pseudo-terminal: a banner, a ``you>`` prompt per turn, the
    answer with its sources, Ctrl-C at the prompt giving a new one, and Ctrl-D ending the
    conversation with exit status 0."""
    import os
    import pty
    import selectors
    import signal
    import subprocess
    import sys
    import time

    master, slave = pty.openpty()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    # Ctrl-C's default restored in the child: a test run started in the background (`make test &`)
    # has SIGINT ignored, which Python keeps, and the chat would never hear it
    proc = subprocess.Popen([sys.executable, "-m", "ragraphs", "chat", "--store", store, "--llm", "fake:Sørensen",
                             "--k", "1"], stdin=slave, stdout=slave, stderr=slave, close_fds=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(slave)
    seen = b""

    # epoll, not select(): a test session past 1,023 open files (Chroma keeps some of every store
    # it opened) made select() fail with "filedescriptor out of range"
    waiting = selectors.DefaultSelector()
    waiting.register(master, selectors.EVENT_READ)

    def until(token: bytes, times: int = 1, seconds: float = 120) -> None:
        nonlocal seen
        end = time.time() + seconds
        while seen.count(token) < times and time.time() < end:
            ready = waiting.select(max(0.0, end - time.time()))
            if not ready:  # nothing more came: the assertions below say what is missing
                break
            try:
                seen += os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break

    try:
        until(b"you> ")
        os.write(master, "Who introduced pH?\n".encode())
        until(b"you> ", times=2)  # the answer, then the next prompt
        time.sleep(1.0)  # the prompt is read by then: a signal in the moment before is held until a line comes
        proc.send_signal(signal.SIGINT)  # Ctrl-C at the prompt: the chat goes on (it ended until 2026-11-30)
        until(b"you> ", times=3, seconds=60)
        os.write(master, b"\x04")  # Ctrl-D
        assert proc.wait(60) == 0
    finally:
        proc.kill()
        waiting.close()
        os.close(master)
    text = seen.decode("utf-8", "replace").replace("\r", "")
    # kept in memory: no thread id (it named one `history` could not read until 2026-12-03)
    assert "chat with vanilla, kept in memory (--thread ID keeps it); exit or Ctrl-D ends" in text and "chat-" not in text
    assert f"you> Who introduced pH?\nSørensen\n{src(store, 'S. P. L. Sørensen')}\nyou> " in text
    assert "interrupted" not in text and text.count("you> ") == 3


def test_a_bad_line_is_reported_and_the_chat_goes_on(store, capsys, monkeypatch):
    """A line the question check refuses (a NUL byte) is one error line, not the chat's end, and
    piped bytes that are not UTF-8 are read, not a UnicodeDecodeError. The exit code says a line
    was refused (a piped batch that lost a question exited 0 until 2026-12-01)."""
    piped = io.TextIOWrapper(io.BytesIO(b"a\x00b\nCaf\xe9 in Lima?\nWhat is the capital of Peru?\n"), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", piped)
    code, out, err = main_captured(capsys, "chat", "--store", store, "--llm", "fake:Lima", "--k", "1")
    assert code == 2
    assert out.splitlines() == ["Lima", src(store, "Lima"), "Lima", src(store, "Lima")]
    assert err.count("ragraphs: error:") == 1 and "Traceback" not in err


def test_a_failed_turn_is_reported_and_slash_lines_are_commands(store, capsys, monkeypatch):
    """A turn whose model server is down is one error line and the conversation goes on (it
    ended the chat until 2026-11-30), the exit code the failed turn's; /help answers with the
    commands and an unknown /command is refused, neither sent to the LLM; /quit ends."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("RAGRAPHS_LLM_RETRIES", "0")
    piped = io.StringIO("first question\n/help\n/frobnicate\nsecond question\n/quit\nnever read\n")
    monkeypatch.setattr("sys.stdin", piped)
    code, out, err = main_captured(capsys, "chat", "--store", store, "--method", "none", "--llm", "openai:down")
    assert code == 3  # LLMError's
    assert err.count("LLM call failed") == 2 and "Traceback" not in err  # both questions asked, each failed
    assert "exit, /quit or Ctrl-D ends" in out
    assert "unknown command '/frobnicate'" in err
    assert "never read" not in out + err


def test_an_unknown_command_alone_fails_the_batch(store, capsys, monkeypatch):
    """A piped batch whose only fault is an unknown /command exits 2, as a refused question
    does; the questions around it are answered."""
    monkeypatch.setattr("sys.stdin", io.StringIO("/frobnicate\nWhat is the capital of Peru?\n"))
    code, out, err = main_captured(capsys, "chat", "--store", store, "--llm", "fake:Lima", "--k", "1")
    assert code == 2
    assert out.splitlines() == ["Lima", src(store, "Lima")]
    assert err.count("ragraphs: error:") == 1 and "unknown command '/frobnicate'" in err
    # a known command with words after it: said so ("unknown command '/help'; /help lists them" until 2026-12-03)
    monkeypatch.setattr("sys.stdin", io.StringIO("/help me\n/quit now\n"))
    code, out, err = main_captured(capsys, "chat", "--store", store, "--llm", "fake:Lima", "--k", "1")
    assert code == 2 and "unknown" not in err
    assert err.splitlines() == ["ragraphs: error: /help takes nothing after it; give it alone",
                                "ragraphs: error: /quit takes nothing after it; give it alone"]
