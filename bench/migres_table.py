"""MIGRES vs vanilla on the dev multi-hop files, beside the paper's Table 4.

Reads the per-question records that ``ragraphs eval --out DIR`` writes (complete or still
running: a partial file is summarised over the questions done so far), keeps the questions
answered by both methods, and prints one Markdown table.

    python bench/migres_table.py --migres /tmp/migres_eval/hotpotqa-migres \
        --vanilla /tmp/migres_eval/hotpotqa-vanilla --dataset hotpotqa [--json]

(``--migres``/``--vanilla``/``--dataset`` may be repeated, one triple per dataset.)

"Passages read" counts the corpus passages handed to the Leaf Module over all iterations
(the paper's "# Passages": knowledge concatenated into prompts); "docs" counts distinct
passages in the final ``passages`` field (what recall is computed on).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from ragraphs.evaluation.runner import read_results, summarize  # noqa: E402

# Table 4 of the paper (gpt-3.5-turbo-1106, zero-shot): # API calls, # iterations, # passages
PAPER_TABLE4 = {
    "hotpotqa": (9.5, 2.7, 3.1),
    "2wikimultihopqa": (8.4, 2.5, 1.3),
    "musique": (6.4, 1.9, 2.3),
}


def _records(out_dir: str) -> dict[str, dict]:
    paths = glob.glob(os.path.join(out_dir, "**", "results.jsonl"), recursive=True)
    recs: dict[str, dict] = {}
    for p in sorted(paths):
        recs.update(read_results(p))
    return recs


def passages_read(rec: dict) -> int | None:
    """Corpus passages fed to the Leaf Module: leaf runs that follow the knowledge filter
    (a leaf run after knowledge prompting reads the LLM's own text, not a corpus passage).
    None when the trace was cut to its routing decisions (the committed runs): no
    ``n_passages`` to count (it read as 0 until 2026-11-30)."""
    trace = rec.get("trace") or []
    if trace and not any("elapsed_s" in e for e in trace):  # cut to its routing decisions
        return None
    n, prev = 0, None
    for e in trace:
        if e.get("node") == "leaf_extract" and prev == "filter_knowledge":
            if "n_passages" not in e:
                return None
            n += int(e.get("n_passages") or 0)
        prev = e.get("node")
    return n


def ended(rec: dict) -> str:
    """How a run ended; records written before the ``ended`` field: final_answer ran only at the guard."""
    if rec.get("ended"):
        return rec["ended"]
    return "guard" if any(e.get("node") == "final_answer" for e in rec.get("trace") or []) else "answered"


def row(dataset: str, migres_dir: str, vanilla_dir: str) -> dict:
    m, v = _records(migres_dir), _records(vanilla_dir)
    ids = [i for i in m if i in v and not m[i].get("error") and not v[i].get("error")]
    ms, vs = [m[i] for i in ids], [v[i] for i in ids]
    sm, sv = summarize(ms, dataset=dataset), summarize(vs, dataset=dataset)
    kp = [sum(1 for e in r.get("trace") or [] if e.get("node") == "knowledge_prompt") for r in ms]
    counted = [passages_read(r) for r in ms]
    read = [] if None in counted else counted  # a cut trace: "-" in the column, not 0
    guard = [r for r in ms if ended(r) == "guard"]
    exhausted = [r for r in ms if ended(r) == "exhausted"]
    paper = PAPER_TABLE4.get(dataset)
    return {
        "dataset": dataset,
        "n": len(ids),
        "errors": {"migres": sum(1 for r in m.values() if r.get("error")), "vanilla": sum(1 for r in v.values() if r.get("error"))},
        "migres": {
            "em": sm["em"], "f1": sm["f1"], "acc": sm["acc"], "recall": sm["recall"],
            "llm_calls": sm["llm_calls_avg"], "iterations": sm["iterations_avg"],
            "passages_read": round(sum(read) / len(read), 3) if read else None, "docs": sm["docs_avg"],
            "knowledge_prompts": round(sum(kp) / len(kp), 3) if kp else None,
            "stopped_by_guard": len(guard), "stopped_exhausted": len(exhausted),
            "guard_hit_rate": sm["guard_hit_rate"], "parse_failures": sm["parse_failures"],
            "input_tokens": sm["input_tokens_avg"], "latency_s": sm["latency_s_avg"],
        },
        "vanilla": {"em": sv["em"], "f1": sv["f1"], "acc": sv["acc"], "recall": sv["recall"], "llm_calls": sv["llm_calls_avg"],
                    "docs": sv["docs_avg"], "input_tokens": sv["input_tokens_avg"], "latency_s": sv["latency_s_avg"]},
        "paper_table4": {"llm_calls": paper[0], "iterations": paper[1], "passages": paper[2]} if paper else None,
    }


def _f(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def markdown(rows: list[dict]) -> str:
    lines = [
        "| dataset | n | MIGRES calls | paper | MIGRES iter | paper | passages read | paper | docs | guard stops | exhausted | parse failures | EM MIGRES | EM vanilla | Acc MIGRES | Acc vanilla | F1 MIGRES | F1 vanilla | recall MIGRES | recall vanilla |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        m, v, p = r["migres"], r["vanilla"], r["paper_table4"] or {}
        lines.append(
            f"| {r['dataset']} | {r['n']} | {_f(m['llm_calls'])} | {_f(p.get('llm_calls'), 1)} | {_f(m['iterations'])} | "
            f"{_f(p.get('iterations'), 1)} | {_f(m['passages_read'])} | {_f(p.get('passages'), 1)} | {_f(m['docs'])} | "
            f"{m['stopped_by_guard']} | {m.get('stopped_exhausted', 0)} | {m.get('parse_failures', '-')} | {_f(m['em'], 3)} | {_f(v['em'], 3)} | {_f(m['acc'], 3)} | {_f(v['acc'], 3)} | "
            f"{_f(m['f1'], 3)} | {_f(v['f1'], 3)} | {_f(m['recall'], 3)} | {_f(v['recall'], 3)} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--migres", action="append", required=True)
    ap.add_argument("--vanilla", action="append", required=True)
    ap.add_argument("--dataset", action="append", required=True)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if not (len(a.migres) == len(a.vanilla) == len(a.dataset)):
        ap.error("give one --migres, --vanilla and --dataset per dataset")
    rows = [row(d, m, v) for d, m, v in zip(a.dataset, a.migres, a.vanilla)]
    print(markdown(rows))
    if a.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
