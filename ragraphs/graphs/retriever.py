"""A method's retrieval as a LangChain retriever.

:func:`method_retriever` runs a method's graph up to the documents it would hand its LLM and
returns them as LangChain ``Document``s, so that DR-RAG's cascade, CRAG's corrected and refined
knowledge or ERM4's filtered passages serve in any chain that takes a retriever::

    from ragraphs.graphs.retriever import method_retriever

    retriever = method_retriever("dr-rag", components, k=4)
    docs = retriever.invoke("Who directed the film that won ...?")
    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm

The graph runs with ``skip_generation``: the answer's LLM call is left out, and the calls a
method makes on its way to the documents are not (CRAG's keyword rewrite on its Incorrect and
Ambiguous routes, ERM4's Query Rewriter+, MIGRES's loop; vanilla and DR-RAG make none). A
``Document`` carries the passage's ``id``, ``title``, ``source`` (``corpus``, ``web``,
``memory``), ``score`` and, for a web page, ``url`` in its metadata, in the method's order.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ..errors import ConfigError
from . import build_graph, method_context
from ._common import nested_run


def passage_document(p: dict) -> Document:
    """A passage as a LangChain ``Document`` (its ``meta`` entries join the metadata)."""
    metadata = {**(p.get("meta") or {}), "id": p.get("id"), "title": p.get("title", ""),
                "source": p.get("source", ""), "score": p.get("score")}
    return Document(page_content=p.get("text", ""), metadata=metadata, id=p.get("id") or None)


class MethodRetriever(BaseRetriever):
    """The documents a method's ``graph`` hands its LLM for a query, as a LangChain retriever.

    ``context`` is the method's run settings; generation is skipped whatever it says. Build one
    with :func:`method_retriever`."""

    graph: Any
    context: Any
    method: str = ""
    model_config = ConfigDict(arbitrary_types_allowed=True)

    def _run_context(self) -> Any:
        return replace(self.context, skip_generation=True)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        # inside a graph's step under a checkpointer: checkpoints only when the method stops early
        out = self.graph.invoke({"question": query}, config={"callbacks": run_manager.get_child()},
                                context=self._run_context(), **nested_run())
        return [passage_document(p) for p in out.get("passages") or []]

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        out = await self.graph.ainvoke({"question": query}, config={"callbacks": run_manager.get_child()},
                                       context=self._run_context(), **nested_run())
        return [passage_document(p) for p in out.get("passages") or []]


def method_retriever(method: str, components: Any = None, **settings: Any) -> MethodRetriever:
    """A retriever that runs ``method`` (``vanilla``, ``crag``, ``dr-rag``, ``erm4``, ``migres``)
    over ``components`` (the embedded defaults when None) with the run ``settings`` (``k=4``,
    ``strategy="cfs"``, ...); a :class:`ConfigError` for an unknown method or setting."""
    if method == "none":
        raise ConfigError("method 'none' answers without retrieving: it has no documents to return")
    return MethodRetriever(graph=build_graph(method, components), context=method_context(method, settings), method=method,
                           tags=[f"ragraphs:{method}"])
