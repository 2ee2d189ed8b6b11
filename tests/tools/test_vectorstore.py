"""The vector stores' reading side: real Chroma stores on disk (written by a second client, as
another process would), the in-memory corpus, and query embeddings."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from fakes import HashEmbeddings
from ragraphs.errors import StoreError
from ragraphs.state.types import make_passage
from ragraphs.tools import vectorstore as V
from ragraphs.tools.vectorstore import ChromaCorpus, InMemoryCorpus


class QueryMarked(Embeddings):
    """An asymmetric embedder: a query is encoded unlike a document (as E5's "query:" prefix
    does), and the lengths of its document vectors differ."""

    def __init__(self):
        self.queries: list[str] = []
        self.name = "query-marked"

    def embed_documents(self, texts):
        return [[float(len(t)), 1.0, 0.0] for t in texts]

    def embed_query(self, text):
        self.queries.append(text)
        return [1.0, 0.0, 0.0]


def test_queries_are_embedded_as_queries_and_the_in_memory_corpus_ranks_by_cosine():
    """``embed_query`` for a search (``embed_documents`` read every query until 2026-11-30), and
    rows of length 1, so that a long document does not win on its vector's length."""
    emb = QueryMarked()
    corpus = InMemoryCorpus([make_passage("short", "ab", "corpus"), make_passage("long", "a" * 40, "corpus")], embeddings=emb)
    assert np.allclose(np.linalg.norm(corpus.vectors, axis=1), 1.0)
    hits = corpus.search("which?", 2)
    assert emb.queries == ["which?"]
    assert [h["title"] for h in hits] == ["long", "short"] and all(h["score"] <= 1.0 + 1e-6 for h in hits)


def test_a_store_rewritten_elsewhere_is_read_as_it_is_now(tmp_path, monkeypatch):
    """A file ingested again by another client (the count unchanged): BM25 and the title index
    follow (they served the old text until 2026-11-30), and a dense hit whose passage was
    removed meanwhile is left out, not handed on blank."""
    emb = HashEmbeddings()
    path = str(tmp_path / "store")
    reader = ChromaCorpus(path, embeddings=emb)
    old, new = make_passage("Beta", "beta banana old text", "corpus"), make_passage("Beta", "beta cherry new text", "corpus")
    reader.add([make_passage("Alpha", "alpha apple", "corpus"), old])
    assert [p["text"] for p in reader.search("banana", 1, mode="bm25")] == ["beta banana old text"]
    writer = ChromaCorpus(path, embeddings=emb)
    writer.remove([old["id"]])
    writer.add([new])
    monkeypatch.setattr(V, "BM25_RECHECK_S", 0.0)
    assert reader.count() == 2
    reader.search("cherry", 1, mode="bm25")  # the ids are read again in a thread of their own
    recheck = reader._recheck
    recheck is None or recheck.join(timeout=30)
    assert [p["text"] for p in reader.search("cherry", 1, mode="bm25")] == ["beta cherry new text"]
    assert all(p["text"] for p in reader.search("banana", 2, mode="dense"))


def test_the_size_is_read_once_a_second_and_after_the_stores_own_writes(tmp_path, monkeypatch):
    """Every dense, BM25 and title-index search read the collection's count (9 reads a DR-RAG
    question, each a round trip to a Chroma server, until 2026-12-01): now at most once per
    COUNT_TTL_S, and again after this store's own add or remove; another client's write is seen
    once the second has passed."""
    monkeypatch.setattr(V, "COUNT_TTL_S", 60.0)  # a slow machine's searches stay within it
    emb = HashEmbeddings()
    path = str(tmp_path / "store")
    store = ChromaCorpus(path, embeddings=emb)
    store.add([make_passage(f"T{i}", f"text number {i} about apples", "corpus") for i in range(5)])
    reads = []
    real = store._col.count
    monkeypatch.setattr(store._col, "count", lambda: (reads.append(1), real())[1])
    store.search("apples", 2, mode="bm25")  # the BM25 index built: every page read, by a size read for it
    before = len(reads)
    for mode in ("dense", "bm25", "hybrid", "dense", "bm25"):
        assert store.search("apples", 2, mode=mode)
    assert len(reads) == before and store.count() == 5
    store.add([make_passage("T5", "text number 5 about pears", "corpus")])
    assert store.count() == 6 and len(reads) == before + 1
    ChromaCorpus(path, embeddings=emb).add([make_passage("T6", "another client's text", "corpus")])
    assert store.count() == 6  # within COUNT_TTL_S
    # a search asking more than the size read: read again (another object's write shows at once)
    assert len(store.search("text", 10, mode="dense")) == 7
    monkeypatch.setattr(V, "COUNT_TTL_S", 0.0)
    assert store.count() == 7


def test_all_passages_reads_the_size_afresh(tmp_path, monkeypatch):
    """``all_passages`` (the BM25 index, ``ragraphs store``) pages through the collection by a
    size it reads again, not the one kept for COUNT_TTL_S: a store seen empty, then filled by
    another client, gives every passage at once."""
    monkeypatch.setattr(V, "COUNT_TTL_S", 60.0)
    emb = HashEmbeddings()
    path = str(tmp_path / "store")
    store = ChromaCorpus(path, embeddings=emb)
    assert store.count() == 0
    ChromaCorpus(path, embeddings=emb).add([make_passage(f"T{i}", f"text {i}", "corpus") for i in range(3)])
    assert store.count() == 0  # the kept size, within COUNT_TTL_S
    assert sorted(p["title"] for p in store.all_passages()) == ["T0", "T1", "T2"]


def test_a_store_that_fails_while_read_is_a_store_error(tmp_path):
    corpus = ChromaCorpus(str(tmp_path / "store"), embeddings=HashEmbeddings())
    corpus.add([make_passage("Alpha", "alpha apple", "corpus")])

    class Gone:
        def __getattr__(self, name):
            def fail(*a, **k):
                raise ConnectionError("[Errno 111] Connection refused")
            return fail

    corpus._col = Gone()  # a Chroma server stopped mid-run: its client raises its own errors
    for read in (corpus.count, lambda: corpus.search("apple", 1), lambda: corpus.search("apple", 1, mode="bm25")):
        with pytest.raises(StoreError, match="cannot read the vector store: ConnectionError"):
            read()


def test_the_id_recheck_runs_beside_the_search_not_in_it(tmp_path, monkeypatch):
    """A search after a pause starts the same-count id recheck in a thread of its own and
    returns without waiting for it (it read every id, under the store's lock, in the search
    itself until 2026-11-30: about 4 ms per 1,000 passages on every question after a pause)."""
    import threading

    reader = ChromaCorpus(str(tmp_path / "store"), embeddings=HashEmbeddings())
    reader.add([make_passage("Alpha", "alpha apple", "corpus"), make_passage("Beta", "beta banana", "corpus")])
    reader.search("apple", 1, mode="bm25")  # the index built
    monkeypatch.setattr(V, "BM25_RECHECK_S", 0.0)
    gate, done = threading.Event(), threading.Event()
    real = reader._ids_digest

    def slow_digest():
        gate.wait(30)
        try:
            return real()
        finally:
            done.set()

    monkeypatch.setattr(reader, "_ids_digest", slow_digest)
    hits = reader.search("apple", 1, mode="bm25")
    assert [h["title"] for h in hits] == ["Alpha"] and not done.is_set()  # returned while the recheck waits
    recheck = reader._recheck
    assert recheck is not None and recheck.name == "ragraphs-store-recheck"
    gate.set()
    recheck.join(timeout=30)
    assert done.is_set() and reader._recheck is None and not reader._ids_changed
    # the next read of every id waits 100 times the last one's time (a 100,000-id collection read its
    # ids every 10 s, 0.4 s of a core each time, until 2026-12-01)
    assert reader._recheck_s > 0
    reader._recheck_s = 1.0  # as if the read had taken a second: none for 100 s
    reader._bm25_checked -= 50
    reader.search("apple", 1, mode="bm25")
    assert reader._recheck is None


def test_a_mistyped_store_or_collection_through_python_warns_once_that_it_is_empty(tmp_path, capsys, minilm):
    """``Components(store_path=<misspelt folder>)`` or ``collection=<misspelt name>``: opening it
    makes it, empty (``create_collection=True``, which ingest through Python relies on); its first
    search warns once per store, naming the folder and collection and how to fill it. Until
    2026-11-30 every run answered from 0 passages without a word. The command line (which opens
    with ``create_collection=False`` and says "the store is empty" itself) is not warned twice."""
    import warnings

    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from conftest import main_captured
    from ragraphs.components import Components
    from ragraphs.graphs import build_graph

    store = tmp_path / "store"
    ChromaCorpus(str(store), embeddings=minilm).add([make_passage("Lima", "Lima is the capital of Peru.")])
    V._EMPTY_WARNED.clear()
    llm = FakeListChatModel(responses=["Lima"] * 20)
    q = {"question": "Capital of Peru?"}
    for given, where, name in (({"store_path": str(tmp_path / "stor")}, tmp_path / "stor", "ragraphs"),
                               ({"store_path": str(store), "collection": "ragraph"}, store, "ragraph")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):  # twice over one Components, then over a new one of the same store
                out = build_graph("vanilla", Components(llm=llm, embeddings=minilm, **given)).invoke(q)
                assert out["passages"] == []
        said = [str(w.message) for w in caught if "is empty" in str(w.message)]
        assert len(said) == 1, said
        assert said[0].startswith(f"the Chroma collection {name!r} in the store at {where} is empty")
        assert f"`ragraphs ingest YOUR_DOCS --store {where} --collection {name}`" in said[0]
    with warnings.catch_warnings(record=True) as caught:  # the store that holds passages: no warning
        warnings.simplefilter("always")
        out = build_graph("vanilla", Components(llm=llm, embeddings=minilm, store_path=str(store))).invoke(q)
    assert [p["title"] for p in out["passages"]] == ["Lima"] and not [w for w in caught if "is empty" in str(w.message)]
    empty = tmp_path / "empty"
    ChromaCorpus(str(empty), embeddings=minilm)
    V._EMPTY_WARNED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out_text, err = main_captured(capsys, "ask", "Capital of Peru?", "--llm", "fake:x", "--store", empty)
    assert code == 0 and err.count("is empty") == 1 and "warning: the store is empty" in err
    assert not [w for w in caught if "is empty" in str(w.message)]


_OTHER_PROCESS = """
import json, sys
sys.path.insert(0, {tests!r})
from fakes import HashEmbeddings
from ragraphs.state.types import make_passage
from ragraphs.tools.vectorstore import ChromaCorpus
store = ChromaCorpus({path!r}, embeddings=HashEmbeddings(dim=256))
store.remove([make_passage(t, x, "corpus")["id"] for t, x in {remove!r}])
store.add([make_passage(t, x, "corpus") for t, x in {add!r}])
print(json.dumps([store.search(x, 1, mode="dense")[0]["title"] for _, x in {find!r}]))
"""


def _in_another_process(path: str, add=(), remove=(), find=()) -> list[str]:
    """Runs a second process on the store folder (as `ragraphs ingest` beside a running chat):
    it removes and adds passages, then answers a dense search for each text of ``find``."""
    import json
    import os
    import subprocess
    import sys

    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = _OTHER_PROCESS.format(tests=tests, path=path, add=list(add), remove=list(remove), find=list(find))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_long_running_reader_finds_what_another_process_ingests_by_dense_search(tmp_path, monkeypatch):
    """A store folder read by one process (a chat, a LangGraph server) while another ingests
    into it: the reader's dense search finds the new passages (it missed them until restart
    until 2026-12-03: the embedded Chroma client keeps its process's copy of the dense index,
    and a new client on the folder shares that copy), a passage another process re-ingested
    under the same count too, and what is on disk stays whole for a third process."""
    monkeypatch.setattr(V, "COUNT_TTL_S", 0.0)
    monkeypatch.setattr(V, "REOPEN_S", 0.0)  # at most every 5 s (a 50,000-passage store takes about 0.3 s)
    path = str(tmp_path / "store")
    reader = ChromaCorpus(path, embeddings=HashEmbeddings(dim=256))
    towns = [(f"Town {i}", f"{w} is a town of {n} with a market") for i, (w, n) in enumerate(zip(
        ("ashford", "brill", "cowley", "denham", "eynsham", "frilford"),
        ("bakers", "weavers", "millers", "potters", "tanners", "smiths")))]
    reader.add([make_passage(t, x, "corpus") for t, x in towns])
    keeper = ("Zorblat", "zorblat kept the lighthouse of the northern cape")
    assert reader.search(keeper[1], 1, mode="dense")[0]["title"] != "Zorblat"
    _in_another_process(path, add=[keeper])
    assert reader.search(keeper[1], 1, mode="dense")[0]["title"] == "Zorblat"
    ferry = ("Quimby", "quimby ran the ferry across the southern bay")
    _in_another_process(path, add=[ferry])
    monkeypatch.setattr(V, "REOPEN_S", 600.0)  # opened again a moment ago: the next waits
    assert reader.search(ferry[1], 1, mode="dense")[0]["title"] != "Quimby"
    monkeypatch.setattr(V, "REOPEN_S", 0.0)
    assert [reader.search(x, 1, mode="dense")[0]["title"] for x in (ferry[1], keeper[1], towns[2][1])] == [
        "Quimby", "Zorblat", "Town 2"]
    # re-ingested elsewhere, the count kept: seen once the ids are read again (now and then, in a
    # thread of its own)
    bell = ("Zorblat", "zorblat rang the harbour bell at dawn each day")
    _in_another_process(path, add=[bell], remove=[keeper])
    monkeypatch.setattr(V, "BM25_RECHECK_S", 0.0)
    reader.search(bell[1], 1, mode="dense")
    recheck = reader._recheck
    recheck is None or recheck.join(timeout=30)
    assert reader.search(bell[1], 1, mode="dense")[0]["text"] == bell[1]
    # the reader let its copy go without writing it back over another's: a new process finds all
    assert _in_another_process(path, find=[bell, ferry, towns[4]]) == ["Zorblat", "Quimby", "Town 4"]


def test_a_chroma_server_address_with_a_password_an_ipv6_host_or_a_bad_port():
    """``--store-url http://admin:s3cret@host:port``: the user and password go to the server as
    HTTP basic auth and appear in no error and no thread record; an IPv6 host keeps its
    brackets; a malformed address or port is a ``ConfigError`` (exit 2). **Were bugs** (until
    2026-12-03): the password was printed in errors and recorded in checkpoints, and never sent;
    ``http://[::1]:8799`` failed as "Invalid port", ``http://[::1`` with a traceback."""
    import argparse
    import base64
    import http.server
    import threading

    from ragraphs.cli.threads import store_of
    from ragraphs.errors import ConfigError, StoreError
    from ragraphs.tools.chroma_open import chroma_client

    seen = []

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": "Unauthorized", "message": "Unauthorized"}')

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://admin:s3cret@127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(StoreError) as e:
            chroma_client(None, url)
    finally:
        server.shutdown()
    assert "s3cret" not in str(e.value) and f"127.0.0.1:{server.server_address[1]}" in str(e.value)
    assert seen and seen[0] == "Basic " + base64.b64encode(b"admin:s3cret").decode()
    assert store_of(argparse.Namespace(store=None, store_url=url, collection="c"))["store_url"] == \
        f"http://127.0.0.1:{server.server_address[1]}"
    for bad in ("http://[::1", "http://127.0.0.1:99999", "ftp://127.0.0.1:8000"):
        with pytest.raises(ConfigError, match="bad Chroma server URL"):
            chroma_client(None, bad)
    with pytest.raises(StoreError) as e:  # nothing listens there: refused, and the address read as IPv6
        chroma_client(None, "http://[::1]:9")
    assert "Invalid port" not in str(e.value)
