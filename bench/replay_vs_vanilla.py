"""A replayed reader's answers against vanilla's, paired by question, over one or more files
pooled: the per-question scores of ``bench/migres_reader_replay.py``'s JSON files against the
``results.jsonl`` of vanilla runs of the same questions.

    python bench/replay_vs_vanilla.py REPLAY.json:VANILLA_RESULTS.jsonl [...]

The reference may also be another replay's JSON (``REPLAY.json:OTHER_REPLAY.json``), to pair
two replayed readers, and either side may be a run's ``results.jsonl``, to pair two whole runs.

For example, MuSiQue's dev file and extra training questions pooled (the README's n = 158):

    python bench/replay_vs_vanilla.py \\
        bench/results/migres_reader_followups_2026_11_27/replay_dev_musique.json:runs/mq27/musique/runs/musique/vanilla/results.jsonl \\
        bench/results/migres_reader_followups_2026_11_27/replay_other_musique.json:runs/ns/musique/runs/musique/vanilla/results.jsonl
"""

from __future__ import annotations

import json
import sys

from ragraphs.evaluation.paired import format_difference, paired_differences


def _replayed(path: str) -> list[dict]:
    per_question = json.load(open(path))["per_question"]
    variant = next(iter(per_question.values()))  # the replay's one variant
    return [{"id": qid, **scores} for qid, scores in variant.items()]


def _records(path: str) -> list[dict]:
    """A replay's JSON or a run's results.jsonl, as per-question records."""
    if path.endswith(".json"):
        return _replayed(path)
    return [json.loads(line) for line in open(path) if line.strip()]


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit(__doc__)
    replayed, vanilla = [], []
    for pair in argv:
        replay, _, results = pair.rpartition(":")
        replayed += _records(replay)
        vanilla += _records(results)
    diffs = paired_differences(replayed, vanilla, metrics=("em", "f1", "acc"))
    print(f"n = {diffs[0].n}: " + ", ".join(f"{d.metric} {format_difference(d)}" for d in diffs))


if __name__ == "__main__":
    main(sys.argv[1:])
