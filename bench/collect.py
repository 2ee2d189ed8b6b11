"""Gather the summaries of `ragraphs eval --out DIR` runs into the README's tables.

    python bench/collect.py runs/dev                 # every run under runs/dev, Markdown on stdout
    python bench/collect.py runs/dev --recall        # the DR-RAG recall table (retrieval-only runs)

Reads DIR/**/runs/<dataset>/<label>/summary.json (written by each run and refreshed on
resume). Answer table: one row per dataset and run, metrics in percent. Recall table: one
row per retrieval-only run (method, strategy, k, first-stage retrieval: as the command set them,
else as the run's recorded ``provenance`` resolved them, else "default"), recall and documents
per dataset.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys

ORDER = ["none", "vanilla", "crag", "dr-rag", "erm4", "migres", "oracle"]
DATASETS = ["hotpotqa", "2wikimultihopqa", "musique", "popqa", "odqa", "strategyqa"]


def load(dirs: list[str]) -> list[dict]:
    out = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "**", "runs", "*", "*", "summary.json"), recursive=True)):
            with open(path, encoding="utf-8") as fh:
                s = json.load(fh)
            s["_path"] = path
            out.append(s)
    return out


def _key(s: dict):
    ds = s.get("dataset") or ""
    m = s.get("method") or ""
    return (DATASETS.index(ds) if ds in DATASETS else 99, ds, ORDER.index(m) if m in ORDER else 99, s.get("label") or "")


def pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def num(v, nd=2) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def label(s: dict) -> str:
    """A run's label, with its part of the file (``FILE@K/N``: ``(part 0/2)``) where it ran one;
    two parts' rows read alike until 2026-12-03."""
    m = re.search(r"@(\d+/\d+)$", s.get("data") or "")
    return s.get("label", "") + (f" (part {m.group(1)})" if m else "")


def answer_table(rows: list[dict]) -> str:
    lines = [
        "| dataset | method | n | EM | F1 | acc | recall | docs | LLM calls | web calls | iterations | s/question | overhead % | errors |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in sorted((r for r in rows if not r.get("retrieval_only")), key=_key):
        lines.append(
            f"| {s['dataset']} | {label(s)} | {s['n']} | {pct(s['em'])} | {pct(s['f1'])} | {pct(s['acc'])} | "
            f"{pct(s['recall'])} | {num(s['docs_avg'], 1)} | {num(s['llm_calls_avg'])} | {num(s['web_calls_avg'])} | "
            f"{num(s.get('iterations_avg'))} | {num(s['latency_s_avg'], 1)} | {num(s['overhead_pct'], 3)} | {s['errors']} |"
        )
    return "\n".join(lines)


def setting(r: dict, key: str):
    """A run's setting as it ran: the summary's own (what the command line set), else the
    resolved one its ``provenance`` records (a DR-RAG run's default retrieval is hybrid, not the
    dense this table wrote for every unset one until 2026-12-02), else None."""
    if r.get(key) is not None:
        return r[key]
    return ((r.get("provenance") or {}).get("settings") or {}).get(key)


def recall_table(rows: list[dict]) -> str:
    rows = [r for r in rows if r.get("retrieval_only")]
    datasets = sorted({r["dataset"] for r in rows}, key=lambda d: DATASETS.index(d) if d in DATASETS else 99)
    configs: dict[tuple, dict] = {}
    for r in rows:
        key = (r["method"], setting(r, "strategy") or "", setting(r, "k"), setting(r, "retrieval") or "")
        configs.setdefault(key, {})[r["dataset"]] = r
    head = "| k | retrieval | method | strategy | " + " | ".join(f"{d} recall | {d} docs" for d in datasets) + " |"
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    strategies = ["sm", "qdc", "cis", "cfs"]
    modes = ["bm25", "dense", "hybrid"]

    def order(key):
        m, strat, k, mode = key
        return (k or 0, ORDER.index(m) if m in ORDER else 99, modes.index(mode) if mode in modes else 1,
                strategies.index(strat) if strat in strategies else 99)

    for key in sorted(configs, key=order):
        m, strat, k, mode = key
        cells = []
        for d in datasets:
            s = configs[key].get(d)
            cells += [pct(s["recall"]) if s else "-", num(s["docs_avg"], 1) if s else "-"]
        lines.append(f"| {k if k is not None else 'default'} | {mode or 'default'} | {m} | {strat or '-'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--recall", action="store_true", help="the recall table of retrieval-only runs")
    ap.add_argument("--json", action="store_true", help="all summaries as JSON lines")
    args = ap.parse_args(argv)
    rows = load(args.dirs)
    if not rows:
        print("no summaries found", file=sys.stderr)
        return 1
    if args.json:
        for r in sorted(rows, key=_key):
            print(json.dumps(r))
    elif args.recall:
        print(recall_table(rows))
    else:
        print(answer_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
