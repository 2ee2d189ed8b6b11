"""Soft-labelled items with PopQA's items read more often (#14, the feed-forward cut's PopQA row).

    python bench/judges_items_popqa.py ITEMS_DIR --src dist2 --dst dist2pq4 --times 4

ITEMS_DIR is the directory ``bench/judges_recipe_sweep.py dump`` wrote, with call 2's soft
labels (``train_dist2.jsonl.gz``, from ``bench/results/judges_distill/run2/``). PopQA's items are
those that ``train_allpq2`` holds beyond ``train_all`` (the PopQA dev half 0, read a second
time); ``--src`` reads each of them twice, and ``--dst`` gets ``--times`` copies of each, the
other items as they are.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judges_recipe_sweep import _read, _write  # noqa: E402


def key(r: dict) -> tuple:
    return r["a"], r["b"], r["r"], r["s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("items")
    ap.add_argument("--src", default="dist2")
    ap.add_argument("--dst", default="dist2pq4")
    ap.add_argument("--times", type=int, default=4)
    a = ap.parse_args()
    d = Path(a.items)
    once = collections.Counter(map(key, _read(d / "train_all.jsonl.gz")))
    popqa = set(collections.Counter(map(key, _read(d / "train_allpq2.jsonl.gz"))) - once)
    src = _read(d / f"train_{a.src}.jsonl.gz")
    first = {}
    for r in src:
        if key(r) in popqa:
            first.setdefault(key(r), r)
    have = collections.Counter(key(r) for r in src if key(r) in popqa)
    if set(have.values()) != {2}:
        raise SystemExit(f"{a.src} does not read each PopQA item twice: {collections.Counter(have.values())}")
    out = src + [first[k] for k in first for _ in range(a.times - 2)]
    _write(d / f"train_{a.dst}.jsonl.gz", out)
    print(f"{a.dst}: {len(out)} items, {len(first)} PopQA items read {a.times} times")


if __name__ == "__main__":
    main()
