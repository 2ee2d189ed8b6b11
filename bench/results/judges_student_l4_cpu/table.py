"""The table and the loss curve of this folder, from results.json (the sweep's format).

    python bench/results/judges_student_l4_cpu/table.py     # writes table.md and loss.png here

``row`` and ``loss_plot`` are read by ../judges_ffn_pruned/table.py too.
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = {"stu_x0": "the shipped student (6 layers), as it is",
         "stu_x0_l4": "its first 4 layers, untrained",
         "stu_5e-5_x1_l4": "those 4 layers, one epoch on the soft labels"}
# call 2's best four-layer student from the base weights, two epochs on a GPU (docs/judges.md)
GPU_L4 = ("dist2_7e-5_x2_l4_s1", "4 layers from the base weights, two epochs (GPU, call 2)")
GPU_RESULTS = HERE.parent / "judges_distill" / "run2" / "results.json"
ROWS = ["val:evaluator", "val:pair", "val:nli"]
HEAD = ["| recipe | what | validation evaluator | pair | NLI | mean | PopQA half 1 | minutes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |"]
CAPTION = ("AUC / best-cut accuracy (%), fp32, the validation items (766 / 456 / 206) and the PopQA dev "
           "half 1 evaluator row (928); minutes on 2 cores, measurement included\n\n")


def row(name: str, what: str, rec: dict, minutes: bool = True) -> str:
    """One table line: a recipe's last measurement (AUC / best-cut accuracy per row); minutes
    on 2 cores unless minutes=False (a device run)."""
    e = rec["epochs"][-1]
    aucs = [e[r]["auc"] for r in ROWS]
    cells = [f"{e[r]['auc']:.3f} / {100 * e[r]['best_acc']:.1f}" for r in ROWS]
    pq = e["evaluator:popqa@1/2"]
    took = f"{rec['seconds'] / 60:.0f}" if minutes else "-"
    return (f"| `{name}` | {what} | " + " | ".join(cells)
            + f" | {sum(aucs) / 3:.4f} | {pq['auc']:.3f} / {100 * pq['best_acc']:.1f} | {took} |")


def loss_plot(curve: list, png: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.plot([s for s, _ in curve], [v for _, v in curve], marker=".")
    ax.set_xlabel("step (batches of 16)")
    ax.set_ylabel("BCE on the soft labels, mean of 50 steps")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main() -> None:
    res = json.loads((HERE / "results.json").read_text())
    gpu = json.loads(GPU_RESULTS.read_text())
    lines = HEAD + [row(n, w, res[n]) for n, w in NAMES.items()] + [row(*GPU_L4, gpu[GPU_L4[0]], minutes=False)]
    (HERE / "table.md").write_text(CAPTION + "\n".join(lines) + "\n")
    print("\n".join(lines))
    loss_plot(res["stu_5e-5_x1_l4"]["loss"][0], HERE / "loss.png", "four layers cut from the student, one epoch (2-core CPU)")


if __name__ == "__main__":
    main()
