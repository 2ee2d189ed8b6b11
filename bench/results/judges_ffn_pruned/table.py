"""The table, the speed table and the loss curve of this folder.

    python bench/results/judges_ffn_pruned/table.py     # writes table.md and loss.png here
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "judges_student_l4_cpu"))
from table import CAPTION, HEAD, row, loss_plot  # noqa: E402

L4 = HERE.parent / "judges_student_l4_cpu" / "results.json"
LATER = [("ffn512_more_2e-5_x1", "one more epoch from that, lr 2e-5 (step 3)"),
         ("ffn512_more2_2e-5_x1", "one more epoch from that, lr 2e-5 (step 4)")]


def speed_lines() -> list[str]:
    out = ["| file | run | ms per 256-token pair | ms per 200-character strip | ms per (q, d1, d2) triple |",
           "| --- | --- | --- | --- | --- |"]
    for f in sorted((HERE / "speed").glob("*.json")):
        name, run = f.stem.split(".")
        s = json.loads(f.read_text().strip().splitlines()[-1])
        out.append(f"| {name} | {run} | {s['ms_per_256_token_pair']} | {s['ms_per_200_char_strip']} | {s['ms_per_triple']} |")
    return out


def main() -> None:
    res = json.loads((HERE / "results.json").read_text())
    l4 = json.loads(L4.read_text())
    later = [(n, w) for n, w in LATER if n in res]  # steps 3 and 4, each from the one before
    lines = HEAD + [row("stu_x0", "the shipped student (6 layers, 1536 wide), as it is", l4["stu_x0"]),
                    row("ffn512_x0", "its feed-forward cut to 512, untrained", res["ffn512_x0"]),
                    row("ffn512_5e-5_x1", "that cut, one epoch on the soft labels", res["ffn512_5e-5_x1"]),
                    *(row(n, w, res[n]) for n, w in later),
                    row("stu_5e-5_x1_l4", "its first 4 layers, one epoch on the soft labels", l4["stu_5e-5_x1_l4"])]
    speed = speed_lines()
    (HERE / "table.md").write_text(CAPTION + "\n".join(lines) + "\n\nSpeed, `python bench/judges_speed.py --n 128 "
                                   "--repeat 5`, in turn (run 1, 2: step 1; b1, b2: step 1b)\n\n" + "\n".join(speed) + "\n")
    print("\n".join(lines + [""] + speed))
    curve, offset = [], 0  # the epochs one after another, steps counted on
    for n in ["ffn512_5e-5_x1"] + [n for n, _ in later]:
        part = res[n]["loss"][0]
        curve += [(offset + st, v) for st, v in part]
        offset += part[-1][0] + 1
    loss_plot(curve, HERE / "loss.png",
              "the student's feed-forward cut to 512, " + (f"{1 + len(later)} epochs in a row" if later else "one epoch")
              + " (2-core CPU)")


if __name__ == "__main__":
    main()
