"""The command line's store options default to the variables the LangGraph server's graphs read,
RAGRAPHS_STORE_URL and RAGRAPHS_COLLECTION (``ingest``, ``ask`` and ``chat`` read neither until
2026-11-30: with them set, ``ingest`` filled the embedded store and the server read another)."""

from __future__ import annotations

import json

import pytest

from ragraphs.cli.ask import parse_command
from ragraphs.cli.ask import register as register_ask
from ragraphs.cli.chat import register as register_chat
from ragraphs.cli.common import store_from_env
from ragraphs.cli.ingest import register as register_ingest


def _store(register, argv):
    a = store_from_env(parse_command(register, argv))
    return a.store, a.store_url, a.collection


@pytest.mark.parametrize("register, verb", [(register_ingest, ["ingest", "docs"]), (register_ask, ["ask", "Q?"]),
                                            (register_chat, ["chat"])])
def test_the_store_options_default_to_the_servers_variables(monkeypatch, register, verb):
    monkeypatch.delenv("RAGRAPHS_STORE_URL", raising=False)
    monkeypatch.delenv("RAGRAPHS_COLLECTION", raising=False)
    assert _store(register, verb) == (None, None, "ragraphs")
    monkeypatch.setenv("RAGRAPHS_STORE_URL", "http://127.0.0.1:8000")
    monkeypatch.setenv("RAGRAPHS_COLLECTION", "served")
    assert _store(register, verb) == (None, "http://127.0.0.1:8000", "served")
    # a flag wins: --store is a folder even with the variable set; --store-url and --collection replace them
    assert _store(register, [*verb, "--store", "here"]) == ("here", None, "served")
    assert _store(register, [*verb, "--store-url", "http://10.0.0.1:8000"]) == (None, "http://10.0.0.1:8000", "served")
    assert _store(register, [*verb, "--collection", "mine"]) == (None, "http://127.0.0.1:8000", "mine")
    monkeypatch.setenv("RAGRAPHS_STORE_URL", "")  # set but empty: not set
    assert _store(register, verb) == (None, None, "served")


@pytest.mark.parametrize("value", [" ", "\t", "  \n"])
def test_store_variables_of_spaces_read_as_unset(monkeypatch, value):
    """A blank value reads as unset everywhere (tools/env.py): ``RAGRAPHS_COLLECTION=" "`` was
    the collection name ' ' (an error on every verb and in the server's graphs) and
    ``RAGRAPHS_STORE_URL=" "`` a server address, until 2026-11-30."""
    from ragraphs import components

    monkeypatch.setenv("RAGRAPHS_STORE_URL", value)
    monkeypatch.setenv("RAGRAPHS_COLLECTION", value)
    assert components.server_store() == {"store_url": None, "collection": None}
    for register, verb in ((register_ingest, ["ingest", "docs"]), (register_ask, ["ask", "Q?"]), (register_chat, ["chat"])):
        assert _store(register, verb) == (None, None, "ragraphs")
    monkeypatch.setattr(components, "_DEFAULT", None)  # the server's graphs' components, built afresh
    c = components.default_components()
    assert c.store_url is None and c.collection == "ragraphs"
    monkeypatch.setenv("RAGRAPHS_COLLECTION", " served ")
    assert components.server_store()["collection"] == "served"


@pytest.mark.parametrize("verb", ["ingest", "ask", "chat"])
def test_help_names_the_variables_as_the_defaults(cli, verb):
    out = " ".join(cli(verb, "--help").stdout.split())
    assert "(default: $RAGRAPHS_STORE_URL, unless --store is given)" in out
    assert "(default: $RAGRAPHS_COLLECTION, else ragraphs)" in out


def test_ingest_and_ask_use_the_collection_the_server_is_told_of(cli, tmp_path):
    """A real embedded store, MiniLM: ``ingest`` with RAGRAPHS_COLLECTION set fills that collection
    of the default store (it filled `ragraphs` until 2026-11-30), and ``ask`` reads it."""
    from ragraphs.settings import default_store_path
    from ragraphs.tools.vectorstore import ChromaCorpus

    (tmp_path / "lima.txt").write_text("Lima is the capital of Peru. It lies on the Pacific coast.")
    r = cli("ingest", tmp_path / "lima.txt", "--quiet", "--json", RAGRAPHS_COLLECTION="served", RAGRAPHS_STORE_URL=None)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["store_total"] == 1
    assert ChromaCorpus(str(default_store_path()), collection="served", create=False).count() == 1
    r = cli("ask", "What is the capital of Peru?", "--method", "vanilla", "--llm", "fake:Lima", "--json",
            RAGRAPHS_COLLECTION="served", RAGRAPHS_STORE_URL=None)
    assert r.returncode == 0, r.stderr
    assert [p["title"] for p in json.loads(r.stdout.strip().splitlines()[-1])["passages"]] == ["lima"]
    # the flag wins over the variable: there is no collection `ragraphs` in this store
    r = cli("ask", "What is the capital of Peru?", "--llm", "fake:Lima", "--collection", "ragraphs",
            RAGRAPHS_COLLECTION="served", RAGRAPHS_STORE_URL=None)
    assert r.returncode == 2 and "no collection 'ragraphs'" in r.stderr
