"""Title links (ragraphs.tools.titles): which passages a text names by their title."""

from __future__ import annotations

from ragraphs.tools.titles import TitleIndex, names, short_key, title_key


def _p(i, title):
    return {"id": str(i), "title": title, "text": "", "source": "corpus", "score": None}


def test_title_key_drops_the_disambiguation_and_case():
    assert title_key("The Zone (2017 film)") == ("the", "zone")
    assert title_key("Stanisław Bareja") == ("stanisław", "bareja")
    assert title_key("") == ()


def test_names_whole_words_in_order():
    assert names("The Zone (2017 film)", "directed after The Zone was released")
    assert names("Stanisław Bareja", "a film by STANISŁAW BAREJA.")
    assert not names("Bareja Stanisław", "a film by Stanisław Bareja")  # order matters
    assert not names("Zone", "the ozone layer")  # whole words only
    assert not names("The", "The film")  # stop words alone are never a title
    assert not names("Abc", "abc")  # too short to be specific
    # a name is mentioned with a capital letter; in lower case it is the common noun
    assert not names("Place of birth", "What is the place of birth of the director?")
    assert names("Place of birth", "Place of birth is a legal term.")
    assert names("eBay", "sold on eBay") and names("北京大学", "他 在 北京大学 工作")  # uncased titles match as they are


def test_index_finds_the_longest_title_at_each_word():
    ps = [_p(0, "New York"), _p(1, "New York City"), _p(2, "The Zone (2017 film)"), _p(3, "Music"),
          _p(4, "Denys Desjardins"), _p(5, "The"), _p(6, "Denys Desjardins")]
    idx = TitleIndex(ps)
    assert len(idx) == 5  # "The" is not indexed; two passages share one title
    got = idx.named_in("Denys Desjardins left New York City for The Zone; music, then New York.")
    # the longest titles first, then by first mention; "New York" inside "New York City" is not a
    # mention, and "music" in lower case is not the page "Music"
    assert [p["id"] for p in got] == ["1", "4", "6", "2", "0"]
    assert [p["id"] for p in idx.named_in("Denys Desjardins in New York City", exclude=["4"])] == ["1", "6"]
    assert [p["id"] for p in idx.named_in("Denys Desjardins in New York City", limit=1)] == ["1"]
    assert idx.named_in("") == [] and TitleIndex([]).named_in("New York") == []
    assert idx.named_in("in new york city, denys desjardins") == []  # names are not mentioned in lower case


def test_a_one_word_title_inside_a_longer_name_is_not_named():
    page = "President (corporate title)"
    assert not names(page, "Who was the 39th Vice President of the United States?")
    assert not names(page, "under President Bill Clinton")
    assert names(page, "He became President, then chairman.")  # punctuation ends the name
    assert names("Sutera", "Are Sutera and Rhodotypos both shrubs?")  # a capitalised stop word starts the sentence
    assert not names("Florida", "Florida State University") and names("Florida", "Orlando, Florida")
    assert names("Leeds United", "Leeds United Football Club")  # longer titles are names already
    idx = TitleIndex([_p(0, page), _p(1, "Florida"), _p(2, "Orlando, Florida")])
    assert [p["id"] for p in idx.named_in("The Vice President met President Bill Clinton in Florida State")] == []
    assert [p["id"] for p in idx.named_in("a President, born in Orlando, Florida.")] == ["2", "0"]


def test_a_one_word_page_named_all_over_the_corpus_is_generic():
    song, state = _p("s", "Arizona (song)"), _p("a", "Arizona")
    film = _p("f", "Frantic (film)")
    others = [{**_p(i, f"Person {i}"), "text": f"Person {i} was born in Arizona."} for i in range(12)]
    idx = TitleIndex([song, state, film] + others)
    assert idx.is_generic("Arizona (song)") and not idx.is_generic("Arizona")  # the page the word means stays
    assert not idx.is_generic("Frantic (film)")  # named by no passage here
    assert [p["id"] for p in idx.named_in("He sang in Arizona; Frantic was filmed there.")] == ["a", "f"]
    assert not idx.names("Arizona (song)", "born in Arizona") and idx.names("Frantic (film)", "the film Frantic")
    few = TitleIndex([song, state] + others[:3])  # three mentions are not too many
    assert not few.is_generic("Arizona (song)")
    assert [p["id"] for p in few.named_in("in Arizona")] == ["s", "a"]


def test_a_page_is_named_by_its_short_name_where_the_corpus_leaves_no_doubt():
    assert short_key("Arthurdale, West Virginia") == ("arthurdale",)
    assert short_key("Nottingham Forest F.C.") == ("nottingham", "forest")
    assert short_key("Paris, Texas (film)") == ("paris",) and short_key("Leeds United") is None
    town, club = _p("t", "Arthurdale, West Virginia"), _p("c", "Nottingham Forest F.C.")
    idx = TitleIndex([town, club, _p("p", "Paris"), _p("x", "Paris, Texas"),
                      _p("c1", "Cleveland, North Carolina"), _p("c2", "Cleveland, Ohio")])
    text = "The creek begins west of Arthurdale; Nottingham Forest played in Paris and Cleveland."
    # "Paris" is a page's own title; "Cleveland" is the short name of two pages: neither is a short name
    assert [p["id"] for p in idx.named_in(text)] == ["c", "t", "p"]
    assert idx.names("Arthurdale, West Virginia", text) and not idx.names("Paris, Texas", text)
    assert not idx.names("Cleveland, Ohio", text)
    assert not names("Arthurdale, West Virginia", text)  # short names need the corpus's index
    assert idx.named_in("Arthurdale Road") == []  # the one-word rule holds for short names too
    # a one-word short name most passages of the corpus mention is generic, and names nothing
    others = [{**_p(i, f"Person {i}"), "text": f"Person {i} moved to Arthurdale."} for i in range(12)]
    assert TitleIndex([town] + others).named_in("west of Arthurdale") == []
    assert [p["id"] for p in TitleIndex([town] + others[:3]).named_in("west of Arthurdale")] == ["t"]


def test_a_page_the_corpus_names_everywhere_is_a_hub():
    country, river = _p("c", "Australia"), _p("r", "Parramatta River")
    creek = {**_p("k", "Toongabbie Creek"), "text": "Toongabbie Creek is part of the Parramatta River catchment, Australia."}
    towns = [{**_p(i, f"Town {i}"), "text": f"Town {i} is a town in Australia."} for i in range(6)]
    idx = TitleIndex([country, river, creek] + towns)
    assert idx.named_by("Australia") == 7 and idx.named_by("Parramatta River") == 1 and idx.named_by("Town 0") == 1  # its own text
    assert idx.is_hub("Australia") and not idx.is_hub("Parramatta River")
    assert not idx.is_hub("Australia", share=1.0)  # share >= 1: no page is a hub
    assert [p["id"] for p in idx.named_in(creek["text"], exclude=["k"])] == ["r", "c"]  # a hub is still named
    assert not TitleIndex([country, creek] + towns[:4]).is_hub("Australia")  # five passages are not too many
    # in a large corpus the share decides: 7 of 2,000 passages (0.35%) is under 0.5%
    filler = [{**_p(f"f{i}", f"Filler {i}"), "text": "nothing named here"} for i in range(2000)]
    big = TitleIndex([country, creek] + towns + filler)
    assert big.named_by("Australia") == 7 and not big.is_hub("Australia") and big.is_hub("Australia", share=0.001)
