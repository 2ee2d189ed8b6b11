"""DR-RAG graph: each strategy on the real 2Wiki/MuSiQue test slices (BM25 retrieval, so no
model is loaded), with scripted pair judges and a fake chat model; the real stack is in
tests/graphs/test_dr_rag_real.py."""

from __future__ import annotations


import numpy as np
import pytest

from fakes import ConstJudge, HashEmbeddings, OverlapJudge
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.errors import ConfigError, InputError
from ragraphs.graphs import get_context_class
from ragraphs.graphs.dr_rag import DRRAGContext, build_dr_rag_graph
from ragraphs.nodes.dr_rag import (
    concat_query,
    first_stage_size,
    pair_threshold,
)
from ragraphs.nodes.dr_rag_select import qdc_select
from ragraphs.nodes.dr_rag_generate import dr_rag_answer_prompt
from ragraphs.tools.llm import FakeAnswerChat
from ragraphs.tools.vectorstore import InMemoryCorpus

ZONE = "What is the place of birth of the director of film The Zone (2017 Film)?"
GULNUS = "Where was the place of death of Gülnuş Sultan's husband?"
NORTH_STAR = "Who married the publisher of abolitionist newspaper The North Star?"


class ScriptedPairJudge:
    """Accepts a pair (d1, d2) only when both titles are in ``good``; counts its batches."""

    name = "scripted-pair"

    def __init__(self, good: set[str] = frozenset(), accept_all: bool = False):
        self.good, self.accept_all = set(good), accept_all
        self.batches: list[int] = []

    def _title(self, text: str) -> str:
        return text.split("\n", 1)[0]

    def score_pairs(self, triples):
        self.batches.append(len(triples))
        out = []
        for _, d1, d2 in triples:
            ok = self.accept_all or (self._title(d1) in self.good and self._title(d2) in self.good)
            out.append(0.9 if ok else 0.1)
        return np.asarray(out, dtype=np.float32)

    def score_pair(self, q, d1, d2):
        return float(self.score_pairs([(q, d1, d2)])[0])


@pytest.fixture(scope="module")
def slices(data_dir):
    out = {}
    for ds in ("2wikimultihopqa", "musique"):
        exs = load_dataset(str(data_dir / f"{ds}.sample.jsonl"), ds)
        out[ds] = (exs, InMemoryCorpus(pooled_passages(exs), embeddings=HashEmbeddings(64, 'words')))
    return out


def _gold(exs, question):
    ex = next(e for e in exs if e.question == question)
    return {p["title"] for p in ex.supporting}


def _run(corpus, question, judge=None, answer="Montreal", **ctx):
    llm = FakeAnswerChat(responses=[answer])
    c = Components(llm=llm, retriever=corpus, embeddings=corpus.embeddings, judges={"pair": judge or ScriptedPairJudge()})
    g = build_dr_rag_graph(c)
    ctx.setdefault("retrieval", "bm25")
    ctx.setdefault("rerank", "none")
    out = g.invoke({"question": question}, context=DRRAGContext(**ctx))
    return out, llm


def _titles(out):
    return [p["title"] for p in out["passages"]]


def test_registered_and_context_defaults():
    assert get_context_class("dr-rag") is DRRAGContext
    ctx = DRRAGContext()
    assert ctx.strategy == "cfs" and ctx.k == 4 and ctx.k1 is None
    assert first_stage_size(DRRAGContext(k=3)) == 2
    assert first_stage_size(DRRAGContext(k=4)) == 2
    assert first_stage_size(DRRAGContext(k=6)) == 3
    assert first_stage_size(DRRAGContext(k=4, k1=9)) == 4  # never more than k


def test_sm_is_plain_top_k_and_one_llm_call(slices):
    exs, corpus = slices["2wikimultihopqa"]
    out, llm = _run(corpus, ZONE, strategy="sm", k=4)
    assert [p["id"] for p in out["passages"]] == [p["id"] for p in corpus.search(ZONE, 4, mode="bm25")]
    assert out["llm_calls"] == 1 and len(llm.prompts) == 1
    assert out["answer"] == "Montreal"
    assert [t["node"] for t in out["trace"]] == ["start", "first_stage", "generate"]


def test_qdc_reaches_the_bridge_paragraph_through_the_first(slices):
    exs, corpus = slices["2wikimultihopqa"]
    gold = _gold(exs, GULNUS)
    sm, _ = _run(corpus, GULNUS, strategy="sm", k=2)
    qdc, llm = _run(corpus, GULNUS, strategy="qdc", k=2)
    # the husband's paragraph shares nothing with the question but the relation
    assert "Mehmed IV" in gold and "Mehmed IV" not in _titles(sm)
    assert set(_titles(qdc)) == gold
    assert qdc["first_stage"][0]["title"] == "Gülnuş Sultan"
    assert qdc["second_stage"][0][0]["title"] == "Gülnuş Sultan"  # d_1 retrieves itself first
    assert qdc["llm_calls"] == 1 and len(llm.prompts) == 1
    assert [t["node"] for t in qdc["trace"]] == ["start", "first_stage", "second_stage", "qdc_select", "generate"]


def test_cfs_walks_past_the_rejected_candidate(slices):
    exs, corpus = slices["2wikimultihopqa"]
    gold = _gold(exs, ZONE)
    judge = ScriptedPairJudge(gold)
    qdc, _ = _run(corpus, ZONE, strategy="qdc", k=2)
    cfs, llm = _run(corpus, ZONE, judge=judge, strategy="cfs", k=2, pick="first", extra_partners=False)
    # QDC takes the first new second-stage document (a distractor film)...
    assert "Denys Desjardins" not in _titles(qdc)
    # ...CFS (Algorithm 1) walks on to the first one the classifier accepts with d_1
    assert set(_titles(cfs)) == gold
    decisions = cfs["classifier_scores"]
    assert decisions[-1]["accepted"] and not any(d["accepted"] for d in decisions[:-1])
    assert len(decisions) >= 2 and decisions[0]["second"] not in {p["id"] for p in cfs["passages"]}
    # the default pick scores every candidate and keeps the best accepted one: the same gold here
    best, _ = _run(corpus, ZONE, judge=ScriptedPairJudge(gold), strategy="cfs", k=2)
    assert set(_titles(best)) == gold
    scored = best["classifier_scores"]
    assert len(scored) >= len(decisions) and sum(d["accepted"] for d in scored) >= 1
    assert len(judge.batches) == 1  # one batched classifier call
    assert cfs["llm_calls"] == 1 and len(llm.prompts) == 1
    assert [t["node"] for t in cfs["trace"]] == ["start", "first_stage", "second_stage", "forward_select", "generate"]


def test_cfs_hands_fewer_than_k_docs_when_nothing_is_accepted(slices):
    exs, corpus = slices["musique"]
    out, _ = _run(corpus, NORTH_STAR, judge=ScriptedPairJudge(), strategy="cfs", k=4, fill=False)
    assert [p["id"] for p in out["passages"]] == [p["id"] for p in out["first_stage"]]
    assert len(out["passages"]) == 2 < 4
    assert out["classifier_scores"] and not any(d["accepted"] for d in out["classifier_scores"])


def test_cfs_with_accepting_classifier_keeps_first_new_doc_per_pair(slices):
    exs, corpus = slices["musique"]
    # every pair accepted with one score: without a prior to break the ties, CFS picks as QDC does
    cfs, _ = _run(corpus, NORTH_STAR, judge=ScriptedPairJudge(accept_all=True), strategy="cfs", k=4, bridge_bonus=0.0)
    qdc, _ = _run(corpus, NORTH_STAR, strategy="qdc", k=4)
    assert _titles(cfs) == _titles(qdc) and len(cfs["passages"]) == 4


def test_cis_drops_second_stage_docs_rejected_with_every_first_doc(slices):
    exs, corpus = slices["musique"]
    gold = _gold(exs, NORTH_STAR)
    qdc, _ = _run(corpus, NORTH_STAR, strategy="qdc", k=6, k1=2)
    cis, llm = _run(corpus, NORTH_STAR, judge=ScriptedPairJudge(gold), strategy="cis", k=6, k1=2)
    first_ids = {p["id"] for p in cis["first_stage"]}
    qdc_dynamic = [p for p in qdc["passages"] if p["id"] not in first_ids]
    assert len(qdc["passages"]) == 6 and len(qdc_dynamic) == 4  # later rounds fill QDC to k
    kept = [p["title"] for p in cis["passages"] if p["id"] not in first_ids]
    assert set(kept) == {p["title"] for p in qdc_dynamic} & gold
    assert set(cis["rejected"]) == {p["id"] for p in qdc_dynamic if p["title"] not in gold}
    # every second-stage doc was scored against every first-stage doc
    assert len(cis["classifier_scores"]) == len(first_ids) * len(qdc_dynamic)
    assert cis["llm_calls"] == 1 and len(llm.prompts) == 1


def test_threshold_resolution():
    class J:
        name = "cosine-pair"
        threshold = 0.5

    class K:
        name = "other"
        threshold = 0.42

    assert pair_threshold(DRRAGContext(pair_threshold=0.33), J()) == 0.33
    assert pair_threshold(DRRAGContext(), J()) == 0.5
    assert pair_threshold(DRRAGContext(), K()) == 0.42
    assert pair_threshold(DRRAGContext(), object()) == 0.5
    assert pair_threshold(DRRAGContext(pair_threshold=0.1), K()) == 0.1  # the run's wins over the judge's own


def test_pair_threshold_is_applied(slices):
    exs, corpus = slices["musique"]

    class Fixed:
        name = "fixed"

        def score_pairs(self, triples):
            return np.full(len(triples), 0.6, dtype=np.float32)

    lo, _ = _run(corpus, NORTH_STAR, judge=Fixed(), strategy="cfs", k=4, pair_threshold=0.5, bridge_bonus=0.0)
    hi, _ = _run(corpus, NORTH_STAR, judge=Fixed(), strategy="cfs", k=4, pair_threshold=0.7, fill=False, bridge_bonus=0.0)
    assert len(lo["passages"]) == 4 and len(hi["passages"]) == 2
    assert hi["pair_threshold"] == 0.7


def test_skip_generation_makes_no_llm_call(slices):
    exs, corpus = slices["2wikimultihopqa"]
    out, llm = _run(corpus, ZONE, judge=ScriptedPairJudge(accept_all=True), strategy="cfs", k=4, skip_generation=True)
    assert out["llm_calls"] == 0 and llm.prompts == [] and out["answer"] == ""
    assert len(out["passages"]) == 4


def test_prompt_follows_the_papers_shape(slices):
    exs, corpus = slices["2wikimultihopqa"]
    out, llm = _run(corpus, ZONE, judge=ScriptedPairJudge(accept_all=True), strategy="cfs", k=3, answer_prompt="paper")
    prompt = llm.prompts[0]
    assert prompt.rstrip().endswith("Answer:")
    assert f"Question: {ZONE}" in prompt
    for i, p in enumerate(out["passages"], 1):
        assert f"Document {i}: {p['title']}: " in prompt
    assert out["input_tokens"] > 0 and out["output_tokens"] >= 1
    assert "Document 1:" in dr_rag_answer_prompt("q?", [], 100) and "(none)" in dr_rag_answer_prompt("q?", [], 100)


def test_reader_prompt_is_vanillas_over_the_selected_documents(slices):
    from ragraphs.prompts import rag_answer_prompt

    exs, corpus = slices["2wikimultihopqa"]
    out, llm = _run(corpus, ZONE, judge=ScriptedPairJudge(accept_all=True), strategy="cfs", k=3, answer_prompt="reader")
    assert len(out["passages"]) == 3 and out["llm_calls"] == 1
    assert llm.prompts == [rag_answer_prompt(ZONE, out["passages"], max_chars=1200)]
    assert "Document 1:" not in llm.prompts[0]


def test_modes_reach_the_retriever(slices):
    exs, corpus = slices["2wikimultihopqa"]
    seen = []

    class Spy:
        def __init__(self, inner):
            self.inner = inner

        def search_many(self, queries, k, mode="dense"):
            seen.append((len(queries), k, mode))
            return self.inner.search_many(queries, k, mode=mode)

    c = Components(llm=FakeAnswerChat(), retriever=Spy(corpus), embeddings=corpus.embeddings, judges={"pair": ScriptedPairJudge()})
    g = build_dr_rag_graph(c)
    ctx = dict(strategy="qdc", k=6, retrieval="hybrid", second_retrieval="bm25", k2=5, rerank="none")
    g.invoke({"question": ZONE}, context=DRRAGContext(fusion_k=None, link_question=False, **ctx))
    # one first-stage search (SM's top k, from which CFS fills), then the three <q, d_i> searches in one batch
    assert seen == [(1, 6, "hybrid"), (3, 5, "bm25")]
    seen.clear()
    g.invoke({"question": ZONE}, context=DRRAGContext(fusion_k=60, link_question=False, **ctx))
    # hybrid fused in the node: a dense and a BM25 list, each as deep as the fused one
    assert seen == [(1, 6, "dense"), (1, 6, "bm25"), (3, 5, "bm25")]
    seen.clear()
    # title links (the default): one more, wider first-stage search for the titles the question names
    g.invoke({"question": ZONE}, context=DRRAGContext(fusion_k=None, **ctx))
    assert seen == [(1, 6, "hybrid"), (1, 20, "hybrid"), (3, 5, "bm25")]


def test_errors(slices):
    exs, corpus = slices["2wikimultihopqa"]
    with pytest.raises(ConfigError):
        _run(corpus, ZONE, strategy="xyz")
    with pytest.raises(InputError):
        _run(corpus, "   ", strategy="cfs")


def test_helpers():
    d = {"id": "a", "title": "T", "text": "x " * 2000, "source": "corpus", "score": None}
    q = concat_query("Who?", d, 100)
    assert q.startswith("Who? T. x") and len(q) <= 110
    first = [{"id": "1"}, {"id": "2"}]
    second = [[{"id": "1"}, {"id": "2"}, {"id": "3"}], [{"id": "3"}, {"id": "4"}]]
    assert [p["id"] for p in qdc_select(first, second, 4)] == ["3", "4"]
    assert [p["id"] for p in qdc_select(first, second, 3)] == ["3"]


# ---------------------------------------------------------------- the re-ranking cascade
def _run_rr(corpus, question, judge=None, evaluator=None, **ctx):
    ev = evaluator or OverlapJudge(name="overlap-evaluator")
    c = Components(llm=FakeAnswerChat(responses=["x"]), retriever=corpus, embeddings=corpus.embeddings,
                   judges={"pair": judge or ScriptedPairJudge(), "evaluator": ev})
    ctx.setdefault("retrieval", "bm25")
    ctx.setdefault("rerank", "evaluator")
    return build_dr_rag_graph(c).invoke({"question": question}, context=DRRAGContext(**ctx)), ev


def test_rerank_cascade_nodes_and_order(slices):
    exs, corpus = slices["2wikimultihopqa"]
    out, ev = _run_rr(corpus, ZONE, strategy="cfs", k=4, rerank_depth=12, skip_generation=True, link_question=False)
    assert [t["node"] for t in out["trace"]] == [
        "start", "first_stage", "rerank", "second_stage", "rerank_second", "forward_select", "generate"]
    cands = out["candidates"]
    assert len(cands) == 12
    # the candidates are in the evaluator's order, their retrieval scores kept in meta
    scores = [p["score"] for p in cands]
    assert scores == sorted(scores, reverse=True)
    # with title links, the candidate the question names leads, the rest keep the evaluator's order
    linked, _ = _run_rr(corpus, ZONE, strategy="cfs", k=4, rerank_depth=12, skip_generation=True)
    head, rest = linked["candidates"][0], linked["candidates"][1:]
    assert head["title"] == "The Zone (2017 film)" and head["meta"]["named_by_question"]
    assert [p["score"] for p in rest] == sorted([p["score"] for p in rest], reverse=True)
    assert all("retrieval_score" in p["meta"] for p in cands)
    assert [p["id"] for p in out["first_stage"]] == [p["id"] for p in cands[:2]]
    # second-stage lists re-ranked against the question; scores shared with the first stage
    for lst in out["second_stage"]:
        s = [out["rerank_scores"][p["id"]] for p in lst]
        assert s == sorted(s, reverse=True)
    assert sum(ev.batches) == len(out["rerank_scores"])  # nothing scored twice


def test_cfs_never_hands_less_than_sm_when_nothing_is_accepted(slices):
    exs, corpus = slices["musique"]
    sm, _ = _run_rr(corpus, NORTH_STAR, strategy="sm", k=4, skip_generation=True)
    cfs, _ = _run_rr(corpus, NORTH_STAR, judge=ScriptedPairJudge(), strategy="cfs", k=4, skip_generation=True)
    assert not any(d["accepted"] for d in cfs["classifier_scores"])
    assert [p["id"] for p in cfs["passages"]] == [p["id"] for p in sm["passages"]]
    # with fill off, Algorithm 1 alone: the static documents only
    alg1, _ = _run_rr(corpus, NORTH_STAR, judge=ScriptedPairJudge(), strategy="cfs", k=4, fill=False, skip_generation=True)
    assert [p["id"] for p in alg1["passages"]] == [p["id"] for p in sm["passages"][:2]]


def test_cfs_accepted_docs_come_before_the_fill(slices):
    exs, corpus = slices["2wikimultihopqa"]
    gold = _gold(exs, ZONE)
    out, _ = _run_rr(corpus, ZONE, judge=ScriptedPairJudge(gold), strategy="cfs", k=4, k1=1, rerank_depth=20,
                     skip_generation=True)
    ps = out["passages"]
    assert len(ps) == 4 and ps[0]["title"] in gold
    assert set(_titles(out)) >= gold
    stage2 = [p for p in ps if (p.get("meta") or {}).get("stage") == 2]
    assert len(stage2) == 1 and stage2[0]["title"] in gold and ps[1]["id"] == stage2[0]["id"]
    assert all((p.get("meta") or {}).get("fill") for p in ps[2:])


def test_second_rerank_modes(slices):
    exs, corpus = slices["2wikimultihopqa"]
    off, _ = _run_rr(corpus, ZONE, strategy="qdc", k=4, second_rerank="none", skip_generation=True)
    assert "rerank_second" not in [t["node"] for t in off["trace"]]
    cat, ev = _run_rr(corpus, ZONE, strategy="qdc", k=4, second_rerank="concat", skip_generation=True)
    first = cat["first_stage"]
    for d, lst in zip(first, cat["second_stage"]):
        q = concat_query(ZONE, d, DRRAGContext().concat_chars)
        s = ev.score_batch([(q, p["title"] + "\n" + p["text"]) for p in lst])
        assert list(s) == sorted(s, reverse=True)
    with pytest.raises(ConfigError):
        _run_rr(corpus, ZONE, strategy="qdc", second_rerank="sideways")


def test_forward_walk_first_and_best_and_fill():
    from ragraphs.nodes.dr_rag_select import fill_budget, forward_walk

    first = [{"id": "a"}, {"id": "b"}]
    second = [[{"id": "x"}, {"id": "y"}, {"id": "z"}], [{"id": "y"}, {"id": "w"}]]
    s = {("a", "x"): 0.1, ("a", "y"): 0.6, ("a", "z"): 0.9, ("b", "y"): 0.95, ("b", "w"): 0.7}
    added, dec = forward_walk(first, second, s, 0.5, 4, "first")
    assert [p["id"] for p in added] == ["y", "w"]  # b's y is taken: b walks on to w
    assert [d["second"] for d in dec] == ["x", "y", "w"]
    added, _ = forward_walk(first, second, s, 0.5, 4, "best")
    assert [p["id"] for p in added] == ["z", "y"]
    added, _ = forward_walk(first, second, s, 0.5, 3, "best")
    assert [p["id"] for p in added] == ["z"]  # the budget stops the walk
    cands = [{"id": i} for i in "abzqr"]
    assert [p["id"] for p in fill_budget(first + added, cands, 4)] == ["q"]
    # b accepts nothing: without extra its place goes to the fill, with extra to a's next accepted partner
    lone = [[{"id": "x"}, {"id": "y"}, {"id": "z"}], [{"id": "w"}]]
    s2 = {("a", "x"): 0.6, ("a", "y"): 0.9, ("a", "z"): 0.7, ("b", "w"): 0.2}
    added, dec = forward_walk(first, lone, s2, 0.5, 4, "best")
    assert [p["id"] for p in added] == ["y"]
    added, dec2 = forward_walk(first, lone, s2, 0.5, 4, "best", extra=True)
    assert [p["id"] for p in added] == ["y", "z"] and dec2 == dec  # the same decisions, one more document
    assert added[1]["meta"] == {"stage": 2, "via": "a", "pair_score": 0.7, "extra": True}
    assert [p["id"] for p in forward_walk(first, lone, s2, 0.5, 3, "best", extra=True)[0]] == ["y"]  # budget
    assert [p["id"] for p in forward_walk(first, lone, s2, 0.95, 4, "best", extra=True)[0]] == []  # accepted only
    # pick="first" (Eq. 4) with extra: the walk reads on past the first accepted, for the spare ones
    added, dec = forward_walk(first, lone, s2, 0.5, 4, "first")
    assert [p["id"] for p in added] == ["x"] and [d["second"] for d in dec] == ["x", "w"]
    added, dec = forward_walk(first, lone, s2, 0.5, 4, "first", extra=True)
    assert [p["id"] for p in added] == ["x", "y"] and [d["second"] for d in dec] == ["x", "y", "z", "w"]
    assert added[1]["meta"]["extra"] is True


def test_a_copy_under_another_id_takes_no_dynamic_place():
    """The same text ingested twice (two files, or a file and its address) is one document: QDC,
    CFS and the fill pass over the copy, and the bridge page takes the place."""
    from ragraphs.state.types import make_passage

    text = "Alpha is a 1990 film directed by Bob Smith."
    ps = [make_passage("Alpha", text, id="alpha-docs"), make_passage("Alpha", f" {text.upper()} ", id="alpha-backup"),
          make_passage("Bob Smith", "Bob Smith was born in Paris.", id="bob"),
          make_passage("Gamma", "Gamma film 1990 list.", id="gamma"), make_passage("Delta", "Delta is another film of 1990.", id="delta")]
    corpus = InMemoryCorpus(ps, embeddings=HashEmbeddings(64, "words"))
    question = "Where was the director of the 1990 film Alpha born?"
    for strategy in ("qdc", "cfs"):
        out, _ = _run(corpus, question, judge=ConstJudge(0.6), strategy=strategy, k=2, k1=1, retrieval="dense")
        ids = [p["id"] for p in out["passages"]]
        assert ids[0] in {"alpha-docs", "alpha-backup"} and len(ids) == 2 and not {"alpha-docs", "alpha-backup"} <= set(ids)
        assert "alpha-backup" in [p["id"] for p in out["second_stage"][0]]  # retrieved, passed over
    from ragraphs.nodes.dr_rag_select import Held, fill_budget

    assert [p["id"] for p in fill_budget(ps[:1], ps[1:3], 2)] == ["bob"]
    assert {"id": "new", "text": ""} not in Held([{"id": "a", "text": ""}])  # no text: never a copy


def test_a_page_is_no_link_to_itself():
    """A static document names its own title, and an ingested file's chunks share one: a sibling
    chunk gets neither the title link nor the bonuses, so the classifier's rejection stands."""
    from ragraphs.nodes.dr_rag_links import bridge_bonus, link_bonus, linked_candidates, same_page
    from ragraphs.state.types import make_passage

    class OnlyBob:
        name = "only-bob"

        def score_pairs(self, triples):
            return np.asarray([0.9 if d2.startswith("Bob Smith") else 0.0 for _, _, d2 in triples], dtype=np.float32)

    guide = "Lake Alpha guide"
    ps = [make_passage(guide, "Lake Alpha guide: the lake was surveyed by Bob Smith in 1990.", id="g0"),
          make_passage(guide, "Lake Alpha guide, part two: parking rules and opening hours of the visitor centre.", id="g1"),
          make_passage(guide, "Lake Alpha guide, part three: the gift shop sells maps.", id="g2"),
          make_passage("Bob Smith", "Bob Smith was a surveyor born in Paris.", id="bob"),
          make_passage("Zeta lake", "Zeta lake was surveyed in 1990 by a team.", id="zeta"),
          make_passage("Omega", "Omega lake surveyed the 1990 record.", id="omega")]
    corpus = InMemoryCorpus(ps, embeddings=HashEmbeddings(64, "words"))
    out, _ = _run(corpus, "Who surveyed the lake in 1990 and where was the surveyor born?", judge=OnlyBob(),
                  k=4, retrieval="dense", fill=False)
    fed = {p["id"] for p in out["passages"]}
    assert "bob" in fed
    for d in out["classifier_scores"]:  # no sibling is accepted, none carries a prior
        if d["second"] in {"g0", "g1", "g2"} and d["first"] in {"g0", "g1", "g2"}:
            assert not d["accepted"] and "link_bonus" not in d and "bridge_bonus" not in d
    g0, g1, bob = ps[0], ps[1], ps[3]
    assert same_page(g0, g1) and not same_page(g0, bob) and not same_page({"title": ""}, {"title": ""})
    ctx = DRRAGContext()
    assert link_bonus(ctx, [(g0, g1), (g0, bob)], corpus.title_index()) == {("g0", "bob"): ctx.link_bonus}
    assert ("g0", "g1") not in bridge_bonus(ctx, "Who surveyed it?", [(g0, g1)], corpus.title_index())
    linked = linked_candidates(corpus, [g0], [[]], 2)[0]
    assert [p["id"] for p in linked] == ["bob"]


def test_a_full_first_stage_searches_and_scores_nothing_more(slices):
    exs, corpus = slices["2wikimultihopqa"]
    judge = ScriptedPairJudge(accept_all=True)
    out, llm = _run(corpus, ZONE, judge=judge, strategy="cfs", k=2, k1=2)
    assert len(out["passages"]) == 2 and out["second_stage"] == [] and judge.batches in ([], [0])
    step = next(t for t in out["trace"] if t["node"] == "second_stage")
    assert "skipped" in str(step) and out["llm_calls"] == 1
    with pytest.raises(ConfigError, match="k2"):
        DRRAGContext(k2=0)
    with pytest.raises(ConfigError, match="k1"):
        DRRAGContext(k1=0)


# ---------------------------------------------------------------- title links
def test_title_links_bring_and_favour_the_page_the_static_document_names(slices):
    exs, corpus = slices["2wikimultihopqa"]
    gold = _gold(exs, ZONE)
    # the classifier scores every pair 0.3, under the cut: only the title link's bonus can accept
    out, _ = _run(corpus, ZONE, judge=ConstJudge(0.3), strategy="cfs", k=2, k1=1, k2=1, skip_generation=True)
    d1 = out["first_stage"][0]
    assert d1["title"] == "The Zone (2017 film)" and d1["meta"]["named_by_question"]  # the question names it
    # d_1's one retrieved candidate, then the pages its text names: the director's among them
    linked = [p for p in out["second_stage"][0] if (p.get("meta") or {}).get("linked_from") == d1["id"]]
    assert "Denys Desjardins" in [p["title"] for p in linked]
    assert set(_titles(out)) == gold
    accepted = [d for d in out["classifier_scores"] if d["accepted"]]
    assert accepted and all(d["link_bonus"] == DRRAGContext().link_bonus and d["score"] == 0.3 for d in accepted)
    # the paper's classifier alone (links off) accepts nothing and never sees the linked page
    off, _ = _run(corpus, ZONE, judge=ConstJudge(0.3), strategy="cfs", k=2, k1=1, k2=1, skip_generation=True,
                  link_question=False, link_expand=0, link_bonus=0.0)
    assert not any(d["accepted"] for d in off["classifier_scores"])
    assert all("link_bonus" not in d for d in off["classifier_scores"])
    # `rejected` names what is left out, never a document the fill handed on anyway
    assert not set(off["rejected"]) & {p["id"] for p in off["passages"]}
    assert not any((p.get("meta") or {}).get("linked_from") for lst in off["second_stage"] for p in lst)


def test_the_link_bonus_skips_a_page_the_corpus_names_everywhere():
    from ragraphs.nodes.dr_rag_links import link_bonus
    from ragraphs.tools.titles import TitleIndex

    def p(i, title, text=""):
        return {"id": i, "title": title, "text": text, "source": "corpus", "score": None}

    country, river = p("c", "Australia"), p("r", "Parramatta River")
    creek = p("k", "Toongabbie Creek", "Toongabbie Creek is part of the Parramatta River catchment, Australia.")
    towns = [p(f"t{i}", f"Town {i}", f"Town {i} is a town in Australia.") for i in range(6)]
    index = TitleIndex([country, river, creek] + towns)
    pairs = [(creek, country), (creek, river), (towns[0], river)]
    b = DRRAGContext().link_bonus
    assert link_bonus(DRRAGContext(), pairs, index) == {("k", "r"): b}  # Australia is a hub here
    every = link_bonus(DRRAGContext(link_hub_share=1.0), pairs, index)
    assert every == {("k", "c"): b, ("k", "r"): b}
    assert link_bonus(DRRAGContext(), pairs, None) == every  # without an index nothing is counted

    class OwnIndex:  # a title index of the user's own, which counts no hubs
        def names(self, title, text):
            return title in text

    assert link_bonus(DRRAGContext(), pairs, OwnIndex()) == every
    assert link_bonus(DRRAGContext(link_bonus=0.0), pairs, index) == {}


def test_expand_bonus_is_the_link_bonus_of_a_page_only_the_title_link_brought():
    from ragraphs.nodes.dr_rag_links import link_bonus
    from ragraphs.tools.titles import TitleIndex

    def p(i, title, text="", **meta):
        return {"id": i, "title": title, "text": text, "source": "corpus", "score": None, "meta": meta}

    creek = p("k", "Toongabbie Creek", "Toongabbie Creek flows into the Parramatta River near Sydney Harbour.")
    river = p("r", "Parramatta River", "The river flows east.")  # found by the second stage's retrieval
    harbour = p("h", "Sydney Harbour", "A harbour.", stage=2, linked_from="k")  # brought by the creek's title link
    elsewhere = p("h2", "Sydney Harbour", "A harbour.", stage=2, linked_from="other")  # another d_i's link
    index = TitleIndex([creek, river, harbour])
    pairs = [(creek, river), (creek, harbour), (creek, elsewhere)]
    b = DRRAGContext().link_bonus
    assert DRRAGContext().expand_bonus is None
    assert link_bonus(DRRAGContext(), pairs, index) == {("k", "r"): b, ("k", "h"): b, ("k", "h2"): b}
    assert link_bonus(DRRAGContext(expand_bonus=0.25), pairs, index) == {("k", "r"): b, ("k", "h"): 0.25, ("k", "h2"): b}
    assert link_bonus(DRRAGContext(expand_bonus=0.0), pairs, index) == {("k", "r"): b, ("k", "h2"): b}
    assert link_bonus(DRRAGContext(link_bonus=0.0, expand_bonus=0.5), pairs, index) == {}  # links off
    with pytest.raises(ConfigError, match="expand_bonus"):
        DRRAGContext(expand_bonus="high")


def test_the_bridge_bonus_favours_a_partner_that_shares_a_name_with_its_static_document():
    from ragraphs.nodes.dr_rag_select import forward_walk
    from ragraphs.nodes.dr_rag_links import bridge_bonus
    from ragraphs.tools.titles import proper_names

    assert proper_names("The Fox and the Hound: Copper is voiced by Kurt Russell. When it opened, Bank of America paid.") == {
        "the fox", "hound", "copper", "kurt russell", "bank of america"}  # no lone "When"; particles join a name
    assert proper_names("") == frozenset() and proper_names("all lower case, Li and Ng") == frozenset()

    def p(i, title, text):
        return {"id": i, "title": title, "text": text, "source": "corpus", "score": None}

    q = "The actor who plays Copper in The Fox and the Hound is a character in which film?"
    fox = p("f", "The Fox and the Hound", "Copper is voiced by Kurt Russell and Corey Feldman.")
    eight = p("e", "The Hateful Eight", "Kurt Russell plays John Ruth, a bounty hunter.")
    other = p("o", "Top Cat", "Top Cat is a film in which Copper, a hound, meets a fox.")
    pairs = [(fox, eight), (fox, other)]
    # "Copper" is shared with Top Cat, but the question holds it: only Kurt Russell bridges
    b = DRRAGContext().bridge_bonus
    assert bridge_bonus(DRRAGContext(), q, pairs) == {("f", "e"): b}
    assert bridge_bonus(DRRAGContext(bridge_bonus=0.0), q, pairs) == {}
    # the classifier prefers Top Cat by a little; the bridge tips the pick, and the trace shows both
    scores = {("f", "e"): 0.55, ("f", "o"): 0.6}
    added, dec = forward_walk([fox], [[other, eight]], scores, 0.5, 2, "best", {}, False, bridge_bonus(DRRAGContext(), q, pairs))
    assert [d["id"] for d in added] == ["e"] and added[0]["meta"]["bridge_bonus"] == b
    assert {d["second"]: d.get("bridge_bonus") for d in dec} == {"o": None, "e": b}
    # it counts toward the cut as the title link's bonus does
    added, dec = forward_walk([fox], [[other, eight]], {("f", "e"): 0.45, ("f", "o"): 0.3}, 0.5, 2, "best", {}, False,
                              {("f", "e"): 0.1})
    assert [d["id"] for d in added] == ["e"] and [d["accepted"] for d in dec] == [False, True]


def test_a_hubs_name_is_no_bridge():
    """A page the corpus names everywhere shares its own name with every passage that names it:
    the hub rule that refuses it the link bonus refuses it the bridge bonus too."""
    from ragraphs.nodes.dr_rag_links import bridge_bonus
    from ragraphs.tools.titles import TitleIndex

    def p(i, title, text=""):
        return {"id": i, "title": title, "text": text, "source": "corpus", "score": None}

    country = p("c", "Australia", "Australia is a country of the Southern Hemisphere.")
    river = p("r", "Parramatta River", "The Parramatta River flows into Port Jackson, Australia.")
    creek = p("k", "Toongabbie Creek", "Toongabbie Creek is part of the Parramatta River catchment, Australia.")
    towns = [p(f"t{i}", f"Town {i}", f"Town {i} is a town in Australia.") for i in range(6)]
    index = TitleIndex([country, river, creek] + towns)
    assert index.is_hub("Australia", DRRAGContext().link_hub_share) and not index.is_hub("Parramatta River")
    q = "Which body of water does the creek flow into?"
    pairs = [(creek, country), (creek, river), (towns[0], country)]
    b = DRRAGContext().bridge_bonus
    # the creek and the river share "Parramatta River" (and the hub); the creek and the country only the hub
    assert bridge_bonus(DRRAGContext(), q, pairs, index) == {("k", "r"): b}
    every = {("k", "c"): b, ("k", "r"): b, ("t0", "c"): b}
    assert bridge_bonus(DRRAGContext(), q, pairs) == every  # without an index no hub is known
    assert bridge_bonus(DRRAGContext(link_hub_share=1.0), q, pairs, index) == every  # 1 = no hubs


def test_title_links_need_no_title_index_and_leave_sm_alone(slices):
    exs, corpus = slices["2wikimultihopqa"]

    class NoTitles:  # a retriever without a title index (a LangChain store, say)
        def search_many(self, queries, k, mode="dense"):
            return corpus.search_many(queries, k, mode=mode)

    c = Components(llm=FakeAnswerChat(), retriever=NoTitles(), embeddings=corpus.embeddings, judges={"pair": ConstJudge(0.3)})
    out = build_dr_rag_graph(c).invoke({"question": ZONE}, context=DRRAGContext(
        strategy="cfs", k=2, k1=1, k2=1, retrieval="bm25", rerank="none", skip_generation=True))
    assert len(out["second_stage"][0]) == 1  # no expansion, no error
    assert out["first_stage"][0]["title"] == "The Zone (2017 film)"
    # SM stays top-k by similarity: no title link moves its documents
    sm, _ = _run(corpus, ZONE, strategy="sm", k=4)
    assert [p["id"] for p in sm["passages"]] == [p["id"] for p in corpus.search(ZONE, 4, mode="bm25")]


def test_pair_tokens_reach_the_cross_encoder(slices):
    """``pair_tokens`` is the budget the cross-encoder reads each (q, d_i, d') in (the real
    tokenizer; a recording model in place of the ONNX one); 0 hands it the texts whole."""
    from transformers import AutoTokenizer

    from ragraphs.tools.judges import CrossEncoderJudge, weights_dir

    class Recording:
        tokenizer = AutoTokenizer.from_pretrained(str(weights_dir()), local_files_only=True)

        def __init__(self):
            self.seen: list[tuple[str, str]] = []

        def predict(self, pairs, **kw):
            self.seen += list(pairs)
            return np.full(len(pairs), 0.9, dtype=np.float32)

    exs, corpus = slices["musique"]
    lengths = {}
    for budget in (0, 64):
        model = Recording()
        out, _ = _run(corpus, NORTH_STAR, judge=CrossEncoderJudge("pair", model), strategy="cfs", k=4, pair_tokens=budget)
        assert model.seen and len(out["passages"]) == 4
        lengths[budget] = [len(model.tokenizer(a, b)["input_ids"]) for a, b in model.seen]
        assert all("\n[SEP]\n" in b for _, b in model.seen)
    assert max(lengths[64]) <= 64 < max(lengths[0])
    assert DRRAGContext().pair_tokens == 96


def test_rejected_lists_only_what_the_classifier_never_accepted():
    """Y accepted with A (A took X, which scored higher), then rejected with B once the budget
    was full: it was accepted, so it is not in ``rejected`` (it was, until 2026-11-30)."""
    from ragraphs.nodes.dr_rag_select import forward_walk, never_accepted

    a, b = {"id": "A"}, {"id": "B"}
    second = [[{"id": "X"}, {"id": "Y"}], [{"id": "Y"}, {"id": "Z"}]]
    scores = {("A", "X"): 0.9, ("A", "Y"): 0.8, ("B", "Y"): 0.1, ("B", "Z"): 0.9}
    added, decisions = forward_walk([a, b], second, scores, 0.5, 4, "best", extra=True)
    assert ("A", "Y", True) in {(d["first"], d["second"], d["accepted"]) for d in decisions}
    fed = {"A", "B"} | {p["id"] for p in added}
    assert "Y" not in never_accepted(decisions, fed)
    assert never_accepted([{"first": "A", "second": "Q", "accepted": False}], fed) == ["Q"]
