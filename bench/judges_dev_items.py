"""What the judge benches that read one part of each dev file share: their arguments and items.

The items are those ``ragraphs judge-eval --judge ROLE`` builds from each dev file's part (the
stable hash split; give the part the judge did not train on).
"""

from __future__ import annotations

import argparse
from typing import Iterator

import numpy as np

from ragraphs.tools.judges import build_items


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("judges", help="a judges directory (train-judge's output, or the shipped one)")
    ap.add_argument("--part", default="0/2", help="the part of each dev file to read, K/N")
    ap.add_argument("--files", default="hotpotqa,2wikimultihopqa,musique")
    ap.add_argument("--data", default="../shared/data")


def dev_items(role: str, a: argparse.Namespace, embed) -> Iterator[tuple[str, list, np.ndarray]]:
    """(file, items, labels) for each of ``a.files``."""
    for f in a.files.split(","):
        items = build_items(role, [f"{a.data}/{f}.dev.jsonl@{a.part}"], seed=0, embed=embed, title_prob=1.0)
        yield f, items, np.asarray([x.label for x in items])
