"""Pool replays of MIGRES's reader (``bench/migres_reader_replay.py``) over several files.

Each ``--set`` names one file's replay output and the two runs it replayed over; the
questions of all sets are pooled (ids prefixed by the set's position, so files may share
ids) and the variant is paired with the recorded MIGRES run and with vanilla, question by
question (95% bootstrap intervals, ``ragraphs.evaluation.paired``), as is the recorded run
with vanilla:

    python bench/migres_reader_pool.py --variant "top+later:nostatements+noknowledge" \\
        --set REPLAY.json MIGRES/results.jsonl VANILLA/results.jsonl [--set ...]
"""

from __future__ import annotations

import argparse
import json
import sys

from migres_reader_replay import _records  # the same directory: the replay's reader of eval records

from ragraphs.evaluation.paired import format_difference, paired_differences

METRICS = ("em", "f1", "acc")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", required=True, help="the replayed variant, as named in the replay files")
    ap.add_argument("--set", nargs=3, action="append", required=True, metavar=("REPLAY", "MIGRES", "VANILLA"))
    args = ap.parse_args(argv)
    runs: dict[str, list[dict]] = {"variant": [], "recorded": [], "vanilla": []}
    for k, (replay, migres, vanilla) in enumerate(args.set):
        with open(replay, encoding="utf-8") as f:
            variant = json.load(f)["per_question"][args.variant]
        recorded, van = _records(migres), _records(vanilla)
        for qid in sorted(set(variant) & set(recorded) & set(van)):
            for name, rec in (("variant", variant[qid]), ("recorded", recorded[qid]), ("vanilla", van[qid])):
                runs[name].append({"id": f"{k}:{qid}", **{m: rec[m] for m in METRICS}})
    n = len(runs["variant"])
    mean = {name: {m: round(100 * sum(r[m] for r in rs) / n, 1) for m in METRICS} for name, rs in runs.items()}
    out = {"n": n, "variant": args.variant, "means": mean}
    for name, a, b in (("variant_minus_recorded", "variant", "recorded"), ("variant_minus_vanilla", "variant", "vanilla"),
                       ("recorded_minus_vanilla", "recorded", "vanilla")):
        out[name] = {d.metric: format_difference(d) for d in paired_differences(runs[a], runs[b], metrics=METRICS)}
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
