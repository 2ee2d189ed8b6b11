"""Summarise a `ragraphs eval --out DIR` run of vanilla and CRAG: action shares and accuracy.

    python bench/crag_actions.py DIR [--dataset popqa]

Reads DIR/runs/<dataset>/<label>/results.jsonl (one record per question, written by the
eval harness), takes CRAG's action from each record's trace (the ``evaluate`` entry's
``route``), and prints, on the questions both runs finished: the share of questions per
action, accuracy (gold answer contained in the output) of vanilla and CRAG overall and per
action, recall of the gold paragraphs among the passages handed to the generator, and
average LLM and web calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def load(path: str) -> dict[str, dict]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                if not r.get("error"):
                    out[r["id"]] = r
    return out


def action_of(r: dict) -> str:
    for e in r.get("trace") or []:
        if e.get("node") == "evaluate":
            return str(e.get("route") or e.get("action") or "?")
    return "?"


def mean(xs):
    xs = [float(x) for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--dataset", default="popqa")
    ap.add_argument("--vanilla", default="vanilla", help="label of the vanilla run")
    ap.add_argument("--crag", default="crag", help="label of the CRAG run")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    base = os.path.join(a.dir, "runs", a.dataset)
    van = load(os.path.join(base, a.vanilla, "results.jsonl"))
    crag = load(os.path.join(base, a.crag, "results.jsonl"))
    ids = [i for i in crag if i in van]
    if not ids:
        print("no question finished by both runs", file=sys.stderr)
        return 1
    acts = {i: action_of(crag[i]) for i in ids}
    rep: dict = {"questions": len(ids), "actions": {}}
    for act in ("correct", "ambiguous", "incorrect"):
        sel = [i for i in ids if acts[i] == act]
        rep["actions"][act] = {
            "share": round(len(sel) / len(ids), 4),
            "n": len(sel),
            "acc_vanilla": round(mean(van[i]["acc"] for i in sel), 4) if sel else None,
            "acc_crag": round(mean(crag[i]["acc"] for i in sel), 4) if sel else None,
        }
    for name, runs in (("vanilla", van), ("crag", crag)):
        rep[name] = {
            "acc": round(mean(runs[i]["acc"] for i in ids), 4),
            "recall": round(mean(runs[i].get("recall") for i in ids), 4),
            "docs_avg": round(mean(runs[i].get("docs") for i in ids), 2),
            "llm_calls_avg": round(mean(runs[i].get("llm_calls") for i in ids), 3),
            "web_calls_avg": round(mean(runs[i].get("web_calls") for i in ids), 3),
            "input_tokens_avg": round(mean(runs[i].get("input_tokens") for i in ids), 1),
        }
    if a.json:
        print(json.dumps(rep))
        return 0
    print(f"{len(ids)} questions finished by both runs ({base})")
    print("| action | share | n | acc vanilla | acc CRAG |\n| --- | --- | --- | --- | --- |")
    for act, v in rep["actions"].items():
        f = lambda x: "-" if x is None else f"{x:.3f}"
        print(f"| {act} | {v['share']:.1%} | {v['n']} | {f(v['acc_vanilla'])} | {f(v['acc_crag'])} |")
    print("\n| method | acc | recall | docs | LLM calls | web calls | input tokens |\n| --- | --- | --- | --- | --- | --- | --- |")
    for name in ("vanilla", "crag"):
        v = rep[name]
        print(f"| {name} | {v['acc']:.3f} | {v['recall']:.3f} | {v['docs_avg']} | {v['llm_calls_avg']} | {v['web_calls_avg']} | {v['input_tokens_avg']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
