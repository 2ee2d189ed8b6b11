"""The summary of one run (the object ``ragraphs eval --json`` prints): averages over its
per-question records, the retrieval stages' recall, documents and time, and how loops ended."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .metrics import mean
from .records import run_llm


def stage_recall(trace: list[dict], gold_ids: set[str]) -> dict:
    """Per retrieval stage (a trace entry with ``out_ids``: the documents it hands on), the
    share of the gold paragraphs among them and their count."""
    recall: dict[str, float] = {}
    docs: dict[str, int] = {}
    for e in trace:
        ids = e.get("out_ids")
        if not isinstance(ids, list):
            continue
        name = str(e.get("node", "?"))
        docs[name] = len(ids)
        if gold_ids:
            recall[name] = len(gold_ids & set(ids)) / len(gold_ids)
    return {"recall": recall, "docs": docs}


def _r(x: float | None, nd: int = 6) -> float | None:  # 6: a table printing 100x to .1f rounds once (4 printed 0.32252 as 32.2)
    return None if x is None else round(x, nd)


def _ended(records: list[dict]) -> dict[str, int] | None:
    """How the runs of a looping method ended (MIGRES: answered / exhausted / guard), counted."""
    counts = Counter(r["ended"] for r in records if r.get("ended"))
    return dict(sorted(counts.items())) or None


def summarize(records: list[dict], *, spec: Any = None, dataset: str = "", data: str = "") -> dict:
    """Averages over the records of one run (the object `ragraphs eval --json` prints); ``spec``,
    the run's :class:`~ragraphs.evaluation.runner.RunSpec`, adds its settings."""
    ok = [r for r in records if not r.get("error")]
    out: dict[str, Any] = {
        "method": spec.method if spec else None,
        "label": spec.label if spec else None,
        "dataset": dataset,
        "data": data,
        "n": len(records),
        "errors": len(records) - len(ok),
        **_scores(records),
        **_costs(ok),
        **_timing(ok),
    }
    if spec is not None:
        out.update({"k": spec.k, "strategy": spec.strategy, "retrieval": spec.retrieval,
                    "retrieval_only": spec.retrieval_only, "llm": run_llm(spec), "settings": spec.settings})
    by_subset = _by_subset(records)
    if by_subset:
        out["by_subset"] = by_subset
    return out


def _scores(records: list[dict]) -> dict[str, Any]:
    """Answer and retrieval quality, over every question (one that failed counts 0)."""
    with_gold = [r for r in records if r.get("recall") is not None]
    return {
        "em": _r(mean(r.get("em") for r in records)),
        "f1": _r(mean(r.get("f1") for r in records)),
        "acc": _r(mean(r.get("acc") for r in records)),
        "recall": _r(mean(r.get("recall") for r in records)),
        "recall_all": _r(mean(float(r["recall"] == 1.0) for r in with_gold)) if with_gold else None,
        "n_with_gold": len(with_gold),
        # the questions EM/F1/acc are over: those with a gold answer (since 2026-12-03; n counted the rest too)
        "n_scored": sum(r.get("em") is not None for r in records),
    }


def _costs(ok: list[dict]) -> dict[str, Any]:
    """What the questions that ran cost and how their decisions went: documents, calls,
    tokens, iterations, parse failures, empty answers and how loops ended."""
    scored = [r for r in ok if r.get("em") is not None]  # none in a retrieval-only run
    return {
        "docs_avg": _r(mean(r.get("docs") for r in ok), 3),
        "llm_calls_avg": _r(mean(r.get("llm_calls") for r in ok), 3),
        "web_calls_avg": _r(mean(r.get("web_calls") for r in ok), 3),
        "web_errors": sum(bool(r.get("web_error")) for r in ok),  # questions whose web search gave nothing, and why in the records
        "input_tokens_avg": _r(mean(r.get("input_tokens") for r in ok), 1),
        "output_tokens_avg": _r(mean(r.get("output_tokens") for r in ok), 1),
        "iterations_avg": _r(mean(r.get("iterations") for r in ok), 3),
        "parse_failures": sum(int(r.get("parse_failures") or 0) for r in ok),
        # answers the reader left empty (the embedded model abstains so), among the scored; since 2026-12-02
        "empty_answers": sum(not str(r.get("prediction") or "").strip() for r in scored) if scored else None,
        "guard_hit_rate": _r(mean(float(r["guard_hit"]) for r in ok if r.get("guard_hit") is not None), 3),
        "ended": _ended(ok),
    }


def _timing(ok: list[dict]) -> dict[str, Any]:
    """Latency of the questions that ran, per node and per retrieval stage, and the harness's
    own overhead."""
    walls = [r["wall_s"] for r in ok]
    nodes: dict[str, float] = {}
    for r in ok:
        for k, v in (r.get("node_s") or {}).items():
            nodes[k] = nodes.get(k, 0.0) + v
    total_wall = sum(walls)
    total_over = sum(r.get("overhead_s") or 0.0 for r in ok)
    return {
        "latency_s_avg": _r(mean(walls), 4),
        "latency_s_max": _r(max(walls), 4) if walls else None,
        "node_s_avg": {k: round(v / len(ok), 5) for k, v in nodes.items()} if ok else {},
        "stages": _stages(ok),
        "retrieval_ms_avg": _r(mean(1000.0 * _retrieval_s(r) for r in ok), 2),
        "overhead_s_avg": _r(total_over / len(ok), 6) if ok else None,
        "overhead_pct": _r(100.0 * total_over / total_wall, 3) if total_wall > 0 else None,
    }


def _by_subset(records: list[dict]) -> dict[str, dict]:
    """Scores per dataset of a file that mixes two or more (each record's ``subset``: its
    example's dataset, as a file of NQ and TriviaQA rows holds)."""
    subsets = sorted({str(r["subset"]) for r in records if r.get("subset")})
    if len(subsets) < 2:
        return {}
    out: dict[str, dict] = {}
    for s in subsets:
        rs = [r for r in records if r.get("subset") == s]
        out[s] = {
            "n": len(rs),
            "em": _r(mean(r.get("em") for r in rs)),
            "f1": _r(mean(r.get("f1") for r in rs)),
            "acc": _r(mean(r.get("acc") for r in rs)),
            "recall": _r(mean(r.get("recall") for r in rs)),
        }
    return out


def _retrieval_s(record: dict) -> float:
    """Seconds of the question's nodes that made no LLM call; a record written before
    2026-11-30 has no ``retrieval_s``: every node but ``generate`` (a CRAG or ERM4 rewrite,
    ERM4's back-off answer and MIGRES's decisions were counted as retrieval then)."""
    if record.get("retrieval_s") is not None:
        return float(record["retrieval_s"])
    return sum(v for k, v in (record.get("node_s") or {}).items() if k != "generate")


def _stages(records: list[dict]) -> dict:
    """Per node, in run order: recall of the gold paragraphs among the documents it hands on
    (where it reports them), the count of those documents, its milliseconds per question (a
    question where it did not run counts 0, so the stages add up to the run's time; until
    2026-11-30 per question where it ran) and, for a node that did not run on every question,
    the share where it did (``ran``)."""
    order: list[str] = []
    for r in records:
        for t in r.get("trace") or []:
            if t.get("node") not in order:
                order.append(t.get("node"))
    out: dict[str, dict] = {}
    for name in order:
        ms = [1000.0 * (r.get("node_s") or {}).get(name, 0.0) for r in records]
        ran = sum(name in (r.get("node_s") or {}) for r in records)
        rec = [r["stage_recall"][name] for r in records if name in (r.get("stage_recall") or {})]
        docs = [r["stage_docs"][name] for r in records if name in (r.get("stage_docs") or {})]
        out[name] = {"ms": _r(mean(ms), 2), "recall": _r(mean(rec)), "docs": _r(mean(docs), 2)}
        if records and ran < len(records):
            out[name]["ran"] = _r(ran / len(records), 3)
    return out
