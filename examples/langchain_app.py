"""Embed a ragraphs graph in a LangChain app, with your own model, embeddings and vector store.

Runs offline on the embedded defaults::

    python examples/langchain_app.py                 # vanilla RAG
    python examples/langchain_app.py --method crag   # any method: none, vanilla, crag, dr-rag, erm4, migres

What it shows:

1. your own parts: a LangChain chat model (here the embedded Gemma; any ``BaseChatModel``,
   e.g. ``ChatOpenAI``, works the same), LangChain embeddings and a LangChain vector store
   (``InMemoryVectorStore`` holding a few questions of the bundled sample corpus), passed to
   ``build_<method>_graph`` through :class:`ragraphs.components.Components`, plus a SQLite
   checkpointer for per-user threads;
2. the compiled graph is a LangChain ``Runnable``: a step in an LCEL chain
   (``question -> graph -> answer``) with ``.invoke``, ``.batch``, ``.stream`` and
   ``.ainvoke`` (async code takes an async checkpointer: ``open_async_checkpointer``); run
   settings go in with ``.bind(context=...)``;
3. a thread per user: ``.with_config(configurable={"thread_id": ...})`` keeps each run's
   checkpoints, readable with ``graph.get_state_history`` or ``ragraphs history``;
4. a method as the retriever of your own chain: ``method_retriever("dr-rag", ...)`` hands
   DR-RAG's documents to your prompt and your model (``retrieval_chain``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from ragraphs.checkpoint import open_async_checkpointer, open_checkpointer
from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.graphs import METHODS, build_graph, get_context_class
from ragraphs.graphs.retriever import MethodRetriever, method_retriever
from ragraphs.tools.embeddings import MiniLMEmbeddings
from ragraphs.tools.llm import make_llm


def sample_documents(n_questions: int = 3) -> tuple[list[Document], list]:
    """The paragraphs of the first questions of the bundled sample, as LangChain documents."""
    path = resources.files("ragraphs") / "data" / "sample" / "hotpotqa_sample.jsonl"
    examples = load_dataset(str(path), "hotpotqa", limit=n_questions)
    docs = [  # the id as the Document's own (what a store keeps and ragraphs reads first), and in metadata
        Document(id=p["id"], page_content=p["text"], metadata={"title": p["title"], "id": p["id"], "source": "corpus"})
        for p in pooled_passages(examples)
    ]
    return docs, examples


def build_app(method: str = "vanilla", *, llm=None, embeddings=None, vectorstore=None, checkpointer=None, k: int = 3, **settings):
    """The app's pieces: the compiled graph over the user's parts, the graph with its run
    settings bound (``k`` and any other setting of the method's context), and an LCEL chain
    ``str -> answer`` with the graph as its middle step."""
    llm = llm if llm is not None else make_llm("gemma", max_tokens=32)
    embeddings = embeddings if embeddings is not None else MiniLMEmbeddings()
    if vectorstore is None:
        vectorstore = InMemoryVectorStore(embeddings)
        vectorstore.add_documents(sample_documents()[0])
    components = Components(llm=llm, embeddings=embeddings, vectorstore=vectorstore)
    graph = build_graph(method, components, checkpointer=checkpointer)
    if method == "crag":
        settings.setdefault("web", "none")  # no web search unless the app asks for one
    if method == "erm4":  # its memory of this corpus, apart from any other corpus's (the shared 'default')
        settings.setdefault("reservoir_collection", "langchain-app-sample")
    context = get_context_class(method)(k=k, **settings)
    # run settings for every call through the chain; in a chain's .stream the graph hands on its
    # whole state ("values": a graph streams node updates by default, and the next step read
    # {"generate": ...} for the state: KeyError 'answer' until 2026-12-01)
    rag = graph.bind(context=context, stream_mode="values")
    chain: Runnable[Any, str] = RunnableLambda(lambda q: {"question": q}) | rag | RunnableLambda(lambda s: s["answer"].strip())
    return graph, rag, chain


# one worked example and an open "Answer:", so that a base model such as the embedded Gemma
# continues with an answer (without the example it repeats "Answer:"); a chat model reads it
# as an instruction
PROMPT = ChatPromptTemplate.from_messages(
    [("human", "Answer each question from its context, in a few words.\n\n"
               "Context:\nLima: Lima is the capital and largest city of Peru.\n\n"
               "Question: What is the capital of Peru?\nAnswer: Lima\n\n"
               "Context:\n{context}\n\nQuestion: {question}\nAnswer:")]
)


def context_text(docs: list[Document]) -> str:
    return "\n\n".join(f"{d.metadata['title']}: {d.page_content}" for d in docs)


def first_line(text: str) -> str:
    return next((line.strip() for line in text.strip().splitlines() if line.strip()), "")


def retrieval_chain(method: str, *, llm, embeddings, vectorstore, k: int = 3, **settings) -> tuple[MethodRetriever, Runnable]:
    """Your own RAG chain, with a method's documents: ``question -> {context, question} -> your
    prompt -> your model -> text``. The method's retriever skips the method's own answer."""
    components = Components(llm=llm, embeddings=embeddings, vectorstore=vectorstore)
    retriever = method_retriever(method, components, k=k, **settings)
    as_context: Runnable[list[Document], str] = RunnableLambda(context_text)
    chain = ({"context": retriever | as_context, "question": RunnablePassthrough()}
             | PROMPT | llm | StrOutputParser() | RunnableLambda(first_line))
    return retriever, chain


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="vanilla", choices=list(METHODS))  # refused before the models load
    ap.add_argument("--checkpoints", default=None, help="SQLite file for the threads (default: a temporary file)")
    args = ap.parse_args(argv)

    docs, examples = sample_documents()
    embeddings = MiniLMEmbeddings()
    store = InMemoryVectorStore(embeddings)
    store.add_documents(docs)
    db = args.checkpoints or str(Path(tempfile.mkdtemp()) / "app-threads.sqlite")
    graph, rag, chain = build_app(args.method, embeddings=embeddings, vectorstore=store, checkpointer=open_checkpointer(db))
    questions = [ex.question for ex in examples[:2]]

    # threads: every call of a checkpointed graph names its thread
    def for_user(user: str):
        return chain.with_config(configurable={"thread_id": f"{args.method}-{user}"})

    print("invoke:", for_user("ada").invoke(questions[0]))
    print("batch: ", chain.batch(questions, [{"configurable": {"thread_id": f"batch-{i}"}} for i in range(len(questions))]))
    print("stream (node by node):")
    for update in rag.stream({"question": questions[1]}, {"configurable": {"thread_id": "stream-1"}}, stream_mode="updates"):
        for node, change in update.items():
            print(f"  {node}: {sorted(k for k in (change or {}) if k != 'trace')}")

    # async code uses an async checkpointer (aiosqlite here; a PostgreSQL URL works the same)
    async def async_part():
        async with open_async_checkpointer(db) as saver:
            _, _, achain = build_app(args.method, embeddings=embeddings, vectorstore=store, checkpointer=saver)
            return await achain.with_config(configurable={"thread_id": f"{args.method}-bob"}).ainvoke(questions[1])

    print("ainvoke:", asyncio.run(async_part()))
    # the chain as one branch of a parallel step
    both = RunnableParallel(rag=chain, n_words=RunnableLambda(lambda q: len(q.split())))
    print("parallel:", both.with_config(configurable={"thread_id": "parallel-1"}).invoke(questions[0]))
    steps = list(graph.get_state_history({"configurable": {"thread_id": f"{args.method}-ada"}}))
    print(f"thread {args.method}-ada has {len(steps)} checkpoints in {db}")
    # DR-RAG's documents in a chain of your own (its retriever makes no LLM call)
    retriever, own = retrieval_chain("dr-rag", llm=make_llm("gemma", max_tokens=32), embeddings=embeddings, vectorstore=store)
    print("dr-rag documents:", [d.metadata["title"] for d in retriever.invoke(questions[0])])
    print("your chain:", own.invoke(questions[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
