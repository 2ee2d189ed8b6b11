"""What MIGRES's reader reads (``reader_evidence``), on plain states, and its answer cut
(``shorten``) with a fake model and, under its grammar, the embedded Gemma (slow)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragraphs.nodes.migres_reader import reader_evidence, reader_prompt, shorten, within_answer
from ragraphs.prompts import (
    asks_yes_no,
    mismatches_question_type,
    only_date_or_number,
    rag_answer_prompt,
    restates_question,
    shortening_options,
)
from ragraphs.settings import MIGRESContext
from ragraphs.state.types import make_passage
from ragraphs.tools.llm import FakeAnswerChat


def _p(i: str, text: str = "") -> dict:
    return {"id": i, "title": i.upper(), "text": text or f"text of {i}", "source": "corpus", "score": None, "meta": {}}


STATE = {
    "question": "q",
    "question_passages": [_p("a", "whole a"), _p("b"), _p("c"), _p("d"), _p("e"), _p("f")],
    "passages": [_p("b", "filtered b"), _p("x"), _p("y"), _p("z")],
    "useful_info": [{"info": "A statement.", "support_ids": ["x"], "iteration": 1, "nli": 0.9}],
    "generated_knowledge": [make_passage("LLM knowledge", "a guess", "llm")],
}


PASSAGES = MIGRESContext(reader_evidence="passages")


def test_the_default_reads_what_the_loops_own_queries_found():
    assert MIGRESContext().reader_evidence == "followups"


def test_question_passages_come_first_then_the_kept_ones_up_to_the_cap():
    evidence, added = reader_evidence(STATE, PASSAGES)  # 4 of the question's, 5 in all
    assert [p["id"] for p in evidence] == ["a", "b", "c", "d", "x"]
    # a passage in both lists is read whole, as retrieved, not as the filter cut it
    assert evidence[1]["text"] == "text of b" and evidence[0]["text"] == "whole a"
    # what the loop had not read joins the run's passages; no statement, no LLM knowledge
    assert [p["id"] for p in added] == ["a", "c", "d"]
    assert all(p.get("source") == "corpus" for p in evidence)


def test_settings_shape_the_evidence():
    ev, _ = reader_evidence(STATE, MIGRESContext(reader_evidence="passages", reader_question_passages=2, max_passages=6))
    assert [p["id"] for p in ev] == ["a", "b", "x", "y", "z"]
    ev, added = reader_evidence(STATE, MIGRESContext(reader_evidence="passages", reader_question_passages=0))
    assert [p["id"] for p in ev] == ["b", "x", "y", "z"] and added == []
    # the reader before: the statements, the kept passages as the filter cut them, the LLM's knowledge
    ev, added = reader_evidence(STATE, MIGRESContext(reader_evidence="gathered"))
    assert ev[0]["title"] == "Known information" and ev[0]["text"] == "A statement."
    assert [p["id"] for p in ev[1:5]] == ["b", "x", "y", "z"] and ev[1]["text"] == "filtered b"
    assert ev[-1]["source"] == "llm" and added == []


def test_followups_read_only_what_the_loops_own_queries_found():
    later = {**_p("w"), "meta": {"query": "who founded it?"}}
    own = {**_p("x"), "meta": {"query": "q"}}  # kept from the question's first retrieval
    state = {**STATE, "passages": [own, later, _p("y")]}
    ev, added = reader_evidence(state, MIGRESContext())  # the default: followups
    assert [p["id"] for p in ev] == ["a", "b", "c", "d", "w"]
    assert [p["id"] for p in added] == ["a", "b", "c", "d"]
    # the loop found nothing new: the reader reads what vanilla reads
    ev, _ = reader_evidence({**STATE, "passages": [own]}, MIGRESContext())
    assert [p["id"] for p in ev] == ["a", "b", "c", "d"]
    # "passages" reads the question's own kept passage x first
    ev, _ = reader_evidence(state, PASSAGES)
    assert [p["id"] for p in ev] == ["a", "b", "c", "d", "x"]


def test_the_reader_reads_the_questions_own_passages_at_vanillas_length():
    long_a = {**_p("a"), "text": " ".join(f"a{i}" for i in range(400))}  # about 1,900 characters
    long_w = {**_p("w"), "text": " ".join(f"w{i}" for i in range(400)), "meta": {"query": "who founded it?"}}
    state = {**STATE, "question_passages": [long_a, _p("b"), _p("c"), _p("d")], "passages": [long_w]}
    ev, _ = reader_evidence(state, MIGRESContext())
    assert [p["id"] for p in ev] == ["a", "b", "c", "d", "w"]

    def lines(ctx):
        prompt = reader_prompt(state, ev, ctx)
        block = prompt[prompt.rindex("Passages:"):]
        return {line[1]: line for line in block.splitlines() if line.startswith("[")}

    read = lines(MIGRESContext())  # the default: the question's own at 1,200, the loop's at 600
    assert MIGRESContext().reader_question_chars == 1200
    assert 1150 < len(read["1"]) < 1220 and read["1"].endswith(" ...")
    assert 550 < len(read["5"]) < 620 and read["5"].endswith(" ...")
    assert read["2"] == "[2] B: text of b"
    read = lines(MIGRESContext(reader_question_chars=0))  # the reader before: every passage at 600
    assert 550 < len(read["1"]) < 620 and 550 < len(read["5"]) < 620
    assert reader_prompt(state, ev, MIGRESContext(reader_question_chars=0)) == rag_answer_prompt("q", ev, max_chars=600)
    assert reader_prompt(state, ev, MIGRESContext(reader_question_chars=600, max_passage_chars=1200)).count(" ...") == 2
    # the cut is the prompt's only: the run's passages keep their whole text
    assert len(ev[0]["text"]) > 1800


def test_nothing_retrieved_falls_back_to_the_llm_knowledge():
    state = {"question": "q", "question_passages": [], "passages": [],
             "generated_knowledge": [make_passage("LLM knowledge", "a guess", "llm")]}
    ev, added = reader_evidence(state, MIGRESContext())
    assert [p["text"] for p in ev] == ["a guess"] and added == []
    # a state checkpointed before the setting existed has no question_passages: the kept ones
    ev, _ = reader_evidence({"question": "q", "passages": [_p("x")]}, PASSAGES)
    assert [p["id"] for p in ev] == ["x"]
    assert reader_evidence({"question": "q"}, MIGRESContext()) == ([], [])


# ---------------------------------------------------------------- the answer cut held to the answer's words

LONG = "He was born in Flora, Norway."


def test_shortening_options_are_runs_of_the_answers_words_and_yes_no_only_when_asked():
    opts = shortening_options("Where was he born?", LONG)
    assert {"Flora", "Flora, Norway", "Norway", "born in Flora"} <= set(opts)
    assert "yes" not in opts and "Norway." not in opts and "Flora," not in opts  # ends cut of punctuation
    assert all(len(o.split()) <= 8 for o in shortening_options("q", " ".join(f"w{i}" for i in range(20))))
    assert shortening_options("Are both rivers?", "The Nile and the Amazon are rivers.")[:2] == ["yes", "no"]
    assert len(opts) == len(set(opts))
    assert asks_yes_no("Did it rain?") and asks_yes_no("  were they ...") and not asks_yes_no("Who is it?")
    assert within_answer("Where?", LONG, "flora,  norway") and not within_answer("Where?", LONG, "1866")
    assert not within_answer("Where?", LONG, "yes") and within_answer("Is it?", LONG, "No")
    assert not within_answer("Where?", LONG, "no") and not within_answer("Where?", LONG, "orway")  # whole words only


AREA = "Who has more titles than the school with Fort Hill or the state with the 404 area code?"
AREA_LONG = "The school with the 404 area code is the University of Florida."
CHOICE = "Which magazine was started first, Arthur's Magazine or First for Women?"


def test_a_phrase_that_only_restates_the_question_unless_the_question_offers_it():
    assert restates_question(AREA, "the 404 area code") and restates_question(AREA, "404 Area Code.")
    assert not restates_question(AREA, "University of Florida") and not restates_question(AREA, "")
    assert not restates_question(AREA, "the 404 area code is the University of Florida")
    assert not restates_question(AREA, "Fort Hill")  # next to "or": one of the question's choices
    assert not restates_question(CHOICE, "Arthur's Magazine") and not restates_question(CHOICE, "First for Women")
    assert restates_question(CHOICE, "started first") and restates_question(CHOICE, "Magazine was started")


BAND = "Where did the band form that made the live album Maiden Japan?"
BAND_LONG = "The band formed in Leyton, East London, in 1975."


@pytest.mark.parametrize(
    "setting, question, long, refused_cut, kept_cut",
    [
        ("shorten_not_question", AREA, AREA_LONG, "the 404 area code", "University of Florida"),
        ("shorten_answer_type", BAND, BAND_LONG, "1975", "Leyton"),
    ],
)
def test_a_refused_cut_leaves_the_readers_answer_and_the_setting_off_takes_it(
    setting, question, long, refused_cut, kept_cut
):
    for to_span in (True, False):  # the grammar's options and the free cut alike
        ctx = MIGRESContext(**{setting: True}, shorten_to_span=to_span)
        short, usage, refused = shorten(FakeAnswerChat(responses=[refused_cut]), question, long, ctx)
        assert short == "" and refused == refused_cut and usage["llm_calls"] == 1
        short, _, refused = shorten(FakeAnswerChat(responses=[kept_cut]), question, long, ctx)
        assert short == kept_cut and refused is None
    # off, the same cut is taken
    off = MIGRESContext(**{setting: False})
    assert shorten(FakeAnswerChat(responses=[refused_cut]), question, long, off)[::2] == (refused_cut, None)


def test_a_bare_date_or_number_for_a_question_that_asks_for_a_place_or_a_person():
    assert only_date_or_number("1975") and only_date_or_number("in 1955") and only_date_or_number("1854-1855")
    assert only_date_or_number("March 1990") and only_date_or_number("323 BC") and only_date_or_number("1,000")
    assert not only_date_or_number("Apollo 11") and not only_date_or_number("the") and not only_date_or_number("")
    assert mismatches_question_type(BAND, "1975") and not mismatches_question_type(BAND, "Leyton")
    assert mismatches_question_type('"Ew!" is a song by a television host born where?', "in 1955")
    assert mismatches_question_type("What is the place of birth of David Hyrum Smith's father?", "1844")
    assert mismatches_question_type("In which city was the treaty signed in 1990?", "1990")
    assert mismatches_question_type("Who was the first president of the association?", "1892")
    # a date or a number is what these ask for
    assert not mismatches_question_type("When did the band form?", "1975")
    assert not mismatches_question_type("How many records did Shane Lynch sell?", "18")
    assert not mismatches_question_type("What year did the author die?", "1900")
    assert not mismatches_question_type("Where was he born?", "10 Downing Street")


def _cut(responses, **settings):
    llm = FakeAnswerChat(responses=responses)
    return shorten(llm, "Where was he born?", LONG, MIGRESContext(**settings)), llm


def test_a_cut_that_leaves_the_answer_is_dropped_with_shorten_to_span_and_kept_without():
    (short, usage, refused), llm = _cut(["he was born in 1866"], shorten_to_span=True)
    assert short == "" and refused == "he was born in 1866"
    assert usage["llm_calls"] == 1  # the call still counts
    assert llm.prompts[0].rstrip().endswith("Short answer:")
    (short, _, refused), _ = _cut(["he was born in 1866"], shorten_to_span=False)
    assert short == "he was born in 1866" and refused is None
    (short, _, refused), _ = _cut([" Flora, Norway"], shorten_to_span=True)
    assert short == "Flora, Norway" and refused is None


def test_the_reader_keeps_its_sentence_when_the_cut_is_refused_and_says_so():
    from ragraphs.components import Components
    from ragraphs.nodes.migres_reader import make_final_answer

    llm = FakeAnswerChat(responses=[LONG, "1866"])
    node = make_final_answer(Components(llm=llm))
    state = {**STATE, "question": "Where was he born?"}
    out = node(state, SimpleNamespace(context=MIGRESContext()))
    assert out["answer"] == "He was born in Flora, Norway" and out["llm_calls"] == 2
    assert out["_trace"]["cut_refused"] == "1866" and out["_trace"]["shortened_from"] is None


def test_the_reader_keeps_its_sentence_when_the_cut_only_restates_the_question():
    from ragraphs.components import Components
    from ragraphs.nodes.migres_reader import make_final_answer

    node = make_final_answer(Components(llm=FakeAnswerChat(responses=[AREA_LONG, "the 404 area code"])))
    out = node({**STATE, "question": AREA}, SimpleNamespace(context=MIGRESContext(shorten_not_question=True)))
    assert out["answer"] == AREA_LONG and out["llm_calls"] == 2
    assert out["_trace"]["cut_refused"] == "the 404 area code" and out["_trace"]["shortened_from"] is None


@pytest.mark.slow
def test_the_real_gemma_cuts_to_words_of_the_answer_under_the_grammar(gemma):
    """Each cut by the embedded Gemma 3 270M under the span grammar is one of the options."""
    cases = [
        ("Where was the director of the film born?", LONG),
        ("When did the empire declare independence?",
         "The Somali Muslim Ajuran Empire declared independence from the expelled from the natural boundary."),
        ("Is the treaty older than the deed?", "The Treaty of Cession, also known as the Deed, was a treaty."),
    ]
    ctx = MIGRESContext(shorten_to_span=True)
    for q, a in cases:
        short, usage, refused = shorten(gemma, q, a, ctx)
        assert refused is None  # the grammar leaves nothing to refuse
        assert usage["llm_calls"] == 1
        assert short in shortening_options(q, a), (q, short)
