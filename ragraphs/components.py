"""The heavy parts a graph runs with, built once and shared by every run of the graph.

A :class:`Components` holds the user's own objects where given (a LangChain chat model,
embeddings, vector store or retriever, web search, judges) and otherwise builds the
embedded defaults lazily, once: the Gemma GGUF, MiniLM and the persistent Chroma store.
Nodes receive it from their graph's factory and read the run's settings from
``runtime.context``; nothing is rebuilt per call.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from typing import TYPE_CHECKING, Any, cast

from langchain_core.language_models import BaseLanguageModel

from .errors import ConfigError
from .settings import default_store_path
from .tools.llm import make_llm
from .tools.vectorstore import ChromaCorpus, Retriever
from .tools.user_retriever import CheckedRetriever, LangChainRetriever
from .tools.websearch import as_web_search

if TYPE_CHECKING:  # the types a user's objects are checked against; nothing imported at run time
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool
    from langchain_core.vectorstores import VectorStore

    from .tools.websearch import WebSearch


def _searches_our_way(obj: Any) -> bool:
    """Whether ``obj`` has ragraphs' ``search(query, k, mode)`` or the batch ``search_many``."""
    return isinstance(obj, Retriever) or hasattr(obj, "search_many")


def _langchain_search(obj: Any) -> bool:
    """Whether ``obj`` searches the LangChain way (a vector store, whose own ``search`` takes a
    search type and not ragraphs' ``(query, k, mode)``, or a retriever), not ragraphs' way."""
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import VectorStore

    if isinstance(obj, (VectorStore, BaseRetriever)):
        return True
    return not _searches_our_way(obj) and (hasattr(obj, "invoke") or hasattr(obj, "similarity_search"))


def _given(obj: Any) -> str:
    """What a wrong object is, for an error line: a string quoted, a class named as one."""
    if isinstance(obj, str):
        return f"the string {obj[:80]!r}"
    if isinstance(obj, type):
        return f"the class {obj.__name__} (not an instance of it)"
    return type(obj).__name__


def _check_parts(llm: Any, embeddings: Any, vectorstore: Any) -> None:
    """The user's LLM, embeddings and vector store checked when the Components is built: a wrong
    one failed only at its first use, with an error that did not name it (a bare AttributeError
    in ERM4's first memory write, an LLMError that read like a server failure) until 2026-11-30.
    Wrappers (``bind``, ``with_retry``, ``with_fallbacks``, ``configurable_fields``) are Runnables
    and pass."""
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable
    from langchain_core.vectorstores import VectorStore

    if llm is not None:
        if isinstance(llm, str):  # it failed at the first call, as if the network were down
            raise ConfigError(f"llm must be a LangChain chat or completion model, got the string {llm!r}; for a "
                              "model spec such as 'openai:gpt-4o-mini' set the run's `llm` setting, or build the "
                              "model with ragraphs.tools.llm.make_llm(spec)")
        runs = isinstance(llm, (BaseLanguageModel, Runnable)) or callable(getattr(llm, "invoke", None))
        if isinstance(llm, type) or not runs:
            raise ConfigError(f"llm must be a LangChain chat or completion model instance (or a Runnable with "
                              f"invoke); got {_given(llm)}")
    if embeddings is not None and (isinstance(embeddings, type) or not all(
            callable(getattr(embeddings, m, None)) for m in ("embed_query", "embed_documents"))):
        raise ConfigError(f"embeddings must be a LangChain Embeddings instance (with embed_query and "
                          f"embed_documents); got {_given(embeddings)}; leave it out for the embedded MiniLM")
    if vectorstore is not None and (isinstance(vectorstore, type) or not (
            isinstance(vectorstore, (VectorStore, BaseRetriever))
            or any(callable(getattr(vectorstore, m, None)) for m in ("similarity_search", "invoke")))):
        hint = ("; a folder of ragraphs' own store is store_path=" if isinstance(vectorstore, (str, os.PathLike))
                else "; add Documents to a vector store first, e.g. InMemoryVectorStore(embeddings).add_documents(docs)"
                if isinstance(vectorstore, (list, tuple)) else "")
        raise ConfigError(f"vectorstore must be a LangChain VectorStore or BaseRetriever instance; got "
                          f"{_given(vectorstore)}{hint}")


class Components:
    """The parts a graph runs with; every argument is optional (keyword only), and what is left
    out is built lazily, once, on first use.

    - ``llm``: a LangChain chat model, a completion model (``BaseLLM``) or a Runnable with
      ``invoke`` (``bind``, ``with_retry``, ``with_fallbacks`` wrappers); it wins over the
      run's ``llm`` setting, which builds one by :func:`make_llm` when none is given.
    - ``embeddings``: LangChain ``Embeddings`` (``embed_query``, ``embed_documents``) for the
      Chroma store and ERM4's reservoir; default the embedded MiniLM.
    - ``retriever``: ragraphs' :class:`Retriever` (``search(query, k, mode)`` or the batch
      ``search_many``), or a LangChain retriever or vector store (wrapped).
    - ``vectorstore``: a LangChain ``VectorStore`` or ``BaseRetriever``, searched through an
      adapter; ``retriever`` wins when both are given. With neither, the Chroma store.
    - ``store_url`` / ``store_path``: the Chroma store: a Chroma server's URL wins over a
      folder; with neither, :func:`default_store_path` (``$RAGRAPHS_HOME/chroma``, by default
      ``~/.ragraphs/chroma``).
      ``collection``: the Chroma collection (default ``ragraphs``); ``create_collection``:
      False makes a missing store or collection a :class:`ConfigError` naming those there.
    - ``web_search``: a backend with ``search(query, k)``, or a LangChain retriever or tool
      (wrapped); it wins over the ``web`` setting and ``RAGRAPHS_WEB``.
    - ``judges``: by role, ``evaluator``, ``pair``, ``nli``: a model folder or cached model
      name (loaded on first use), an object with ``score_batch`` (the pair role: or
      ``score_pair`` / ``score_pairs``), or a sentence-transformers ``CrossEncoder`` (the
      evaluator only); a role left out gets :func:`load_default_judge`'s (the shipped one
      unless ``RAGRAPHS_JUDGES_DIR`` or, for the evaluator, ``RAGRAPHS_RERANKER`` names
      another); an unknown role is a :class:`ConfigError`.
    - ``extra``: parts the nodes look up by name: ``fetcher`` (CRAG's and ERM4's page
      fetcher, with ``fetch(url)`` as :class:`PageFetcher`'s) and ``reservoir`` (ERM4's
      Memory Knowledge Reservoir, as :class:`Reservoir`); the nodes also keep their web
      backends here (``web_backends``).

    The LLM, embeddings, vector store and judges are checked here (a wrong one is a
    :class:`ConfigError`), a ``retriever`` of your own at its first use."""

    def __init__(
        self,
        *,
        llm: BaseLanguageModel | Runnable | None = None,  # a chat model, a completion model (BaseLLM), a wrapper
        embeddings: Embeddings | None = None,
        retriever: Retriever | BaseRetriever | VectorStore | None = None,
        vectorstore: VectorStore | BaseRetriever | None = None,
        store_path: str | None = None,
        store_url: str | None = None,
        collection: str = "ragraphs",
        create_collection: bool = True,
        web_search: WebSearch | BaseRetriever | BaseTool | None = None,
        judges: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
    ):
        _check_parts(llm, embeddings, vectorstore)
        self._llm: Any = llm
        self._embeddings = embeddings
        self._embeddings_given = embeddings is not None
        self._retriever = retriever
        self._vectorstore = vectorstore
        self._users_corpus = retriever is not None or vectorstore is not None
        self.store_path = store_path
        self.store_url = store_url
        self.collection = collection
        # False: a missing Chroma store or collection is a ConfigError naming the ones there
        # (the command line's ask, chat and replay), not a new empty one
        self.create_collection = create_collection
        self.web_search = as_web_search(web_search)  # a LangChain retriever or tool is wrapped
        self.judges: dict[str, Any] = {}
        if judges:
            from .tools.judges.core import JUDGES, as_judge  # a CrossEncoder of the user's is wrapped

            unknown = sorted(set(judges) - set(JUDGES))
            if unknown:  # a mistyped role would leave the shipped judge in its place, unnoticed
                raise ConfigError(f"unknown judge role(s) {', '.join(map(repr, unknown))}; the roles are "
                                  f"{', '.join(JUDGES)}")
            self.judges = {role: as_judge(role, j) for role, j in judges.items()}
        # what the user gave, by role, as given (``judges`` also caches loaded defaults): what a run records
        self.given_judges: dict[str, Any] = dict(self.judges)
        self.extra: dict[str, Any] = dict(extra or {})
        self._lock = threading.RLock()
        self._checked: dict[str, tuple[Any, Any]] = {}  # role -> (judge, the judge as the nodes read it)

    # the LLM: the user's model wins over the context's spec
    def llm(self, spec: str | None = None, max_tokens: int = 64) -> BaseLanguageModel:
        if self._llm is not None:
            return self._llm
        return make_llm(spec, max_tokens=max_tokens)

    @property
    def embeddings(self):
        with self._lock:
            if self._embeddings is None:
                from .tools.embeddings import MiniLMEmbeddings

                self._embeddings = MiniLMEmbeddings()
            return self._embeddings

    @property
    def retriever(self) -> Retriever:
        """The retriever: the user's, an adapter over the user's vector store, or Chroma."""
        with self._lock:
            if self._retriever is None:
                if self._vectorstore is not None:
                    self._retriever = LangChainRetriever(self._vectorstore)
                else:
                    self._retriever = ChromaCorpus(
                        None if self.store_url else (self.store_path or default_store_path()),
                        url=self.store_url,
                        collection=self.collection,
                        # none given: the store's own MiniLM (int8, or the float one of `ingest --exact`)
                        embeddings=self._embeddings if self._embeddings_given else None,
                        create=self.create_collection,
                    )
            elif _langchain_search(self._retriever):
                self._retriever = LangChainRetriever(self._retriever)
            elif not _searches_our_way(self._retriever):
                raise ConfigError(
                    "retriever must be a LangChain retriever or vector store, or have search(query, k, mode) "
                    f"or search_many(queries, k, mode); got {type(self._retriever).__name__}"
                )
            elif type(self._retriever).__module__.split(".")[0] != "ragraphs":
                # a user's own: its signature checked here, its hits read as passages (Documents, no ids)
                self._retriever = CheckedRetriever(self._retriever)
            return cast(Retriever, self._retriever)  # or one with only the batch search_many, which nodes prefer

    def corpus_name(self) -> str | None:
        """A name for the corpus this retrieves from that stays the same across processes, for
        what is kept per corpus (ERM4's reservoir): the Chroma store (its folder or server) and
        collection, as ``chroma-<collection>-<hash>``; None for a retriever or vector store of the
        user's, whose identity is not known here."""
        if self._users_corpus:
            return None
        where = self.store_url or os.path.abspath(self.store_path or default_store_path())
        digest = hashlib.sha1(f"{where}\n{self.collection}".encode("utf-8")).hexdigest()[:10]
        # letters, digits, '_' and '-' only: a LangGraph store's namespace refuses a '.' (wiki.en)
        return f"chroma-{re.sub(r'[^A-Za-z0-9_-]', '_', self.collection)}-{digest}"

    def judge(self, name: str):
        """A judge by name ("evaluator", "pair", "nli"): the user's (an object, or a model path or
        name loaded here once), else the shipped default."""
        with self._lock:
            if name not in self.judges or isinstance(self.judges[name], (str, os.PathLike)):
                from .tools.judges.core import judge_for

                self.judges[name] = judge_for(name, self.judges.get(name), embeddings=self.embeddings)
            judge, got = self.judges[name], self._checked.get(name)
            if got is None or got[0] is not judge:  # a judge of the user's: each score checked where it is read
                from .tools.judges.checked import checked_judge

                self._checked[name] = got = (judge, checked_judge(name, judge))
            return got[1]

    def reranker(self, spec: str):
        """The judge a ``rerank`` setting names (None for ``none``; ``evaluator``: this graph's
        evaluator), loaded once per Components. A folder or model that cannot be loaded is a
        :class:`ConfigError` that names the setting."""
        from .setting_values import rerank_name

        spec = rerank_name(spec)
        if spec == "none":
            return None
        if spec == "evaluator":
            return self.judge("evaluator")
        key = f"evaluator@{spec}"
        with self._lock:
            if key not in self.judges:
                from .errors import ConfigError
                from .tools.judges import load_judge

                try:
                    self.judges[key] = load_judge("evaluator", spec)
                except ConfigError as e:  # "judge model not found: X" named no setting until 2026-11-30 (night)
                    raise ConfigError(f"run setting 'rerank': {e} (or 'evaluator', or 'none')") from e
            return self.judges[key]

    def load_judges(self, ctx: Any = None) -> None:
        """Load the judges a run of ``ctx``'s settings reads: a method's evaluator (the shipped
        roles share one model: the pair and NLI views are free) and the ``rerank`` setting's
        re-ranker. A judge that cannot be loaded is a :class:`ConfigError` (``eval`` calls this
        before its first question: each question failed on it, until 2026-12-03)."""
        if ctx is not None and type(ctx).__name__ not in ("RAGContext", "ChatContext"):
            self.judge("evaluator")
        if ctx is not None:  # a re-ranker folder or name too (loaded in the first question until 2026-11-30, night)
            self.reranker(str(getattr(ctx, "rerank", "none")))

    def warm_up(self, ctx: Any = None) -> float:
        """Load what a run of ``ctx``'s settings will surely use, before its clock starts: the
        retriever's query embedder, its BM25 index (``bm25`` or ``hybrid`` retrieval) and title
        index (``link_question``, DR-RAG's ``link_expand``), the evaluator's cross-encoder (a
        method's settings), the ``rerank`` setting's re-ranker and, unless the run skips generation, the
        LLM. Returns the seconds it took. Only a retriever already built or given is touched (no
        store is opened here). The indexes and the judges were built inside the first node until
        2026-11-30. A failure is left to show up, recorded, in the run itself."""
        t0 = time.perf_counter()
        try:
            retriever: Any = self._retriever
            if retriever is not None and hasattr(retriever, "embed_queries"):
                retriever.embed_queries(["warm up"])
            if retriever is not None and ctx is not None:
                modes = {getattr(ctx, "retrieval", "dense"), getattr(ctx, "second_retrieval", "same")}
                if modes & {"bm25", "hybrid"} and callable(getattr(retriever, "bm25", None)):
                    retriever.bm25()
                links = getattr(ctx, "link_question", False) or int(getattr(ctx, "link_expand", 0) or 0) > 0
                if links and callable(getattr(retriever, "title_index", None)):
                    retriever.title_index()
            self.load_judges(ctx)
            if ctx is not None and not getattr(ctx, "skip_generation", False):
                llm = self.llm(getattr(ctx, "llm", None), max_tokens=int(getattr(ctx, "max_new_tokens", 64)))
                if hasattr(llm, "_load"):
                    llm._load()
        except Exception:  # the run meets it again and reports it where it happens
            pass
        return time.perf_counter() - t0


_DEFAULT: Components | None = None
_DEFAULT_LOCK = threading.Lock()


def server_store() -> dict[str, str | None]:
    """The store a LangGraph server's graphs search, as its environment names it: a Chroma
    server (``RAGRAPHS_STORE_URL``, else the embedded store under ``RAGRAPHS_HOME``) and its
    collection (``RAGRAPHS_COLLECTION``); a blank value (spaces too) reads as unset."""
    return {"store_url": os.environ.get("RAGRAPHS_STORE_URL", "").strip() or None,
            "collection": os.environ.get("RAGRAPHS_COLLECTION", "").strip() or None}


def default_components() -> Components:
    """The process-wide Components with the embedded defaults, its Chroma store and collection
    read from the environment (:func:`server_store`: ``RAGRAPHS_STORE_URL``, else the store
    under ``RAGRAPHS_HOME``; ``RAGRAPHS_COLLECTION``, else ``ragraphs``), built on first call.
    Every ``build_*_graph`` called without components uses it, and so do the module-level
    graphs (Studio, ``langgraph.json``)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            # a LangGraph server's graphs are configured by the environment (server_store)
            store = server_store()
            _DEFAULT = Components(store_url=store["store_url"], collection=store["collection"] or "ragraphs")
        return _DEFAULT
