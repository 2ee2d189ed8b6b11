"""Plot the judges' training loss curve from the description written by ``train-judge``.

    python bench/judges_loss_plot.py [ragraphs/data/judges/ragraphs_judge.json] [docs/judges_loss.png]
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    src = sys.argv[1] if len(sys.argv) > 1 else "ragraphs/data/judges/ragraphs_judge.json"
    out = sys.argv[2] if len(sys.argv) > 2 else "docs/judges_loss.png"
    meta = json.load(open(src, encoding="utf-8"))
    steps, loss = zip(*meta["loss_curve"])
    cfg = meta["config"]
    fig, ax = plt.subplots(figsize=(6.4, 3.4), dpi=110)
    ax.plot(steps, loss, marker=".", lw=1)
    ax.axhline(0.693, color="grey", ls="--", lw=0.8, label="ln 2 (chance)")
    phases = meta.get("phases") or [{"lr": cfg["lr"], "steps": max(steps)}]
    start = 0
    for i, ph in enumerate(phases):
        if i:
            ax.axvline(start, color="black", lw=0.8)
        ax.text(start + 10, 0.705, f"lr {ph['lr']:g}", fontsize=8, va="bottom")
        start += ph["steps"]
    ax.set_ylim(top=0.74)
    epochs = sum(float(ph.get("epochs", 1)) for ph in phases)
    ax.set_xlabel(f"step (batch {cfg['batch_size']}, {epochs:g} epoch(s) in {len(phases)} phase(s); "
                  f"{meta['train_items']} items per epoch)")
    ax.set_ylabel(f"binary cross-entropy (mean of {meta.get('loss_every', 20)} steps)")
    ax.set_title("judges: multi-task cross-encoder fine-tuned from MiniLM")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)
    print(out)


if __name__ == "__main__":
    main()
