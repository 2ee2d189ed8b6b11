"""The retrieval evaluator as a LangChain document compressor.

:class:`JudgeCompressor` re-ranks a retriever's documents with a judge that reads the question
and each document together (the shipped cross-encoder evaluator, CRAG's), and drops those under
the judge's own relevance cut. It is a ``BaseDocumentCompressor``, so it serves where LangChain
takes one, such as a ``ContextualCompressionRetriever``::

    from langchain_classic.retrievers import ContextualCompressionRetriever
    from ragraphs.tools.judges.compressor import JudgeCompressor

    retriever = ContextualCompressionRetriever(base_compressor=JudgeCompressor(top_n=3),
                                               base_retriever=vectorstore.as_retriever(search_kwargs={"k": 20}))

A document is read as the judges read a passage (its metadata's ``title``, a new line, its
text), and comes back with its score in ``metadata["relevance_score"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ConfigDict, PrivateAttr

from ...errors import ConfigError
from .core import judge_for, own_threshold, passage_text


class JudgeCompressor(BaseDocumentCompressor):
    """Re-rank documents by a judge's score for the query; keep the best ``top_n`` (None: all)
    whose score reaches ``threshold``.

    ``judge``: None for the shipped evaluator (or ``RAGRAPHS_RERANKER`` / ``RAGRAPHS_JUDGES_DIR``
    when set), a judges directory or CrossEncoder path or cached name, a sentence-transformers
    ``CrossEncoder``, or any object with ``score_batch(pairs)``. ``threshold``: ``"judge"`` for
    the judge's own relevance cut (the shipped evaluator's is -0.05, the cut CRAG's Incorrect
    action uses; a judge without one keeps every document), a number, or None for none."""

    judge: Any = None
    top_n: int | None = 3
    threshold: float | str | None = "judge"
    model_config = ConfigDict(arbitrary_types_allowed=True)
    _loaded: Any = PrivateAttr(default=None)

    def model_post_init(self, __context: Any) -> None:
        if self.top_n is not None and self.top_n < 1:
            raise ConfigError(f"top_n must be at least 1 (or None for all), got {self.top_n}")
        if isinstance(self.threshold, str) and self.threshold != "judge":
            raise ConfigError(f"threshold must be a number, 'judge' or None, got {self.threshold!r}")

    def _judge(self) -> Any:
        if self._loaded is None:
            self._loaded = judge_for("evaluator", self.judge)
        return self._loaded

    def scores(self, documents: Sequence[Document], query: str) -> list[float]:
        """The judge's score of each document for ``query``, in the documents' order."""
        if not documents:
            return []
        pairs = [(query, passage_text({"title": str(d.metadata.get("title") or ""), "text": d.page_content}))
                 for d in documents]
        return [float(s) for s in self._judge().score_batch(pairs)]

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        docs = list(documents)
        scores = self.scores(docs, query)
        cut = own_threshold(self._judge(), float("-inf")) if self.threshold == "judge" else self.threshold
        order = sorted(range(len(docs)), key=lambda i: -scores[i])  # stable: ties keep the retriever's order
        kept = [i for i in order if cut is None or scores[i] >= float(cut)][: self.top_n]
        return [Document(page_content=docs[i].page_content, id=docs[i].id,
                         metadata={**docs[i].metadata, "relevance_score": scores[i]}) for i in kept]
