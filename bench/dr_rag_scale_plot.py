"""DR-RAG recall@k against the size of the corpus searched, one panel per dataset.

Reads the JSON that ``ragraphs eval --method dr-rag --retrieval-only --json`` prints (or a
run's ``summary.json``), any number of them: each run gives one point, at its
``corpus_passages``, per strategy. The smallest corpus of a dataset is its reference, and a
dashed line marks #15's scale target (CFS at most 5 points under that reference)::

    python bench/dr_rag_scale_plot.py runs/tenfold.*.json --out scale.png [--table]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

#: how many points under the reference corpus #15 lets CFS fall at about tenfold
ALLOWED_FALL = 5.0


def points(paths: list[str]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """dataset -> strategy -> [(corpus passages, recall in points)], sorted by corpus size."""
    out: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(lambda: defaultdict(list))
    for path in paths:
        summary = json.loads(Path(path).read_text())
        for run in summary.get("runs") or [summary]:
            size, recall = run.get("corpus_passages"), run.get("recall")
            if size is None or recall is None:
                raise SystemExit(f"{path}: a run without corpus_passages or recall (not a --retrieval-only summary?)")
            out[run["dataset"]][run.get("strategy") or run["method"]].append((int(size), 100.0 * float(recall)))
    return {d: {s: sorted(set(v)) for s, v in by.items()} for d, by in out.items()}


def table(data: dict[str, dict[str, list[tuple[int, float]]]]) -> str:
    """A Markdown table: each point with its size over the reference and its change from it."""
    rows = ["| dataset | strategy | passages | x reference | recall@k | change |", "| --- | --- | --- | --- | --- | --- |"]
    for dataset, by in sorted(data.items()):
        for strategy, pts in sorted(by.items()):
            base_n, base_r = pts[0]
            for n, r in pts:
                rows.append(f"| {dataset} | {strategy} | {n:,} | {n / base_n:.1f} | {r:.1f} | {r - base_r:+.1f} |")
    return "\n".join(rows)


def plot(data: dict[str, dict[str, list[tuple[int, float]]]], out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, axes = plt.subplots(1, len(data), figsize=(4.2 * len(data), 3.6), squeeze=False, sharey=True)
    for ax, (dataset, by) in zip(axes[0], sorted(data.items())):
        for strategy, pts in sorted(by.items()):
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker="o", label=strategy.upper())
        if "cfs" in by:
            floor = by["cfs"][0][1] - ALLOWED_FALL
            ax.axhline(floor, linestyle="--", color="grey", linewidth=1)
            ax.annotate(f"#15: CFS >= {floor:.1f}", (by["cfs"][0][0], floor), textcoords="offset points",
                        xytext=(2, 3), fontsize=8, color="grey")
        ax.set_xscale("log")
        sizes = sorted({n for pts in by.values() for n, _ in pts})
        ax.set_xticks(sizes, [f"{n:,}\n{n / sizes[0]:.1f}x" for n in sizes], fontsize=8)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(dataset)
        ax.set_xlabel("passages in the corpus")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("recall@4 of the gold paragraphs")
    axes[0][0].legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("summaries", nargs="+", help="eval --retrieval-only --json outputs or summary.json files")
    ap.add_argument("--out", default="dr_rag_scale.png", help="the PNG to write")
    ap.add_argument("--table", action="store_true", help="also print the points as a Markdown table")
    args = ap.parse_args(argv)
    data = points(args.summaries)
    plot(data, args.out)
    if args.table:
        print(table(data))


if __name__ == "__main__":
    main()
