"""Lenient parsing of LLM output (ragraphs.tools.parsing) and the MIGRES output readers."""

import json

import pytest

from ragraphs.nodes.migres_parsing import parse_leaf, parse_main, similar_query
from ragraphs.nodes.migres_prompts import LEAF_OPEN, MAIN_OPEN
from ragraphs.tools.parsing import (
    close_json,
    extract_int_list,
    extract_string_field,
    parse_int_list,
    parse_json_object,
    parse_json_value,
    parse_list_items,
)

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def test_repairs_common_defects():
    assert parse_json_object('{"a": "x", "b": [1, 2,],}') == {"a": "x", "b": [1, 2]}
    assert parse_json_object("{'a': 'x', 'ok': True}") == {"a": "x", "ok": True}
    assert parse_json_object('Sure! ```json\n{"a": 1}\n``` done') == {"a": 1}
    assert parse_json_object("\u201canswer\u201d") is None
    assert parse_json_object('{\u201canswer\u201d: \u201cParis\u201d}') == {"answer": "Paris"}
    # cut off by the token limit: open string and brackets are closed
    assert parse_json_object('{"answer": "unanswerable", "missing_information": "The birth') == {
        "answer": "unanswerable",
        "missing_information": "The birth",
    }
    assert parse_json_object('{"a": [{"b": 1}, {"c": ') == {"a": [{"b": 1}, {"c": None}]}
    assert close_json('{"a": "x\\') == '{"a": "x"}'


def test_fields_by_pattern_when_json_fails():
    bad = '{"answer": "The "Big" Apple", "explanation": "nick"name"} trailing'
    assert parse_json_object(bad) is None
    assert extract_string_field(bad, "answer") == 'The "Big" Apple'
    assert extract_string_field('{"answer": 1889, "x": 2}', "answer") == "1889"
    assert extract_string_field('{"answer": {"text": "No", "confidence": 5}}', "answer") == "No"
    assert extract_string_field("no key here", "answer") is None
    assert extract_int_list('"support_passages": [0, 2]}', "support_passages") == [0, 2]
    assert parse_int_list("[Passage 1, Passage 3]") == [1, 3]
    assert parse_int_list(True) == []


def test_list_items():
    text = "1. Who directed Levity?\n2) What is the nationality of Ed Solomon?\n- Who directed Levity?\n\nOriginal Question: x"
    assert parse_list_items(text) == ["Who directed Levity?", "What is the nationality of Ed Solomon?"]
    assert parse_list_items('["a", "b", "c"]', max_items=2) == ["a", "b"]
    assert parse_list_items("q1\nOriginal Question: next shot", stop_prefixes=("Original Question",)) == ["q1"]
    assert parse_list_items("") == []


def test_main_verdicts():
    v = parse_main(MAIN_OPEN + 'unanswerable", "missing_information": "The death date of Carl Boese.", "explanation": "x"}')
    assert not v["answered"] and v["missing"] == "The death date of Carl Boese." and v["parsed"]
    v = parse_main(MAIN_OPEN + '1974", "missing_information": "", "explanation": "Olsen died in 1974."}')
    assert v["answered"] and v["answer"] == "1974" and v["explanation"] == "Olsen died in 1974."
    # the paper's nested form
    v = parse_main('{"answer": {"text": "No", "confidence": 5}, "explanation": "x", "missing_information": ""}')
    assert v["answered"] and v["answer"] == "No"
    # garbage is "unanswerable", never an exception
    for junk in ["", "}}}}", '{"answer": "', "\x00\ufffd", MAIN_OPEN + '", "missing_information": "who"}', "I don't know"]:
        v = parse_main(junk)
        assert v["answered"] is False and v["answer"] == ""


def test_leaf_statements():
    items = parse_leaf(LEAF_OPEN + '{"info": "A was born in 1900.", "support_passages": [0]}, {"info": "B is C.", "support_passages": "1"}]}')
    assert items == [{"info": "A was born in 1900.", "support": [0]}, {"info": "B is C.", "support": [1]}]
    assert parse_leaf(LEAF_OPEN + "]}") == []
    # broken JSON: statements recovered by pattern
    items = parse_leaf(LEAF_OPEN + '{"info": "X "quoted" here", "support_passages": [2]} {"info": "Y", "support_passages": [')
    assert [i["info"] for i in items] == ['X "quoted" here', "Y"] and items[0]["support"] == [2]


def test_similar_query():
    assert similar_query("Who directed Levity?", "who directed levity")
    assert not similar_query("Who directed Levity?", "When was Ed Solomon born?")


# ---------------------------------------------------------------- properties
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
    lambda ch: st.lists(ch, max_size=4) | st.dictionaries(st.text(max_size=8), ch, max_size=4),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None, database=None)  # no .hypothesis/ in the repository
@given(st.text(max_size=300))
def test_parsers_never_raise(text):
    parse_json_object(text)
    parse_json_value(text)
    extract_string_field(text, "answer")
    extract_int_list(text, "support_passages")
    parse_list_items(text, max_items=3)
    v = parse_main(MAIN_OPEN + text)
    assert isinstance(v["answered"], bool) and isinstance(v["answer"], str)
    for it in parse_leaf(LEAF_OPEN + text):
        assert isinstance(it["info"], str) and all(isinstance(n, int) for n in it["support"])


@settings(max_examples=100, deadline=None, database=None)  # no .hypothesis/ in the repository
@given(st.dictionaries(st.text(max_size=8), _json, min_size=1, max_size=5), st.text(max_size=30), st.text(max_size=30))
@example({"": "```"}, "", "")  # a code fence inside a string value (found by hypothesis)
@example({"q": "\u201cquoted\u201d"}, "", "")  # smart quotes inside a string value
def test_valid_json_round_trips_inside_noise(obj, before, after):
    before = before.replace("{", "").replace("[", "")
    assert parse_json_object(before + json.dumps(obj) + after) == obj


@settings(max_examples=100, deadline=None, database=None)  # no .hypothesis/ in the repository
@given(st.text(alphabet=st.characters(blacklist_characters='"\\', blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40), st.integers(0, 60))
@example(",}", 0)  # a trailing-comma pattern inside the string value (found by hypothesis)
@example("a, ]", 5)
def test_truncated_object_keeps_the_complete_fields(answer, cut):
    full = json.dumps({"answer": answer, "missing_information": "something else entirely", "explanation": "because"})
    head = json.dumps({"answer": answer})[:-1]  # '{"answer": "..."'
    text = full[: len(head) + cut]
    obj = parse_json_object(text)
    assert obj is not None and obj["answer"] == answer


def test_a_name_holding_a_refusal_word_is_an_answer():
    from ragraphs.nodes.migres_parsing import refuses, verdict

    for name in ("Unknown Pleasures", "The Unknown Soldier", "No Answer (band)", "I Don't Know (Ozzy Osbourne song)"):
        assert not refuses(name) and verdict(name, "")["answered"]
    refusals = ("unknown", "Unknown.", "It is unknown.", "No answer", "Insufficient information")
    refusals += ("I don't know", "I do not know.", "The passages do not know", "Not enough information",
                 "There is no information about his wife", "It is not mentioned in the passages", "Cannot be determined")
    for refusal in refusals:
        assert refuses(refusal) and not verdict(refusal, "")["answered"]
