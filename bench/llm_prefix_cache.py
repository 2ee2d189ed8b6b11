"""Prompt-prefix reuse of the embedded model: ms per structured decision with one llama.cpp
context for every prompt vs one context per prompt kind, on the methods' repeated prompts.

For each of the first N questions of a benchmark file the script makes the LLM decisions of
one MIGRES iteration (leaf extraction, main judge, query generation), then CRAG's keyword
rewrite and ERM4's Rewriter+, all through :func:`ragraphs.tools.structured.decide` (grammar
decoding, as in the methods). The prompts of different kinds are interleaved, as in a run:
llama-cpp-python's own KV reuse only helps when a call shares a prefix with the call just
before it in the same context, so interleaving defeats it with one context; with a context
per prompt kind (``RAGRAPHS_LLM_CONTEXTS``) each kind's few-shot prefix stays cached. Two
models, 1 context and N contexts, answer the same sequence alternately (call by call), so
that the shared CPU's load falls on both alike. ``--order grouped`` runs all calls of one
kind in a row instead (then one context already reuses the prefix).

Both wall time and CPU time (``time.process_time``, the work done) are reported per call: on
a CPU shared with other jobs the wall time swings with their load, the CPU time much less.
A kind's first call finds no cached prefix in either model; ``warm`` averages exclude it.

    RAGRAPHS_LLM_THREADS=1 nice -n 10 python bench/llm_prefix_cache.py \\
        --data ../shared/data/hotpotqa.dev.jsonl --n 8 [--order grouped] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from ragraphs.datasets import load_dataset  # noqa: E402
from ragraphs.nodes import erm4, migres  # noqa: E402
from ragraphs.nodes.crag import REWRITE_PROMPT  # noqa: E402
from ragraphs.prompts import one_line  # noqa: E402
from ragraphs.tools import structured as S  # noqa: E402
from ragraphs.tools.llm import LlamaCppCompletionChat, gemma_gguf_path  # noqa: E402


def prompts_for(ex, n_passages: int) -> list[tuple[str, str, type]]:
    """(kind, prompt, schema) of the decisions one question makes, in run order."""
    q = ex.question
    passages = [
        {"id": str(i), "title": p.get("title", ""), "text": p.get("text", ""), "source": "bench", "score": None}
        for i, p in enumerate((ex.paragraphs or [])[:n_passages])
    ]
    first = one_line(passages[0]["text"], 200) if passages else ""
    return [
        ("migres.leaf", migres.leaf_prompt(q, passages, max_chars=600), S.LeafExtraction),
        ("migres.main", migres.main_prompt(q, [first] if first else []), S.MainVerdict),
        ("migres.queries", migres.query_prompt(q, [q], [first] if first else [], q), S.QueryList),
        ("crag.keywords", REWRITE_PROMPT.format(question=one_line(q, 500)), S.Keywords),
        ("erm4.rewrite", erm4.rewrite_prompt(q), S.RewritePlus),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--dataset", default="hotpotqa")
    ap.add_argument("--n", type=int, default=8, help="questions (5 decisions each)")
    ap.add_argument("--passages", type=int, default=3, help="passages in the leaf prompt")
    ap.add_argument("--order", choices=["interleaved", "grouped"], default="interleaved")
    ap.add_argument("--contexts", type=int, default=6, help="contexts of the second model")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    exs = load_dataset(args.data, args.dataset)[: args.n]
    calls = [c for ex in exs for c in prompts_for(ex, args.passages)]
    if args.order == "grouped":
        calls.sort(key=lambda c: c[0])  # stable: question order kept within a kind
    path = gemma_gguf_path()
    models = {
        "1 context": LlamaCppCompletionChat(model_path=path, n_contexts=1),
        f"{args.contexts} contexts": LlamaCppCompletionChat(model_path=path, n_contexts=args.contexts),
    }
    for m in models.values():
        m._load()
    times: dict[str, dict[str, list[float]]] = {name: {} for name in models}
    cpu: dict[str, dict[str, list[float]]] = {name: {} for name in models}
    same = 0
    strict = {name: 0 for name in models}
    for kind, prompt, schema in calls:
        texts = []
        for name, m in models.items():
            t0, c0 = time.perf_counter(), time.process_time()
            d = S.decide(m, prompt, schema)
            times[name].setdefault(kind, []).append(1000 * (time.perf_counter() - t0))
            cpu[name].setdefault(kind, []).append(1000 * (time.process_time() - c0))
            strict[name] += d.how == "strict"
            texts.append(d.text)
        same += texts[0] == texts[1]

    def row(name: str) -> dict:
        allv = [v for vs in times[name].values() for v in vs]
        allc = [v for vs in cpu[name].values() for v in vs]
        warmc = [v for vs in cpu[name].values() for v in vs[1:]]
        return {
            "ms_per_call": round(statistics.mean(allv), 1),
            "cpu_ms_per_call": round(statistics.mean(allc), 1),
            "cpu_ms_per_call_warm": round(statistics.mean(warmc), 1) if warmc else None,
            "by_kind": {k: round(statistics.mean(v), 1) for k, v in times[name].items()},
            "cpu_by_kind": {k: round(statistics.mean(v), 1) for k, v in cpu[name].items()},
            "strict": strict[name],
        }

    res = {
        "n_questions": len(exs),
        "calls_per_model": len(calls),
        "order": args.order,
        "threads": os.environ.get("RAGRAPHS_LLM_THREADS", "all"),
        "identical_outputs": same,
        **{name: row(name) for name in models},
    }
    a, b = list(models)
    for key in ("ms_per_call", "cpu_ms_per_call", "cpu_ms_per_call_warm"):
        off, on = res[a][key], res[b][key]
        res[f"saving_pct_{key}"] = round(100 * (off - on) / off, 1) if off and on is not None else None
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"{len(calls)} decisions per model ({len(exs)} questions, {args.order}), threads={res['threads']}")
    print(f"| prompt | {a}: wall ms | {b}: wall ms | {a}: CPU ms | {b}: CPU ms |\n| --- | --- | --- | --- | --- |")
    for kind in res[a]["by_kind"]:
        print(f"| {kind} | {res[a]['by_kind'][kind]} | {res[b]['by_kind'][kind]} | "
              f"{res[a]['cpu_by_kind'][kind]} | {res[b]['cpu_by_kind'][kind]} |")
    print(f"| all (mean) | {res[a]['ms_per_call']} | {res[b]['ms_per_call']} | "
          f"{res[a]['cpu_ms_per_call']} | {res[b]['cpu_ms_per_call']} |")
    print(f"| all but each kind's first call | | | {res[a]['cpu_ms_per_call_warm']} | {res[b]['cpu_ms_per_call_warm']} |")
    print(f"saving: wall {res['saving_pct_ms_per_call']}%, CPU {res['saving_pct_cpu_ms_per_call']}%, "
          f"CPU without first calls {res['saving_pct_cpu_ms_per_call_warm']}%; identical outputs: {same}/{len(calls)}; "
          f"schema-valid at once: {strict[a]}, {strict[b]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
