"""``stream_mode="messages"`` carries the answer's tokens only.

A chat UI (Studio's chat view, an SDK client) shows what this stream holds. The methods' own
working (MIGRES's leaf extractions, Main Module verdicts, queries and generated knowledge,
ERM4's Rewriter+, CRAG's keyword rewrite, the filters' NLI decisions) is tagged ``nostream``;
until 2026-11-30 it streamed before the answer, as JSON.
"""

from __future__ import annotations

import pytest

from fakes import ConstJudge, LexicalRetriever, OverlapJudge, RaisingWeb, ScriptedChat
from ragraphs import Components
from ragraphs.graphs import build_graph
from ragraphs.state import make_passage

CORPUS = [
    make_passage("Paris", "Paris is the capital and largest city of France."),
    make_passage("Seine", "The Seine is a river that flows through Paris in France."),
    make_passage("Lima", "Lima is the capital and largest city of Peru."),
]
QUESTION = "Which river flows through the capital of France?"
ANSWER_NODES = {"generate", "backoff", "final_answer", "reader_answer"}
CONTEXTS = {
    "erm4": {"use_memory": False, "filter": "llm"},  # the Rewriter+ and the NLI filter ask the LLM
    "crag": {"web_fallback": "internal", "upper": 2.0, "lower": 1.5},  # Incorrect: the keyword rewrite runs
    "migres": {"knowledge_prompting": True},
}


def _reply(prompt: str) -> str:
    if "missing_information" in prompt:  # the Main Module never commits: queries, knowledge, the guard
        return '{"answer": "unanswerable", "missing_information": "the river of Paris"}'
    return "the Seine"


@pytest.mark.parametrize("method", ["vanilla", "crag", "dr-rag", "erm4", "migres"])
def test_only_the_answer_streams_as_messages(method, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRAPHS_HOME", str(tmp_path))
    llm = ScriptedChat(script=_reply)
    judges = {"evaluator": OverlapJudge("evaluator"), "nli": OverlapJudge("nli"), "pair": ConstJudge(0.9)}
    web = RaisingWeb() if method == "crag" else None  # a backend at hand: CRAG writes its keyword queries
    g = build_graph(method, Components(llm=llm, retriever=LexicalRetriever(CORPUS), judges=judges, web_search=web))
    streamed = [(meta.get("langgraph_node"), chunk.content) for chunk, meta in
                g.stream({"question": QUESTION}, context=CONTEXTS.get(method, {}), stream_mode="messages")]
    calls = len(llm.prompts)
    assert streamed and {node for node, _ in streamed} <= ANSWER_NODES, streamed
    assert not any("{" in str(text) for _, text in streamed)
    if method in ("crag", "erm4", "migres"):
        assert calls > len(streamed)  # decisions were made, and none of them streamed
