"""Pool the two halves of the CPU cross-fit: cf0 read on dev half 1, cf1 read on dev half 0.

Each half was measured by `bash bench/judges_crossfit_cpu.sh K`, which writes, in one result
directory, `cfK_hH/` and `shipped_hH/` (judge-eval rows and DR-RAG CFS recall, H = 1 - K).
Together the two halves cover every question of each dev file once, each read by a judge
that did not train on it.

    python bench/judges_crossfit_pool.py RESULTS_CF0 RESULTS_CF1 OUT_DIR

writes OUT_DIR/table.md and OUT_DIR/pooled.png. Judge rows: each half's best-cut accuracy and
AUC, and their item-weighted mean (the mean of two AUCs, not the AUC of the pooled items:
each half's scores sit at their own cut). DR-RAG: recall@4 pooled over the questions with gold
(weighted by each half's n with gold), which is the recall of the whole dev file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

FILES = ("hotpotqa", "2wikimultihopqa", "musique")
ROLES = ("evaluator", "pair", "nli")


def _read(path: Path) -> dict | None:
    if not path.is_file():
        return None
    row = json.loads(path.read_text())
    return row[0] if isinstance(row, list) else row


def _both(parts, name: str) -> list[tuple[str, dict, dict]]:
    """(half, shipped row, cross-fitted row) for each half, or [] unless every half has both."""
    got = []
    for cf, h, d in parts:
        a, b = _read(d / f"shipped_h{h}" / name), _read(d / f"{cf}_h{h}" / name)
        if a and b:
            got.append((h, a, b))
    return got if len(got) == len(parts) else []


def _weighted(got, which: int, key: str, weight: str) -> float:
    """The mean of ``key`` over the halves (``which``: 1 shipped, 2 cross-fitted), weighted by
    the shipped row's ``weight`` (the same questions for both judges)."""
    return sum(x[which][key] * x[1][weight] for x in got) / sum(x[1][weight] for x in got)


def judge_rows(parts) -> list[dict]:
    rows = []
    for f in FILES:
        for role in ROLES:
            got = _both(parts, f"{role}.{f}.json")
            if not got:
                continue
            acc = "best_threshold_accuracy"
            rows.append({"file": f, "role": role, "n": sum(a["n"] for _, a, _ in got), "halves": got,
                         "shipped_auc": _weighted(got, 1, "auc", "n"), "cf_auc": _weighted(got, 2, "auc", "n"),
                         "shipped_acc": _weighted(got, 1, acc, "n"), "cf_acc": _weighted(got, 2, acc, "n")})
    return rows


def recall_rows(parts) -> list[dict]:
    rows = []
    for f in FILES:
        got = _both(parts, f"drrag.{f}.json")
        if not got:
            continue
        pool = lambda which, key: _weighted(got, which, key, "n_with_gold")  # noqa: E731
        rows.append({"file": f, "n_with_gold": sum(a["n_with_gold"] for _, a, _ in got), "halves": got,
                     "shipped": pool(1, "recall"), "cf": pool(2, "recall"),
                     "shipped_all": pool(1, "recall_all"), "cf_all": pool(2, "recall_all")})
    return rows


def table(jrows: list[dict], rrows: list[dict]) -> str:
    fmt = lambda r: f"{100 * r['best_threshold_accuracy']:.1f} / {r['auc']:.3f}"  # noqa: E731
    out = ["| dev file (items, both halves) | role | half 1: shipped -> cf0 | half 0: shipped -> cf1 "
           "| both halves, item-weighted mean: shipped -> cross-fitted | change in AUC |",
           "| --- | --- | --- | --- | --- | --- |"]
    for r in jrows:
        per = {h: f"{fmt(a)} -> {fmt(b)}" for h, a, b in r["halves"]}
        out.append(f"| {r['file']} ({r['n']}) | {r['role']} | {per['1']} | {per['0']} | "
                   f"{100 * r['shipped_acc']:.1f} / {r['shipped_auc']:.3f} -> {100 * r['cf_acc']:.1f} / {r['cf_auc']:.3f} "
                   f"| {r['cf_auc'] - r['shipped_auc']:+.3f} |")
    out += ["", "| dev file | n with gold (half 1 + half 0) | half 1: shipped -> cf0 | half 0: shipped -> cf1 "
            "| whole file: shipped -> cross-fitted | change | all gold in the 4, whole file |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rrows:
        per = {h: f"{100 * a['recall']:.1f} -> {100 * b['recall']:.1f}" for h, a, b in r["halves"]}
        ns = {h: a["n_with_gold"] for h, a, _ in r["halves"]}
        out.append(f"| {r['file']} | {r['n_with_gold']} ({ns['1']} + {ns['0']}) | {per['1']} | {per['0']} | "
                   f"{100 * r['shipped']:.1f} -> **{100 * r['cf']:.1f}** | {100 * (r['cf'] - r['shipped']):+.1f} | "
                   f"{100 * r['shipped_all']:.1f} -> {100 * r['cf_all']:.1f} |")
    return "\n".join(out) + "\n"


def plot(jrows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.2))
    labels = [f"{r['role']} {r['file'].replace('2wikimultihopqa', '2wiki')}" for r in jrows]
    for i, r in enumerate(jrows):
        for h, a, b in r["halves"]:
            dx = -0.12 if h == "1" else 0.12
            ax.annotate("", xy=(i + dx, b["auc"]), xytext=(i + dx, a["auc"]),
                        arrowprops={"arrowstyle": "->", "color": "tab:green" if b["auc"] >= a["auc"] else "tab:red"})
            ax.plot([i + dx], [a["auc"]], "o", color="grey", ms=4)
    ax.set_xticks(range(len(jrows)), labels, rotation=30, ha="right")
    ax.set_ylabel("dev AUC (judge-eval, int8)")
    ax.set_title("shipped (grey dot) -> cross-fitted judge (arrow head);\nleft: half 1 read by cf0, right: half 0 read by cf1")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cf0", type=Path, help="result directory of judges_crossfit_cpu.sh 0 (cf0_h1/, shipped_h1/)")
    ap.add_argument("cf1", type=Path, help="result directory of judges_crossfit_cpu.sh 1 (cf1_h0/, shipped_h0/)")
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    parts = [("cf0", "1", args.cf0), ("cf1", "0", args.cf1)]  # (judge, half it reads, its results)
    jrows, rrows = judge_rows(parts), recall_rows(parts)
    if not jrows or not rrows:
        raise SystemExit("no row has both halves: check the two result directories")
    args.out.mkdir(parents=True, exist_ok=True)
    text = table(jrows, rrows)
    (args.out / "table.md").write_text(text)
    plot(jrows, args.out / "pooled.png")
    print(text)


if __name__ == "__main__":
    main()
