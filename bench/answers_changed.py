"""The same runs before and after a change (a prompt, a setting, a patch): what moved, paired.

    python bench/answers_changed.py BEFORE_DIR AFTER_DIR [--out FILE.md]

For every (dataset, run label) found under both directories (the layout `ragraphs eval --out`
writes), on the questions both answered: the empty answers of each, the answers that changed,
the answers whose trace says that blank lines were skipped (``blank_lines``, written only by
`bench/results/blank_line_answers/continuation.patch`), the yes/no questions (gold "yes" or
"no") and the EM on them before and after, and the paired differences of EM / F1 / accuracy
(after minus before, 95% bootstrap). `bench/paired.py` pairs runs of different labels; this
script pairs the same label across two directories.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paired import runs  # noqa: E402

from ragraphs.evaluation.paired import format_difference, paired_differences  # noqa: E402


def _empty(r: dict) -> bool:
    return not str(r.get("prediction") or "").strip()


def table(before: dict, after: dict) -> list[str]:
    lines = ["| dataset | run | n | empty before | empty after | answers changed | read after blank lines | "
             "yes/no questions: n, EM before -> after | EM after - before | F1 | accuracy |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key in sorted(set(before) & set(after)):
        b, a = before[key], after[key]
        ids = sorted(set(a) & set(b))
        if not ids:
            continue
        changed = sum(1 for i in ids if (a[i].get("prediction") or "") != (b[i].get("prediction") or ""))
        skipped = sum(1 for i in ids if any(e.get("blank_lines") for e in a[i].get("trace") or []))
        yn = [i for i in ids if str((b[i].get("gold") or [""])[0]).strip().lower() in ("yes", "no")]
        yn_cell = f"{len(yn)}, {sum(b[i].get('em') or 0 for i in yn):.0f} -> {sum(a[i].get('em') or 0 for i in yn):.0f}"
        diffs = {d.metric: format_difference(d) for d in paired_differences({i: a[i] for i in ids}, {i: b[i] for i in ids},
                                                                             metrics=("em", "f1", "acc"))}
        lines.append(f"| {key[0]} | {key[1]} | {len(ids)} | {sum(_empty(b[i]) for i in ids)} | {sum(_empty(a[i]) for i in ids)} "
                     f"| {changed} | {skipped} | {yn_cell} | {diffs.get('em', '-')} | {diffs.get('f1', '-')} | {diffs.get('acc', '-')} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--out", help="also write the table to this Markdown file")
    args = ap.parse_args(argv)
    text = "\n".join(table(runs([args.before]), runs([args.after])))
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
