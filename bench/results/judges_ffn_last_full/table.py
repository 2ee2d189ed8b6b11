"""The table, the speed table and the loss curve of this folder.

    python bench/results/judges_ffn_last_full/table.py     # writes table.md and loss.png here
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "judges_student_l4_cpu"))
from table import CAPTION, HEAD, loss_plot, row  # noqa: E402

L4 = HERE.parent / "judges_student_l4_cpu" / "results.json"
PRUNED = HERE.parent / "judges_ffn_pruned" / "results.json"
TRAINED = "ffn512L_more3_2e-5_x1"


def speed_lines() -> list[str]:
    out = ["| file | run | ms per 256-token pair | ms per 200-character strip | ms per (q, d1, d2) triple |",
           "| --- | --- | --- | --- | --- |"]
    for f in sorted((HERE / "speed").glob("*.json"), key=lambda p: (p.stem.split(".")[1], p.stem)):
        name, run = f.stem.split(".")
        s = json.loads(f.read_text().strip().splitlines()[-1])
        out.append(f"| {name} | run {run} | {s['ms_per_256_token_pair']} | "
                   f"{s['ms_per_200_char_strip']} | {s['ms_per_triple']} |")
    return out


def main() -> None:
    l4 = json.loads(L4.read_text())
    pruned = json.loads(PRUNED.read_text())
    x0 = {m: json.loads((HERE / "x0" / f"results_{m}.json").read_text())["ffn512L_x0"] for m in ("whole", "add")}
    lines = HEAD + [row("stu_x0", "the shipped student (6 layers, 1536 wide), as it is", l4["stu_x0"]),
                    row("ffn512_more2_2e-5_x1", "every layer cut to 512, three epochs (step 4 of ../judges_ffn_pruned)",
                        pruned["ffn512_more2_2e-5_x1"]),
                    row("ffn512L_x0", "that, the last layer's feed-forward the student's again (B), as it is", x0["whole"]),
                    row("ffn512L_x0", "that, the student's dropped neurons added back (C), as it is", x0["add"])]
    trained = HERE / "results.json"
    res = json.loads(trained.read_text()) if trained.is_file() else {}
    if TRAINED in res:
        lines.append(row(TRAINED, "B, one more epoch, lr 2e-5", res[TRAINED]))
    pq4 = HERE / "results_pq4.json"
    if pq4.is_file():
        lines.append(row("ffn512_pq4_2e-5_x1", "every layer at 512 (step 4 model), one more epoch, PopQA read 4 times (step 4)",
                         json.loads(pq4.read_text())["ffn512_pq4_2e-5_x1"]))
    speed = speed_lines()
    (HERE / "table.md").write_text(CAPTION + "\n".join(lines) + "\n\nSpeed, `python bench/judges_speed.py --n 128 "
                                   "--repeat 5`, each run's files in turn (runs 1-2: step 1; runs 3-4: step 4)\n\n" + "\n".join(speed) + "\n")
    print("\n".join(lines + [""] + speed))
    if TRAINED in res:
        curve = [(st, v) for st, v in res[TRAINED]["loss"][0]]
        loss_plot(curve, HERE / "loss.png", "the 512 cut with its last layer whole, one more epoch (2-core CPU)")


if __name__ == "__main__":
    main()
