"""DR-RAG's selections within the budget of k documents, as plain functions over passages:
QDC (Eq. 1), the forward walk of CFS (Eq. 4, Algorithm 1), the priors added to the classifier's
score, the fill, and which second-stage documents the classifier never accepted. The nodes in
:mod:`ragraphs.nodes.dr_rag` call them."""

from __future__ import annotations

from typing import Sequence

from ..state.types import Passage, with_meta
from ..tools.text import Held


def qdc_select(first: list[Passage], second: list[list[Passage]], k: int) -> list[Passage]:
    """Eq. 1: add the first second-stage document of each pair not yet in the context.

    Pairs are taken in first-stage order, one document per pair per round, until the
    context holds ``k`` documents (one round is enough when k <= 2 k1; later rounds only
    run when a pair's first new document was already taken by an earlier pair).
    """
    have = Held(first)
    added: list[Passage] = []
    cursors = [0] * len(second)
    progress = True
    while len(first) + len(added) < k and progress:
        progress = False
        for i, cands in enumerate(second):
            if len(first) + len(added) >= k:
                break
            while cursors[i] < len(cands) and cands[cursors[i]] in have:
                cursors[i] += 1
            if cursors[i] < len(cands):
                d = cands[cursors[i]]
                cursors[i] += 1
                have.add(d)
                added.append(with_meta(d, stage=2, via=first[i]["id"]))
                progress = True
    return added


def forward_walk(first: list[Passage], second: list[list[Passage]], score_of: dict, th: float, k: int,
                 pick: str = "first", bonus: dict | None = None,
                 extra: bool = False, bridge: dict | None = None) -> tuple[list[Passage], list[dict]]:
    """Eq. 4 within a budget: for each d_i (in order) add one d'_ij not in Cnt that C
    accepts (score >= th): the first in the list (``pick="first"``) or the best scored
    (``"best"``); stops when Cnt holds ``k`` documents. ``bonus`` and ``bridge`` ((d_i id,
    d' id) -> value: the title-link and the shared-name priors) are added to a pair's score
    before both. With ``extra``, a budget still open after the walk (a d_i with no accepted
    partner) takes the other accepted candidates, best scored first, as Algorithm 1 keeps every
    accepted document (marked ``extra``; with ``pick="first"`` too, which read none of them until
    2026-11-30). Returns (added, decisions)."""
    have = Held(first)
    bonus, bridge = bonus or {}, bridge or {}
    added: list[Passage] = []
    decisions: list[dict] = []
    spare: list[tuple[float, int, Passage, float, dict]] = []  # accepted, not chosen: (total, i, d, s, priors)
    for i, cands in enumerate(second):
        if len(first) + len(added) >= k:
            break
        fresh = [d for d in cands if d not in have]
        chosen = None
        for d in fresh:
            key = (first[i]["id"], d["id"])
            s = score_of[key]
            priors = priors_of(key, bonus, bridge)
            total = s + sum(priors.values())
            ok = total >= th
            decisions.append({"first": key[0], "second": key[1], "score": round(s, 6), "accepted": ok, **priors})
            if ok:
                spare.append((total, i, d, s, priors))
                if chosen is None or (pick != "first" and total > chosen[0]):
                    chosen = (total, d, s, priors)
                if pick == "first" and not extra:
                    break  # Eq. 4; with ``extra`` the walk reads on for the spare candidates
        if chosen is not None:
            _, d, s, priors = chosen
            have.add(d)
            added.append(with_meta(d, stage=2, via=first[i]["id"], pair_score=s, **priors))
    if extra:
        for _, i, d, s, priors in sorted(spare, key=lambda x: -x[0]):
            if len(first) + len(added) >= k:
                break
            if d not in have:
                have.add(d)
                added.append(with_meta(d, stage=2, via=first[i]["id"], pair_score=s, extra=True, **priors))
    return added, decisions


def priors_of(key: tuple, bonus: dict, bridge: dict) -> dict:
    """The priors CFS / CIS add to C(q, d_i, d') for ``key`` = (d_i id, d' id), by name, the
    non-zero ones only (as decisions and ``meta`` show them)."""
    return {name: v for name, v in (("link_bonus", bonus.get(key, 0.0)), ("bridge_bonus", bridge.get(key, 0.0))) if v}


def fill_budget(context: list[Passage], candidates: Sequence[Passage], k: int) -> list[Passage]:
    """The next ``candidates`` not in ``context``, until it holds ``k`` documents."""
    have = Held(context)
    out: list[Passage] = []
    for p in candidates:
        if len(context) + len(out) >= k:
            break
        if p not in have:
            have.add(p)
            out.append(with_meta(p, stage=1, fill=True))
    return out


def never_accepted(decisions: list[dict], fed: set[str]) -> list[str]:
    """The second-stage documents C rejected and never accepted, and not fed: one accepted with
    one d_i is not among them even when another d_i rejected it and the budget left it out (it
    was listed until 2026-11-30)."""
    accepted = {x["second"] for x in decisions if x["accepted"]}
    return sorted({x["second"] for x in decisions if not x["accepted"]} - fed - accepted)


__all__ = ["Held", "fill_budget", "forward_walk", "never_accepted", "priors_of", "qdc_select"]
