"""A method as a LangChain tool (``ragraphs.graphs.tool.method_tool``): the answer and its
numbered sources as the tool message, the answer, passages and counts (or the final state) as
its artifact, called with a tool call and by LangGraph's prebuilt agent."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from fakes import ScriptedChat, small_corpus
from ragraphs.components import Components
from ragraphs.errors import ConfigError
from ragraphs.graphs.tool import method_tool, tool_message

DOCS = [("Lima", "Lima is the capital and largest city of Peru."), ("Cusco", "Cusco is a city in the Peruvian Andes.")]


def _components(answer="Lima"):
    return Components(llm=ScriptedChat(script=lambda prompt: answer), retriever=small_corpus(DOCS))


def test_the_tool_answers_with_numbered_sources_and_keeps_the_state():
    tool = method_tool("vanilla", _components(), k=2)
    assert tool.name == "ask_vanilla" and set(tool.args) == {"question"}
    call = {"name": "ask_vanilla", "args": {"question": "What is the capital of Peru?"}, "id": "call-1", "type": "tool_call"}
    msg = tool.invoke(call)  # a model's tool call, as an agent's tool node hands it over
    assert isinstance(msg, ToolMessage) and msg.tool_call_id == "call-1"
    answer, sources = msg.content.split("\n\nSources:\n")
    assert answer == "Lima"
    titles = [p["title"] for p in msg.artifact["passages"]]
    assert sources.splitlines() == [f"[{i}] {t}: {dict(DOCS)[t]}" for i, t in enumerate(titles, 1)]
    assert sorted(titles) == ["Cusco", "Lima"] and msg.artifact["llm_calls"] == 1
    assert "trace" not in msg.artifact and msg.artifact["answer"] == "Lima"  # brief: an agent's thread keeps it
    # async, as an async agent calls it
    content, state = asyncio.run(tool.coroutine("What is the capital of Peru?"))
    assert content == msg.content and state["answer"] == "Lima"
    whole = method_tool("vanilla", _components(), k=2, artifact="state").invoke(call)
    assert whole.artifact["trace"] and whole.content == msg.content


def test_a_blank_question_goes_back_to_the_model_and_sources_show_their_address():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langgraph.prebuilt import create_react_agent

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    blank = {"name": "ask_vanilla", "args": {"question": "  "}, "id": "c1", "type": "tool_call"}
    model = ToolCallingFake(messages=iter([AIMessage(content="", tool_calls=[blank]), AIMessage(content="Sorry.")]))
    out = create_react_agent(model, tools=[method_tool("vanilla", _components(), k=1)]).invoke(
        {"messages": [HumanMessage("?")]})  # the graph's InputError ended the agent's run until 2026-11-30
    reply = out["messages"][2]
    assert isinstance(reply, ToolMessage) and "the question is empty" in reply.content
    assert out["messages"][-1].content == "Sorry."
    web = {"answer": "Lima", "passages": [{"title": "Peru", "text": "Lima.", "meta": {"url": "https://x.org/peru"}},
                                          {"title": "Notes", "text": "Cusco.", "meta": {"path": "/docs/notes.md"}},
                                          {"title": "Guide", "text": "Puno.", "meta": {"path": "/docs/guide.pdf", "page": 3}}]}
    assert tool_message(web).splitlines()[-3:] == ["[1] Peru (https://x.org/peru): Lima.", "[2] Notes (/docs/notes.md): Cusco.",
                                                   "[3] Guide (/docs/guide.pdf, page 3): Puno."]  # the page since 2026-12-02


def test_a_prebuilt_agent_calls_the_tool_and_answers_from_it():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langgraph.prebuilt import create_react_agent

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):  # the agent binds its tools; the script already calls them
            return self

    call = {"name": "handbook", "args": {"question": "What is the capital of Peru?"}, "id": "c1", "type": "tool_call"}
    model = ToolCallingFake(messages=iter([AIMessage(content="", tool_calls=[call]),
                                           AIMessage(content="The capital of Peru is Lima [1].")]))
    tool = method_tool("vanilla", _components(), name="handbook", description="Answers questions about Peru.", k=1)
    agent = create_react_agent(model, tools=[tool])
    out = agent.invoke({"messages": [HumanMessage("What is the capital of Peru?")]})
    kinds = [type(m).__name__ for m in out["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert out["messages"][2].content.startswith("Lima\n\nSources:\n[1] ")
    assert out["messages"][-1].content == "The capital of Peru is Lima [1]."


def test_tool_message_cuts_long_sources_and_errors():
    long = {"answer": " x ", "passages": [{"title": "T", "text": "w " * 400}]}
    text = tool_message(long, source_chars=20)
    assert text.startswith("x\n\nSources:\n[1] T: ") and text.endswith("...") and len(text.splitlines()[-1]) == len("[1] T: ") + 23
    assert tool_message({"answer": "", "passages": []}) == "(no answer)"
    with pytest.raises(ConfigError, match="method 'vanilla' has no setting 'kk'"):
        method_tool("vanilla", _components(), kk=2)
    for bad in ("ask docs", "ask_café", "a" * 65):  # OpenAI's tool calling refuses these at the first call
        with pytest.raises(ConfigError, match="a tool name is 1 to 64 ASCII letters"):
            method_tool("vanilla", _components(), name=bad)
    with pytest.raises(ConfigError, match="artifact is 'brief' or 'state'"):
        method_tool("vanilla", _components(), artifact="all")



def test_the_no_retrieval_tool_says_it_reads_no_documents():
    """An agent picks a tool by its description: the ``none`` method's says it reads no documents
    (it claimed "from the documents ... numbered sources" until 2026-12-03); a method that
    retrieves keeps its own, and a description given wins."""
    none = method_tool("none", _components())
    assert "reading no documents" in none.description and "sources" not in none.description
    assert "from the documents with dr-rag" in method_tool("dr-rag", _components()).description
    assert method_tool("none", _components(), description="Trivia.").description == "Trivia."
    msg = none.invoke({"name": none.name, "args": {"question": "What is the capital of Peru?"}, "id": "1", "type": "tool_call"})
    assert msg.content == "Lima" and msg.artifact["passages"] == []


@pytest.mark.slow
def test_dr_rag_as_a_tool_on_the_real_stack(data_dir, minilm, gemma):
    """Gemma 3 270M, MiniLM, the shipped judges and the real HotpotQA sample."""
    from ragraphs.datasets import load_dataset, pooled_passages
    from ragraphs.tools.vectorstore import InMemoryCorpus

    exs = load_dataset(str(data_dir / "hotpotqa.sample.jsonl"), "hotpotqa", limit=5)
    corpus = InMemoryCorpus(pooled_passages(exs), embeddings=minilm)
    tool = method_tool("dr-rag", Components(llm=gemma, retriever=corpus, embeddings=minilm), k=4)
    msg = tool.invoke({"name": "ask_dr_rag", "args": {"question": exs[0].question}, "id": "c1", "type": "tool_call"})
    answer, sources = msg.content.split("\n\nSources:\n")
    passages = msg.artifact["passages"]
    assert answer.strip() and msg.artifact["llm_calls"] == 1 and 1 <= len(passages) <= 4
    lines = sources.splitlines()
    assert len(lines) == len(passages)
    assert all(line.startswith(f"[{i}] {p['title']}: ") for i, (line, p) in enumerate(zip(lines, passages), 1))
