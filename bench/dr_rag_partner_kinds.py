"""What kind of partners CFS fed: gold or not, reached by a title link or not, with which prior.

    python bench/dr_rag_partner_kinds.py RUN_DIR/results.jsonl [--shape 2hop]

Counts the second-stage documents (``meta.stage == 2``) among the passages each question of a
``ragraphs eval --method dr-rag --strategy cfs`` run fed to the LLM, by three marks from each
passage's ``meta``: gold or not; ``linked`` (it joined the candidates because the static
document names its title, ``linked_from``), ``link_bonus`` (it earned the title-link prior)
or ``unlinked``; and whether it earned the bridge prior. ``--shape`` keeps the MuSiQue
questions whose id starts with it (``2hop``, ``3hop1``...).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter


def partner_kinds(results_path: str, shape: str | None = None) -> Counter:
    kinds: Counter = Counter()
    with open(results_path, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if shape and not str(r.get("id", "")).startswith(shape):
                continue
            for p in r.get("passages") or []:
                m = p.get("meta") or {}
                if m.get("stage") != 2:
                    continue
                link = "linked" if m.get("linked_from") else "link_bonus" if m.get("link_bonus") else "unlinked"
                kinds[("gold" if p.get("gold") else "not gold", link, "bridge" if m.get("bridge_bonus") else "no bridge")] += 1
    return kinds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--shape", default=None)
    a = ap.parse_args()
    print("| gold | title link | bridge prior | partners fed |\n| --- | --- | --- | --- |")
    for (gold, link, bridge), n in sorted(partner_kinds(a.results, a.shape).items()):
        print(f"| {gold} | {link} | {bridge} | {n} |")


if __name__ == "__main__":
    main()
