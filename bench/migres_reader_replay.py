"""Replay MIGRES's last step (the reader's answer) over recorded runs with other evidence.

MIGRES's reader answers from the statements the Leaf Module kept and the passages read,
whose text the Knowledge Filter has cut to the sentences it scored relevant. This script
takes the per-question records of a finished ``ragraphs eval --method migres --out DIR``
run and calls the real ``final_answer`` node once per question with the evidence built
another way, so that a change to the reader's evidence can be measured on whole dev files
for one LLM call per question instead of a whole MIGRES run:

- ``recorded``: the passages as recorded (the filtered text): reproduces the run;
- ``whole``: the same passages with their whole text from the data file;
- ``whole+top``: ``whole``, then the question's own top retrieved passages (from a vanilla
  run's records over the same corpus) until ``max_passages`` are read;
- ``top``: only the vanilla run's passages, with the statements;
- ``top+read``: the vanilla run's passages (the question's own top retrieved, unfiltered), then
  the passages the run read (as recorded) that are not among them, until ``max_passages``;
  with ``:nostatements+noknowledge`` this is what the reader reads with
  ``reader_evidence="passages"`` (the default since 2026-11-25, night);
- ``top+later``: ``top+read`` with only the passages the loop's own queries found (not those
  of the question's first retrieval): vanilla's passages whenever the loop found nothing new;
  with ``:nostatements+noknowledge`` this is what the reader reads with
  ``reader_evidence="followups"``;
- ``read+top``: the same passages in the other order: those the run read first;
- ``VARIANT:nostatements``, ``VARIANT:noknowledge``, ``VARIANT:nostatements+noknowledge``: the
  same passages without the Leaf Module's statements, without the LLM knowledge that knowledge
  prompting generated (its first 500 characters, as the trace recorded them), or without both;
- ``VARIANT:...+topchars=N``: the question's own top passages (the vanilla run's) cut to N
  characters, as vanilla's prompt cuts them, and every other passage to ``max_passage_chars``:
  ``reader_question_chars=N`` (the replay's node runs with ``reader_evidence="gathered"``, where
  that setting does not apply, so the variants without ``topchars`` read every passage at
  ``max_passage_chars``, the reader before 2026-11-27, night).

A variant that wins here still has to win in a whole MIGRES run: the replay keeps every
earlier decision of the recorded run fixed.

Usage:
  python bench/migres_reader_replay.py --migres RUN/results.jsonl --vanilla RUN/results.jsonl \
      --data ../shared/data/hotpotqa.dev.jsonl [--variants recorded,whole,whole+top] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from types import SimpleNamespace

from ragraphs.components import default_components
from ragraphs.datasets import load_dataset
from ragraphs.evaluation.metrics import answer_scores, mean
from ragraphs.evaluation.paired import format_difference, paired_differences
from ragraphs.nodes.migres_parsing import refuses
from ragraphs.nodes.migres_reader import make_final_answer, reader_evidence
from ragraphs.settings import MIGRESContext, context_from
from ragraphs.state.types import cut_text


def _records(path: str) -> dict[str, dict]:
    with open(path, encoding="utf-8") as f:
        return {r["id"]: r for r in map(json.loads, f) if not r.get("error")}


def statements(rec: dict) -> list[dict]:
    out = []
    for t in rec.get("trace") or []:
        if t.get("node") == "leaf_extract":
            out += [{"info": k[0], "support_ids": [], "nli": k[1]} for k in t.get("kept") or []]
    return out


def knowledge(rec: dict) -> list[dict]:
    """The first LLM knowledge the run generated, as its trace recorded it (first 500 characters)."""
    for t in rec.get("trace") or []:
        text = (t.get("knowledge") or "").strip() if t.get("node") == "knowledge_prompt" else ""
        if text and not refuses(text[:40]):  # as the knowledge_prompt node reads it
            return [{"id": "llm", "title": "LLM knowledge", "text": text, "source": "llm", "score": None, "meta": {}}]
    return []


def evidence(variant: str, rec: dict, whole: dict[str, dict], top: list[dict], k: int) -> list[dict]:
    read = list(rec.get("passages") or [])
    if variant == "recorded":
        return read
    if variant == "top":
        return top[:k]
    if variant in ("top+read", "top+later"):  # the node's own choice, reader_evidence="passages" / "followups"
        mode = "passages" if variant == "top+read" else "followups"
        return reader_evidence({"question": rec["question"], "question_passages": top, "passages": read},
                               MIGRESContext(max_passages=k, reader_evidence=mode))[0]
    if variant == "read+top":
        ids = {p["id"] for p in read}
        return (read + [p for p in top if p["id"] not in ids])[:k]
    full = [{**p, "text": whole[p["id"]]["text"]} if p["id"] in whole else p for p in read]
    if variant == "whole":
        return full
    if variant == "whole+top":
        ids = {p["id"] for p in full}
        return (full + [p for p in top if p["id"] not in ids])[: max(k, len(full))]
    raise SystemExit(f"unknown variant {variant!r}")


def _topchars(mod: str) -> int | None:
    for part in mod.split("+"):
        if part.startswith("topchars="):
            return int(part.split("=", 1)[1])
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--migres", required=True, help="results.jsonl of a MIGRES eval run")
    ap.add_argument("--vanilla", required=True, help="results.jsonl of a vanilla eval run over the same corpus")
    ap.add_argument("--data", required=True, help="the data file of both runs")
    ap.add_argument("--variants", default="recorded,whole,whole+top")
    ap.add_argument("--out", default=None)
    ap.add_argument("--limit", type=int, default=None, help="the first N questions only")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="a MIGRESContext setting for the replayed reader, e.g. max_passages=6 (repeatable)")
    a = ap.parse_args(argv)
    m, v = _records(a.migres), _records(a.vanilla)
    whole = {p["id"]: p for ex in load_dataset(a.data) for p in ex.paragraphs}
    # each variant builds the reader's evidence itself; "gathered" makes the node read it as given
    ctx = context_from(MIGRESContext, {"reader_evidence": "gathered",
                                       **{k: json.loads(v) for k, v in (x.split("=", 1) for x in a.set)}})
    node = make_final_answer(default_components())
    runtime = SimpleNamespace(context=ctx)
    ids = [i for i in m if i in v][: a.limit]
    res: dict = {"n": len(ids), "data": a.data.rsplit("/", 1)[-1], "variants": {}}
    baseline = {i: answer_scores(v[i]["prediction"], v[i]["gold"]) for i in ids}
    res["vanilla"] = {k: round(100 * mean(s[k] for s in baseline.values()), 1) for k in ("em", "f1", "acc")}
    res["migres_recorded"] = {k: round(100 * mean(m[i][k] for i in ids), 1) for k in ("em", "f1", "acc")}
    for variant in a.variants.split(","):
        base, _, mod = variant.partition(":")
        topchars = _topchars(mod)
        if topchars:  # the prompt then cuts nothing: each passage is cut here, to its own length
            runtime = SimpleNamespace(context=context_from(MIGRESContext, {"max_passage_chars": max(topchars, int(ctx.max_passage_chars))}, base=ctx))
        else:
            runtime = SimpleNamespace(context=ctx)
        t0 = time.perf_counter()
        scores, same = [], 0
        per = {}
        for i in ids:
            rec = m[i]
            top = list(v[i].get("passages") or [])
            read = evidence(base, rec, whole, top, int(ctx.max_passages))
            if topchars:
                top_ids = {p["id"] for p in top}
                read = [{**p, "text": cut_text(p.get("text") or "", topchars if p["id"] in top_ids else int(ctx.max_passage_chars))}
                        for p in read]
            state = {"question": rec["question"], "useful_info": [] if "nostatements" in mod else statements(rec), "answered": rec["ended"] == "answered",
                     "exhausted": rec["ended"] == "exhausted",
                     "generated_knowledge": [] if "noknowledge" in mod else knowledge(rec),
                     "passages": read}
            out = node(state, runtime)
            s = answer_scores(out["answer"], rec["gold"])
            scores.append(s)
            same += out["answer"].strip() == (rec["prediction"] or "").strip()
            per[i] = {"answer": out["answer"], **s}
        row = {k: round(100 * mean(s[k] for s in scores), 1) for k in ("em", "f1", "acc")}
        row["same_answer_as_run"] = same
        # paired bootstrap (95%), in points: this variant minus vanilla, and minus the recorded run
        mine = [{"id": i, **per[i]} for i in ids]
        for name, ref in (("minus_vanilla", [{"id": i, **baseline[i]} for i in ids]),
                          ("minus_recorded", [{"id": i, **{k: m[i][k] for k in ("em", "f1", "acc")}} for i in ids])):
            row[name] = {d.metric: format_difference(d) for d in paired_differences(mine, ref)}
        row["seconds"] = round(time.perf_counter() - t0, 1)
        res["variants"][variant] = row
        res.setdefault("per_question", {})[variant] = per
        print(variant, json.dumps(row), file=sys.stderr)
    print(json.dumps({k: x for k, x in res.items() if k != "per_question"}, indent=1))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
