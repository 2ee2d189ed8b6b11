"""Structured LLM decisions (ragraphs.tools.structured) and what eval makes of them.

Fake chat models drive the node logic (the hard iteration guard, the lenient reader, the
one repair retry and their counting); an OpenAI-compatible HTTP server on 127.0.0.1 checks
that a chat server is sent the decision's JSON schema; the real embedded Gemma checks that
the grammar path returns schema-valid objects (slow).
"""

from __future__ import annotations

import json

import pytest

from servers import ChatEndpoint, chat_completion
from ragraphs.components import Components
from ragraphs.datasets import pooled_passages
from ragraphs.evaluation.report import summary_table
from ragraphs.evaluation.runner import RunSpec, run_spec
from ragraphs.tools import structured as S
from ragraphs.tools.llm import FakeAnswerChat, LlamaCppCompletionChat

from fakes import ConstJudge, LexicalRetriever, ScriptedChat, migres_prompt_kind


_kind = migres_prompt_kind


def never_commits(prompt: str) -> str:
    """Valid JSON for every MIGRES decision, but the Main Module never answers."""
    kind = _kind(prompt)
    if kind == "leaf":
        return '{"useful_information": []}'
    if kind == "main":
        return '{"answer": "unanswerable", "missing_information": "who the author is"}'
    if kind == "queries":
        n = prompt.count("Your response:")
        return json.dumps({"queries": [f"a new query number {n} about the author"]})
    return "Paris"  # knowledge prompting, final answer


def _components(llm, hotpot):
    return Components(llm=llm, retriever=LexicalRetriever(pooled_passages(hotpot)), judges={"evaluator": ConstJudge(0.9), "nli": ConstJudge(0.9)})


@pytest.mark.parametrize("max_iterations", [2, 4])
def test_model_that_never_commits_stops_exactly_at_the_guard(hotpot_examples, max_iterations):
    llm = ScriptedChat(script=never_commits)
    # the same query comes back every iteration: the paper's loop (no stop when exhausted) runs to the guard
    spec = RunSpec("migres", k=2, settings={"max_iterations": max_iterations, "stop_when_exhausted": False})
    summary, recs = run_spec(spec, hotpot_examples[:3], _components(llm, hotpot_examples), dataset="hotpotqa", progress=False)
    assert summary["errors"] == 0
    assert [r["iterations"] for r in recs] == [max_iterations] * 3
    assert [r["guard_hit"] for r in recs] == [True] * 3
    assert summary["guard_hit_rate"] == 1.0 and summary["iterations_avg"] == max_iterations
    assert [r["ended"] for r in recs] == ["guard"] * 3 and summary["ended"] == {"guard": 3}
    assert summary["parse_failures"] == 0  # every output was valid JSON of its schema
    for r in recs:
        nodes = [t["node"] for t in r["trace"]]
        assert nodes.count("main_judge") == max_iterations and nodes[-1] == "final_answer"
    assert sum(r["llm_calls"] for r in recs) == len(llm.prompts)


def test_a_committing_model_never_hits_the_guard(hotpot_examples):
    def script(prompt):
        if _kind(prompt) == "main":
            return '{"answer": "1974", "missing_information": ""}'
        return never_commits(prompt)

    # the Main Module's own answer is the prediction (answer_with="main"; the reader route: tests/graphs/test_migres.py)
    summary, recs = run_spec(RunSpec("migres", k=2, settings={"answer_with": "main"}), hotpot_examples[:2], _components(ScriptedChat(script=script), hotpot_examples),
                             dataset="hotpotqa", progress=False)
    assert summary["guard_hit_rate"] == 0.0 and summary["iterations_avg"] == 1 and summary["parse_failures"] == 0
    assert [r["prediction"] for r in recs] == ["1974", "1974"] and summary["ended"] == {"answered": 2}
    # methods that do not loop have no guard: no rate at all
    vanilla, _ = run_spec(RunSpec("vanilla", k=2), hotpot_examples[:1], _components(FakeAnswerChat(), hotpot_examples),
                          dataset="hotpotqa", progress=False)
    assert vanilla["guard_hit_rate"] is None and vanilla["ended"] is None and vanilla["parse_failures"] == 0


def test_malformed_output_is_repaired_once_and_counted():
    llm = FakeAnswerChat(responses=["I think it is Paris.", '{"answer": "Paris", "missing_information": ""}'])
    d = S.decide(llm, "Question: capital of France?\nYour response:", S.MainVerdict)
    assert d.mode == "lenient" and d.how == "repair" and d.calls == 2 and d.parse_failure == 1
    assert d.value == S.MainVerdict(answer="Paris", missing_information="")
    assert llm.prompts[1].startswith(llm.prompts[0]) and "I think it is Paris." in llm.prompts[1]
    assert llm.prompts[1].endswith(S.REPAIR_NOTE)
    assert d.usage() == {"llm_calls": 2, "input_tokens": d.input_tokens, "output_tokens": d.output_tokens, "parse_failures": 1}

    # the repair fails too: no object, still one parse failure, never a third call
    bad = FakeAnswerChat(responses=["no idea", "still no idea", "{}"])
    d = S.decide(bad, "Question: x\nYour response:", S.QueryList)
    assert d.value is None and d.how == "failed" and d.calls == 2 and d.parse_failure == 1

    # fenced or cut-off JSON is read by the lenient reader without a retry, and counted
    for text in ['```json\n{"keywords": ["Paris", "capital"]}\n```', '{"keywords": ["Paris", "capi']:
        d = S.decide(FakeAnswerChat(responses=[text]), "q", S.Keywords)
        assert d.how == "lenient" and d.calls == 1 and d.parse_failure == 1 and d.value.keywords[0] == "Paris"

    # over-long values are cut to the schema's bounds, and that is a lenient read (strict until
    # 2026-11-30: a server that ignores maxLength had its answers cut without a count)
    d = S.decide(FakeAnswerChat(responses=[json.dumps({"keywords": ["k" * 99, "b", "c", "d"]})]), "q", S.Keywords)
    assert d.how == "lenient" and d.parse_failure == 1 and d.value.keywords == ["k" * 40, "b", "c"]


def test_malformed_decisions_are_summed_by_eval(hotpot_examples):
    """A Main Module whose every first output is malformed: each question's decision is
    repaired (2 calls) and counted; eval sums the failures over the questions."""

    def script(prompt):
        if _kind(prompt) == "main" or prompt.endswith(S.REPAIR_NOTE):
            if prompt.endswith(S.REPAIR_NOTE):
                return '{"answer": "1974", "missing_information": ""}'
            return "The answer is 1974 I think"
        return never_commits(prompt)

    llm = ScriptedChat(script=script)
    summary, recs = run_spec(RunSpec("migres", k=2, settings={"answer_with": "main"}), hotpot_examples[:3], _components(llm, hotpot_examples),
                             dataset="hotpotqa", progress=False)
    assert [r["parse_failures"] for r in recs] == [1, 1, 1] and summary["parse_failures"] == 3
    assert [r["prediction"] for r in recs] == ["1974"] * 3 and summary["guard_hit_rate"] == 0.0
    table = summary_table([summary])
    assert "| parse failures | guard hits |" in table.splitlines()[0]
    assert "| 3 | 0.0 |" in table.splitlines()[2]


def test_legacy_formats_are_read_and_counted():
    """The methods' older plain formats still work with an unconstrained model, counted."""
    from ragraphs.nodes.crag import read_keywords_legacy
    from ragraphs.nodes.erm4 import read_nli_legacy, read_rewrite_legacy

    q = "Who directed the film The Zone?"
    d = S.decide(FakeAnswerChat(responses=["Who was the director of The Zone?**The Zone director**The Zone film"]), "p",
                 S.RewritePlus, legacy=read_rewrite_legacy(q))
    assert d.how == "legacy" and d.parse_failure == 1 and d.value.queries == ["The Zone director", "The Zone film"]
    d = S.decide(FakeAnswerChat(responses=["It says so.**entailment"]), "p", S.Entailment, legacy=read_nli_legacy)
    assert d.how == "legacy" and d.value.entailment == "yes"
    d = S.decide(FakeAnswerChat(responses=[" Henry Feilden, occupation\n"]), "p", S.Keywords, legacy=read_keywords_legacy)
    assert d.how == "legacy" and d.value.keywords == ["Henry Feilden", "occupation"]
    # Chinese, Japanese and Arabic commas separate keywords too (one keyword of five until 2026-11-30)
    d = S.decide(FakeAnswerChat(responses=["北京，首都，人口，面积、历史"]), "p", S.Keywords, legacy=read_keywords_legacy)
    assert d.how == "legacy" and d.value.keywords == ["北京", "首都", "人口"]
    assert read_keywords_legacy("القاهرة، عاصمة") == S.Keywords(keywords=["القاهرة", "عاصمة"])


def test_constraint_modes_and_grammars():
    assert S.constraint_mode(LlamaCppCompletionChat(model_path="/nonexistent.gguf")) == "grammar"
    assert S.constraint_mode(FakeAnswerChat()) == "lenient"
    from langchain_openai import ChatOpenAI, OpenAI

    assert S.constraint_mode(ChatOpenAI(model="m", api_key="x", base_url="http://127.0.0.1:9")) == "json_schema"
    from langchain_openai import AzureChatOpenAI  # the same response_format (read leniently until 2026-12-01)

    azure = AzureChatOpenAI(azure_deployment="d", api_version="2024-10-21", api_key="x", azure_endpoint="http://127.0.0.1:9")
    assert S.constraint_mode(azure) == "json_schema"
    assert S.constraint_mode(OpenAI(model="m", api_key="x", base_url="http://127.0.0.1:9")) == "lenient"  # type: ignore[arg-type]
    from llama_cpp import LlamaGrammar

    for schema in (S.MainVerdict, S.QueryList, S.LeafExtraction, S.RewritePlus, S.Keywords, S.Entailment):
        js = S.json_schema(schema)
        assert "$defs" not in json.dumps(js) and js["additionalProperties"] is False
        LlamaGrammar.from_string(S.gbnf(schema), verbose=False)  # llama.cpp accepts it
        if "char ::=" in S.gbnf(schema):  # no raw newline or other control character in a string
            assert "\\x00-\\x1F" in next(line for line in S.gbnf(schema).splitlines() if line.startswith("char ::="))
        # every string and list is bounded, so a looping model must close the object
        text = json.dumps(js)
        assert text.count('"type": "string"') == text.count('"maxLength"') + text.count('"enum"')
        assert text.count('"type": "array"') == text.count('"maxItems"')


def _longest(node: dict, char: str) -> object:
    """The longest object a decision's JSON schema admits, built of one repeated character."""
    if "enum" in node:
        return max(node["enum"], key=lambda x: len(json.dumps(x)))
    t = node.get("type")
    if t == "string":
        return char * int(node["maxLength"])
    if t == "array":
        return [_longest(node["items"], char) for _ in range(int(node["maxItems"]))]
    if t == "object":
        return {k: _longest(v, char) for k, v in node["properties"].items()}
    if t == "integer":
        return int(node["maximum"])
    raise AssertionError(f"no longest value for {node}")


SCHEMAS = (S.MainVerdict, S.QueryList, S.LeafExtraction, S.RewritePlus, S.Keywords, S.Entailment)


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: s.__name__)
def test_the_token_budget_holds_the_longest_object_the_grammar_admits(schema):
    """A grammar-constrained decision is never cut by max_tokens: even written one character
    per token (digits are), the longest admissible object fits the budget."""
    for char in "7x":
        obj = _longest(S.json_schema(schema), char)
        assert isinstance(schema.model_validate(obj), schema)  # it is admissible
        assert len(" " + json.dumps(obj)) <= S.token_budget(schema)


@pytest.mark.slow
def test_the_token_budget_holds_the_longest_object_in_gemma_tokens(gemma):
    for schema in SCHEMAS:
        for char in "7x.":
            text = " " + json.dumps(_longest(S.json_schema(schema), char))
            assert gemma.count_tokens(text) <= S.token_budget(schema), (schema.__name__, char)


def test_a_decision_cut_by_max_tokens_says_so_in_its_trace():
    cut = S.Decision(None, '{"answer": "1, 1, 1', "grammar", "failed", 2, 10, 20, "length")
    assert cut.trace()["cut_by_max_tokens"] is True and cut.parse_failure == 1
    whole = S.Decision(S.Keywords(keywords=["a"]), '{"keywords": ["a"]}', "grammar", "strict", 1, 10, 5, "stop")
    assert "cut_by_max_tokens" not in whole.trace()


@pytest.mark.slow
def test_the_real_gemma_reports_a_cut_output(gemma):
    from ragraphs.tools.llm import complete

    out = complete(gemma, "Count from one to twenty: one, two,", max_tokens=3)
    assert out.finish_reason == "length" and out.output_tokens == 3
    out = complete(gemma, "Question: What is the capital of France?\nAnswer:", max_tokens=32, stop=["\n"])
    assert out.finish_reason == "stop"


def test_openai_compatible_server_gets_the_json_schema():
    from langchain_openai import ChatOpenAI

    content = '{"answer": "Paris", "missing_information": ""}'
    server = ChatEndpoint(lambda body, headers: (200, chat_completion(content, body["model"], 11, 9)))
    try:
        llm = ChatOpenAI(model="m", api_key="x", base_url=server.url, max_retries=0)
        d = S.decide(llm, "Question: capital of France?\nYour response:", S.MainVerdict)
    finally:
        server.close()
    assert d.mode == "json_schema" and d.how == "strict" and d.value.answer == "Paris"
    assert (d.input_tokens, d.output_tokens) == (11, 9)
    sent = server.bodies[-1]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == S.json_schema(S.MainVerdict)


@pytest.mark.slow
def test_grammar_gives_schema_valid_objects_with_the_real_gemma(gemma):
    """Every decision's real prompt, answered by the embedded Gemma 3 270M under its grammar."""
    from ragraphs.nodes import erm4, migres
    from ragraphs.nodes.crag import REWRITE_PROMPT

    q = "Where was the author of Killing Pablo born?"
    passages = [
        {"id": "a", "title": "Killing Pablo", "text": "Killing Pablo is a 2001 book by Mark Bowden.", "source": "t", "score": None},
        {"id": "b", "title": "Mark Bowden", "text": "Mark Bowden (born 1951 in St. Louis, Missouri) is an American writer.",
         "source": "t", "score": None},
    ]
    cases = [
        (migres.leaf_prompt(q, passages), S.LeafExtraction),
        (migres.main_prompt(q, ["Killing Pablo is a book by Mark Bowden."]), S.MainVerdict),
        (migres.query_prompt(q, [q], ["Killing Pablo is a book by Mark Bowden."], "The birthplace of Mark Bowden."), S.QueryList),
        (erm4.rewrite_prompt(q), S.RewritePlus),
        (erm4.nli_prompt(q, "Mark Bowden\nMark Bowden was born in St. Louis, Missouri."), S.Entailment),
        (REWRITE_PROMPT.format(question=q), S.Keywords),
    ]
    for prompt, schema in cases:
        d = S.decide(gemma, prompt, schema)
        assert d.mode == "grammar" and d.calls == 1, d.text
        assert d.how == "strict" and isinstance(d.value, schema), d.text
        assert schema.model_validate_json(d.text.strip()) == d.value  # the raw text itself is valid


def test_choice_grammar_escapes_its_options_and_llama_cpp_reads_it():
    from llama_cpp import LlamaGrammar

    text = S.choice_gbnf(['say "no"', "back\\slash", "tab\there", "say \"no\""])
    assert text.count("|") == 2  # the repeated option once; the tab dropped
    assert '"say \\"no\\""' in text and '"back\\\\slash"' in text and '"tabhere"' in text
    LlamaGrammar.from_string(text, verbose=False)  # raises on a grammar llama.cpp cannot read
    with pytest.raises(ValueError):
        S.choice_gbnf([])


def test_a_langchain_completion_model_runs_every_method():
    """A BaseLLM (text in, text out: a LangChain wrapper of a completion endpoint) is a model
    every method can run on: answers are read, decisions parsed leniently and counted."""
    from langchain_core.language_models.fake import FakeListLLM

    from ragraphs import Components
    from ragraphs.graphs import build_graph
    from ragraphs.state import make_passage

    class Lima:
        def search(self, query, k, mode="dense"):
            return [make_passage("Lima", "Lima is the capital of Peru.", score=0.5)][:k]

    for method in ("none", "vanilla", "crag", "dr-rag", "erm4", "migres"):
        c = Components(llm=FakeListLLM(responses=["Lima"] * 40), retriever=Lima())
        out = build_graph(method, c).invoke({"question": "What is the capital of Peru?"})
        assert out["answer"] == "Lima" and out["llm_calls"] >= 1, method


def test_a_json_schema_decision_cut_by_the_token_limit_is_read_not_raised():
    """The openai client raises ``LengthFinishReasonError`` for a ``response_format`` reply cut
    by ``max_tokens``; the cut text goes to the lenient reader and the repair like any other
    (until 2026-11-30 the question failed with ``LLMError``). A local server is sent this
    call's limit as ``max_tokens`` too, not the model's construction-time one."""
    from ragraphs.tools.llm import make_llm

    cut = '{"useful_information": [{"info": "Mark Bowden was born in St'
    whole = '{"useful_information": [{"info": "Mark Bowden was born in St. Louis.", "support_passages": [0]}]}'
    replies = iter([(cut, "length"), (whole, "stop")])

    def respond(body, headers):
        text, finish = next(replies)
        out = chat_completion(text, body["model"], 40, 32)
        out["choices"][0]["finish_reason"] = finish
        return 200, out

    server = ChatEndpoint(respond)
    try:
        import os
        from unittest import mock

        with mock.patch.dict(os.environ, {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "x"}):
            llm = make_llm("openai:cut-model", max_tokens=32)
            d = S.decide(llm, "Passages: ...\nYour response:", S.LeafExtraction)
    finally:
        server.close()
    assert d.how == "repair" and d.calls == 2 and d.parse_failure == 1
    assert d.value.useful_information[0].info == "Mark Bowden was born in St. Louis."
    first = server.bodies[0]
    assert first["max_tokens"] == first["max_completion_tokens"] == S.token_budget(S.LeafExtraction)


def test_a_wrapped_chat_model_of_a_local_server_is_sent_max_tokens_too():
    """A user's ChatOpenAI behind ``bind`` / ``with_retry`` / ``with_fallbacks`` for a
    llama.cpp-style server: the call's limit goes as ``max_tokens`` too (that server ignores
    ``max_completion_tokens``), an error names the model and its address, and decisions are
    constrained by a JSON schema (the embedded model's by its grammar). Wrappers hid all three
    until 2026-11-30."""
    from langchain_openai import ChatOpenAI

    from ragraphs.errors import LLMError
    from ragraphs.tools.llm import complete, make_llm, model_label

    server = ChatEndpoint(lambda body, headers: (200, chat_completion("Lima", body["model"], 10, 1)))
    try:
        base = ChatOpenAI(model="local-gguf", base_url=server.url, api_key="x", max_retries=0)
        assert S.constraint_mode(base.with_fallbacks([base])) == "lenient"  # a fallback may not take the schema
        for llm in (base.bind(temperature=0), base.with_retry(stop_after_attempt=1), base.with_fallbacks([base])):
            assert S.constraint_mode(llm) == ("lenient" if hasattr(llm, "fallbacks") else "json_schema")
            assert complete(llm, "Capital of Peru?", max_tokens=7).text == "Lima"
            assert server.bodies[-1]["max_tokens"] == server.bodies[-1]["max_completion_tokens"] == 7
            assert model_label(llm) == f"local-gguf at {server.url}"
        # a bound extra_body (vLLM / Qwen3's thinking switch) is sent beside max_tokens (dropped until 2026-11-30)
        thinking = base.bind(extra_body={"chat_template_kwargs": {"enable_thinking": False}})
        complete(thinking, "Capital of Peru?", max_tokens=7)
        assert server.bodies[-1]["chat_template_kwargs"] == {"enable_thinking": False}
        assert server.bodies[-1]["max_tokens"] == 7
    finally:
        server.close()
    with pytest.raises(LLMError, match="local-gguf at "):
        complete(base.bind(temperature=0), "Capital of Peru?", max_tokens=7)
    assert S.constraint_mode(make_llm("gemma").bind(temperature=0)) == "grammar"  # the embedded model's grammar


@pytest.mark.parametrize("refusal", [
    "This response_format type is unavailable now",
    # vLLM's (xgrammar: maxLength, maxItems... unsupported; outlines): failed the decision until 2026-12-03
    "The provided JSON schema contains features not supported by xgrammar.",
    "Failed to transform json schema into a grammar: unsupported keyword maxItems",
])
def test_a_server_that_refuses_json_schema_is_read_leniently_from_then_on(refusal):
    """HTTP 400 naming ``response_format`` (a server with ``json_object`` only) or the JSON schema
    (vLLM's grammar backends): the decision is asked again without it and read leniently, and
    that model is not sent a schema again."""
    from langchain_openai import ChatOpenAI

    def respond(body, headers):
        if "response_format" in body:
            return 400, {"error": {"message": refusal, "type": "BadRequestError"}}
        return 200, chat_completion('{"keywords": ["Henry Feilden", "occupation"]}', body["model"], 9, 9)

    server = ChatEndpoint(respond)
    try:
        llm = ChatOpenAI(model="no-schema", api_key="x", base_url=server.url, max_retries=0)
        d = S.decide(llm, "Question: What did Henry Feilden do?\nKeywords:", S.Keywords)
        again = S.decide(llm, "Question: Who was Alan Bjerga?\nKeywords:", S.Keywords)
        other = ChatOpenAI(model="with-schema", api_key="x", base_url=server.url, max_retries=0)
        assert S.constraint_mode(other) == "json_schema"
    finally:
        server.close()
    assert d.mode == again.mode == "lenient" and d.value.keywords == ["Henry Feilden", "occupation"]
    assert ["response_format" in b for b in server.bodies] == [True, False, False]


def test_a_server_that_answers_json_schema_with_a_500_validation_error_is_read_leniently():
    """llama-cpp-python's server (the `[server]` extra) answers ``json_schema`` with HTTP 500 and
    a validation error naming ``response_format``: a refusal like a 400, not a failed question."""
    from langchain_openai import ChatOpenAI

    def respond(body, headers):
        if "response_format" in body:
            return 500, {"error": {"message": "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
                                              "  Input should be 'text' or 'json_object' [type=literal_error, "
                                              "input_value='json_schema', input_type=str]",
                                   "type": "internal_server_error", "param": None, "code": None}}
        return 200, chat_completion('{"keywords": ["Hamlet", "author"]}', body["model"], 9, 9)

    server = ChatEndpoint(respond)
    try:
        llm = ChatOpenAI(model="llama-cpp-server", api_key="x", base_url=server.url, max_retries=0)
        d = S.decide(llm, "Question: Who wrote Hamlet?\nKeywords:", S.Keywords)
    finally:
        server.close()
    assert d.mode == "lenient" and d.value.keywords == ["Hamlet", "author"]
    # a 500 of the server's guided decoding (no validation error) is a fault, not a refusal
    from ragraphs.tools.llm import LLMError

    def transient(body, headers):
        return 500, {"error": {"message": "guided decoding with json_schema failed: backend crashed", "type": "server_error"}}

    flaky = ChatEndpoint(transient)
    try:
        llm = ChatOpenAI(model="vllm", api_key="x", base_url=flaky.url, max_retries=0)
        with pytest.raises(LLMError):
            S.decide(llm, "Question: Who wrote Hamlet?\nKeywords:", S.Keywords)
        assert S.constraint_mode(llm) == "json_schema"
    finally:
        flaky.close()


def test_a_strict_read_takes_nothing_mended():
    """Text over a field's ``maxLength`` (a server that ignores it), a string where a list is
    due, or more items than allowed are mended (cut at a word's end, wrapped, dropped) but
    counted as a lenient read, not a strict one; one object on the first line followed by
    more text is strict (what a stop at the newline keeps)."""
    long = '{"answer": "The Royal Institution of Great Britain in Albemarle Street, London", "missing_information": ""}'
    assert S.read_strict(S.MainVerdict, long) is None
    assert S.read_lenient(S.MainVerdict, long).answer == "The Royal Institution of Great Britain in Albemarle Street"
    assert S.read_strict(S.QueryList, '{"queries": "Where was Mark Bowden born?"}') is None
    assert S.read_lenient(S.QueryList, '{"queries": "Where was Mark Bowden born?"}').queries == ["Where was Mark Bowden born?"]
    assert S.read_strict(S.Keywords, '{"keywords": ["a", "b", "c", "d"]}') is None
    got = S.read_strict(S.QueryList, ' {"queries": ["a b c"]}\nQuestion: the next example ...')
    assert got is not None and got.queries == ["a b c"]
    d = S.decide(FakeAnswerChat(responses=['{"keywords": "Henry Feilden, occupation"}']), "Keywords:", S.Keywords)
    assert d.how == "lenient" and d.value.keywords == ["Henry Feilden, occupation"]


def test_plain_text_readers_do_not_take_json_for_words():
    """A decision's legacy plain-text reader refuses JSON no JSON reader took (its braces and
    keys became the web query, the retrieval query or the rewritten question before)."""
    from ragraphs.nodes.crag import read_keywords_legacy
    from ragraphs.nodes.erm4_parsing import read_rewrite_legacy
    from ragraphs.nodes.migres_parsing import read_queries_legacy

    assert read_keywords_legacy('{"keywords": 7') is None and read_queries_legacy('[{"q": ') is None
    assert read_rewrite_legacy("Who?")('```json\n{"rewritten_question": 3, "queries": {}}\n```') is None
    assert read_keywords_legacy("Henry Feilden, occupation").keywords == ["Henry Feilden", "occupation"]


def test_a_completion_endpoint_keeps_the_newline_stop():
    """``openai-completion:`` (a base model behind /v1/completions) is sent the decisions'
    newline stop: without it the model wrote on into the next few-shot example."""
    from langchain_core.language_models.fake import FakeListLLM

    from ragraphs.tools.llm import complete

    seen = {}

    class Recording(FakeListLLM):
        def _call(self, prompt, stop=None, run_manager=None, **kwargs):
            seen["stop"] = stop
            return super()._call(prompt, stop=stop, run_manager=run_manager, **kwargs)

    complete(Recording(responses=["x"]), "Question: q\nAnswer:", stop=["\n"])
    assert seen["stop"] == ["\n"]


def test_errors_name_the_model_and_its_endpoint_without_credentials():
    from langchain_openai import ChatOpenAI

    from ragraphs.errors import LLMError
    from ragraphs.tools.llm import complete, model_label

    llm = ChatOpenAI(model="my-model", api_key="x", base_url="http://user:pw@127.0.0.1:9/v1", max_retries=0, timeout=2)
    assert model_label(llm) == "my-model at http://127.0.0.1:9/v1"
    with pytest.raises(LLMError, match=r"^LLM call failed \(my-model at http://127\.0\.0\.1:9/v1\): ") as e:
        complete(llm, "Question: q\nAnswer:")
    assert "pw" not in str(e.value)


def test_the_grammar_cache_is_safe_under_concurrent_runs():
    """Concurrent runs share the model's cache of parsed grammars (64, least recently used
    out): one run looked up an entry that another had just evicted (``KeyError``) until
    2026-11-30. Four threads over 70 grammars, thread switches as often as Python allows."""
    import sys
    import threading
    import time

    llm = LlamaCppCompletionChat(model_path="/nowhere/model.gguf")  # grammars need no model
    grammars = [S.choice_gbnf([f"option {i}", f"other {i}"]) for i in range(70)]
    errors: list[BaseException] = []
    stop = time.monotonic() + 1.5

    def work(offset: int) -> None:
        i = offset
        while time.monotonic() < stop:
            try:
                llm._grammar(grammars[i % len(grammars)])
            except BaseException as e:  # noqa: BLE001 (any error is the finding)
                errors.append(e)
                return
            i += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[:1]
    assert len(llm._grammars) == 64


@pytest.mark.slow
def test_an_output_limit_near_the_context_keeps_the_prompt(gemma):
    """``max_tokens`` is held to half the context: a limit near ``n_ctx`` left the prompt's
    last tokens, or only the BOS token, until 2026-11-30."""
    from ragraphs.tools.llm import complete

    prompt = "Question: What is the capital of France?\nAnswer:"
    out = complete(gemma, prompt, max_tokens=4100, stop=["\n"])
    assert out.input_tokens >= gemma.count_tokens(prompt) - 1 and out.output_tokens < 100


def test_a_refused_schema_is_remembered_for_that_model_object_only(monkeypatch):
    """The models a server refused ``json_schema`` for are marked by object, not by id alone:
    another model that comes to hold a collected one's id is not read leniently (an id-only set
    did that until 2026-11-30), and a marked model, dropped, is collected (every one was held for
    the life of the process until 2026-11-30)."""
    import gc
    import weakref

    from langchain_openai import ChatOpenAI

    from ragraphs.tools import structured as S
    from ragraphs.tools.llm import ModelMarks

    monkeypatch.setattr(S, "_NO_SCHEMA", ModelMarks())
    b = ChatOpenAI(model="gpt-4o-mini", api_key="x", base_url="http://127.0.0.1:9/v1")
    assert S.constraint_mode(b) == "json_schema"
    S._NO_SCHEMA._held[id(b)] = object()  # a collected model that held this id
    assert S.constraint_mode(b) == "json_schema"
    S._NO_SCHEMA.add(b)
    assert S.constraint_mode(b) == "lenient"
    # the model the server refused, however it is wrapped (each binding paid a refusal until 2026-11-30)
    assert S.constraint_mode(b.bind(temperature=0)) == S.constraint_mode(b.with_retry()) == "lenient"
    gone = weakref.ref(b)
    del b
    gc.collect()
    assert gone() is None and len(S._NO_SCHEMA._weak) == 0


def test_an_endpoint_that_refuses_stop_is_called_again_without_it():
    """OpenAI's reasoning models refuse `stop` (a 400: "Unsupported parameter: 'stop' is not
    supported with this model."): the call goes again without it, and that model is not sent
    it again; a proxy that refuses `max_tokens` too gets both dropped, one refusal each. The
    answer is still read to its first line. **Was a bug** (until 2026-12-03): every call failed
    with the 400, so no method ran on such a model."""
    from langchain_openai import ChatOpenAI

    from ragraphs.errors import LLMError
    from ragraphs.graphs.vanilla import build_vanilla_graph
    from ragraphs.state.types import make_passage
    from ragraphs.tools.llm import complete

    def refuse(*params):
        def respond(body, headers):
            for p in params:
                if p in body:
                    return 400, {"error": {"message": f"Unsupported parameter: '{p}' is not supported with this model.",
                                           "type": "invalid_request_error", "param": p}}
            return 200, chat_completion("Paris\n\nParis is the capital of France, on the Seine.", body["model"], 5, 9)
        return respond

    server = ChatEndpoint(refuse("stop"))
    try:
        o4 = ChatOpenAI(model="o4-mini", api_key="x", base_url=server.url, max_retries=0)
        assert complete(o4, "Question: capital of France?\nAnswer:", stop=["Question:"]).text.startswith("Paris")
        assert complete(o4, "Q", stop=["Question:"]).text.startswith("Paris")
        corpus = LexicalRetriever([make_passage("France", "Paris is the capital of France.")])
        graph = build_vanilla_graph(Components(llm=o4, retriever=corpus))
        assert graph.invoke({"question": "What is the capital of France?"})["answer"] == "Paris"
        assert complete(o4.bind(temperature=0), "Q", stop=["Question:"]).text.startswith("Paris")  # however wrapped
    finally:
        server.close()
    assert ["stop" in b for b in server.bodies] == [True, False, False, False, False]
    both = ChatEndpoint(refuse("max_tokens", "stop"))
    try:
        proxied = ChatOpenAI(model="o4-mini", api_key="x", base_url=both.url, max_retries=0)
        assert complete(proxied, "Q", stop=["Question:"], max_tokens=5).text.startswith("Paris")
        assert complete(proxied, "Q", stop=["Question:"], max_tokens=5).text.startswith("Paris")
    finally:
        both.close()
    assert [("max_tokens" in b, "stop" in b) for b in both.bodies] == [(True, True), (False, True), (False, False),
                                                                        (False, False)]
    # a 400 of another kind that names no refused parameter is raised, not retried
    other = ChatEndpoint(lambda body, h: (400, {"error": {"message": "The prompt is too long to stop here.",
                                                          "type": "invalid_request_error"}}))
    try:
        with pytest.raises(LLMError, match="too long"):
            complete(ChatOpenAI(model="o4-mini", api_key="x", base_url=other.url, max_retries=0), "Q", stop=["Q:"])
    finally:
        other.close()
    assert len(other.bodies) == 1


def test_an_o_series_model_made_from_a_spec_drops_the_temperature_its_endpoint_refuses(monkeypatch):
    """``--llm openai:o4-mini``: OpenAI's o-series take only their default temperature (a 400:
    "Unsupported value: 'temperature' does not support 0.0 with this model"). The model made from
    the spec is called again without it, and not sent it again. **Was a bug** (until 2026-12-03):
    every call failed. A temperature you set on a model of your own is yours: its refusal is raised."""
    from langchain_openai import ChatOpenAI

    from ragraphs.errors import LLMError
    from ragraphs.tools.llm import complete, make_llm

    def respond(body, headers):
        if "temperature" in body and body["temperature"] != 1:
            return 400, {"error": {"message": f"Unsupported value: 'temperature' does not support {body['temperature']} "
                                              "with this model. Only the default (1) value is supported.",
                                   "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}
        return 200, chat_completion("1832", body["model"], 5, 2)

    server = ChatEndpoint(respond)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("RAGRAPHS_LLM_RETRIES", "0")
    try:
        o4 = make_llm("openai:o4-mini-temperature-test")
        assert complete(o4, "When was Gustave Eiffel born?").text == "1832"
        assert complete(o4, "Again?").text == "1832"
        with pytest.raises(LLMError, match="does not support 0"):
            complete(ChatOpenAI(model="o4-mini", api_key="x", base_url=server.url, max_retries=0, temperature=0), "Q")
    finally:
        server.close()
    assert ["temperature" in b for b in server.bodies] == [True, False, False, True]


def test_openai_compatible_calls_found_in_review(monkeypatch):
    """Review of 2026-11-30: a user's own ChatOpenAI at a local server gets `max_tokens` too
    (llama-cpp-python's server ignores `max_completion_tokens`); a reasoning model's inline
    thinking is not the answer; a reply without usage counts its output; a bad
    RAGRAPHS_LLM_TIMEOUT is refused; a model without OPENAI_BASE_URL names the default endpoint."""
    from langchain_openai import ChatOpenAI

    from ragraphs.errors import ConfigError
    from ragraphs.tools.llm import complete, make_llm, model_label

    def respond(body, headers):
        return 200, chat_completion("<think>\nthe capital... France\n</think>\nParis", body["model"])  # no usage

    server = ChatEndpoint(respond)
    try:
        mine = ChatOpenAI(model="local", api_key="x", base_url=server.url, max_retries=0, max_tokens=7)
        out = complete(mine, "Question: capital of France?\nAnswer:")
        complete(mine, "Question: capital of France?\nAnswer:", max_tokens=5)
    finally:
        server.close()
    assert server.bodies[0]["max_tokens"] == 7 and server.bodies[1]["max_tokens"] == 5
    assert out.text == "Paris" and out.output_tokens >= 1
    # thinking the token limit cut before it closed is no answer
    def thinking(body, h):
        reply = chat_completion("<think>\nOkay, the user asks about", body["model"], 5, 5)
        reply["choices"][0]["finish_reason"] = "length"  # the limit cut the thinking before it closed
        return 200, reply

    cut = ChatEndpoint(thinking)
    # the endpoint from OPENAI_BASE_URL alone (langchain-openai leaves openai_api_base empty then)
    monkeypatch.setenv("OPENAI_BASE_URL", cut.url)
    try:
        env_model = ChatOpenAI(model="local", api_key="x", max_retries=0)
        assert complete(env_model, "Question: capital of France?\nAnswer:", max_tokens=5).text == ""
    finally:
        cut.close()
    assert cut.bodies[0]["max_tokens"] == 5
    assert cut.url in model_label(env_model)
    monkeypatch.delenv("OPENAI_BASE_URL")

    # a proxy of OpenAI's models that refuses `max_tokens`: the call is made again without it, and
    # that model is not sent it again
    def strict(body, headers):
        if "max_tokens" in body:
            return 400, {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                              "Use 'max_completion_tokens' instead.", "type": "invalid_request_error"}}
        return 200, chat_completion("Paris", body["model"], 5, 1)

    proxy = ChatEndpoint(strict)
    try:
        reasoning = ChatOpenAI(model="o4-mini", api_key="x", base_url=proxy.url, max_retries=0)
        assert complete(reasoning, "Q", max_tokens=5).text == "Paris"
        assert complete(reasoning, "Q", max_tokens=5).text == "Paris"
    finally:
        proxy.close()
    assert ["max_tokens" in b for b in proxy.bodies] == [True, False, False]
    # the thinking's shapes: a block the template opened, repeated blocks; a reply that merely
    # starts with a tag and was not cut is an answer
    from ragraphs.tools.llm import without_thinking

    assert without_thinking("Okay, the user asks about France.\n</think>\n\nParis") == "Paris"
    assert without_thinking("<think>a</think><think>b</think>Paris") == "Paris"
    assert without_thinking("<reasoning> is an XML tag") == "<reasoning> is an XML tag"
    assert without_thinking("<think>cut before it closed", cut=True) == ""
    # a model make_llm built for a server other than OpenAI's gets max_tokens per call, and the
    # retry without it holds for it too (its own extra_body no longer carries the limit)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://res.openai.azure.com/openai/v1")
    assert getattr(make_llm("openai:gpt-5-mini", max_tokens=32), "extra_body", None) in (None, {})
    monkeypatch.delenv("OPENAI_BASE_URL")
    for bad in ("0", "-5", "nan"):
        monkeypatch.setenv("RAGRAPHS_LLM_TIMEOUT", bad)
        with pytest.raises(ConfigError, match="RAGRAPHS_LLM_TIMEOUT"):
            make_llm("openai:some-model")
    monkeypatch.delenv("RAGRAPHS_LLM_TIMEOUT")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    assert "api.openai.com" in model_label(ChatOpenAI(model="m", api_key="x"))
