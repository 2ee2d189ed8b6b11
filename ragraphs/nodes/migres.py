"""MIGRES nodes: Main Module, Retrieval Module (query generator, retriever, knowledge
filter, knowledge prompting), Leaf Module (extraction + NLI check) and Memory Module.

Paper: Wang et al., "LLMs Know What They Need: Leveraging a Missing Information Guided
Framework to Empower Retrieval-Augmented Generation" (sections 3.1-3.2, appendices C, D, F).
The prompts below follow the paper's instructions (Appendix F) written as few-shot
completion prompts that end where the model writes, so that a small *base* model
continues them; their examples are ragraphs' own, not benchmark questions, written in the
JSON of each decision's schema. The Main Module, Query Generator and Leaf Module are
structured decisions (:mod:`ragraphs.tools.structured`): constrained decoding where the
model allows it, else lenient reading plus one repair; a decision that still fails
degrades to "nothing said", never to an exception, and is counted in ``parse_failures``.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..components import Components
from ..prompts import one_line
from ..settings import MIGRESContext, context_of
from ..state.migres import MIGRESState
from ..state.types import Node, Passage, make_passage, question_of, reset
from ..tools.judges import own_threshold
from ..tools.llm import complete, llm_usage
from ..tools.structured import LeafExtraction, MainVerdict, QueryList, decide
from ..tools.text import join_sentences, split_sentences
from ..tools.vectorstore import usable_mode
from .rerank import passage_text, reranked_by, reranked_search, rerank_spec
from .migres_parsing import (
    refuses,
    verdict,
    read_main_legacy,
    read_leaf_legacy,
    read_queries_legacy,
    _norm,
    similar_query,
    content_key,
)
from .migres_prompts import (
    STOP_LINE,
    leaf_prompt,
    main_prompt,
    query_prompt,
    knowledge_prompt,
)

# ---------------------------------------------------------------------------- settings
# prompts: nodes/migres_prompts.py; output reading: nodes/migres_parsing.py; the reader: nodes/migres_reader.py


def threshold(value: Any, judge: Any, fallback: float) -> float:
    """A threshold setting: the value given, else the judge's own ``threshold``, else ``fallback``."""
    return float(value) if value is not None else own_threshold(judge, fallback)


def _llm(c: Components, ctx: MIGRESContext):
    # one shared model instance per spec (the same one the generate node uses)
    return c.llm(ctx.llm, max_tokens=int(ctx.max_new_tokens))


# ---------------------------------------------------------------------------- nodes


def make_retrieve(c: Components) -> Node[MIGRESState, MIGRESContext]:
    """Retriever: top-k passages for each of this iteration's queries (the question first)."""

    def retrieve(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> dict:
        ctx = context_of(runtime, MIGRESContext)
        question = question_of(state)
        queries = [q for q in (state.get("queries") or []) if q.strip()] or [question]
        k = int(ctx.k)
        r = c.retriever
        mode = usable_mode(r, ctx.retrieval)
        named = None
        if ctx.link_question or rerank_spec(ctx) != "none":  # named pages first (nodes/links.py), re-ranked
            found = [reranked_search(c, q, k, mode, ctx) for q in queries]
            hits, named = [got for got, _ in found], sum(n for _, n in found)
        elif hasattr(r, "search_many"):
            hits = r.search_many(queries, k, mode=mode)
        else:
            hits = [r.search(q, k, mode=mode) for q in queries]
        first = None
        if not state.get("question_passages") and queries == [question] and hits:  # a reset run holds []
            first = [dict(p) for p in hits[0]]  # the question's own retrieval, for the reader
        candidates = []
        for q, row in zip(queries, hits):
            for p in row:
                meta = p.get("meta") or {}  # a re-ranked passage keeps its retrieval score there already
                candidates.append({**p, "meta": {**meta, "query": q, "retrieval_score": meta.get("retrieval_score", p.get("score"))}})
        return {
            "queries": queries,
            "candidates": candidates,
            **({"question_passages": first} if first is not None else {}),
            "_trace": {"queries": queries, "k": k, "mode": mode, "retrieved": len(candidates), **reranked_by(ctx, k),
                       **({"named_by_question": named} if named is not None else {})},
        }

    return retrieve


def filter_doc(p: Passage) -> str:
    """A passage as the Knowledge Filter scores it: ``"Title. text"``."""
    return f"{p['title']}. {p['text']}" if p.get("title") else p["text"]


def kept_text(text: str, passage_score: float, sentences: list[str], scores: list[float],
              threshold: float) -> tuple[str, str]:
    """What the Knowledge Filter keeps of a surviving passage, and how: the whole passage when
    it outscores every one of its sentences, else its sentences at or over ``threshold``."""
    if not scores or passage_score > max(scores):
        return text, "passage"
    kept = [s for s, sc in zip(sentences, scores) if sc >= threshold]
    return join_sentences(kept), f"{len(kept)}/{len(sentences)} sentences"


def read_again(old: Passage | None, new: Passage) -> Passage:
    """A passage as the loop has read it so far: ``new`` the first time; read again (a later
    query kept other sentences of it), its sentences joined to those read before and the
    latest query's meta, so the reader sees all of it and counts it a follow-up's (until
    2026-12-01 the first reading stood: the follow-up's sentences never reached the reader)."""
    if old is None:
        return new
    had = split_sentences(old.get("text") or "")
    seen = {" ".join(s.split()) for s in had}
    more = [s for s in split_sentences(new.get("text") or "") if " ".join(s.split()) not in seen]
    return {**old, **new, "text": join_sentences([*had, *more]), "meta": {**(old.get("meta") or {}), **(new.get("meta") or {})}}


def make_filter_knowledge(c: Components) -> Node[MIGRESState, MIGRESContext]:
    """Knowledge Filter: passage-level re-rank with a threshold, then sentence-level filtering.

    Each retrieved passage is scored against the query that found it by the relevance
    judge (``c.judge("evaluator")``); passages under ``passage_threshold`` are dropped.
    A surviving passage is cut into sentences, each scored by the same judge with the
    passage's title, as the passage is (``"Title. sentence"``); sentences under
    ``sentence_threshold`` are dropped, unless the whole passage scores above all its
    sentences, in which case it is kept whole. Hard negatives and text already read are
    skipped (Memory Module); the best ``max_passages`` go on.
    """

    def filter_knowledge(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> dict:
        ctx = context_of(runtime, MIGRESContext)
        judge = c.judge("evaluator")
        p_thr = threshold(ctx.passage_threshold, judge, 0.0)
        s_thr = threshold(ctx.sentence_threshold, None, p_thr)
        max_passages = int(ctx.max_passages)
        hard = set(state.get("hard_negative_ids") or [])
        fed = set(state.get("fed_keys") or [])
        raw = [p for p in state.get("candidates") or [] if p["id"] not in hard]
        skipped_hard = len(state.get("candidates") or []) - len(raw)
        if not raw:
            return {"candidates": [], "_trace": {"kept": [], "skipped_hard_negatives": skipped_hard, "route": "empty"}}

        p_scores = judge.score_batch([(p["meta"]["query"], filter_doc(p)) for p in raw])
        survivors = [(p, float(s)) for p, s in zip(raw, p_scores) if float(s) >= p_thr]
        # sentence level, one batch for all survivors
        sent_pairs, owners = [], []
        split = []
        for j, (p, _) in enumerate(survivors):
            sents = split_sentences(p["text"])
            split.append(sents)
            for s in sents:  # on the passage's own basis, "Title. sentence" (its text alone until 2026-11-30)
                sent_pairs.append((p["meta"]["query"], filter_doc({**p, "text": s})))
                owners.append(j)
        s_scores = judge.score_batch(sent_pairs) if sent_pairs else []
        per: list[list[float]] = [[] for _ in survivors]
        for j, s in zip(owners, s_scores):
            per[j].append(float(s))
        best: dict[str, Passage] = {}
        details = []
        already_read = 0
        for j, (p, ps) in enumerate(survivors):
            text, kept_how = kept_text(p["text"], ps, split[j], per[j], s_thr)
            if not text.strip():
                continue
            q: Passage = {**p, "text": text, "score": ps, "meta": {**p["meta"], "passage_score": ps, "kept": kept_how}}
            if content_key(q) in fed:
                already_read += 1
                continue
            if p["id"] not in best or ps > float(best[p["id"]]["score"] or 0):
                best[p["id"]] = q
        ranked = sorted(best.values(), key=lambda x: -float(x["score"] or 0))[:max_passages]
        for p in ranked:
            details.append({"id": p["id"], "title": p["title"], "score": round(float(p["score"] or 0), 4), "kept": p["meta"]["kept"]})
        return {
            "candidates": ranked,
            "_trace": {
                "scored": len(raw),
                "thresholds": [round(p_thr, 4), round(s_thr, 4)],
                "above_passage_threshold": len(survivors),
                "skipped_hard_negatives": skipped_hard,
                "skipped_already_read": already_read,
                "kept": details,
                "route": "passages" if ranked else "empty",
            },
        }

    return filter_knowledge


def make_knowledge_prompt(c: Components) -> Node[MIGRESState, MIGRESContext]:
    """LLM knowledge prompting (Appendix C): when no passage survives, ask the LLM for
    information relevant to the iteration's first query; it becomes the knowledge read."""

    def knowledge(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> dict:
        ctx = context_of(runtime, MIGRESContext)
        query = (state.get("queries") or [state["question"]])[0]
        out = complete(_llm(c, ctx), knowledge_prompt(query), stop=STOP_LINE, max_tokens=int(ctx.knowledge_max_tokens),
                       tags=["nostream"])  # the model's own knowledge, not the answer: kept out of the stream
        text = one_line(out.text, 1500)
        cands = []
        if text and not refuses(text[:40]):
            cands = [make_passage("LLM knowledge", text, "llm", None, query=query, kept="generated")]
        return {
            "candidates": cands,
            "knowledge_prompts": 1,
            **llm_usage(out),
            "_trace": {"query": query, "knowledge": text[:500]},
        }

    return knowledge


def make_leaf_extract(c: Components) -> Node[MIGRESState, MIGRESContext]:
    """Leaf Module: extract useful statements citing their passages, then drop every
    statement its cited passages do not entail (``c.judge("nli")`` >= ``nli_threshold``).

    A statement is checked against each passage it cites alone and against all of them
    together (the judge reads 256 tokens), and kept with the reading that entails it most; one
    with no valid citation is checked against each passage read and attributed to the one
    that entails it most. A statement written twice is one, citing what both copies cite.
    Statements already known are skipped. The passages read join ``passages`` (a passage
    read again with other sentences: the sentences joined, the latest query's).
    """

    def leaf(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> dict:
        ctx = context_of(runtime, MIGRESContext)
        fed = list(state.get("candidates") or [])
        iteration = int(state.get("iterations") or 0) + 1
        if not fed:
            return {"_trace": {"skipped": "no knowledge", "iteration": iteration}}
        queries = state.get("queries") or [state["question"]]
        prompt = leaf_prompt(" ".join(queries), fed, max_chars=int(ctx.max_passage_chars))
        out = decide(_llm(c, ctx), prompt, LeafExtraction, stop=STOP_LINE, max_tokens=int(ctx.leaf_max_tokens),
                     legacy=read_leaf_legacy)
        extracted = out.value.useful_information if out.value is not None else []
        items: list[dict[str, Any]] = [{"info": one_line(st.info, 500), "support": list(st.support_passages)} for st in extracted]
        known = {_norm(u["info"]) for u in state.get("useful_info") or []}
        # one statement written twice (a small model repeats one with another citation) is one
        # statement citing both: until 2026-12-01 only its first copy was checked, and a
        # passage only the second cited became a hard negative
        first: dict[str, int] = {}
        cites: dict[int, set[int]] = {}
        for i, it in enumerate(items):
            key = _norm(it["info"])
            if key in known:
                continue
            i0 = first.setdefault(key, i)
            cites.setdefault(i0, set()).update(n for n in it["support"] if 0 <= n < len(fed))
        pairs: list[tuple[str, str]] = []
        plan: list[tuple[int, list[list[int]]]] = []  # (item index, the options: each a list of passage indexes)
        for i, cited_set in cites.items():
            cited = sorted(cited_set)
            # each cited passage alone, and all of them together: the judge reads 256 tokens, so a
            # long first passage cut off the one that entails (until 2026-12-01 only the joined
            # premise was scored); no valid citation: each passage read
            options = [[n] for n in cited] + ([cited] if len(cited) > 1 else []) if cited else [[n] for n in range(len(fed))]
            plan.append((i, options))
            # a passage as the NLI judge was trained to read it, "Title\ntext": the kept sentences
            # often say "He" where only the title names whom (0.11 without it, 0.89 with)
            pairs.extend(("\n\n".join(passage_text(fed[n]) for n in o), items[i]["info"]) for o in options)
        nli = c.judge("nli")
        scores = list(nli.score_batch(pairs)) if pairs else []
        thr = threshold(ctx.nli_threshold, nli, 0.5)
        kept: list[dict[str, Any]] = []
        dropped: list[dict[str, Any]] = []
        pos = 0
        for i, options in plan:
            opt_scores = [float(s) for s in scores[pos : pos + len(options)]]
            pos += len(options)
            b = max(range(len(options)), key=lambda t: opt_scores[t])
            entry = {"info": items[i]["info"], "support_ids": [fed[n]["id"] for n in options[b]], "iteration": iteration, "nli": round(opt_scores[b], 4)}
            (kept if opt_scores[b] >= thr else dropped).append(entry)
        corpus_fed = [p for p in fed if p.get("source") != "llm"]
        generated = [p for p in fed if p.get("source") == "llm"]
        # a passage read again (a follow-up kept other sentences of it) replaces its first reading
        # with both: the reader reads `passages`, as retrieval-only runs and eval records show them
        readings = {p["id"]: p for p in corpus_fed}
        before = list(state.get("passages") or [])
        read = [read_again(p, readings.pop(p["id"])) if p["id"] in readings else p for p in before]
        return {
            "useful_info": kept,
            "passages": reset([*read, *readings.values()]),
            "generated_knowledge": generated,
            "passages_fed": len(corpus_fed),
            **out.usage(),
            "_trace": {
                "iteration": iteration,
                "n_passages": len(fed),
                **out.trace(),
                "kept": [(e["info"], e["nli"]) for e in kept],
                "dropped_by_nli": [(e["info"], e["nli"]) for e in dropped],
            },
        }

    return leaf


def make_memory(c: Components) -> Node[MIGRESState, MIGRESContext]:
    """Memory Module: record this iteration's queries and the passages read. A passage
    that was read and supports no kept statement (in this or an earlier iteration) is a
    hard negative, never fed again; text already read is not read again either."""

    def memory(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> dict:
        iteration = int(state.get("iterations") or 0) + 1
        fed = [p for p in state.get("candidates") or [] if p.get("source") != "llm"]
        cited = {i for u in state.get("useful_info") or [] for i in u["support_ids"]}
        hard = [p["id"] for p in fed if p["id"] not in cited]
        queries = list(state.get("queries") or [state["question"]])
        return {
            "memory_queries": [state["question"], *queries] if iteration == 1 else queries,
            "seen_passage_ids": [p["id"] for p in fed],
            "hard_negative_ids": hard,
            "fed_keys": [content_key(p) for p in state.get("candidates") or []],
            "_trace": {"iteration": iteration, "queries": queries, "read": [p["id"] for p in fed], "hard_negatives": hard},
        }

    return memory


def make_main_judge(c: Components) -> Node[MIGRESState, MIGRESContext]:
    """Main Module: answer from the useful information, or say "unanswerable" and name
    what is missing. Ends one iteration (``iterations`` + 1)."""

    def main_judge(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> dict:
        ctx = context_of(runtime, MIGRESContext)
        statements = [u["info"] for u in state.get("useful_info") or []]
        out = decide(_llm(c, ctx), main_prompt(state["question"], statements), MainVerdict, stop=STOP_LINE,
                     max_tokens=int(ctx.judge_max_tokens), legacy=read_main_legacy)
        v = verdict(out.value.answer, out.value.missing_information, bool(ctx.cut_asides), bool(ctx.whole_answer)) if out.value is not None else verdict("", "")
        missing = v["missing"]
        if not v["answered"] and not missing:
            missing = one_line(state["question"])  # nothing named: the question itself is what is missing
        update: dict[str, Any] = {
            "iterations": 1,
            "answered": v["answered"],
            "missing_info": "" if v["answered"] else missing,
            **out.usage(),
            "_trace": {
                "iteration": int(state.get("iterations") or 0) + 1,
                "answered": v["answered"],
                "answer": v["answer"],
                "missing": missing if not v["answered"] else "",
                "n_statements": len(statements),
                **out.trace(),
            },
        }
        if v["answered"]:
            update["answer"] = v["answer"]
            update["final"] = "answered"
        return update

    return main_judge


def make_generate_queries(c: Components) -> Node[MIGRESState, MIGRESContext]:
    """Query Generator: at most ``max_queries`` new simple queries for the missing
    information, none like a query already in memory. When the model gives none, the
    missing information itself is the query (or the question joined to it). When that too
    was asked before, the repeated query can only bring back what was read: with
    ``stop_when_exhausted`` the run is marked ``exhausted`` and the graph goes to the answer.
    So it is when the model has proposed no new query of its own ``stop_after_fallbacks``
    iterations in a row (the loop would go on asking the Main Module's own words)."""

    def generate_queries(state: MIGRESState, runtime: Runtime[MIGRESContext]) -> dict:
        ctx = context_of(runtime, MIGRESContext)
        question = state["question"]
        history = list(state.get("memory_queries") or [question])
        statements = [u["info"] for u in state.get("useful_info") or []]
        missing = state.get("missing_info") or question
        out = decide(_llm(c, ctx), query_prompt(question, history, statements, missing), QueryList, stop=STOP_LINE,
                     max_tokens=int(ctx.query_max_tokens), legacy=read_queries_legacy)
        proposed = list(out.value.queries) if out.value is not None else []
        max_q = max(1, int(ctx.max_queries))
        new: list[str] = []
        rejected: list[str] = []
        for q in proposed:
            q = one_line(q, 300)
            if any(similar_query(q, h) for h in history + new):
                rejected.append(q)
                continue
            new.append(q)
            if len(new) >= max_q:
                break
        fallback = None
        if not new:
            for cand in (missing, f"{question} {missing}"):
                if not any(similar_query(cand, h) for h in history):
                    new, fallback = [one_line(cand, 300)], "missing_information"
                    break
            else:
                new, fallback = [one_line(missing, 300)], "repeat"
        streak = int(state.get("fallbacks_in_a_row") or 0) + 1 if fallback else 0
        limit = int(ctx.stop_after_fallbacks or 0)
        stalled = fallback == "missing_information" and limit > 0 and streak >= limit
        return {
            "queries": new,
            "exhausted": (fallback == "repeat" or stalled) and bool(ctx.stop_when_exhausted),
            "fallbacks_in_a_row": streak,
            **out.usage(),
            "_trace": {"queries": new, "rejected_as_seen": rejected, "fallback": fallback, "fallbacks_in_a_row": streak,
                       **out.trace()},
        }

    return generate_queries
