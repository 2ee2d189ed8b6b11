"""ERM4's reservoir bound (least-recently-used eviction, across processes), the evaluator
Retrieval Trigger, the Knowledge Filter's judge role and the web path's page fetch."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from ragraphs.components import Components
from ragraphs.errors import ConfigError
from ragraphs.graphs.erm4 import ERM4Context, build_erm4_graph
from ragraphs.state.types import make_passage
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.tools.reservoir import Reservoir, open_reservoir
from ragraphs.tools.trigger import trigger_lookup
from fakes import IMPORT_FAKES, CountingRetriever, HashEmbeddings, LexicalRetriever, run_in_threads


def _p(title: str, text: str = "") -> dict:
    return make_passage(title, text or f"{title} is a place.", "corpus")


def test_bound_evicts_least_recently_used_first(tmp_path):
    r = Reservoir(tmp_path / "r.sqlite3", embeddings=HashEmbeddings(), max_entries=3)
    assert r.add([_p("alpha"), _p("beta"), _p("gamma")])["evicted"] == 0
    r.touch(["alpha"])  # served by the trigger: now the most recently used
    counts = r.add([_p("delta")])
    assert counts["added"] == 1 and counts["evicted"] == 1
    assert r.count() == 3 and r.get("beta") is None  # beta: the least recently used
    assert {p["title"] for p in r.all_entries()} == {"alpha", "gamma", "delta"}
    # storing an unchanged entry again counts as a use too
    r.add([_p("gamma")])
    r.add([_p("epsilon")])
    assert r.get("alpha") is None and r.get("gamma") is not None
    # one call adding more than the bound keeps its newest entries
    counts = r.add([_p(f"n{i}") for i in range(5)])
    assert counts["evicted"] == 5 and [p["title"] for p in r.all_entries()] == ["n2", "n3", "n4"]
    # the in-memory title matrix follows the removals
    keys, sims = r.title_similarities(["n3"])
    assert sorted(keys) == ["n2", "n3", "n4"] and sims.shape == (1, 3)


def test_the_title_matrix_follows_writes_row_by_row_as_a_fresh_read_does(tmp_path):
    """Each read after a write takes the changed rows only (the whole matrix was built again,
    and on eviction every vector read again, on each write until 2026-11-30): through
    additions, a replaced title, evictions by another writer of the file, the matrix a
    long-lived reader holds scores as one read fresh from the file."""
    path = tmp_path / "r.sqlite3"
    emb = HashEmbeddings()
    reader, writer = Reservoir(path, embeddings=emb), Reservoir(path, embeddings=emb)
    queries = ["alpha place", "n3", "gamma"]

    def same_as_fresh():
        keys, sims = reader.title_similarities(queries)
        fresh_keys, fresh = Reservoir(path, embeddings=emb).title_similarities(queries)
        order = [fresh_keys.index(k) for k in keys]
        assert sorted(keys) == sorted(fresh_keys) and np.allclose(sims, fresh[:, order], atol=1e-6)
        return keys

    writer.add([_p("alpha"), _p("beta"), _p("gamma")])
    assert sorted(same_as_fresh()) == ["alpha", "beta", "gamma"]
    writer.add([_p("beta", "Beta is now a river."), _p("delta")])  # one replaced, one new
    assert sorted(same_as_fresh()) == ["alpha", "beta", "delta", "gamma"]
    writer.add([_p(f"n{i}") for i in range(4)], max_entries=3)  # evicts all but the newest three
    assert sorted(same_as_fresh()) == ["n1", "n2", "n3"]
    writer.add([_p("n3", "N3 moved."), _p("omega")], max_entries=3)
    assert sorted(same_as_fresh()) == ["n2", "n3", "omega"]


def test_every_components_shares_one_reservoir_per_file_for_the_packaged_embedder(tmp_path):
    """Each ``Components`` makes its own MiniLM object: each opened one more reservoir (its
    SQLite file twice, its title matrix), kept for the life of the process, until 2026-11-30.
    Another embedder is keyed by its object."""
    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.reservoir import close_reservoir

    path = str(tmp_path / "r.sqlite3")
    try:
        first = open_reservoir(path, embeddings=Components().embeddings)
        assert open_reservoir(path, embeddings=Components().embeddings) is first
        with pytest.raises(ConfigError, match="was built with embeddings 'all-MiniLM-L6-v2-int8'"):
            open_reservoir(path, embeddings=MiniLMEmbeddings(fast=False))  # the float model: its own key
        a, b = HashEmbeddings(), HashEmbeddings()
        other = str(tmp_path / "h.sqlite3")
        assert open_reservoir(other, embeddings=a) is open_reservoir(other, embeddings=a)
        assert open_reservoir(other, embeddings=a) is not open_reservoir(other, embeddings=b)

        # an app making its embeddings per request (each with its own client and key): each opens its
        # own reservoir, and the process keeps the last MAX_OTHER of them (every one, until 2026-12-01)
        from ragraphs.tools import reservoir as R

        named = str(tmp_path / "n.sqlite3")
        latest = [open_reservoir(named, embeddings=HashEmbeddings()) for _ in range(R.MAX_OTHER + 5)][-1]
        assert len([k for k in R._OPEN if k[0] == str((tmp_path / "n.sqlite3").resolve())]) == R.MAX_OTHER
        assert open_reservoir(named, embeddings=latest.embeddings) is latest
    finally:
        close_reservoir(path)
        close_reservoir(str(tmp_path / "h.sqlite3"))
        close_reservoir(str(tmp_path / "n.sqlite3"))


def test_bound_must_be_positive_and_none_is_unbounded(tmp_path):
    with pytest.raises(ConfigError, match="max_entries"):
        Reservoir(tmp_path / "r.sqlite3", embeddings=HashEmbeddings(), max_entries=0)
    r = Reservoir(tmp_path / "u.sqlite3", embeddings=HashEmbeddings())
    assert r.add([_p(f"t{i}") for i in range(50)])["evicted"] == 0 and r.count() == 50
    # a write's bound of 0 is none, as the reservoir_max_entries setting reads it (it kept one entry
    # until 2026-12-01); a negative one is refused
    assert r.add([_p("t50")], max_entries=0)["evicted"] == 0 and r.count() == 51
    with pytest.raises(ConfigError, match="max_entries must be >= 1, or 0 / None for no bound"):
        r.add([_p("t51")], max_entries=-3)


def test_bound_holds_under_concurrent_writers(tmp_path):
    path = tmp_path / "r.sqlite3"
    emb = HashEmbeddings()
    Reservoir(path, embeddings=emb)

    def writer(w):
        r = Reservoir(path, embeddings=emb, max_entries=20)
        for i in range(15):
            r.add([_p(f"w{w}-{i}"), _p(f"w{w}-{i}b")])

    assert not run_in_threads(writer, 4)
    r = Reservoir(path, embeddings=emb)
    assert r.count() == 20
    # least recently used go first: what survives of each writer is a suffix of its writes
    for w in range(4):
        order = [f"w{w}-{i}{s}" for i in range(15) for s in ("", "b")]
        alive = [r.get(t) is not None for t in order]
        assert alive == sorted(alive), (w, alive)


def test_bound_across_processes_and_old_files(tmp_path):
    path = tmp_path / "r.sqlite3"
    # a file written before used_at existed
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE entries (collection TEXT NOT NULL, title_key TEXT NOT NULL, title TEXT NOT NULL, "
        "content TEXT NOT NULL, source TEXT NOT NULL DEFAULT '', vec BLOB NOT NULL, seq INTEGER NOT NULL, "
        "updated_at REAL NOT NULL, PRIMARY KEY (collection, title_key));"
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        f"INSERT INTO meta VALUES ('embedding:default', '{HashEmbeddings().name}'), ('seq', '1');"
    )
    con.execute("INSERT INTO entries VALUES ('default', 'old', 'old', 'an old entry', '', ?, 1, 0)",
                (np.ones(64, np.float32).tobytes(),))
    con.commit()
    con.close()
    r = Reservoir(path, embeddings=HashEmbeddings(), max_entries=2)
    assert r.get("old") is not None
    keys, _ = r.title_similarities(["old"])  # this process has the title matrix loaded
    code = (
        IMPORT_FAKES
        + "from ragraphs.tools.reservoir import Reservoir\nfrom ragraphs.state.types import make_passage\n"
        + f"r = Reservoir({str(path)!r}, embeddings=HashEmbeddings(), max_entries=2)\n"
        + "print(r.add([make_passage('a', 'x', 'web'), make_passage('b', 'y', 'web')])['evicted'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "1"
    assert r.get("old") is None and r.count() == 2
    keys, sims = r.title_similarities(["a"])  # the other process's eviction is seen here
    assert sorted(keys) == ["a", "b"] and sims.shape == (1, 2)


def test_a_runs_bound_goes_with_its_write_not_onto_the_shared_reservoir(tmp_path):
    """One run's reservoir_max_entries evicted for every run of the process (it was set on the
    one cached object until 2026-11-30); now each write carries its own bound."""
    emb = HashEmbeddings()
    r = open_reservoir(str(tmp_path / "r.sqlite3"), embeddings=emb, max_entries=5)
    assert r.max_entries == 5
    again = open_reservoir(str(tmp_path / "r.sqlite3"), embeddings=emb, max_entries=1)
    assert again is r and r.max_entries == 5  # the shared object keeps its own
    page = [{"id": t, "title": t, "text": f"{t} text", "source": "corpus"} for t in "abcdefg"]
    assert r.add(page[:3], max_entries=None)["evicted"] == 0 and r.count() == 3
    assert r.add(page[3:6])["evicted"] == 1 and r.count() == 5  # the reservoir's own bound, 5
    assert r.add(page[6:], max_entries=2)["evicted"] == 4 and r.count() == 2  # this write's
    assert r.max_entries == 5 and open_reservoir(str(tmp_path / "r.sqlite3"), embeddings=emb).max_entries == 5


class KeywordEvaluator:
    """Relevance 0.9 when the passage text contains the query's last word, else -0.9."""

    def __init__(self):
        self.calls = 0

    def score_batch(self, pairs):
        self.calls += len(pairs)
        return np.array([0.9 if q.split()[-1].lower() in t.lower() else -0.9 for q, t in pairs], np.float32)


def test_evaluator_trigger_reads_content_of_the_closest_titles(tmp_path):
    r = Reservoir(tmp_path / "r.sqlite3", embeddings=HashEmbeddings())
    r.add([_p("Vienna", "Vienna lies on the danube."), _p("Budapest", "Budapest lies on the danube."),
           _p("Paris", "Paris lies on the Seine."), _p("Danube", "The danube is a river.")])
    ev = KeywordEvaluator()
    (pop, entries), = trigger_lookup(r, ["which city on the danube"], 0.5, 10, how="evaluator", judge=ev, candidates=10)
    assert pop == 3 and {p["title"] for p in entries} == {"Vienna", "Budapest", "Danube"}
    assert all(p["score"] == pytest.approx(0.9) for p in entries) and ev.calls == 4
    (pop, _), = trigger_lookup(r, ["which city on the danube"], 0.5, 10, how="evaluator", judge=ev, candidates=2)
    assert pop <= 2 and ev.calls == 6  # only the two closest titles were judged
    with pytest.raises(ConfigError):
        trigger_lookup(r, ["x"], 0.5, 10, how="bogus")


def test_the_evaluator_trigger_reads_at_least_theta_candidates(tmp_path):
    """Popularity is counted among the pre-selected entries: with fewer of them than theta
    (trigger_candidates=2, the paper's theta=3) every query went outside until 2026-12-01."""
    from ragraphs.tools.vectorstore import InMemoryCorpus

    emb = HashEmbeddings()
    r = Reservoir(tmp_path / "r.sqlite3", embeddings=emb)
    r.add([_p("Vienna", "Vienna lies on the danube."), _p("Budapest", "Budapest lies on the danube."),
           _p("Danube", "The danube is a river.")])
    corpus = InMemoryCorpus([_p("Seine", "The Seine flows through Paris.")], embeddings=emb)
    c = Components(llm=FakeAnswerChat(responses=["Which city lies on the danube**which city on the danube", "Vienna"]),
                   retriever=corpus, embeddings=emb, judges={"evaluator": KeywordEvaluator()}, extra={"reservoir": r})
    ctx = ERM4Context(trigger="evaluator", tau=0.5, theta=3, trigger_candidates=2, filter="none", k=1)
    out = build_erm4_graph(c).invoke({"question": "Which city lies on the danube?"}, context=ctx)
    assert [q["popularity"] for q in out["inside"]] == [3] and not out["outside"]


def test_graph_settings_pick_trigger_and_filter_role(tmp_path, minilm):
    from ragraphs.tools.vectorstore import InMemoryCorpus

    passages = [_p("Danube", "The Danube flows through Vienna and Budapest."), _p("Seine", "The Seine flows through Paris.")]
    corpus = CountingRetriever(InMemoryCorpus(passages, embeddings=minilm))
    ev = KeywordEvaluator()

    class NoNLI:
        def score_batch(self, pairs):
            raise AssertionError("the nli judge must not be called")

    res = Reservoir(tmp_path / "r.sqlite3", embeddings=minilm, max_entries=1)
    c = Components(llm=FakeAnswerChat(responses=["Which river flows through Vienna**river through Vienna", "Danube"]), retriever=corpus, embeddings=minilm,
                   judges={"evaluator": ev, "nli": NoNLI()}, extra={"reservoir": res})
    g = build_erm4_graph(c)
    ctx = ERM4Context(filter_judge="evaluator", filter_threshold=0.0, trigger="evaluator", tau=0.5, theta=1, k=2)
    out = g.invoke({"question": "Which river flows through Vienna"}, context=ctx)
    # the evaluator kept only the passage naming Vienna; the bound of 1 holds
    assert [p["title"] for p in out["passages"]] == ["Danube"] and res.count() == 1
    out = g.invoke({"question": "Which river flows through Vienna"}, context=ctx)
    assert out["inside"] and not out["outside"] and out["memory_knowledge"][0]["title"] == "Danube"
    # a judge role outside the choices is refused when the context is built, before any node runs
    with pytest.raises(ConfigError, match=re.escape("'filter_judge' must be one of nli | evaluator")):
        ERM4Context(filter_judge="bogus", use_memory=False)


def test_a_runs_reservoir_bound_is_its_own_writes(tmp_path):
    from ragraphs.nodes.erm4 import get_reservoir
    from ragraphs.tools.vectorstore import InMemoryCorpus

    emb = HashEmbeddings()
    corpus = InMemoryCorpus([_p(t, f"{t} flows through a city.") for t in ("Danube", "Seine", "Rhine")], embeddings=emb)
    path = str(tmp_path / "memory.sqlite3")

    def run(river, **settings):
        c = Components(llm=FakeAnswerChat(responses=[f"{river}**{river}", "the answer"]), retriever=corpus, embeddings=emb)
        ctx = ERM4Context(reservoir_path=path, reservoir_collection="shared", tau=0.99, k=1, filter="none", **settings)
        return build_erm4_graph(c).invoke({"question": f"{river}?"}, context=ctx), get_reservoir(c, ctx)

    out, res = run("Danube")
    out, _ = run("Seine")
    assert res.count() == 2
    out, _ = run("Rhine", reservoir_max_entries=1)  # this run's bound: its write evicts
    assert out["memory_update"]["evicted"] == 2 and res.count() == 1
    assert res.max_entries == 10000  # ...and the process's shared reservoir keeps its own
    out, _ = run("Danube")
    assert out["memory_update"]["evicted"] == 0 and res.count() == 2


def test_each_chroma_corpus_has_its_own_memory_in_the_same_reservoir_file(tmp_path):
    """The reservoir's collection defaults to the corpus's own: a question asked over one Chroma
    collection is not answered from the memory another collection's runs left in the same file
    (it was, from the shared "default" collection)."""
    from ragraphs.nodes.erm4 import get_reservoir
    from ragraphs.tools.vectorstore import ChromaCorpus

    emb = HashEmbeddings()
    for name, text in (("alpha", "The Danube flows through Vienna."), ("beta", "The Seine flows through Paris.")):
        ChromaCorpus(str(tmp_path / "store"), collection=name, embeddings=emb).add([_p("River", text)])
    path = str(tmp_path / "memory.sqlite3")
    ctx = ERM4Context(reservoir_path=path, tau=0.5, theta=1, k=1, filter="none")

    def components(collection):
        return Components(llm=FakeAnswerChat(responses=["River**River", "the answer"]), embeddings=emb,
                          store_path=str(tmp_path / "store"), collection=collection)

    alpha, beta = components("alpha"), components("beta")
    assert alpha.corpus_name() == components("alpha").corpus_name() != beta.corpus_name()
    assert alpha.corpus_name().startswith("chroma-alpha-")
    assert Components(retriever=CountingRetriever(None)).corpus_name() is None  # the user's: "default"
    first = build_erm4_graph(alpha).invoke({"question": "River?"}, context=ctx)
    assert first["outside"] and first["passages"][0]["text"].startswith("The Danube")
    assert get_reservoir(alpha, ctx).collection != get_reservoir(beta, ctx).collection
    again = build_erm4_graph(alpha).invoke({"question": "River?"}, context=ctx)
    assert again["inside"] and again["memory_knowledge"][0]["text"].startswith("The Danube")  # alpha's memory
    other = build_erm4_graph(beta).invoke({"question": "River?"}, context=ctx)
    assert not other["inside"] and [p["text"] for p in other["passages"]] == ["The Seine flows through Paris."]
    shared = ERM4Context(reservoir_path=path, tau=0.5, theta=1, k=1, filter="none", reservoir_collection="default")
    assert get_reservoir(beta, shared).collection == "default"  # named: as given


def test_a_web_only_run_never_opens_the_corpus_and_odd_collection_names_fit_a_store(tmp_path):
    """external="web" reads the web alone, so no store is opened (a missing one is no error and
    none is made); a collection name with a '.' still gives a namespace a LangGraph store takes."""
    from langgraph.store.memory import InMemoryStore

    from ragraphs.tools.websearch import OfflineCorpusSearch

    web = OfflineCorpusSearch(passages=[make_passage("Danube", "The Danube flows through Vienna.", "web")])
    missing = tmp_path / "no-store"
    c = Components(llm=FakeAnswerChat(responses=["River**Danube", "the Danube"]), embeddings=HashEmbeddings(),
                   web_search=web, store_path=str(missing), create_collection=False)
    ctx = ERM4Context(external="web", fetch_pages=False, use_memory=False, filter="none", k=1)
    out = build_erm4_graph(c).invoke({"question": "Which river flows through Vienna?"}, context=ctx)
    assert [p["title"] for p in out["passages"]] == ["Danube"] and not missing.exists()
    name = Components(store_path=str(tmp_path / "s"), collection="wiki.en").corpus_name()
    assert name.startswith("chroma-wiki_en-")
    InMemoryStore().put(("ragraphs", "erm4_reservoir", name), "k", {"title": "t"})  # a valid namespace


def test_reservoir_places_that_cannot_be_used_are_named(tmp_path):
    """A reservoir file whose folder cannot be made is a StoreError naming it (a bare OSError,
    "An internal error occurred" on a server, before); a '.' in a store reservoir's collection is
    a ConfigError naming the setting (LangGraph's namespace error named none)."""
    from langgraph.store.memory import InMemoryStore

    from ragraphs.errors import StoreError
    from ragraphs.nodes.erm4 import get_reservoir

    blocker = tmp_path / "afile"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot open the reservoir at .*afile"):
        Reservoir(blocker / "r.sqlite3", embeddings=HashEmbeddings())
    c = Components(retriever=CountingRetriever(None), embeddings=HashEmbeddings())
    ctx = ERM4Context(reservoir="store", reservoir_collection="wiki.en")
    with pytest.raises(ConfigError, match=r"reservoir_collection 'wiki.en': a LangGraph store's namespace takes no '\.'"):
        get_reservoir(c, ctx, InMemoryStore())
    # in a graph, each is refused before Rewriter+'s LLM call (after it, at the memory check, until 2026-12-01)
    llm = FakeAnswerChat(responses=["q**Danube", "the Danube"])
    c = Components(llm=llm, retriever=CountingRetriever(None), embeddings=HashEmbeddings())
    for graph, ctx, needle in ((build_erm4_graph(c), ERM4Context(reservoir="store"), "needs a LangGraph store"),
                               (build_erm4_graph(c, store=InMemoryStore()), ERM4Context(reservoir="store"), "no vector index"),
                               (build_erm4_graph(c, store=InMemoryStore()), ctx, "takes no '.'")):
        with pytest.raises(ConfigError, match=re.escape(needle)):
            graph.invoke({"question": "Which river flows through Vienna?"}, context=ctx)
    assert not llm.prompts
    # with memory off, no reservoir is read or written: nothing to refuse (the check above refused it
    # too, for a moment on 2026-12-01)
    off = ERM4Context(reservoir="store", use_memory=False, filter="none", k=1)
    c = Components(llm=FakeAnswerChat(responses=["q**Danube", "the Danube"]), embeddings=HashEmbeddings(),
                   retriever=LexicalRetriever([make_passage("Danube", "The Danube flows through Vienna.", "corpus")]))
    assert build_erm4_graph(c).invoke({"question": "Which river flows through Vienna?"}, context=off)["answer"]


def test_a_users_retriever_on_the_default_reservoir_is_warned_once(tmp_path, monkeypatch):
    """A retriever of the user's has no name that lasts across processes: its memory is the
    collection 'default' of the default file, shared with every other app's own retriever. The
    first run says so (once per Components) and names the setting; a named collection or a
    file of its own is not warned about."""
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))
    corpus = [_p("Paris", "Paris is the capital of France.")]

    def run(**settings):
        c = Components(llm=FakeAnswerChat(responses=["Paris"]), retriever=LexicalRetriever(corpus),
                       embeddings=HashEmbeddings())
        g = build_erm4_graph(c)
        for _ in range(2):
            g.invoke({"question": "What is the capital of France?"}, context=ERM4Context(filter="none", **settings))

    with pytest.warns(UserWarning, match="reservoir_collection") as caught:
        run()
    assert len([w for w in caught if "reservoir_collection" in str(w.message)]) == 1
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(reservoir_collection="my-docs")
        run(reservoir_path=str(tmp_path / "own.sqlite3"))


def test_memory_the_filter_drops_sends_its_query_outside_once(tmp_path):
    """The trigger matches a stored title, the filter drops all of its memory: the query is
    searched outside after all (``memory_recheck``); before 2026-11-30 ERM4 answered closed-book
    although the corpus held the answer. Off, the paper's back-off."""
    from fakes import OverlapJudge, ScriptedChat

    def script(prompt):
        if "[Original Question]" in prompt and "Rewritten Question" in prompt:
            q = prompt.split("[Original Question]:")[-1].split("\n")[0].strip()
            return json.dumps({"rewritten_question": q, "queries": ["Ada Lovelace " + ("birthplace" if "born" in q else "death")]})
        return "London"

    docs = [make_passage("Ada Lovelace", "Ada Lovelace was born in London in 1815."),
            make_passage("Ada Lovelace", "Ada Lovelace's death came in Marylebone on 27 November 1852."),
            make_passage("Charles Babbage", "Charles Babbage designed the Analytical Engine.")]
    judge = OverlapJudge("evaluator", stop={"where", "when", "was", "did", "the", "in", "of"})

    def ask(path, recheck):
        retriever = CountingRetriever(LexicalRetriever(docs))
        c = Components(llm=ScriptedChat(script=script), retriever=retriever, embeddings=HashEmbeddings(64, "words"),
                       judges={"evaluator": judge})
        ctx = ERM4Context(reservoir_path=str(path), reservoir_collection="x", k=1, tau=0.5, memory_recheck=recheck)
        g = build_erm4_graph(c)
        g.invoke({"question": "Where was Ada Lovelace born?"}, context=ctx)
        return g.invoke({"question": "When did Ada Lovelace die in Marylebone?"}, context=ctx), retriever

    out, retriever = ask(tmp_path / "on.sqlite3", True)
    assert out["inside"] and not out["outside"]  # the birth entry's title matched
    assert [r["query"] for r in out["memory_missed"]] == ["Ada Lovelace death"]
    assert retriever.queries[-1] == "Ada Lovelace death" and not out["backoff"]
    assert [p["text"] for p in out["passages"]] == [docs[1]["text"]]
    nodes = [t["node"] for t in out["trace"]]
    assert nodes == ["start", "rewrite", "memory_check", "filter", "retrieve", "filter", "generate", "memory_update"]
    assert out["filtered_out"] == 1  # the birth memory, dropped in the first pass
    off, retriever = ask(tmp_path / "off.sqlite3", False)
    assert off["backoff"] and off["passages"] == [] and "Ada Lovelace death" not in retriever.queries
    assert [t["node"] for t in off["trace"]] == ["start", "rewrite", "memory_check", "filter", "backoff", "memory_update"]


def test_the_recheck_judges_nothing_twice_and_fetches_no_page_again(tmp_path):
    """The recheck's second filter pass reads only what the rechecked query found that the first
    pass did not judge (a passage another query brought was judged again and counted twice in
    filtered_out), and no address the first pass fetched is fetched again (the snippet stands)."""
    from fakes import OverlapJudge, ScriptedChat

    from ragraphs.tools.fetch import FetchedPage

    url = "https://en.wikipedia.org/wiki/Ada_Lovelace"
    page = {"title": "Ada Lovelace", "text": "Ada Lovelace, mathematician.", "meta": {"url": url}}
    other = {"title": "Weather 1852", "text": "The winter of 1852 was mild."}

    class Web:
        name = "fake"

        def search(self, query, k=5):  # the outside query and the rechecked one both find the page
            return [dict(page), dict(other)] if query.startswith("Marylebone") else [dict(other), dict(page)]

    class Fetcher:
        def __init__(self):
            self.urls = []

        def fetch(self, address):
            self.urls.append(address)
            text = "Ada Lovelace died in Marylebone in 1852."
            return FetchedPage(url=address, title="Ada Lovelace", text=text, paragraphs=[text])

    def script(prompt):
        if "[Original Question]" in prompt and "Rewritten Question" in prompt:
            q = prompt.split("[Original Question]:")[-1].split("\n")[0].strip()
            return json.dumps({"rewritten_question": q, "queries": ["Ada Lovelace death", "Marylebone 1852 death"]})
        return "1852"

    fetcher = Fetcher()
    judge = OverlapJudge("evaluator", stop={"where", "when", "was", "did", "the", "in", "of"})
    c = Components(llm=ScriptedChat(script=script), embeddings=HashEmbeddings(64, "words"), web_search=Web(),
                   judges={"evaluator": judge}, extra={"fetcher": fetcher})
    ctx = ERM4Context(reservoir_path=str(tmp_path / "r.sqlite3"), reservoir_collection="x", k=2, tau=0.5,
                      external="web", filter_threshold=0.4, update_memory=False)
    from ragraphs.nodes.erm4 import get_reservoir

    get_reservoir(c, ctx).add([make_passage("Ada Lovelace", "Ada Lovelace was born in London in 1815.", "web")])
    out = build_erm4_graph(c).invoke({"question": "When did Ada Lovelace die in Marylebone?"}, context=ctx)
    assert [r["query"] for r in out["memory_missed"]] == ["Ada Lovelace death"]
    assert fetcher.urls == [url]  # once, in the first pass
    first, second = [t for t in out["trace"] if t["node"] == "filter"]
    assert "Weather 1852" in [d["title"] for d in first["decisions"]]
    assert "Weather 1852" not in [d["title"] for d in second["decisions"]]  # judged in the first pass: not again
    decisions = first["decisions"] + second["decisions"]
    assert out["filtered_out"] == len(decisions) - sum(d["kept"] for d in decisions)  # each counted once
    assert "Ada Lovelace died in Marylebone in 1852." in [p["text"] for p in out["passages"]]
