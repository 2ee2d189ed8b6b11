"""Run one method over a list of benchmark questions and score it.

Every method runs the same way: its graph is built once per run with
:func:`ragraphs.graphs.build_graph`, its context once from the method's context class, and
each question is one ``graph.invoke``. Per question the runner keeps the prediction, the
passages handed to the generator, the state's counters, the time inside each node (the sum
of the trace's ``elapsed_s`` per node), the time of the nodes that made no LLM call
(``retrieval_s``: retrieval, reranking, selection, web search; the summary's
``retrieval_ms_avg``) and the time outside all nodes (wall time minus the node times: the
orchestration overhead).

With an output directory, each finished question is appended to ``results.jsonl`` at once,
so an interrupted run loses at most the question in flight, and a re-run with the same
directory skips the questions already answered (questions that failed are tried again).
A question that raises is recorded with its error and the run goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Iterable

from ..errors import ConfigError, redact
from ..tools.reservoir import close_reservoir
from .metrics import answer_scores, gold_found, passage_matches
from .records import RUN_RESERVOIR, Recorder, open_results, read_results, refuse_another_run, run_sources  # noqa: F401  (read_results: used by bench and tests)
from .records import build_context as build_context  # the CLI, remote runs and tests import it from here
from .provenance import provenance
from .summary import stage_recall, summarize  # noqa: F401  (summarize: used by bench and tests)

ORACLE = "oracle"


@dataclass
class RunSpec:
    """One configuration to evaluate: a method and the settings that differ from its defaults."""

    method: str
    k: int | None = None
    strategy: str | None = None
    retrieval: str | None = None
    retrieval_only: bool = False
    llm: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    withhold_gold: bool = False  # each question's gold paragraphs withheld from the corpus

    def __post_init__(self) -> None:
        """A setting with a field of its own moves into it: ``--set k=4`` is ``--k 4`` (and
        ``llm``, ``retrieval``, ``strategy``; ``skip_generation=true`` is ``--retrieval-only``),
        so one configuration has one label, one results folder and one place in the grid. Until
        2026-12-02 ``--set k=4`` ran in a folder of its own, and ``--set skip_generation=true``
        scored the answers it never wrote (EM, F1 and accuracy 0). Two values of one setting are
        a :class:`ConfigError`, as the command line refuses them."""
        settings = dict(self.settings)
        if isinstance(settings.get("skip_generation"), bool):  # another value: the context's check names it
            skip = settings.pop("skip_generation")
            if self.retrieval_only and not skip:
                raise ConfigError("retrieval_only=True and the setting skip_generation=false give skip_generation "
                                  "two values; give one of them")
            self.retrieval_only = self.retrieval_only or skip
        for name in ("k", "strategy", "retrieval", "llm"):
            if name not in settings:
                continue
            value, own = settings.pop(name), getattr(self, name)
            if own is not None and own != value:
                raise ConfigError(f"{name}={own!r} and the setting {name}={value!r} give {name} two values; "
                                  "give one of them")
            setattr(self, name, value)
        self.settings = settings

    @property
    def graph_method(self) -> str:
        return "vanilla" if self.method == ORACLE else self.method

    @property
    def label(self) -> str:
        parts = [self.method]
        if self.strategy:
            parts.append(str(self.strategy))
        if self.k is not None:
            parts.append(f"k{self.k}")
        if self.retrieval:
            parts.append(self.retrieval)
        if self.retrieval_only:
            parts.append("retrieval")
        if self.withhold_gold:
            parts.append("withheld")
        if self.llm and self.llm != "gemma":
            parts.append("".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in self.llm)[-40:])
        if self.settings:
            blob = json.dumps(self.settings, sort_keys=True, default=str)
            parts.append("set" + hashlib.sha256(blob.encode()).hexdigest()[:8])
        return "-".join(parts)

    def context_values(self) -> dict[str, Any]:
        vals: dict[str, Any] = {
            "llm": self.llm,
            "k": self.k,
            "retrieval": self.retrieval,
            "strategy": self.strategy,
        }
        if self.retrieval_only:
            vals["skip_generation"] = True
        vals.update(self.settings)
        if self.method == ORACLE:  # every gold paragraph, whatever k: a re-ranker kept the best k of them
            vals.update(rerank="none", link_question=False)
        return {k: v for k, v in vals.items() if v is not None}


def _passage_record(p: dict, is_gold: bool) -> dict:
    return {
        "id": p.get("id"),
        "title": p.get("title", ""),
        "text": p.get("text", ""),
        "source": p.get("source"),
        "score": p.get("score"),
        "gold": is_gold,
        **({"meta": p["meta"]} if p.get("meta") else {}),  # how the method picked it (stage, via, pair score, ...)
    }


def _trace_summary(trace: list[dict]) -> list[dict]:
    out = []
    for e in trace or []:
        item = {"node": e.get("node"), "elapsed_s": e.get("elapsed_s")}
        for key in ("route", "decision", "n_passages", "skipped", "k", "mode", "strategy", "answered", "fallback",
                    "parsed", "cut_by_max_tokens"):
            if key in e and isinstance(e[key], (str, int, float, bool)):
                item[key] = e[key]
        out.append(item)
    return out


def score_example(ex, final: dict, wall_s: float, *, retrieval_only: bool) -> dict:
    """The per-question record of one finished run (see the module docstring)."""
    passages = list(final.get("passages") or [])
    gold = ex.supporting
    found = gold_found(passages, gold) if gold else []
    gold_ids = {g["id"] for g, f in zip(gold, found) if f}
    prediction = str(final.get("answer") or "")
    scores = {"em": None, "f1": None, "acc": None} if retrieval_only else answer_scores(prediction, ex.answers)
    node_s, retrieval_s = _node_times(final.get("trace") or [])
    inside = sum(node_s.values())
    gold_all = {g["id"] for g in gold}
    stages = stage_recall(final.get("trace") or [], gold_all)
    in_gold = [p.get("id") in gold_all or any(passage_matches(p, g) for g in gold) for p in passages]
    return {
        "id": ex.id,
        "subset": ex.dataset,
        "question": ex.question,
        "gold": list(ex.answers),
        "prediction": prediction,
        **scores,
        "recall": (sum(found) / len(found)) if gold else None,
        "n_gold": len(gold),
        "gold_found": sorted(gold_ids),
        "docs": len(passages),
        "passages": [_passage_record(p, g) for p, g in zip(passages, in_gold)],
        **_run_counts(final),
        "wall_s": round(wall_s, 6),
        "node_s": {k: round(v, 6) for k, v in node_s.items()},
        "retrieval_s": round(retrieval_s, 6),
        "overhead_s": round(max(0.0, wall_s - inside), 6),
        "stage_recall": stages["recall"],
        "stage_docs": stages["docs"],
        "trace": _trace_summary(final.get("trace") or []),
        "error": None,
    }


def _node_times(trace: list[dict]) -> tuple[dict[str, float], float]:
    """Seconds per node, and those of the nodes that made no LLM call (retrieval, reranking,
    selection, web)."""
    node_s: dict[str, float] = {}
    retrieval_s = 0.0
    for e in trace:
        name = str(e.get("node", "?"))
        node_s[name] = node_s.get(name, 0.0) + float(e.get("elapsed_s") or 0.0)
        if not e.get("llm_calls"):
            retrieval_s += float(e.get("elapsed_s") or 0.0)
    return node_s, retrieval_s


def _run_counts(final: dict) -> dict[str, Any]:
    """What the run counted: LLM and web calls, tokens, iterations, parse failures, how it ended."""
    return {
        "llm_calls": int(final.get("llm_calls") or 0),
        "web_calls": int(final.get("web_calls") or 0),
        # why a web search the run was given gave nothing (CRAG, ERM4); "no web search configured" is no fault
        "web_error": _web_fault(final.get("web_error")),
        "input_tokens": int(final.get("input_tokens") or 0),
        "output_tokens": int(final.get("output_tokens") or 0),
        "iterations": final.get("iterations"),
        "parse_failures": int(final.get("parse_failures") or 0),
        # looping methods (MIGRES) say how the run ended: "guard" = stopped by max_iterations
        "guard_hit": (final.get("final") == "guard") if "final" in final else None,
        "ended": final.get("final"),
    }


def _web_fault(error: Any) -> str | None:
    if error in (None, "", "no web search configured"):
        return None
    return redact(str(error))[:300]


def error_record(ex, err: BaseException, wall_s: float, *, retrieval_only: bool) -> dict:
    has_gold_answer = bool(ex.answers) and not retrieval_only
    msg = redact(f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
    return {
        "id": ex.id,
        "subset": ex.dataset,
        "question": ex.question,
        "gold": list(ex.answers),
        "prediction": "",
        # a failed question scores zero: errors must not flatter a method
        "em": 0.0 if has_gold_answer else None,
        "f1": 0.0 if has_gold_answer else None,
        "acc": 0.0 if has_gold_answer else None,
        "recall": 0.0 if ex.supporting else None,
        "n_gold": len(ex.supporting),
        "gold_found": [],
        "docs": None,
        "passages": [],
        "llm_calls": None,
        "web_calls": None,
        "input_tokens": None,
        "output_tokens": None,
        "iterations": None,
        "parse_failures": None,
        "guard_hit": None,
        "ended": None,
        "wall_s": round(wall_s, 6),
        "node_s": {},
        "overhead_s": None,
        "trace": [],
        "error": msg,
        "traceback": redact(traceback.format_exc(limit=6))[-2000:],
    }


def unique_ids(examples: list) -> list:
    """Make the examples' ids unique within the file (some files repeat or lack ids): a repeat of
    ``a`` is ``a#1``, ``a#2``, ..., past any such id the file holds itself (until 2026-12-03 a file
    with ``a, a, a#1`` had two ``a#1``: one record replaced the other in the summary, and a resume
    never ran the question lost)."""
    taken = {ex.id for ex in examples}
    seen: dict[str, int] = {}
    for ex in examples:
        n = seen.get(ex.id, 0)
        seen[ex.id] = n + 1
        if n:
            while f"{ex.id}#{n}" in taken:
                n += 1
            seen[ex.id] = n + 1
            taken.add(new := f"{ex.id}#{n}")
            ex.id = new
    return examples


def finish_run(spec: RunSpec, examples: list, records: dict[str, dict], done: dict[str, dict], *,
               out_dir: str | None, dataset: str = "", data: str = "", extra: dict | None = None) -> tuple[dict, list[dict]]:
    """The summary of a run (plus ``extra``) and its records in file order; the summary is
    written to ``summary.json`` with the ids of the questions it covers (``ids``: a resume with a
    smaller ``--limit`` covers fewer than ``results.jsonl`` holds; bench/paired.py pairs these)."""
    ordered = [records[ex.id] for ex in examples if ex.id in records]
    summary = summarize(ordered, spec=spec, dataset=dataset, data=data)
    summary["resumed"] = len(done.keys() & {ex.id for ex in examples})
    summary.update(extra or {})
    if out_dir:
        with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as fh:
            json.dump({**summary, "ids": [r["id"] for r in ordered]}, fh, indent=1)
    return summary, ordered


def run_spec(
    spec: RunSpec,
    examples: list,
    components,
    *,
    dataset: str = "",
    data: str = "",
    out_dir: str | None = None,
    resume: bool = True,
    progress: bool = True,
    on_record: Callable[[dict], None] | None = None,
    corpus: dict[str, Any] | None = None,
) -> tuple[dict, list[dict]]:
    """Evaluate one configuration on ``examples``; returns (summary, records in file order).
    ``corpus`` names what the questions retrieve from, so a resume over another is refused."""
    from ..graphs import build_graph

    ctx = build_context(spec)
    store = run_store(ctx, components)
    graph = build_graph(spec.graph_method, components, **({"store": store} if store is not None else {}))
    withheld = components._retriever if spec.withhold_gold else None
    if withheld is not None and not hasattr(withheld, "withhold"):
        raise ConfigError("withhold_gold needs a retriever that can withhold passages (evaluation.corpus.WithheldRetriever)")
    sources = run_sources(spec, ctx, components)
    if spec.method not in ("none", ORACLE):
        components.load_judges(ctx)  # one that cannot load: refused before anything is written
    # the run's own reservoir first, so that the recorded settings name it (they held
    # reservoir_path null until 2026-11-30); --fresh empties it, and a resume is refused only
    # with resume=True, which empties nothing
    ctx, scratch = run_memory(ctx, os.path.join(out_dir, "results.jsonl") if out_dir else None, resume=resume)
    # versions, model file, judges, resolved settings, thread counts: in config.json and summary.json
    origin = provenance(ctx, judges=spec.method not in ("none", ORACLE), given=getattr(components, "given_judges", None))
    results_path, done = open_results(spec, out_dir, resume=resume, dataset=dataset, data=data, corpus=corpus,
                                      sources=sources, provenance=origin)
    try:
        with Recorder(spec, examples, done, results_path, progress=progress, on_record=on_record) as rec:
            if rec.todo:
                components.warm_up(ctx)  # the first question's time is not the loading time
            for ex in rec.todo:
                if withheld is not None:
                    withheld.withhold(ex.supporting_ids)
                t0 = time.perf_counter()
                try:
                    final = graph.invoke({"question": ex.question}, context=ctx)
                    r = score_example(ex, final, time.perf_counter() - t0, retrieval_only=spec.retrieval_only)
                except KeyboardInterrupt:
                    raise
                except Exception as e:  # recorded, and the run goes on
                    r = error_record(ex, e, time.perf_counter() - t0, retrieval_only=spec.retrieval_only)
                rec.add(r)
    finally:
        if scratch is not None:
            close_reservoir(ctx.reservoir_path)
            shutil.rmtree(scratch, ignore_errors=True)
    return finish_run(spec, examples, rec.records, done, out_dir=out_dir, dataset=dataset, data=data,
                      extra={"corpus_passages": corpus_passages(components), "provenance": origin})


def corpus_passages(components) -> int | None:
    """Passages in the run's corpus (what a scale report reads), or None without a retriever."""
    count = getattr(getattr(components, "_retriever", None), "count", None)
    return int(count()) if callable(count) else None



def run_store(ctx: Any, components) -> Any:
    """With ``reservoir="store"`` (ERM4), the run's own LangGraph store: in memory, with an
    index over titles in the run's embeddings, as a server's store has (a resumed run starts
    it empty)."""
    if getattr(ctx, "reservoir", None) != "store":
        return None
    from langgraph.store.memory import InMemoryStore

    emb = components.embeddings
    return InMemoryStore(index={"dims": len(emb.embed_query("title")), "embed": emb, "fields": ["title"]})


def refuse_a_folder_of_another_run(spec: RunSpec, components, out_dir: str, *, dataset: str = "", data: str = "",
                                   corpus: dict[str, Any] | None = None) -> None:
    """Before any run of a comparison: the error :func:`run_spec` would give for ``out_dir``
    (a folder of other settings, data, corpus, web search or judges), nothing written."""
    refuse_another_run(spec, out_dir, dataset=dataset, data=data, corpus=corpus,
                       sources=run_sources(spec, build_context(spec), components))


def run_memory(ctx: Any, results_path: str | None, *, resume: bool) -> tuple[Any, str | None]:
    """A method that remembers across questions (ERM4's reservoir) gets a memory of its own
    for each evaluation run, so a score never depends on earlier runs or on the user's
    reservoir: ``reservoir.sqlite3`` beside the run's results (kept, so a resumed run goes on
    with what its finished questions stored; emptied by ``--fresh``), or, without ``--out``, a
    temporary file removed after the run (the second value: that directory). A
    ``reservoir_path`` given in the settings is used as it is."""
    if "reservoir_path" not in {f.name for f in fields(ctx)} or ctx.reservoir_path:
        return ctx, None
    if results_path:
        path = os.path.join(os.path.dirname(results_path), RUN_RESERVOIR)
        if not resume:
            close_reservoir(path)
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)
        return replace(ctx, reservoir_path=path), None
    scratch = tempfile.mkdtemp(prefix="ragraphs-eval-memory-")
    return replace(ctx, reservoir_path=os.path.join(scratch, RUN_RESERVOIR)), scratch


def iter_specs(methods: Iterable[str], ks: list[int | None], strategies: list[str | None], **common) -> list[RunSpec]:
    """The grid methods x strategies x k (strategies only for methods that have the setting; the
    closed-book ``none`` and the oracle once, at the first k, as k changes neither); each method
    gets the plain settings and those scoped to it (``crag.upper``)."""
    from ..graphs import get_context_class
    from ..settings import settings_for

    methods = list(methods)
    settings = common.pop("settings", None) or {}
    specs = []
    for m in methods:
        common["settings"] = settings_for(m, settings, methods)
        has_strategy = False
        if m != ORACLE:
            has_strategy = "strategy" in {f.name for f in fields(get_context_class(m))}
        for s in strategies if has_strategy else [None]:
            for k in (ks[:1] if m in ("none", ORACLE) else ks):  # k reads nothing there: one run, not one per k
                specs.append(RunSpec(method=m, k=k, strategy=s, **common))
        if not has_strategy and any(s is not None for s in strategies) and len(methods) == 1:
            raise ConfigError(f"method {m!r} has no setting 'strategy'")
    return specs
