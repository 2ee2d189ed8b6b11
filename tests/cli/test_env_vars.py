"""Environment variables as the command line reads them: a bad one is one line naming it, and
the switches (``RAGRAPHS_DEBUG``, ``RAGRAPHS_VERBOSE``) read ``0`` / ``false`` as off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _child(args, **env):
    e = {**os.environ, **env}
    for k in ("RAGRAPHS_DEBUG", "RAGRAPHS_VERBOSE"):
        if k not in env:
            e.pop(k, None)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=e, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["methods"]])
def test_a_misspelt_lock_list_is_one_line_on_every_command(argv):
    """A misspelt ``RAGRAPHS_LOCKED_SETTINGS`` ended every command, ``--version`` and
    ``--help`` too, with a traceback (the verbs' modules import the graphs, which check the
    list) until 2026-11-30; now the one line a config error prints, exit 2. The graphs still
    refuse to load with it (a server does not start)."""
    r = _child(["-m", "ragraphs", *argv], RAGRAPHS_LOCKED_SETTINGS="webb")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        "ragraphs: error: RAGRAPHS_LOCKED_SETTINGS names no setting 'webb' (did you mean 'web', 'web_k'?)"]
    r = _child(["-c", "import ragraphs.graphs"], RAGRAPHS_LOCKED_SETTINGS="webb")
    assert r.returncode != 0 and "names no setting 'webb'" in r.stderr


@pytest.mark.parametrize("value,on", [("", False), (" ", False), ("0", False), ("false", False), ("No", False),
                                      ("OFF", False), ("1", True), ("true", True), ("yes", True), ("on", True),
                                      ("2", True)])
def test_switches_read_0_and_false_as_off(monkeypatch, value, on):
    """``RAGRAPHS_DEBUG=0`` and ``RAGRAPHS_VERBOSE=0`` turned debugging and the libraries'
    output on (any non-empty value did) until 2026-11-30."""
    from ragraphs.quiet import is_verbose
    from ragraphs.tools.env import flag

    monkeypatch.setenv("RAGRAPHS_DEBUG", value)
    monkeypatch.delenv("RAGRAPHS_VERBOSE", raising=False)
    assert flag("RAGRAPHS_DEBUG") is on and is_verbose() is on
    monkeypatch.setenv("RAGRAPHS_VERBOSE", value)
    monkeypatch.delenv("RAGRAPHS_DEBUG")
    assert is_verbose() is on


def test_debug_0_keeps_the_one_line_error(cli):
    r = cli("ask", "   ", RAGRAPHS_DEBUG="0")
    assert r.returncode == 2 and r.stderr.strip() == "ragraphs: error: the question is empty"
    with pytest.raises(Exception, match="the question is empty"):
        cli("ask", "   ", RAGRAPHS_DEBUG="1")


def test_numeric_variables_read_blank_as_the_default_and_quote_a_bad_value(monkeypatch):
    """``RAGRAPHS_LLM_TIMEOUT=`` and ``RAGRAPHS_EMBED_CACHE=`` were errors while a blank
    ``*_THREADS`` was the default; ``RAGRAPHS_LLM_TIMEOUT=abc``'s message did not quote the
    value; ``RAGRAPHS_EMBED_CACHE=-1`` turned the cache off without a word (until 2026-11-30)."""
    from ragraphs.errors import ConfigError
    from ragraphs.tools import embeddings as E
    from ragraphs.tools.llama import _env_contexts
    from ragraphs.tools.llm import _env_retries, make_llm

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for name, read, default in (("RAGRAPHS_EMBED_CACHE", E._cache_size, 50000), ("RAGRAPHS_LLM_CONTEXTS", _env_contexts, 6),
                                ("RAGRAPHS_LLM_RETRIES", _env_retries, 1)):
        for blank in ("", "  "):
            monkeypatch.setenv(name, blank)
            assert read() == default
        monkeypatch.setenv(name, " 3 ")
        assert read() == 3
    monkeypatch.setenv("RAGRAPHS_EMBED_CACHE", "-1")
    with pytest.raises(ConfigError, match=r"^RAGRAPHS_EMBED_CACHE must be a whole number >= 0, got '-1'$"):
        E._cache_size()
    monkeypatch.setenv("RAGRAPHS_LLM_CONTEXTS", "0")
    with pytest.raises(ConfigError, match=r"^RAGRAPHS_LLM_CONTEXTS must be a whole number >= 1, got '0'$"):
        _env_contexts()
    monkeypatch.setenv("RAGRAPHS_LLM_TIMEOUT", "")
    assert make_llm("openai:env-test").request_timeout == 120.0
    for bad in ("abc", "0", "-5", "nan"):
        monkeypatch.setenv("RAGRAPHS_LLM_TIMEOUT", bad)
        with pytest.raises(ConfigError, match=rf"^RAGRAPHS_LLM_TIMEOUT must be a number above 0 and below 1e\+07, got '{bad}'$"):
            make_llm("openai:env-test")


@pytest.mark.parametrize("value", ["", "abc"])
def test_the_llm_timeout_is_read_for_remote_models_only(cli, value):
    """It governs remote models (README); ``RAGRAPHS_LLM_TIMEOUT= ragraphs ask ... --llm fake:x``
    failed on it until 2026-11-30, as did ``RAGRAPHS_LLM_RETRIES=abc``."""
    r = cli("ask", "Who?", "--method", "none", "--llm", "fake:Ann", RAGRAPHS_LLM_TIMEOUT=value,
            RAGRAPHS_LLM_RETRIES=value)
    assert r.returncode == 0, r.stderr
    assert "Ann" in r.stdout


def test_a_judge_variable_that_names_nothing_says_which_variable(monkeypatch, cli, data_dir, tmp_path):
    """``RAGRAPHS_RERANKER=/no/such`` failed with "judge model not found: /no/such", the
    variable unnamed; ``judge-eval --judge evaluator`` measured the shipped evaluator under
    ``RAGRAPHS_RERANKER``, not the one the graphs and calibrate-crag load (both until 2026-11-30)."""
    from ragraphs.errors import ConfigError
    from ragraphs.tools.judges import load_default_judge, weights_dir

    missing = str(tmp_path / "no" / "such")
    monkeypatch.setenv("RAGRAPHS_RERANKER", missing)
    monkeypatch.setenv("RAGRAPHS_JUDGES_DIR", missing + "-dir")
    with pytest.raises(ConfigError, match=r"judge model not found: .*such \(from RAGRAPHS_RERANKER\)$"):
        load_default_judge("evaluator")
    with pytest.raises(ConfigError, match=r"judge model not found: .*such-dir \(from RAGRAPHS_JUDGES_DIR\)$"):
        load_default_judge("pair")
    data = str(data_dir / "hotpotqa.sample.jsonl")
    r = cli("judge-eval", "--judge", "evaluator", "--data", data, "--limit", "2", "--no-timing")
    assert r.returncode == 2 and r.stderr.strip().endswith("(from RAGRAPHS_RERANKER)"), r.stderr
    shipped = str(weights_dir())
    r = cli("judge-eval", "--judge", "evaluator", "--data", data, "--limit", "2", "--no-timing",
            RAGRAPHS_RERANKER=shipped, RAGRAPHS_JUDGES_DIR=None)
    assert r.returncode == 0 and f"from {shipped} (RAGRAPHS_RERANKER)" in r.stdout, r.stderr
    r = cli("judge-eval", "--help")
    assert "RAGRAPHS_RERANKER" in r.stdout
