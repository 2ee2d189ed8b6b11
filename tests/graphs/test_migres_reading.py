"""MIGRES's reading of what it found: the citation check, statements written twice, a passage
read again by a follow-up query, and answers that refuse in title case (review of 2026-12-01)."""

from __future__ import annotations

import json
import re

import numpy as np

from fakes import LexicalRetriever, OverlapJudge, ScriptedChat, migres_prompt_kind
from ragraphs.components import Components
from ragraphs.graphs.migres import MIGRESContext, build_migres_graph
from ragraphs.state.types import make_passage

BORN = "Mark Bowden was born in St. Louis, Missouri."
QUESTION = "Where was the author of Killing Pablo born?"


def _tail(prompt: str) -> str:
    return prompt.rsplit("\n\n", 1)[-1]


_kind = migres_prompt_kind


def _passage_index(prompt: str, title: str) -> int:
    return int(re.search(rf"Passage (\d+): \(Title: {title}\)", _tail(prompt)).group(1))


class CutNLI:
    """An entailment judge that reads the first ``limit`` characters of the premise, as a
    cross-encoder reads its first 256 tokens: the hypothesis' words found there, in [0, 1]."""

    name = "cut-nli"

    def __init__(self, limit: int):
        self.limit = limit

    def score_batch(self, pairs):
        words = lambda t: set(re.findall(r"\w+", t.lower()))  # noqa: E731
        return np.asarray([len(words(h) & words(p[: self.limit])) / max(1, len(words(h))) for p, h in pairs],
                          dtype=np.float32)


def _run(script, passages, nli, **ctx):
    c = Components(llm=ScriptedChat(script=script), retriever=LexicalRetriever(passages),
                   judges={"evaluator": OverlapJudge("evaluator"), "nli": nli})
    return build_migres_graph(c).invoke({"question": QUESTION}, context=MIGRESContext(**ctx))


def _leaf_trace(out) -> dict:
    return next(t for t in out["trace"] if t["node"] == "leaf_extract")


def test_a_statement_citing_a_long_passage_first_is_checked_against_each_cited_passage():
    # the joined premise ran past the judge's window before the passage that entails it began:
    # the statement was dropped and its passage made a hard negative
    long = make_passage("Killing Pablo", "Killing Pablo is a book about the hunt for Pablo Escobar. " * 12)
    bowden = make_passage("Mark Bowden", BORN + " He is a writer.")

    def script(p):
        if _kind(p) == "leaf":
            cited = sorted([_passage_index(p, "Killing Pablo"), _passage_index(p, "Mark Bowden")])
            return json.dumps({"useful_information": [{"info": BORN, "support_passages": cited}]})
        if _kind(p) == "main":
            return '{"answer": "St. Louis", "missing_information": ""}'
        return "St. Louis"

    out = _run(script, [long, bowden], CutNLI(200), k=2, passage_threshold=-1, sentence_threshold=-1,
               nli_threshold=0.9, max_iterations=1)
    leaf = _leaf_trace(out)
    assert [s for s, _ in leaf["kept"]] == [BORN] and leaf["dropped_by_nli"] == []
    assert out["useful_info"][0]["support_ids"] == [bowden["id"]]  # the passage that entails it
    assert bowden["id"] not in out["hard_negative_ids"] and long["id"] in out["hard_negative_ids"]


def test_a_statement_written_twice_is_checked_with_both_citations():
    bowden = make_passage("Mark Bowden", BORN + " He is a writer.")
    book = make_passage("Killing Pablo", "Killing Pablo is a book by Mark Bowden about Pablo Escobar.")

    def script(p):
        if _kind(p) == "leaf":
            ib, ik = _passage_index(p, "Mark Bowden"), _passage_index(p, "Killing Pablo")
            return json.dumps({"useful_information": [{"info": BORN, "support_passages": [ik]},
                                                      {"info": BORN, "support_passages": [ib]}]})
        if _kind(p) == "main":
            return '{"answer": "unanswerable", "missing_information": "Where Mark Bowden was born."}'
        if _kind(p) == "queries":
            return '{"queries": ["Where was Mark Bowden born?"]}'
        return "St. Louis"

    out = _run(script, [bowden, book], OverlapJudge("nli"), k=2, passage_threshold=-1, sentence_threshold=-1,
               nli_threshold=0.9, max_iterations=1)
    leaf = _leaf_trace(out)
    assert [s for s, _ in leaf["kept"]] == [BORN] and leaf["dropped_by_nli"] == []
    assert out["useful_info"][0]["support_ids"] == [bowden["id"]]
    assert out["hard_negative_ids"] == [book["id"]]  # the second copy's passage is no hard negative


class SentenceJudge:
    """The question keeps the sentence that says who wrote the book; the follow-up query the one
    that says where he was born."""

    name = "scripted-evaluator"

    def score_batch(self, pairs):
        out = []
        for q, d in pairs:
            wrote, born = "wrote" in d or "written" in d, "born" in d
            if q == QUESTION:
                out.append(0.9 if wrote and not born else 0.5 if wrote and born else -0.9)
            else:
                out.append(0.9 if born and not wrote else 0.5 if wrote and born else -0.9)
        return np.asarray(out, dtype=np.float32)


def test_a_passage_read_again_by_a_follow_up_reaches_the_reader_with_every_sentence_read():
    # the reader read the first reading of a passage (or, with followups, none of it, the
    # passage counting as the question's): the answer the loop had found never reached it
    passages = [
        make_passage("Killing Pablo", "Killing Pablo is a 2001 book about the hunt for Pablo Escobar, written by Mark Bowden."),
        make_passage("Mark Bowden", "Mark Bowden wrote Killing Pablo and Black Hawk Down. He was born in St. Louis, Missouri."),
        make_passage("Medellin", "Medellin is a city in Colombia."),
    ]
    follow_up = "Where was Mark Bowden born?"

    def script(p):
        t = _tail(p)
        if _kind(p) == "leaf":
            m = re.search(r"Passage (\d+): \(Title: Mark Bowden\) (.*)", t)
            if m is None:
                return '{"useful_information": []}'
            info = BORN if "St. Louis" in m.group(2) else "Mark Bowden wrote Killing Pablo."
            return json.dumps({"useful_information": [{"info": info, "support_passages": [int(m.group(1))]}]})
        if _kind(p) == "main":
            if "St. Louis" in t:
                return '{"answer": "St. Louis", "missing_information": ""}'
            return '{"answer": "unanswerable", "missing_information": "Where Mark Bowden was born."}'
        if _kind(p) == "queries":
            return json.dumps({"queries": [follow_up]})
        return "St. Louis" if "St. Louis" in t else "Medellin"

    for evidence in ("followups", "passages"):
        chat = ScriptedChat(script=script)
        c = Components(llm=chat, retriever=LexicalRetriever(passages),
                       judges={"evaluator": SentenceJudge(), "nli": OverlapJudge("nli")})
        out = build_migres_graph(c).invoke({"question": QUESTION}, context=MIGRESContext(
            k=3, passage_threshold=0.0, nli_threshold=0.5, reader_question_passages=1, reader_evidence=evidence))
        assert out["iterations"] == 2 and out["answer"] == "St. Louis", evidence
        read = {p["title"]: p for p in out["passages"]}
        assert read["Mark Bowden"]["text"] == passages[1]["text"]  # both readings' sentences
        assert read["Mark Bowden"]["meta"]["query"] == follow_up
        reader_prompt = _tail(chat.prompts[-1])
        assert "He was born in St. Louis" in reader_prompt, evidence


def test_a_refusal_in_title_case_is_no_answer_and_the_loop_asks_on():
    from ragraphs.nodes.migres_parsing import refuses, verdict

    for refusal in ("Not Enough Information", "Insufficient Information", "Cannot Be Determined",
                    "Not Mentioned In The Passages", "No Relevant Information", "I Don't Know", "No Answer",
                    # an aside about the passages or a label before it makes no name (a review of the first fix)
                    "Unknown (not in the information given)", "Unknown (based on the passages)", "Answer: Unknown",
                    "Not Enough Information (see Passage 1)", "Unknown (unclear)", "Unknown (2)"):
        assert refuses(refusal) and not verdict(refusal, "")["answered"], refusal
    for name in ("Unknown Pleasures", "The Unknown Soldier", "No Answer (band)", "I Don't Know (Ozzy Osbourne song)",
                 "Paris (not mentioned in the passages)", "Unknown Pleasures, by Joy Division", "Unknown (1982 film)",
                 "The album is Unknown Pleasures, released 1979"):
        assert verdict(name, "")["answered"], name

    passages = [make_passage("Mark Bowden", BORN)]

    def script(p):
        if _kind(p) == "main":
            return '{"answer": "Not Enough Information", "missing_information": "Where Mark Bowden was born."}'
        if _kind(p) == "queries":
            return '{"queries": ["Mark Bowden birthplace"]}'
        if _kind(p) == "leaf":
            return '{"useful_information": []}'
        return "St. Louis"

    out = _run(script, passages, OverlapJudge("nli"), k=1, passage_threshold=-1, sentence_threshold=-1,
               max_iterations=3)
    assert out["answered"] is False and out["iterations"] > 1  # it stopped at the first verdict, answered
