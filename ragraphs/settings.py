"""Run settings (the graphs' ``context_schema``) and where ragraphs keeps its data: one dataclass
per method (:class:`RAGContext` for the baselines, :class:`CRAGContext`, :class:`DRRAGContext`,
:class:`ERM4Context`, :class:`MIGRESContext`), here, below the nodes, so that nodes read them
(``ctx = context_of(runtime, XContext)``) without importing a graph module (which re-export them)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from .errors import ConfigError
from .setting_values import (  # noqa: F401  re-exported: ragraphs.settings is where callers find them
    NamesChecked, fetch_allow_private_field, fetch_max_bytes_field, fetch_timeout_field, rerank_field, web_field,
    check_setting_names as check_setting_names, check_shared_settings as check_shared_settings,
    check_values as check_values, context_from as context_from, context_in as context_in,
    describe_settings as describe_settings, parse_settings as parse_settings, settings_for as settings_for,
    web_spec_error as web_spec_error, schema_bounds,
)


def data_dir() -> Path:
    """Root for stores, reservoirs and checkpoints: ``$RAGRAPHS_HOME`` or ``~/.ragraphs``."""
    return Path(os.environ.get("RAGRAPHS_HOME") or Path.home() / ".ragraphs").expanduser()


def default_store_path() -> str:
    return str(data_dir() / "chroma")


@dataclass(kw_only=True)
class RAGContext(metaclass=NamesChecked):
    """Settings of one run, shared by every method (Studio shows these as the run's context).

    Method graphs subclass this with their own thresholds and limits.
    """

    llm: str = field(default="gemma", metadata={"description": "model spec: gemma | llamacpp:PATH | openai:MODEL | openai-completion:MODEL | "
                                                "fake:TEXT; a model given to Components(llm=...) is used instead"})
    k: int = field(default=4, metadata={"description": "passages retrieved per query (DR-RAG: documents handed to the LLM)", "minimum": 1})
    retrieval: Literal["dense", "bm25", "hybrid"] = field(
        default="dense", metadata={"description": "first-stage retrieval: dense (MiniLM) | bm25 | hybrid (both, fused)"}
    )
    max_new_tokens: int = field(default=32, metadata={"description": "tokens the generator may write", "minimum": 1})
    max_passage_chars: int = field(default=1200, metadata={"description": "characters per passage in a prompt", "minimum": 1})
    cut_asides: bool = field(
        default=True,
        metadata={"description": "cut an answer at its first parenthesis when words come before it: "
                  "'John Crockett (1753 – after 1802)' -> 'John Crockett' (false: keep the answer as written)"},
    )
    whole_answer: bool = field(default=False, metadata={"description": "keep the model's whole answer, every line, not its first line "
                               "cut to 300 characters (a chat model that answers in paragraphs; raise max_new_tokens too)"})
    skip_generation: bool = field(default=False, metadata={"description": "stop before the final answer (retrieval-only evaluation)"})
    rerank: str = rerank_field("re-ranker of the retrieved candidates: none | evaluator (the graph's evaluator judge: the shipped "
                               "cross-encoder unless Components' judges or RAGRAPHS_RERANKER name another) | a CrossEncoder path or name")
    rerank_depth: int = field(default=20, metadata={"description": "candidates retrieved for the re-ranker to choose the k passages from"})
    link_question: bool = field(
        default=False,
        metadata={"description": "title links: among link_depth candidates, those whose title the query (the question; "
                  "ERM4, MIGRES: each query) names come first (needs a retriever with a title index: the Chroma "
                  "store, in-memory corpora; not in the papers)"},
    )
    link_depth: int = field(default=20, metadata={"description": "title links: candidates searched for a title the question names"})

    def __post_init__(self) -> None:
        check_values(self)


@dataclass(kw_only=True)
class ChatContext(RAGContext):
    """Settings of the chat graph (``ragraphs.graphs.chat``): which method answers each user
    message, the shared settings above, and the method's own settings by name. A shared setting
    equal to its default here is not passed on, and the method's own default runs: k=4 for ERM4
    or MIGRES, or retrieval=dense, rerank_depth=20 or link_question=false for DR-RAG, has no
    effect; give such a value in ``settings``."""

    method: str = field(default="vanilla", metadata={"description": "the method that answers each user message: none | vanilla | "
                        "crag | dr-rag | erm4 | migres, or one added to METHODS (checked against it when a message is read)",
                        "json_schema_extra": {"examples": ["none", "vanilla", "crag", "dr-rag", "erm4", "migres"]}})
    settings: dict[str, Any] = field(default_factory=dict, metadata={
        "description": 'the method\'s own settings by name, e.g. {"web": "ddg"} for crag or {"strategy": "sm"} for dr-rag '
                       '(checked when a message is answered); a shared setting equal to its default above is not passed '
                       'on (the method\'s own default runs), so {"k": 4} for migres goes here',
        "json_schema_extra": {"default": {}},  # Studio's form showed no default until 2026-12-02
        "check": lambda v: None if isinstance(v, dict) else "must be an object of the method's settings"})
    follow_up: Literal["alone", "rewrite"] = field(
        default="alone",
        metadata={"description": "alone: each message is answered as written | rewrite: from the second turn on, the "
                  "LLM first rewrites it into a question that stands alone (one more call a turn; not measured: no "
                  "conversational benchmark here)"},
    )
    history_turns: int = field(default=3, metadata={"description": "rewrite: the earlier turns it reads", "minimum": 1})


# ---------------------------------------------------------------- per method
# The paper's thresholds for its T5-large evaluator on PopQA (Appendix B).
PAPER_UPPER, PAPER_LOWER = 0.59, -0.9
# The same rule (`ragraphs calibrate-crag`, unit=question, alpha=1) fitted for the shipped
# cross-encoder evaluator (2026-11-28: a student of four seeds of the recipe of 2026-11-27, which
# trained on the training files, the HotpotQA, 2Wiki and MuSiQue dev files and, twice, the PopQA
# dev half 0) on the PopQA dev questions it was not trained on (popqa.dev.jsonl@1/2, 253
# questions, pooled corpus of the whole file, dense top-4): upper 0.1927 (90% bootstrap
# [0.19, 0.28]); the strip cut by the same rule on the retrieved documents' strips labelled by
# holding a gold answer (1,533 strips): 0.8266. The lower cut is the evaluator's own relevance
# cut (-0.0499, cross-fitted on the multi-hop dev files; `calibrate-crag --lower judge`):
# Incorrect when no retrieved document is judged relevant. The rule would put it at 0.157 (for
# the judge of 2026-11-27, -0.9769), since 8 of those 253 retrievals missed. Over the whole
# PopQA file (bench/crag_lower_replay.py), -0.05 gave the EM / F1 / accuracy of -0.9769 (n =
# 499) and sent 353 of 498 withheld-gold misses to Incorrect. Earlier cuts: docs/crag.md.
CALIBRATED_UPPER, CALIBRATED_LOWER, CALIBRATED_STRIP = 0.19, -0.05, 0.83


@dataclass(kw_only=True)
class CRAGContext(RAGContext):
    """CRAG's run settings: the paper's defaults (Appendix B); upper, strip cuts by its rule, lower the judge's own."""

    upper: float = field(
        default=CALIBRATED_UPPER,
        metadata={"description": "Correct when any document's evaluator score is above this (paper: 0.59)"},
    )
    lower: float = field(
        default=CALIBRATED_LOWER,
        metadata={"description": "Incorrect when every document's evaluator score is below this; default: the "
                                 "shipped evaluator's relevance cut, so no document judged relevant (paper: -0.9)"},
    )
    strip_top_k: int = field(default=5, metadata={"description": "knowledge strips kept by refinement", "minimum": 1})
    strip_threshold: float = field(
        default=CALIBRATED_STRIP,
        metadata={"description": "strips must score above this to be kept (the best one is kept when none does; paper: -0.5)"},
    )
    strip_sentences: int = field(default=3, metadata={"description": "sentences per strip for documents longer than two",
                                                      "minimum": 1})
    web: str = web_field("web search")
    web_k: int = field(default=5, metadata={"description": "web results used (Wikipedia pages first)", "minimum": 1})
    web_timeout: float = field(default=10.0, metadata={"description": "seconds one web search may take", "range": (0.01, 3600)})
    fetch_pages: bool = field(default=True, metadata={"description": "fetch result URLs and extract their text"})
    fetch_timeout: float = fetch_timeout_field()
    fetch_max_bytes: int = fetch_max_bytes_field()
    fetch_allow_private: bool = fetch_allow_private_field()
    rewrite_max_tokens: int = field(default=24, metadata={"description": "tokens the query rewriter may write", "minimum": 1})
    web_fallback: Literal["internal", "none"] = field(
        default="internal",
        metadata={"description": "Incorrect route with no web results: internal (refine the retrieved documents) | none"},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if float(self.lower) > float(self.upper):  # the two rules would contradict (accepted until 2026-11-30)
            raise ConfigError(f"run settings: lower ({self.lower:g}) is above upper ({self.upper:g}); lower <= upper")


@dataclass(kw_only=True)
class DRRAGContext(RAGContext):
    """DR-RAG settings. ``k`` is the most documents handed to the LLM (the paper's top-k)."""

    strategy: Literal["sm", "qdc", "cis", "cfs"] = field(
        default="cfs",
        metadata={"description": "sm: top-k | qdc: query-document concatenation | cis: inverse selection | cfs: forward selection"},
    )
    retrieval: Literal["dense", "bm25", "hybrid"] = field(
        default="hybrid", metadata={"description": "first-stage candidate retrieval: dense (MiniLM), bm25, or hybrid (both, fused)"}
    )
    second_retrieval: Literal["same", "dense", "bm25", "hybrid"] = field(
        default="same", metadata={"description": "second-stage retrieval for the <q, d_i> queries; same = retrieval"}
    )
    fusion_k: int | None = field(
        default=60,
        metadata={"description": "hybrid fusion: reciprocal rank, score = sum 1/(fusion_k + rank) over the dense and BM25 "
                                 "lists; none = the retriever's own hybrid mode", "minimum": 1},
    )
    rerank: str = rerank_field("re-ranker of both stages' candidates: none | evaluator (the graph's evaluator judge: the shipped "
                               "cross-encoder unless Components' judges or RAGRAPHS_RERANKER name another) | a CrossEncoder directory or name")
    rerank_depth: int = field(
        default=30, metadata={"description": "candidate depth: first-stage candidates retrieved for the re-ranker"}
    )
    second_rerank: Literal["question", "concat", "none"] = field(
        default="question",
        metadata={"description": "second-stage candidates scored against the question, q + d_i, or kept in order (needs a rerank)"},
    )
    k1: int | None = field(
        default=None, metadata={"description": "static-relevant documents of the first stage (default ceil(k/2); "
                                "larger values are read as k, and k leaves no place for a second stage)", "minimum": 1})
    k2: int = field(default=10, metadata={"minimum": 1,
        "description": "second-stage candidates retrieved per <q, d_i> query, the depth searched for an accepted "
                       "partner (the paper retrieves k2 = k - k1 per query; here the budget stays k - k1)"})
    pair_threshold: float | None = field(default=None, metadata={
        "description": "pair cut: the classifier accepts C(q, d_i, d') >= this, in [0, 1] (default: calibrated on the dev files)", "range": (0.0, 1.0)})
    pair_tokens: int = field(
        default=96,
        metadata={"description": "tokens the pair classifier reads per (q, d1, d2), the room shared by d1 and d2, each "
                  "cut at its end (96, with concat_chars 300: recall@4 95.5 / 98.2 / 66.1 on the dev files against "
                  "95.5 / 96.7 / 65.8 at 112 / 400, retrieval 25-46 ms faster, bench/results/dr_rag_speed/); 0 = the "
                  "model's 256, d2 cut first"},
    )
    pick: Literal["first", "best"] = field(
        default="best",
        metadata={"description": "CFS: per d_i, the best scored accepted candidate (default: +2 recall points on the dev "
                  "files, bench/dr_rag_sweep.py) or the first accepted in (re-ranked) order (Eq. 4)"},
    )
    fill: bool = field(
        default=True,
        metadata={"description": "CFS: fill the rest of the k budget with the next re-ranked first-stage candidates (SM's)"},
    )
    extra_partners: bool = field(
        default=True,
        metadata={"description": "CFS: a budget a static document leaves open (no partner accepted) goes to the other "
                  "accepted second-stage candidates, best scored first, before the fill (Algorithm 1 keeps every "
                  "accepted document)"},
    )
    concat_chars: int = field(
        default=300,
        metadata={"description": "characters of d_i appended to the query in the second stage (0: all; 300: q + d_i inside the "
                  "128 word pieces MiniLM was trained on, each query embedded in less time; recall as with 400 on the dev "
                  "and training files, bench/results/dr_rag_speed/; 400 as with 1000, bench/results/dr_rag_concat_chars/)"},
    )
    link_question: bool = field(
        default=True,
        metadata={"description": "title links, first stage: candidates whose title the question names (among "
                  "the first stage's candidates of the run's `retrieval` mode, at least link_depth of them; not SM) "
                  "become the static documents first (not in the paper)"},
    )
    link_expand: int = field(
        default=2,
        metadata={"description": "title links, second stage: up to this many passages whose title d_i names join d_i's "
                  "candidates (needs a retriever with a title index: the Chroma store, in-memory corpora; 0 = off; 2 "
                  "since 2026-11-29: recall@4 as with 5 on the HotpotQA and 2Wiki dev files, MuSiQue +0.5, and at "
                  "about tenfold MuSiQue's fall 6.4 -> 5.2 points on that day's machine, 7.0 since 2026-11-30's same-page fix; "
                  "bench/results/dr_rag_link_expand_scale/)"},
    )
    link_bonus: float = field(
        default=1.0,
        metadata={"description": "title links, CFS / CIS: added to C(q, d_i, d') when d_i names d''s title (1.0: a linked page "
                  "is always accepted and ranks above unlinked ones; with bridge_bonus 0.3, recall@4 95.5 / 96.7 / 65.8 "
                  "on the dev files against 92.5 / 93.3 / 64.8 at 0.3 / 0.1, bench/results/dr_rag_retune/; 0 = the "
                  "paper's classifier alone)"},
    )
    expand_bonus: float | None = field(
        default=None,
        metadata={"description": "title links, CFS / CIS: the link bonus of a candidate that only the second stage's "
                  "title link brought (link_expand), not its retrieval; none = link_bonus (a page d_i names is "
                  "accepted whether retrieval found it or not)"},
    )
    link_hub_share: float = field(
        default=0.005,
        metadata={"description": "title links, CFS / CIS: no bonus for a hub, a page that more than this share of the corpus's "
                  "passages (and more than 5) name, such as a country: neither the link bonus nor, through its name, the "
                  "bridge bonus (1 = every named page earns them)"},
    )
    bridge_bonus: float = field(
        default=0.3,
        metadata={"description": "CFS / CIS: added to C(q, d_i, d') when d_i and d' share a capitalised name the question "
                  "does not hold, the bridge entity, other than a hub's title (see link_hub_share; since 2026-11-28, "
                  "bench/results/dr_rag_pooled_all/) (0.3: the best MuSiQue row of bench/results/dr_rag_retune/; "
                  "0 = the classifier alone; not in the paper)"},
    )
    answer_prompt: Literal["paper", "reader"] = field(
        default="reader",
        metadata={"description": "the one LLM call's prompt: the reader prompt vanilla RAG uses (reader; EM 10.0 -> "
                  "15.6% over the first 30 questions of the three multi-hop dev files) | the paper's Table 9 shape (paper)"},
    )


@dataclass(kw_only=True)
class ERM4Context(RAGContext):
    """ERM4's run settings, with the paper's defaults where it gives them (sections 4.1, 6)."""

    k: int = field(default=5, metadata={"description": "external knowledge per outside query (paper: n=5 in section 6)",
                                        "minimum": 1})
    tau: float = field(
        default=0.6,
        metadata={"description": "Retrieval Trigger: match threshold (title cosine, or evaluator score); the paper's 0.6, "
                  "kept after measuring 0.475-1.0 on the 48 2Wiki dev questions with similar questions "
                  "(bench/erm4_efficiency.py, n = 48: external knowledge -44%, non-LLM time -44%, hit rate kept; "
                  "-51% and -55% on 2026-11-24)"},
    )
    trigger: Literal["title", "evaluator"] = field(
        default="title", metadata={"description": "Retrieval Trigger match: title cosine (paper) | evaluator judge on title+content"}
    )
    trigger_candidates: int = field(default=10, metadata={
        "description": "evaluator trigger: entries pre-selected by title cosine per query (at least theta: popularity is counted among them)", "minimum": 1})
    theta: int = field(
        default=1, metadata={"description": "Retrieval Trigger: popularity threshold, inside when >= theta (paper: 3)", "minimum": 1}
    )
    memory_k: int = field(default=10, metadata={"description": "reservoir entries used per inside query (best first)", "minimum": 1})
    max_queries: int = field(default=3, metadata={"description": "queries kept from the rewriter (its schema writes at most 3, as the paper's)", "range": (1, 3)})
    include_question_query: bool = field(default=False, metadata={"description": "also search with the original question (not in the paper)"})
    rewrite_max_tokens: int = field(default=80, metadata={"description": "tokens the rewriter may write", "minimum": 1})
    max_knowledge: int = field(
        default=10, metadata={"description": "knowledge instances (mixed order) passed to the filter and reader (paper: 30)", "minimum": 1}
    )
    filter: Literal["judge", "llm", "none"] = field(
        default="judge", metadata={"description": "Knowledge Filter: judge (filter_judge's) | llm (the paper's NLI prompt) | none"}
    )
    filter_judge: Literal["nli", "evaluator"] = field(
        default="evaluator", metadata={"description": "judge filter role: nli (knowledge entails question) | evaluator (relevance)"}
    )
    filter_threshold: float | None = field(
        default=0.5,
        metadata={"description": "judge filter: keep when the judge's score is >= this (None: the judge's own cut, its "
                  "`thresholds` entry: for the shipped judges the cuts cross-fitted on the dev files, for a train-judge "
                  "output the validation cut); 0.5 for the evaluator from bench/erm4_filter_threshold.py on 2Wiki+HotpotQA dev (F1 0.70, 2.3 kept per question)",
                  "range": (-1.0, 1.0)},  # the judges' scales: [-1, 1] (evaluator), [0, 1] (NLI); 7 dropped every passage until 2026-12-03
    )
    hypothesis: Literal["strong", "weak"] = field(default="strong", metadata={"description": "llm filter: strong (contains answers) or weak (possibly aids)"})
    answer_question: Literal["rewritten", "original"] = field(default="rewritten", metadata={"description": "which question the reader answers (paper: rewritten)"})
    external: Literal["corpus", "web", "both"] = field(
        default="corpus", metadata={"description": "external knowledge: the vector store, web search, or both"}
    )
    web: str = web_field("web search for external=web|both")
    web_timeout: float = field(default=10.0, metadata={"description": "seconds one web search may take", "range": (0.01, 3600)})
    fetch_pages: bool = field(default=True, metadata={"description": "web: fetch result URLs and use the page text"})
    fetch_timeout: float = fetch_timeout_field()
    fetch_max_bytes: int = fetch_max_bytes_field()
    fetch_allow_private: bool = fetch_allow_private_field()
    use_memory: bool = field(default=True, metadata={"description": "use the Memory Knowledge Reservoir and trigger"})
    update_memory: bool = field(default=True, metadata={"description": "store kept knowledge in the reservoir"})
    memory_recheck: bool = field(default=True, metadata={"description": "an inside query whose memory the filter drops all of "
                                 "is searched outside after all (not in the paper: it answered without knowledge)"})
    reservoir: Literal["file", "store"] = field(
        default="file",
        metadata={"description": "where the Memory Knowledge Reservoir lives: file (a SQLite file, reservoir_path) | store "
                  "(the graph's LangGraph store, a LangGraph server's or build_erm4_graph(c, store=...); it needs a "
                  "vector index with MiniLM on 'title'; no eviction)"},
    )
    reservoir_path: str = field(default="", metadata={"description": "reservoir SQLite file (default $RAGRAPHS_HOME/erm4/reservoir.sqlite3)"})
    reservoir_collection: str = field(default="", metadata={"description": "reservoir collection name (empty: one per "
        "corpus, the Chroma store and collection read, so one corpus's memory never answers for another; 'default' (shared, warned) for yours)"})
    reservoir_max_entries: int = field(default=10000, metadata={
        "description": "reservoir bound: least recently used entries beyond it are evicted by this run's writes (0: none)"})
    rerank: str = rerank_field("re-ranker of each outside query's corpus candidates, scored against that query, k kept for the "
                               "Knowledge Filter (web results are not re-ranked): none | evaluator | a CrossEncoder path or name")
    rerank_depth: int = field(default=20, metadata={"description": "corpus candidates per outside query the re-ranker reads (below k: k)"})


@dataclass(kw_only=True)
class MIGRESContext(RAGContext):
    """MIGRES run settings (paper defaults from Table 12 where they carry over).

    The relevance and NLI thresholds are in the scales of ragraphs' judges (evaluator in
    [-1, 1], NLI entailment probability in [0, 1]), not the paper's BGE-reranker logits
    (3.0 for multi-hop, 5.0 for ODQA, 0.0 for commonsense QA). Left at None, each one is the
    judge's own cut (its ``threshold``, its ``thresholds`` entry: for the shipped judges the cuts
    cross-fitted on the dev files, for a train-judge output the validation cut), 0.0 / 0.5 for
    a judge without one.
    """

    k: int = field(default=8, metadata={"description": "passages retrieved per query (paper: 50; fewer for a CPU)",
                                        "minimum": 1})
    max_passage_chars: int = field(default=600, metadata={"description": "characters per passage in a prompt", "minimum": 1})
    max_iterations: int = field(
        default=5, metadata={"description": "iteration guard: 5 multi-hop/commonsense QA, 3 open-domain QA (Table 12); "
                             "at most 10, the graph's cap; larger values run 10", "minimum": 1}
    )
    max_queries: int = field(default=3, metadata={"description": "new queries per iteration, at most (its schema writes 3)", "range": (1, 3)})
    max_passages: int = field(default=5, metadata={"description": "passages read per iteration (Table 12: 5)", "minimum": 1})
    passage_threshold: float | None = field(
        default=None, metadata={"description": "passage relevance threshold (evaluator score); None: the judge's own"}
    )
    sentence_threshold: float | None = field(
        default=None, metadata={"description": "sentence relevance threshold; None: the passage threshold"}
    )
    knowledge_prompting: bool = field(default=True, metadata={"description": "ask the LLM for knowledge when no passage survives"})
    stop_when_exhausted: bool = field(
        default=True,
        metadata={"description": "answer as soon as the Query Generator has no query that was not asked before (a "
                  "repeated query only brings back what was read) instead of iterating to the guard (False: the paper)"},
    )
    stop_after_fallbacks: int = field(
        default=2,
        metadata={"description": "with stop_when_exhausted: also answer when the Query Generator has proposed no new "
                  "query of its own this many iterations in a row (each time the loop fell back to the missing "
                  "information as its query); 0 = never"},
    )
    nli_threshold: float | None = field(
        default=None, metadata={"description": "entailment probability a statement needs; None: the NLI judge's own", "range": (0.0, 1.0)}
    )
    answer_with: Literal["main", "reader"] = field(
        default="reader",
        metadata={"description": "who writes the answer once the Main Module judges the question answerable: the reader "
                  "prompt over reader_evidence (one more LLM call; EM +6.7 points on each multi-hop dev file, n=30, "
                  "when it read the statements) | the Main Module's own answer (main, the paper)"},
    )
    reader_evidence: Literal["followups", "passages", "gathered"] = field(
        default="followups",
        metadata={"description": "what the reader reads: followups = the question's own top reader_question_passages "
                  "retrieved passages (unfiltered, as vanilla reads them), then the passages the loop's own "
                  "queries found and kept, max_passages in all: vanilla's passages unless the missing-information "
                  "queries found something (the default since 2026-11-27: EM +2.3 / F1 +1.8 on the 300 dev "
                  "questions, +0.8 / +0.6 on 258 training questions, against passages; "
                  "bench/results/migres_reader_followups_2026_11_27/) | passages = the same, with every kept "
                  "passage, the question's first retrieval's too (2026-11-25 to 2026-11-27) | gathered = the Leaf "
                  "Module's statements, the kept passages and the LLM's knowledge (before 2026-11-25)"},
    )
    reader_question_passages: int = field(
        default=4, metadata={"description": "with reader_evidence=followups or passages: the question's own top "
                             "retrieved passages the reader reads first (vanilla's k)"},
    )
    reader_question_chars: int = field(
        default=1200, metadata={"description": "with reader_evidence=followups or passages: characters of each of "
                                "the question's own top passages in the reader's prompt (vanilla's 1,200; the "
                                "loop's passages keep max_passage_chars); 0 = max_passage_chars (the reader before "
                                "2026-11-27, night). Replayed over 558 questions with the shipped judge: "
                                "bench/results/migres_reader_question_chars/"},
    )
    shorten_answers: bool = field(
        default=True,
        metadata={"description": "when the final answer reads as a sentence (more than 3 words and a verb such as "
                  "'is', 'was' or 'born'), one more LLM call cuts it to the short phrase it names"},
    )
    shorten_to_span: bool = field(
        default=True,
        metadata={"description": "the answer cut must write words of the answer (up to 8), or yes / no when the "
                  "question asks yes or no: a grammar holds llama.cpp models to it, other models' cuts are "
                  "checked and the answer kept when the cut is neither (false: the cut writes freely, as "
                  "before 2026-11-27, night)"},
    )
    shorten_not_question: bool = field(
        default=True,
        metadata={"description": "a cut that only restates a phrase of the question (\"the 404 area code\" for "
                  "\"... the state with the 404 area code?\") is refused and the reader's answer stays as it is; a "
                  "phrase the question offers as a choice, next to \"or\", is not refused (the default since "
                  "2026-11-28; false: the cut before)"},
    )
    shorten_answer_type: bool = field(
        default=True,
        metadata={"description": "a cut that writes only a date or a number (\"1975\", \"in 1955\") for a question "
                  "that asks for a place or a person (\"Where did the band form ...?\", \"Who ...?\") is refused and "
                  "the reader's answer stays as it is (the default since 2026-11-28; false: the cut before)"},
    )
    judge_max_tokens: int = field(default=48, metadata={"description": "tokens the Main Module may write", "minimum": 1})
    leaf_max_tokens: int = field(default=80, metadata={"description": "tokens the Leaf Module may write", "minimum": 1})
    query_max_tokens: int = field(default=64, metadata={"description": "tokens the Query Generator may write", "minimum": 1})
    knowledge_max_tokens: int = field(default=64, metadata={"description": "tokens knowledge prompting may write", "minimum": 1})
    rerank: str = rerank_field("re-ranker of each query's candidates, scored against that query, k kept: the question's own are "
                               "the reader's first passages (reader_question_passages), unfiltered; the Knowledge Filter scores "
                               "the rest again with its evaluator: none | evaluator | a CrossEncoder path or name")
    rerank_depth: int = field(default=20, metadata={"description": "candidates per query the re-ranker reads (below k: k)"})


schema_bounds(RAGContext, ChatContext, CRAGContext, DRRAGContext, ERM4Context, MIGRESContext)  # for Studio's forms
ContextT = TypeVar("ContextT")


def context_of(runtime: Any, cls: type[ContextT]) -> ContextT:
    """The run's context for a node of a graph whose settings are ``cls``, read once per node
    (:func:`ragraphs.setting_values.context_in`: defaults, another method's settings refused,
    a parent graph's context or a dict read for the settings of ``cls`` it names)."""
    return context_in(getattr(runtime, "context", None), cls, RAGContext)
