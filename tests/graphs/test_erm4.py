"""ERM4: Query Rewriter+ parsing, Retrieval Trigger on a real reservoir, Knowledge Filter and
back-off, reservoir replacement, persistence and concurrency across processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from fakes import IMPORT_FAKES, ConstJudge, CountingRetriever, HashEmbeddings, run_in_threads
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.graphs.erm4 import ERM4Context, build_erm4_graph
from ragraphs.nodes.erm4 import rewrite_prompt
from ragraphs.nodes.erm4_parsing import mixed_order
from ragraphs.nodes.erm4_parsing import parse_nli, parse_rewrite
from ragraphs.state.types import make_passage
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.tools.reservoir import Reservoir, title_key
from ragraphs.tools.vectorstore import InMemoryCorpus

# the paper's Retrieval Trigger (title cosine) and an NLI filter: what the fakes below stand in for
PAPER = {"trigger": "title", "tau": 0.6, "theta": 3, "filter_judge": "nli", "filter_threshold": 0.5}


def paper_ctx(**kw) -> ERM4Context:
    return ERM4Context(**{**PAPER, **kw})


@pytest.fixture(scope="module")
def wiki(data_dir):
    exs = load_dataset(str(data_dir / "2wikimultihopqa.sample.jsonl"), "2wikimultihopqa")
    return exs, pooled_passages(exs)


@pytest.fixture(scope="module")
def wiki_corpus(wiki, minilm):
    return InMemoryCorpus(wiki[1], embeddings=minilm)


# ---------------------------------------------------------------- Query Rewriter+ parsing


def test_parse_rewrite_paper_format_and_fallbacks():
    q = "Where was the director of film The Zone born?"
    rw, qs, problem = parse_rewrite(
        " In which city was Denys Desjardins, director of the 2017 film The Zone, born?**The Zone 2017 film director"
        "**Sistine Chapel ceiling**{Denys Desjardins birthplace}**The Zone film**director of The Zone biography\nmore", q
    )
    assert rw == "In which city was Denys Desjardins, director of the 2017 film The Zone, born?"
    # at most three; a query about something neither question names is dropped; a query about
    # what the rewritten question resolved (the bridge entity) is kept
    assert qs == ["The Zone 2017 film director", "Denys Desjardins birthplace", "The Zone film"]
    assert problem is None
    # labels, numbering and repeated queries are cleaned
    rw, qs, _ = parse_rewrite("[Output]: Rewritten question: Where was the director of The Zone born?**1. The Zone director**the zone director", q)
    assert rw == "Where was the director of The Zone born?" and qs == ["The Zone director"]
    # unusable output: the original question is the rewritten question and the only query
    for bad in ["", "****", "12345", "*" * 40]:
        rw, qs, problem = parse_rewrite(bad, q)
        assert rw == q and qs == [q] and problem
    # a copied few-shot example shares no word with the question: dropped
    rw, qs, problem = parse_rewrite("Which artist painted the ceiling of the Sistine Chapel?**Sistine Chapel ceiling painter", q)
    assert rw == q and qs == [q] and "unusable" in problem
    # a usable rewritten question without queries: the original question is the query
    rw, qs, problem = parse_rewrite("Where was the director of The Zone (2017 film) born?", q)
    assert rw.startswith("Where was the director") and qs == [q] and problem == "no usable query"


def test_rewrite_prompt_ends_where_the_model_writes():
    p = rewrite_prompt("who wrote  the\nsong")
    assert p.endswith("[Original Question]: who wrote the song\n[Output]:")
    # the paper's format, as the JSON of the Rewriter+ decision, and three examples in it
    assert '[Format]: {"rewritten_question":' in p
    shots = [json.loads(line.split("[Output]: ", 1)[1]) for line in p.splitlines() if line.startswith("[Output]: {")]
    assert len(shots) == 3 and all(len(s["queries"]) == 3 and s["rewritten_question"] for s in shots)


def test_parse_nli_and_mixed_order():
    assert parse_nli("The passage gives the year.**entailment") == "entailment"
    assert parse_nli("It is unrelated.** Neutral") == "neutral"
    assert parse_nli("says the opposite**contradiction") == "contradiction"
    assert parse_nli("no label at all") == "neutral"
    a = [make_passage("A", str(i)) for i in range(3)]
    b = [make_passage("B", str(i)) for i in range(2)]
    mixed = mixed_order([a, b, [a[0]]])
    assert [p["title"] + p["text"] for p in mixed] == ["A0", "B0", "A1", "B1", "A2"]
    assert len(mixed_order([a, b], limit=3)) == 3


# ---------------------------------------------------------------- reservoir


def test_reservoir_replaces_by_title_and_counts(tmp_path):
    r = Reservoir(tmp_path / "r.sqlite3", embeddings=HashEmbeddings())
    c1 = r.add([make_passage("Danube", "old text", "corpus"), make_passage("Rhine", "a river", "web"), make_passage("", "no title")])
    assert c1 == {"added": 2, "replaced": 0, "unchanged": 0, "skipped": 1, "evicted": 0}
    c2 = r.add([make_passage("  danube ", "newer text", "web"), make_passage("Rhine", "a river", "web")])
    assert c2["replaced"] == 1 and c2["unchanged"] == 1
    assert r.count() == 2
    assert r.get("DANUBE")["text"] == "newer text" and r.get("Danube")["title"] == "danube"
    assert title_key("  The   Danube ") == "the danube"
    # the in-memory title matrix follows the replacement (one row per title)
    keys, sims = r.title_similarities(["danube"])
    assert sorted(keys) == ["danube", "rhine"] and sims.shape == (1, 2)
    # another collection in the same file is separate
    other = Reservoir(tmp_path / "r.sqlite3", collection="other", embeddings=HashEmbeddings())
    assert other.count() == 0
    assert r.clear() == 2 and r.count() == 0 and r.popularity(["danube"], 0.1) == [0]


def test_reservoir_refuses_other_embeddings(tmp_path, minilm):
    from ragraphs.errors import ConfigError

    Reservoir(tmp_path / "r.sqlite3", embeddings=HashEmbeddings())
    with pytest.raises(ConfigError, match="embeddings"):
        Reservoir(tmp_path / "r.sqlite3", embeddings=minilm)


def test_reservoir_threads_write_concurrently(tmp_path):
    r = Reservoir(tmp_path / "r.sqlite3", embeddings=HashEmbeddings())

    def writer(t):
        for i in range(20):
            r.add([make_passage(f"title {t} {i}", f"text {t} {i}"), make_passage("shared title", f"from {t} {i}")])
            r.popularity([f"title {t}"], 0.5)

    assert not run_in_threads(writer, 4)
    assert r.count() == 4 * 20 + 1
    assert r.get("shared title")["text"].startswith("from ")


def _run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", IMPORT_FAKES + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout)


def test_reservoir_persists_and_is_shared_by_processes(tmp_path):
    path = str(tmp_path / "shared" / "reservoir.sqlite3")
    # process 1 writes and exits
    r = _run(f"""
        from ragraphs.tools.reservoir import Reservoir
        from ragraphs.state.types import make_passage
        res = Reservoir({path!r}, embeddings=HashEmbeddings())
        print(res.add([make_passage("Vienna", "capital of Austria"), make_passage("Danube", "old")]))
    """)
    assert r.returncode == 0, r.stderr
    # two processes write at the same time (distinct titles plus the same titles)
    writer = """
        import sys
        from ragraphs.tools.reservoir import Reservoir
        from ragraphs.state.types import make_passage
        res = Reservoir({path!r}, embeddings=HashEmbeddings(), busy_timeout_s=60)
        for i in range(40):
            res.add([make_passage("p{w} entry %d" % i, "text %d" % i), make_passage("Danube", "from {w} %d" % i)])
        print("done")
    """
    procs = [subprocess.Popen([sys.executable, "-c", IMPORT_FAKES + textwrap.dedent(writer.format(path=path, w=w))],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in ("A", "B")]
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        assert out.strip() == "done"
    # a third process reads everything both wrote, once per title
    r = _run(f"""
        import json
        from ragraphs.tools.reservoir import Reservoir
        res = Reservoir({path!r}, embeddings=HashEmbeddings())
        print(json.dumps({{"count": res.count(), "vienna": res.get("vienna")["text"], "danube": res.get("Danube")["text"],
                          "pop": res.popularity(["vienna"], 0.99)}}))
    """)
    assert r.returncode == 0, r.stderr
    import json

    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["count"] == 2 + 2 * 40
    assert got["vienna"] == "capital of Austria"
    assert got["danube"].startswith("from ") and got["danube"].endswith(" 39")  # the newest write of one writer
    assert got["pop"] == [1]


# ---------------------------------------------------------------- Retrieval Trigger on a real reservoir


@pytest.fixture(scope="module")
def real_reservoir(tmp_path_factory, wiki, minilm):
    r = Reservoir(tmp_path_factory.mktemp("res") / "reservoir.sqlite3", embeddings=minilm)
    r.add(wiki[1])
    return r


def test_trigger_boundary_on_real_reservoir(real_reservoir):
    # 2Wiki paragraphs' titles, MiniLM title similarity, the paper's tau 0.6 and theta 3
    (pop_in, hits_in), (pop_near, _), (pop_out, hits_out) = real_reservoir.lookup(
        ["Henrik Selberg", "Lord Adolphus Vane-Tempest", "Danish chemist who introduced pH"], 0.6, 10
    )
    assert pop_in >= 3 and hits_in[0]["title"] == "Henrik Selberg" and hits_in[0]["source"] == "memory"
    assert all(h["score"] >= 0.6 for h in hits_in) and [h["score"] for h in hits_in] == sorted((h["score"] for h in hits_in), reverse=True)
    assert 1 <= pop_near < 3  # its own title and one close one (0.72; the next 0.52) are not enough popularity
    assert pop_out == 0 and hits_out == []
    # a lower tau widens the boundary
    assert real_reservoir.popularity(["Lord Adolphus Vane-Tempest"], 0.3)[0] >= 3


def test_graph_routes_inside_to_memory_and_outside_to_retrieval(real_reservoir, wiki_corpus, minilm):
    llm = FakeAnswerChat(responses=["Was Henrik Selberg born before Lord Adolphus Vane-Tempest?**Henrik Selberg**Lord Adolphus Vane-Tempest", "no"])
    retr = CountingRetriever(wiki_corpus)
    c = Components(llm=llm, retriever=retr, embeddings=minilm, judges={"nli": ConstJudge(0.9)},
                   extra={"reservoir": real_reservoir})
    g = build_erm4_graph(c)
    before = real_reservoir.count()
    out = g.invoke({"question": "Was Henrik Selberg older than Lord Adolphus Vane-Tempest?"}, context=paper_ctx(update_memory=False, k=3))
    assert [r["query"] for r in out["inside"]] == ["Henrik Selberg"] and out["inside"][0]["popularity"] >= 3
    assert [r["query"] for r in out["outside"]] == ["Lord Adolphus Vane-Tempest"]
    assert retr.queries == ["Lord Adolphus Vane-Tempest"]  # external retrieval only for the outside query
    assert out["memory_knowledge"] and all(p["source"] == "memory" for p in out["memory_knowledge"])
    assert len(out["external_knowledge"]) == 3 and all(p["source"] != "memory" for p in out["external_knowledge"])
    # mixed order: memory (query 0) and external (query 1) alternate at the top
    assert [p["meta"]["query_index"] for p in out["passages"][:4]] == [0, 1, 0, 1]
    assert len(out["passages"]) <= 10 and out["filtered_out"] == 0 and out["backoff"] is False
    assert [t["node"] for t in out["trace"]] == ["start", "rewrite", "memory_check", "retrieve", "filter", "generate", "memory_update"]
    assert out["answer"] == "no" and out["llm_calls"] == 2
    assert "Question: Was Henrik Selberg born before Lord Adolphus Vane-Tempest?" in llm.prompts[-1]  # the rewritten one
    assert real_reservoir.count() == before
    # every query inside: no retrieval node at all
    retr.queries.clear()
    llm2 = FakeAnswerChat(responses=["Where was Henrik Selberg born?**Henrik Selberg**Sigmund Selberg", "Flora"])
    c2 = Components(llm=llm2, retriever=retr, embeddings=minilm, judges={"nli": ConstJudge(0.9)}, extra={"reservoir": real_reservoir})
    out = build_erm4_graph(c2).invoke({"question": "Where was Henrik Selberg born?"}, context=paper_ctx(update_memory=False, theta=2))
    assert retr.queries == [] and not out["outside"] and "retrieve" not in [t["node"] for t in out["trace"]]


# ---------------------------------------------------------------- Knowledge Filter, back-off, memory update


def test_filter_drops_everything_backs_off(tmp_path, wiki_corpus, minilm):
    res = Reservoir(tmp_path / "r.sqlite3", embeddings=minilm)
    llm = FakeAnswerChat(responses=["Where was Henrik Selberg born?**Henrik Selberg birthplace", "Oslo"])
    c = Components(llm=llm, retriever=wiki_corpus, embeddings=minilm, judges={"nli": ConstJudge(0.0)}, extra={"reservoir": res})
    out = build_erm4_graph(c).invoke({"question": "Where was Henrik Selberg born?"}, context=paper_ctx(k=4))
    assert out["backoff"] is True and out["passages"] == [] and out["filtered_out"] == 4
    assert [t["node"] for t in out["trace"]][-2:] == ["backoff", "memory_update"]
    assert "Passages:" not in llm.prompts[-1] and "Where was Henrik Selberg born?" in llm.prompts[-1]
    assert out["answer"] == "Oslo" and res.count() == 0  # nothing kept, nothing stored


def test_kept_knowledge_is_stored_and_reused(tmp_path, wiki_corpus, minilm):
    res = Reservoir(tmp_path / "r.sqlite3", embeddings=minilm)
    llm = FakeAnswerChat(responses=["Where was Henrik Selberg born?**Henrik Selberg", "Oslo"])
    c = Components(llm=llm, retriever=wiki_corpus, embeddings=minilm, judges={"nli": ConstJudge(0.8)}, extra={"reservoir": res})
    g = build_erm4_graph(c)
    ctx = paper_ctx(k=5, theta=2)
    out = g.invoke({"question": "Where was Henrik Selberg born?"}, context=ctx)
    assert out["outside"] and len(out["passages"]) == 5
    titles = {" ".join(p["title"].split()).casefold() for p in out["passages"]}
    assert out["memory_update"]["added"] == res.count() == len(titles)
    assert res.get("Henrik Selberg") is not None
    # the same question again: inside the boundary now, answered from the reservoir
    out2 = g.invoke({"question": "Where was Henrik Selberg born?"}, context=ctx)
    assert out2["inside"] and not out2["outside"] and not out2["external_knowledge"]
    assert out2["passages"] and all(p["source"] == "memory" for p in out2["passages"])
    assert out2["memory_update"] == {"added": 0, "replaced": 0, "unchanged": 0, "skipped": 0, "evicted": 0}
    # filter threshold above every score: back-off
    out3 = g.invoke({"question": "Where was Henrik Selberg born?"}, context=paper_ctx(filter_threshold=0.9))
    assert out3["backoff"] and out3["filtered_out"] > 0


def test_llm_filter_uses_the_paper_nli_prompt(tmp_path, wiki_corpus, minilm):
    res = Reservoir(tmp_path / "r.sqlite3", embeddings=minilm)
    llm = FakeAnswerChat(responses=[
        "Where was Henrik Selberg born?**Henrik Selberg",
        "It names his birthplace.**entailment", "Unrelated.**neutral", "Opposite.**contradiction",
        "Oslo",
    ])
    c = Components(llm=llm, retriever=wiki_corpus, embeddings=minilm, extra={"reservoir": res})
    out = build_erm4_graph(c).invoke({"question": "Where was Henrik Selberg born?"}, context=paper_ctx(k=3, filter="llm"))
    assert len(out["passages"]) == 1 and out["filtered_out"] == 2 and out["llm_calls"] == 5
    nli = llm.prompts[1]
    assert "solve the NLI problem" in nli and "entailment, contradiction, or neutral" in nli
    assert nli.rstrip().endswith("[Output]:") and "[Question]: Where was Henrik Selberg born?" in nli
    assert out["answer"] == "Oslo"


def test_unusable_rewrite_falls_back_to_the_question(tmp_path, wiki_corpus, minilm):
    res = Reservoir(tmp_path / "r.sqlite3", embeddings=minilm)
    llm = FakeAnswerChat(responses=["***", "yes"])
    retr = CountingRetriever(wiki_corpus)
    c = Components(llm=llm, retriever=retr, embeddings=minilm, judges={"nli": ConstJudge(1.0)}, extra={"reservoir": res})
    q = "Who directed What Will You Do When You Catch Me?"
    out = build_erm4_graph(c).invoke({"question": q}, context=paper_ctx(use_memory=False))
    assert out["rewritten_question"] == q and out["queries"] == [q] and retr.queries == [q]
    assert out["trace"][1]["fallback"] and res.count() == 0  # use_memory=False: no update either


def test_queries_that_differ_in_case_and_punctuation_only_are_one():
    """"Alpha founder", "Alpha founder?" and "alpha founder." took three of the three places,
    and three retrievals of the same passages, until 2026-11-30; the question added by
    ``include_question_query`` is compared the same way."""
    from ragraphs.nodes.erm4_parsing import check_rewrite

    q = "Where was the founder of Alpha born?"
    _, queries, _ = check_rewrite([q], ["Alpha founder", "Alpha founder?", "alpha founder.", "Alpha founder birthplace"], q, 3)
    assert queries == ["Alpha founder", "Alpha founder birthplace"]


def test_a_web_setting_reaches_erm4_and_none_is_refused_before_the_llm(tmp_path, wiki_corpus, minilm, data_dir, monkeypatch):
    """``external=web`` reads the ``web`` setting (or ``$RAGRAPHS_WEB``) as CRAG does (it needed
    ``Components(web_search=...)`` until 2026-11-30), and without any web search the run is
    refused before the rewriter's LLM call (it was after)."""
    from ragraphs.errors import ConfigError

    monkeypatch.delenv("RAGRAPHS_WEB", raising=False)
    llm = FakeAnswerChat(responses=['{"rewritten_question": "Who is Alan Bjerga?", "queries": ["Alan Bjerga"]}', "yes", "a journalist"])
    c = Components(llm=llm, retriever=wiki_corpus, embeddings=minilm, judges={"evaluator": ConstJudge(1.0)},
                   extra={"reservoir": Reservoir(tmp_path / "r.sqlite3", embeddings=minilm)})
    g = build_erm4_graph(c)
    with pytest.raises(ConfigError, match="external='web' needs a web search"):
        g.invoke({"question": "Who is Alan Bjerga?"}, context=ERM4Context(external="web"))
    assert llm.prompts == []
    snapshot = f"offline:{data_dir / 'popqa.web.sample.jsonl'}"
    out = g.invoke({"question": "Who is Alan Bjerga?"}, context=ERM4Context(external="web", web=snapshot, use_memory=False))
    assert out["web_calls"] == 1 and any(p["source"] == "web" for p in out["external_knowledge"])
    with pytest.raises(ConfigError, match="unknown web search"):
        ERM4Context(external="web", web="bing")


def test_context_defaults_follow_the_paper():
    ctx = ERM4Context()
    # tau the paper's 0.6 (measured on 2Wiki dev), theta calibrated for MiniLM (paper: 3); the rest as in the paper
    assert (ctx.tau, ctx.theta, ctx.max_queries, ctx.k) == (0.6, 1, 3, 5)
    assert (ctx.trigger, ctx.filter_judge, ctx.filter_threshold, ctx.reservoir_max_entries) == ("title", "evaluator", 0.5, 10000)
    from ragraphs.graphs import get_context_class

    assert get_context_class("erm4") is ERM4Context


def test_mixed_order_keeps_one_copy_of_a_text_under_two_ids():
    # a memory entry (id of title + text) and the ingested chunk it came from (id of path + text)
    corpus = make_passage("Danube", "The Danube is about 2850 km long.", id="chunk-of-a-file")
    memory = make_passage("Danube", "The Danube is about 2850 km long.", "memory")
    other = make_passage("Vienna", "The Danube flows through Vienna.")
    assert [p["id"] for p in mixed_order([[memory], [other, corpus]])] == [memory["id"], other["id"]]
