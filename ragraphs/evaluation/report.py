"""The Markdown report of an evaluation, with its plots (matplotlib, Agg backend, PNG)."""

from __future__ import annotations

import json
import os
import shlex
from typing import Any

from .paired import format_cell, paired_differences
from .records import run_dir

_PCT = ("em", "f1", "acc", "recall")


def fmt(v: Any, pct: bool = False) -> str:
    if v is None:
        return "-"
    if pct:
        return f"{100 * v:.1f}"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _tokens(v: Any) -> str:
    """A mean count of tokens, whole (514.30 read as a precision it has not, until 2026-12-03)."""
    return "-" if v is None else f"{v:.0f}"


def recall_over(s: dict) -> int | None:
    """The questions a summary's recall is over, when fewer than its ``n`` (some had no gold
    paragraph: 82 of 2Wiki's 100); None when it is over all of them, or there is no recall."""
    n_gold = s.get("n_with_gold")
    return n_gold if s.get("recall") is not None and n_gold is not None and n_gold < s["n"] else None


def scored_over(s: dict) -> int | None:
    """The questions a summary's EM, F1 and accuracy are over, when fewer than its ``n`` (some
    rows have no gold answer); None otherwise, or in a summary written before it was counted."""
    k = s.get("n_scored")
    return k if s.get("em") is not None and k is not None and k < s["n"] else None


def _recall_cell(s: dict) -> str:
    """Recall in percent, with the questions it is over when some had no gold paragraph."""
    over = recall_over(s)
    return fmt(s["recall"], True) + (f" ({over})" if over is not None else "")


def summary_table(summaries: list[dict], *, first: str = "run") -> str:
    """A Markdown table of run summaries (EM/F1/acc/recall in percent; EM over the questions with
    a gold answer and recall over those with gold paragraphs, each count beside it when not all had one)."""
    head = (
        f"| {first} | n | EM | F1 | acc | empty answers | recall | docs | LLM calls | iterations | parse failures | guard hits | "
        "web calls | input tokens | s/question | overhead % | errors |"
    )
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for s in summaries:
        name = s.get("label") or s.get("method")
        if first == "dataset":
            name = s.get("dataset")
        lines.append(
            f"| {name} | {s['n']} | {fmt(s['em'], True)}{f' ({k})' if (k := scored_over(s)) is not None else ''} | {fmt(s['f1'], True)} | {fmt(s['acc'], True)} | "
            f"{fmt(s.get('empty_answers'))} | {_recall_cell(s)} | {fmt(s['docs_avg'])} | {fmt(s['llm_calls_avg'])} | {fmt(s.get('iterations_avg'))} | "
            f"{fmt(s.get('parse_failures'))} | {fmt(s.get('guard_hit_rate'), True)} | {fmt(s['web_calls_avg'])} | "
            f"{_tokens(s.get('input_tokens_avg'))} | {fmt(s['latency_s_avg'])} | {fmt(s['overhead_pct'])} | {s['errors']} |"
        )
    return "\n".join(lines)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_answer_metrics(summaries: list[dict], path: str) -> bool:
    rows = [s for s in summaries if s.get("em") is not None]
    if not rows:
        return False
    plt = _plt()
    labels = [s["label"] for s in rows]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(rows) + 2), 3.6))
    width = 0.26
    for j, key in enumerate(("em", "f1", "acc")):
        xs = [i + (j - 1) * width for i in range(len(rows))]
        ax.bar(xs, [100 * (s[key] or 0) for s in rows], width, label=key.upper() if key != "acc" else "acc")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("%")
    ax.set_title(f"Answer quality per method ({rows[0].get('dataset')}, n={rows[0]['n']})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_recall(summaries: list[dict], path: str) -> bool:
    rows = [s for s in summaries if s.get("recall") is not None]
    if not rows:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    ks = {s.get("k") for s in rows}
    if len(ks) > 1 and None not in ks:
        groups: dict[str, list[dict]] = {}
        for s in rows:
            name = s["method"] + (f" {s['strategy']}" if s.get("strategy") else "")
            groups.setdefault(name, []).append(s)
        for name, ss in groups.items():
            ss = sorted(ss, key=lambda s: s["k"])
            ax.plot([s["k"] for s in ss], [100 * s["recall"] for s in ss], marker="o", label=name)
        ax.set_xlabel("k (passages retrieved per query)")
        ax.set_title("Recall of gold paragraphs vs k")
        ax.legend(fontsize=8)
    else:
        ax.bar(range(len(rows)), [100 * s["recall"] for s in rows])
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([s["label"] for s in rows], rotation=20, ha="right", fontsize=8)
        for i, s in enumerate(rows):
            ax.annotate(f"{fmt(s['docs_avg'])} docs", (i, 100 * s["recall"]), ha="center", va="bottom", fontsize=7)
        ax.set_title("Recall of gold paragraphs handed to the generator")
    ax.set_ylabel("recall %")
    ax.set_ylim(0, 105)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_node_times(summaries: list[dict], path: str) -> bool:
    rows = [s for s in summaries if s.get("node_s_avg")]
    if not rows:
        return False
    plt = _plt()
    nodes: list[str] = []
    for s in rows:
        for n in s["node_s_avg"]:
            if n not in nodes:
                nodes.append(n)
    fig, ax = plt.subplots(figsize=(7.6, max(2.4, 0.5 * len(rows) + 1.6)))
    left = [0.0] * len(rows)
    cmap = plt.get_cmap("tab20")
    for j, n in enumerate(nodes + ["(outside nodes)"]):
        vals = [
            (s.get("overhead_s_avg") or 0.0) if n == "(outside nodes)" else s["node_s_avg"].get(n, 0.0) for s in rows
        ]
        ax.barh(range(len(rows)), vals, left=left, label=n, color="lightgray" if n == "(outside nodes)" else cmap(j % 20))
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([s["label"] for s in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per question (mean)")
    ax.set_title("Time per node")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the bars, never over them
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _grid(summary: dict) -> tuple:
    """Where a run sits in an eval's grid, beyond its method: runs at the same place pair."""
    return tuple(summary.get(k) for k in ("k", "retrieval", "retrieval_only", "llm"))


def references(summaries: list[dict], ref: str | None = None) -> dict[str, str]:
    """Each run's reference label, by run label: the run labelled ``ref`` when one is, else the run
    whose method is ``ref`` (vanilla when None) at the same place in the grid (k, retrieval, LLM),
    else the first such run, else (with ``ref`` None) the first run; empty when none fits. A
    reference is not paired with itself: it maps to nothing."""
    by_label = {s["label"]: s for s in summaries}
    if ref is not None and ref in by_label:
        refs = [ref]
    else:
        refs = [lb for lb, s in by_label.items() if s.get("method") == (ref or "vanilla")]
        if not refs and ref is None:
            refs = list(by_label)[:1]
    return {label: next((r for r in refs if _grid(by_label[r]) == _grid(s)), refs[0])
            for label, s in by_label.items() if refs and label not in refs}


def paired_runs(summaries: list[dict], records: dict[str, list[dict]],
                ref: str | None = None) -> tuple[str, list[tuple[str, dict]]]:
    """The reference (the run labelled ``ref``, else the runs of method ``ref``; with ``ref`` None,
    vanilla if run, else the first run) and, for every other run with records, its paired
    differences from it by metric (:data:`_PCT`); no runs when fewer than two have records or none
    is the reference. With several reference runs (``--k 2,4``), each run pairs with the one of its
    own ``k`` (and retrieval, LLM), and its row names that reference (:func:`references`)."""
    labels = [s["label"] for s in summaries if records.get(s["label"])]
    if len(labels) < 2:
        return "", []
    by_label = {s["label"]: s for s in summaries if s["label"] in labels}
    own_ref = references(list(by_label.values()), ref)
    if not own_ref:  # every run is a reference (vanilla at k 2 and 4, nothing else)
        return "", []
    refs = sorted(set(own_ref.values()), key=labels.index)
    runs = []
    for label, own in own_ref.items():
        diffs = {p.metric: p for p in paired_differences(records[label], records[own], metrics=_PCT)}
        if diffs:
            runs.append((label if len(refs) == 1 else f"{label} (against {own})", diffs))
    name = refs[0] if len(refs) == 1 else str(by_label[refs[0]].get("method") or refs[0])
    return name, runs


Paired = tuple[str, list[tuple[str, dict]]]  # what paired_runs returns


def paired_section(summaries: list[dict], records: dict[str, list[dict]], paired: Paired | None = None) -> list[str]:
    """Report lines comparing every run with the reference (vanilla if run, else the first run)
    question by question (``paired``: :func:`paired_runs`'s result, when already computed);
    nothing when fewer than two runs have records."""
    ref, runs = paired or paired_runs(summaries, records)
    if not ref:
        return []
    lines = [f"## Against {ref}, question by question", "",
             ("Mean per-question difference (percent points) with its 95% paired bootstrap interval; "
              "`*` marks an interval that excludes 0 (on 10 paired questions or more). A difference whose "
              "interval holds 0 is not settled by this sample; recall pairs only the questions that have gold "
              "paragraphs."), "",
             "| run | n (paired) | EM | F1 | acc | recall |", "| --- | --- | --- | --- | --- | --- |"]
    for label, diffs in runs:
        n = max(p.n for p in diffs.values())
        cells = [format_cell(diffs[m], n) if m in diffs else "-" for m in _PCT]
        lines.append(f"| {label} | {n} | " + " | ".join(cells) + " |")
    return lines + [""]


def plot_paired(summaries: list[dict], records: dict[str, list[dict]], path: str, ref: str | None = None,
                paired: Paired | None = None) -> bool:
    """Each run minus the reference, EM / F1 / acc, as a point with its 95% paired bootstrap
    interval beside a line at 0: a filled point is a settled difference (the interval excludes 0
    on enough questions), a hollow one is not. False (no file) with fewer than two runs.
    ``paired``: :func:`paired_runs`'s result, when already computed."""
    ref, runs = paired or paired_runs(summaries, records, ref)
    runs = [(label, diffs) for label, diffs in runs if any(m in diffs for m in ("em", "f1", "acc"))]
    if not runs:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, max(2.2, 0.55 * len(runs) + 1.4)))
    colors = {"em": "tab:blue", "f1": "tab:orange", "acc": "tab:green"}
    for j, m in enumerate(("em", "f1", "acc")):
        for i, (label, diffs) in enumerate(runs):
            d = diffs.get(m)
            if d is None:
                continue
            x, lo, hi = 100 * d.mean, 100 * d.low, 100 * d.high
            ax.errorbar([x], [i + (j - 1) * 0.22], xerr=[[x - lo], [hi - x]], fmt="o", color=colors[m], capsize=3,
                        markersize=5, markerfacecolor=colors[m] if d.settled else "white")
    ax.axvline(0, color="gray", linewidth=1)
    ax.set_yticks(range(len(runs)))
    ax.set_yticklabels([label for label, _ in runs], fontsize=8)
    ax.invert_yaxis()
    n = max(p.n for _, diffs in runs for p in diffs.values())
    ax.set_xlabel(f"minus {ref}, percent points (95% paired bootstrap interval)")
    dataset = summaries[0].get("dataset")
    ax.set_title(f"{dataset + ': ' if dataset else ''}each run minus {ref}, question by question (n={n})", fontsize=10)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", linestyle="", color=c, label="acc" if m == "acc" else m.upper())
               for m, c in colors.items()]
    handles.append(Line2D([], [], marker="o", linestyle="", color="gray", markerfacecolor="white",
                          label="interval\nholds 0"))
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _plot_lines(summaries: list[dict], records: dict[str, list[dict]], plots_dir: str, paired: Any) -> list[str]:
    """The report's pictures, each drawn into ``plots_dir`` and linked; a plot that fails is
    one line saying so (a plot must never lose the results)."""
    lines: list[str] = []
    try:
        if plot_paired(summaries, records, os.path.join(plots_dir, "paired.png"), paired=paired):
            lines += ["![Against the reference, question by question](plots/paired.png)", ""]
    except Exception as e:
        lines += [f"(paired differences: plot failed: {type(e).__name__}: {e})", ""]
    plots = [
        ("answers.png", plot_answer_metrics, "Answer quality per method"),
        ("recall.png", plot_recall, "Recall of gold supporting paragraphs"),
        ("node_times.png", plot_node_times, "Time per node"),
    ]
    for name, fn, title in plots:
        try:
            ok = fn(summaries, os.path.join(plots_dir, name))
        except Exception as e:
            lines += [f"({title}: plot failed: {type(e).__name__}: {e})", ""]
            continue
        if ok:
            lines += [f"![{title}](plots/{name})", ""]
    return lines


def _subset_lines(summaries: list[dict]) -> list[str]:
    """The scores of each subset of a file that mixes several (none for one)."""
    subsets = [s for s in summaries if s.get("by_subset")]
    if not subsets:
        return []
    lines = ["## By subset", "", "| run | subset | n | EM | F1 | acc | recall |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in subsets:
        for name, v in s["by_subset"].items():
            lines.append(
                f"| {s['label']} | {name} | {v['n']} | {fmt(v['em'], True)} | {fmt(v['f1'], True)} | "
                f"{fmt(v['acc'], True)} | {fmt(v['recall'], True)} |"
            )
    return lines + [""]


def _node_time_lines(summaries: list[dict]) -> list[str]:
    """Each run's seconds per node and their share of its wall time, then the time outside nodes."""
    lines = ["## Time per node", "", "| run | node | s/question | share of wall |", "| --- | --- | --- | --- |"]
    for s in summaries:
        wall = s.get("latency_s_avg") or 0.0
        for node, t in (s.get("node_s_avg") or {}).items():
            lines.append(f"| {s['label']} | {node} | {t:.4f} | {100 * t / wall if wall else 0:.1f}% |")
        if s.get("overhead_s_avg") is not None:
            lines.append(f"| {s['label']} | (outside nodes) | {s['overhead_s_avg']:.4f} | {fmt(s['overhead_pct'])}% |")
    return lines + [""]


def _run_lines(s: dict, recs: list[dict], dataset: str) -> list[str]:
    """One run's section: where its per-question results are, its failures (the first 10) and
    its first five answers."""
    errs = [r for r in recs if r.get("error")]
    # the folder the run wrote (until 2026-12-03 the names as read: `runs/nq/dev/...` for `runs/nq_dev/...`)
    where = os.path.join(run_dir("", dataset, s["label"]), "results.jsonl").replace(os.sep, "/")
    lines = [f"## {s['label']}", "", f"Per-question results: `{where}`.", ""]
    if errs:
        lines += [f"{len(errs)} question(s) failed:", ""]
        lines += [f"- `{r['id']}`: {r['error']}" for r in errs[:10]]
        lines.append("")
    shown = [r for r in recs if not r.get("error")][:5]
    if shown:
        lines += ["| question | gold | prediction | EM | recall |", "| --- | --- | --- | --- | --- |"]
        for r in shown:
            # each cell on one line (a question's line break split the row until 2026-12-03)
            q, g, p = (" ".join(t.replace("|", "/").split())[:n] for t, n in
                       ((r["question"], 90), (" / ".join(r["gold"][:3]), 50), (r["prediction"] or "", 60)))
            lines.append(f"| {q} | {g} | {p} | {fmt(r.get('em'), True)} | {fmt(r.get('recall'), True)} |")
        lines.append("")
    return lines


def write_report(
    out: str,
    summaries: list[dict],
    records: dict[str, list[dict]],
    *,
    dataset: str = "",
    data: str = "",
    argv: list[str] | None = None,
) -> str:
    """Write ``OUT/report.md``, ``OUT/summary.json`` and ``OUT/plots/*.png`` of this command's runs
    (each run's folder keeps its own summary); returns the report's path. An earlier command's
    pictures are removed (a ``paired.png`` the report no longer named stayed until 2026-12-03)."""
    plots = os.path.join(out, "plots")
    os.makedirs(plots, exist_ok=True)
    for old in os.listdir(plots):
        if old.endswith(".png"):
            os.remove(os.path.join(plots, old))
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summaries, fh, indent=1)
    lines = [f"# Evaluation: {dataset}", ""]
    if argv:
        lines += ["Command:", "", "```", " ".join(shlex.quote(a) for a in argv), "```", ""]
    n = summaries[0]["n"] if summaries else 0
    lines += [
        f"Data: `{data}`, {n} questions. EM, F1, acc and recall in percent; empty answers counts the questions "
        "the reader left unanswered (the embedded model abstains so); docs, LLM calls, web calls and "
        "input tokens are means per question; parse failures is the number of structured LLM decisions "
        "that needed the lenient reader or the repair retry, or failed (sum over questions); guard hits is "
        "the share (%) of questions a looping method ended at its iteration guard; s/question is wall "
        "time; overhead is the time outside all nodes as a share of wall time.",
        "",
        summary_table(summaries),
        "",
    ]
    paired = paired_runs(summaries, records)  # the bootstrap once, for the table and its picture
    lines += paired_section(summaries, records, paired)
    lines += _plot_lines(summaries, records, os.path.join(out, "plots"), paired)
    lines += _subset_lines(summaries)
    lines += _node_time_lines(summaries)
    for s in summaries:
        lines += _run_lines(s, records.get(s["label"]) or [], dataset)
    path = os.path.join(out, "report.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    return path
