"""Unit tests of text utilities, reducers and dataset loaders on real rows (no models)."""

import json

import pytest

from ragraphs.datasets import detect_format, load_dataset, pooled_passages
from ragraphs.state.types import add_trace, make_passage, merge_passages, passage_id, reset
from ragraphs.tools.text import chunk_text, normalize_answer, split_sentences, strips


def test_split_sentences_handles_abbreviations_and_initials():
    text = "Dr. Smith went to Washington. He met J. R. R. Tolkien in 1950. It cost $3.5 million! Done?"
    assert split_sentences(text) == [
        "Dr. Smith went to Washington.",
        "He met J. R. R. Tolkien in 1950.",
        "It cost $3.5 million!",
        "Done?",
    ]
    assert split_sentences("") == []
    assert split_sentences("   ") == []


def test_split_sentences_in_other_scripts():
    """Russian, Greek, Chinese, Japanese, Hindi, Arabic and Urdu sentences are split (each text
    was one sentence until 2026-11-30: only a Latin capital began one); English as before."""
    assert split_sentences("Москва — столица России. Город основан в 1147 году. А. С. Пушкин родился здесь. "
                           "Он сказал: «Да». «Нет», ответила она.") == [
        "Москва — столица России.", "Город основан в 1147 году.", "А. С. Пушкин родился здесь.",
        "Он сказал: «Да».", "«Нет», ответила она."]
    assert split_sentences("Η Αθήνα είναι η πρωτεύουσα. Έχει πολλά μουσεία; ναι. Ο Παρθενώνας είναι εκεί.") == [
        "Η Αθήνα είναι η πρωτεύουσα.", "Έχει πολλά μουσεία; ναι.", "Ο Παρθενώνας είναι εκεί."]
    assert split_sentences("北京是中国的首都。上海是最大的城市！你去过吗？ 我去过。") == [
        "北京是中国的首都。", "上海是最大的城市！", "你去过吗？", "我去过。"]
    # a quoted sentence the outer one goes on after, and a full-width decimal point, are no ends
    assert split_sentences("東京は日本の首都です。「はい。」と彼は言った。円周率は３．１４です。") == [
        "東京は日本の首都です。", "「はい。」と彼は言った。", "円周率は３．１４です。"]
    assert split_sentences("“你好。”他说。我们走吧。") == ["“你好。”他说。", "我们走吧。"]
    assert split_sentences("दिल्ली भारत की राजधानी है। मुंबई सबसे बड़ा शहर है॥ १२३ लोग।") == [
        "दिल्ली भारत की राजधानी है।", "मुंबई सबसे बड़ा शहर है॥", "१२३ लोग।"]
    assert split_sentences("هل هذه القاهرة؟ نعم. هي عاصمة مصر. ٢٠٢٠ كانت سنة.") == [
        "هل هذه القاهرة؟", "نعم.", "هي عاصمة مصر.", "٢٠٢٠ كانت سنة."]
    assert split_sentences("یہ لاہور ہے۔ وہ کراچی ہے۔") == ["یہ لاہور ہے۔", "وہ کراچی ہے۔"]
    # English: a lower-case word, an abbreviation or an initial is still no start; a Cyrillic name is
    assert split_sentences("It cost 3.5 dollars. e.g. this. Dr. Ann met J. Smith. Then Ольга came.") == [
        "It cost 3.5 dollars. e.g. this.", "Dr. Ann met J. Smith.", "Then Ольга came."]


def test_chinese_sentences_join_back_without_spaces():
    """CRAG's strips, MIGRES's kept sentences and chunks of Chinese text are cut at sentence ends
    and joined without the space English puts between sentences."""
    from ragraphs.nodes.migres import kept_text
    from ragraphs.nodes.refine import refine_knowledge
    from ragraphs.tools.text import join_sentences

    zh = "北京是中国的首都。上海是最大的城市！你去过吗？我去过。长城很长。"
    assert strips(zh) == ["北京是中国的首都。上海是最大的城市！你去过吗？", "我去过。长城很长。"]
    assert chunk_text(zh, 2, overlap_sentences=0) == [
        "北京是中国的首都。上海是最大的城市！", "你去过吗？我去过。", "长城很长。"]
    assert join_sentences(["One.", "Two."]) == "One. Two." and join_sentences(["「はい。」", "OK."]) == "「はい。」OK."

    class Judge:  # a strip about the capital scores 1, any other -1
        def score_batch(self, pairs):
            return [1.0 if "首都" in text else -1.0 for _, text in pairs]

    r = refine_knowledge(Judge(), "中国的首都是哪里？", [make_passage("城市", zh + "首都有很多人。")],
                         top_k=5, threshold=0.0, sentences_per_strip=1)
    assert r.passages[0]["text"] == "北京是中国的首都。首都有很多人。" and r.n_strips == 6
    sents = split_sentences(zh)
    assert kept_text(zh, 0.0, sents, [1, -1, -1, 1, -1], 0.5) == ("北京是中国的首都。我去过。", "2/5 sentences")


def test_bm25_finds_chinese_and_japanese_passages():
    """A real BM25 index over Chinese and Japanese passages finds the one a query is about
    (none at all until 2026-11-30: a whole sentence was one term); English terms are unchanged."""
    from ragraphs.tools.bm25 import BM25Index, tokenize

    docs = [make_passage("北京", "北京是中华人民共和国的首都，位于华北平原。"),
            make_passage("上海", "上海是中国最大的城市，位于长江入海口。"),
            make_passage("東京", "東京は日本の首都であり、最大の都市です。"),
            make_passage("Paris", "Paris is the capital of France.")]
    index = BM25Index(docs)
    assert index.search("中国最大的城市", 1)[0]["title"] == "上海"
    assert index.search("日本の首都はどこですか", 1)[0]["title"] == "東京"
    assert index.search("北京", 1)[0]["title"] == "北京"
    assert index.search("capital of France", 1)[0]["title"] == "Paris"
    assert tokenize("北京是首都") == ["北京", "京是", "是首", "首都"] and tokenize("市") == ["市"]
    assert tokenize("The iPhone15发布 of Москва, H2O") == ["iphone15", "发布", "москва", "h2o"]


def test_chunk_text_respects_limit_and_keeps_all_words():
    sents = [f"Sentence number {i} has exactly seven words." for i in range(60)]
    chunks = chunk_text(" ".join(sents), max_words=50, overlap_sentences=0)
    assert all(len(c.split()) <= 50 for c in chunks)
    assert " ".join(chunks).split() == " ".join(sents).split()


def test_markdown_code_and_tables_keep_their_lines():
    """With ``keep_lines`` (Markdown), fenced code keeps its lines and indentation and a pipe
    table its rows, prose around them is chunked as before; a block longer than a chunk is cut
    at line ends; without it, the same text is one line, as always (until 2026-12-02 Markdown was
    too: code read ``def area(r): return 3.14 * r * r``)."""
    code = "```python\ndef area(r):\n    return 3.14 * r * r\n\n\nprint(area(2))\n```"
    table = "| unit | factor |\n| --- | --- |\n| km | 1000 |"
    text = f"Areas are computed here.\nIt is short.\n\n{code}\n\nConversion factors:\n\n{table}\nThe end."
    assert chunk_text(text, keep_lines=True) == [f"Areas are computed here. It is short.\n{code}\nConversion factors:\n{table}\nThe end."]
    assert chunk_text(text) == [" ".join(text.split())]
    assert chunk_text("```\nunclosed()\n  indented()", keep_lines=True) == ["```\nunclosed()\n  indented()"]
    long = "\n".join(f"    value_{i} = compute(value_{i - 1}, {i})" for i in range(60))  # 4 words a line
    chunks = chunk_text(f"```\n{long}\n```", max_words=50, overlap_sentences=0, keep_lines=True)
    assert all(len(c.split()) <= 50 for c in chunks) and len(chunks) == 5
    assert "\n".join(chunks) == f"```\n{long}\n```"  # cut at line ends, nothing lost, indentation kept


def test_a_chunk_the_window_refuses_is_cut_again_sentences_and_lines_whole():
    """``fits`` (ingest's window check, since 2026-12-02): a chunk it refuses is cut again at half
    the words until it fits, sentences and lines kept whole; chunks it accepts are as without it;
    below ``FIT_MIN_WORDS`` a chunk is left as it is."""
    from ragraphs.tools.text import FIT_MIN_WORDS, chunk_lines, chunk_table

    prose = " ".join(f"Sentence {i} has exactly six words." for i in range(40))  # 240 words
    short_enough = lambda t: len(t) <= 300  # noqa: E731
    chunks = chunk_text(prose, max_words=150, fits=short_enough)
    assert all(short_enough(c) for c in chunks) and len(chunks) > 2
    sentences = {f"Sentence {i} has exactly six words." for i in range(40)}
    assert {s for c in chunks for s in split_sentences(c)} == sentences  # whole, none lost
    assert chunk_text(prose, max_words=150, fits=lambda t: True) == chunk_text(prose, max_words=150)
    code = "\n".join(f"    v{i} = f(v{i - 1})" for i in range(80))
    pieces = chunk_lines(code, 60, fits=short_enough)
    assert all(short_enough(c) for c in pieces) and "\n".join(pieces) == code.strip("\n")  # whole lines, in order
    table = chunk_table("a,b\n" + "\n".join(f"{i},{i * i}" for i in range(200)), 150, fits=short_enough)
    assert all(c.startswith("a,b\n") and short_enough(c) for c in table)
    wide = "h" * 400 + "\n" + "\n".join(f"{i},{i * i}" for i in range(200))  # a header past the check by itself
    assert chunk_table(wide, 150, fits=short_enough) == chunk_table(wide, 150)
    refused = chunk_text(prose, max_words=150, fits=lambda t: False)  # a title fills the window: cut no further
    assert all(len(c.split()) <= 2 * FIT_MIN_WORDS for c in refused) and set(refused) == sentences  # a sentence each


def test_strips_one_or_two_sentences_stay_whole():
    assert strips("One sentence. Two sentences.") == ["One sentence. Two sentences."]
    s = strips("A one. B two. C three. D four. E five.", sentences_per_strip=2)
    assert s == ["A one. B two.", "C three. D four.", "E five."]


def test_normalize_answer_squad_rules():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("an Apple, a day") == "apple day"
    assert normalize_answer("") == ""


def test_merge_passages_dedupes_by_id_and_updates_score():
    a = make_passage("T", "text a", score=0.1)
    b = make_passage("T", "text b", score=0.2)
    merged = merge_passages([a], [b, {**a, "score": 0.9}])
    assert [p["id"] for p in merged] == [a["id"], b["id"]]
    assert merged[0]["score"] == 0.9
    assert merge_passages(merged, None) == merged
    assert merge_passages(merged, reset([b])) == [b]
    assert passage_id("T", "text a") == a["id"] and passage_id("T", "text a ") == a["id"]


def test_add_trace_appends():
    assert add_trace([{"node": "a"}], {"node": "b"}) == [{"node": "a"}, {"node": "b"}]
    assert add_trace(None, [{"node": "a"}]) == [{"node": "a"}]


def test_loaders_on_real_rows(data_dir):
    hp = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa")
    assert len(hp) == 20 and hp[0].answers == ["1974"]
    assert len(hp[0].paragraphs) == 10 and {p["title"] for p in hp[0].supporting} == {"Carsten Olsen", "S. P. L. Sørensen"}

    wiki = load_dataset(str(data_dir / "2wikimultihopqa.sample.jsonl"))  # auto-detected
    assert all(ex.dataset == "2wikimultihopqa" for ex in wiki)
    assert any(len(ex.supporting) >= 2 for ex in wiki)

    mu = load_dataset(str(data_dir / "musique.sample.jsonl"), "musique")
    assert len(mu[0].paragraphs) == 20 and 1 <= len(mu[0].supporting) <= 4

    pop = load_dataset(str(data_dir / "popqa.sample.jsonl"), "popqa")
    assert pop[0].answers[0] == "Georgetown" and pop[0].paragraphs

    sq = load_dataset(str(data_dir / "strategyqa.sample.jsonl"), "strategyqa")
    assert sq[0].answers in (["yes"], ["no"])

    od = load_dataset(str(data_dir / "odqa.sample.jsonl"), "odqa")
    assert all(ex.answers for ex in od)

    pooled = pooled_passages(hp)
    assert len(pooled) == len({p["id"] for p in pooled}) and len(pooled) > 150


def test_hf_style_hotpot_row_is_read_like_the_original(data_dir, tmp_path):
    # the same real row, re-shaped into the HF datasets layout (dict-shaped fields)
    row = json.loads((data_dir / "hotpotqa.sample.jsonl").read_text().splitlines()[0])
    hf = dict(row)
    hf["id"] = hf.pop("_id")
    hf["context"] = {"title": [t for t, _ in row["context"]], "sentences": [s for _, s in row["context"]]}
    hf["supporting_facts"] = {"title": [t for t, _ in row["supporting_facts"]], "sent_id": [i for _, i in row["supporting_facts"]]}
    f = tmp_path / "hf.jsonl"
    f.write_text(json.dumps(hf) + "\n")
    (ex,) = load_dataset(str(f), "hotpotqa")
    (orig,) = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa", limit=1)
    assert [p["id"] for p in ex.paragraphs] == [p["id"] for p in orig.paragraphs]
    assert ex.supporting_ids == orig.supporting_ids


def test_broken_jsonl_lines_are_reported_and_skipped(data_dir, tmp_path):
    lines = (data_dir / "musique.sample.jsonl").read_text().splitlines()[:3]
    f = tmp_path / "broken.jsonl"
    f.write_text(lines[0] + "\n{not json\n" + lines[1] + "\n[1, 2]\n" + lines[2] + "\n")
    warnings = []
    exs = load_dataset(str(f), "musique", warn=warnings.append)
    assert len(exs) == 3
    assert len(warnings) == 2 and "broken.jsonl:2" in warnings[0]


def test_detect_format():
    assert detect_format({"question": "q", "golden_answers": ["a"], "id": "1"}) == "flashrag"
    assert detect_format({"question": "q", "results": []}) == "popqa-web"
    assert detect_format({"foo": 1}) is None


@pytest.mark.parametrize("state, message", [
    ({}, "no question given: run the graph with {'question': \"...\"} as its input"),
    ({"question": None}, "the question is empty"),
    ({"question": "  \n"}, "the question is empty"),
    ({"question": 42}, "the question must be text, got int"),
    ({"question": ["who?"]}, "the question must be text, got list"),
])
def test_a_question_that_is_not_text_is_refused_by_name(state, message):
    from ragraphs.errors import InputError
    from ragraphs.state.types import question_of

    with pytest.raises(InputError, match=message):
        question_of(state)
    assert question_of({"question": " who? "}) == " who? "


@pytest.mark.parametrize("method", ["none", "vanilla", "crag", "dr-rag", "erm4", "migres"])
def test_every_graph_refuses_a_question_that_is_not_text_before_any_call(method):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from ragraphs import Components
    from ragraphs.errors import InputError
    from ragraphs.graphs import build_graph
    from ragraphs.tools.vectorstore import InMemoryCorpus

    class NoCall(FakeListChatModel):
        def _call(self, *a, **k):  # pragma: no cover - the point is that it is never reached
            raise AssertionError("the LLM must not be called")

    class NoEmbed:
        def embed_documents(self, texts):
            raise AssertionError("nothing must be embedded")

        embed_query = embed_documents

    c = Components(llm=NoCall(responses=["x"]), retriever=InMemoryCorpus([], NoEmbed()), embeddings=NoEmbed())
    g = build_graph(method, c)
    given = ({"question": 42}, "must be text, got int"), ({"question": ""}, "the question is empty"), \
        ({"query": "who?"}, "no question given")  # a key the input does not have: dropped, so no question
    for state, message in given:
        with pytest.raises(InputError, match=message):
            g.invoke(state)
    # the bare text in place of the dict: LangGraph's own error, before any node (README, build_graph say so)
    from langgraph.errors import InvalidUpdateError

    with pytest.raises(InvalidUpdateError, match="Expected dict, got who"):
        g.invoke("who?")


def test_a_chunk_never_exceeds_its_words_for_the_overlap():
    text = "Alpha starts here. " + "Bee " * 149 + ". " + "Sea " * 99 + "."
    chunks = chunk_text(text, 180)
    assert all(len(c.split()) <= 180 for c in chunks) and " ".join(chunks).count("Sea") == 99


def test_text_without_spaces_is_cut_into_chunks_too():
    """Japanese, base64, a minified file: chunks of at most max_words * CHARS_PER_WORD characters
    (one passage of any length, its end never embedded, until 2026-11-30); prose as before."""
    from ragraphs.tools.text import CHARS_PER_WORD, chunk_text

    ja = "".join(f"第{i}章：東京タワーの高さは{300 + i}メートルです。" for i in range(800))
    chunks = chunk_text(ja, 150)
    assert len(chunks) > 10 and max(map(len, chunks)) <= 150 * CHARS_PER_WORD
    assert all(c.endswith("。") for c in chunks)  # cut at sentence ends since 2026-11-30
    assert "".join(chunk_text(ja, 150, overlap_sentences=0)) == ja  # nothing lost, no space added
    blob = "QUJD" * 100_000
    assert [len(c) for c in chunk_text(blob, 100)][:2] == [1000, 1000] and "".join(chunk_text(blob, 100)) == blob
    prose = " ".join(f"Sentence number {i} is short." for i in range(60))
    assert all(len(c.split()) <= 50 for c in chunk_text(prose, 50))
    code = " ".join(f"x{i}=y{i}/z{i};" for i in range(150))  # long words: cut at a space, never inside one
    assert all(len(c) <= 1500 and not c.startswith(("=", "/", ";")) for c in chunk_text(code, 150))


def test_english_chunks_as_before_the_cjk_count():
    """A unit without a space counts by its length rounded up only where it holds CJK letters;
    elsewhere as at 1619370 (rounded down, and a sentence carried over by its words). For a day
    on 2026-11-30 a one-word heading of 11+ characters or a URL counted one more, which moved
    English chunk boundaries, so re-ingesting an unchanged file re-embedded it (ids hash the text).
    The expected chunks are those of 1619370's chunk_text."""
    body = " ".join(["word"] * 148) + " end."
    text = body + "\n\nMethodology\n\nWe measured the river. It flows north."
    assert chunk_text(text) == [body + " Methodology", "Methodology We measured the river. It flows north."]
    s1 = "The first sentence has exactly ten words in it here."
    url = "https://example.com/" + "a" * 40  # 60 characters, carried over as one word
    s2 = "Then eight more words follow the long address."
    s3 = "And a last sentence of ten words closes this paragraph."
    assert chunk_text(f"{s1}\n\n{url}\n\n{s2} {s3}", max_words=20) == [f"{s1} {url}", f"{url} {s2} {s3}"]
    zh = "北京是中国的首都，也是全国的政治和文化中心。"  # 22 letters: 3, not 2
    assert len(chunk_text(zh * 7, 20, overlap_sentences=0)) == 2 and len(chunk_text(zh * 6, 20, overlap_sentences=0)) == 1
