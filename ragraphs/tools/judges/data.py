"""Labelled data for the judges, built from the benchmark files' own annotations.

Every item below comes from a file's labels, never from invented text:

- evaluator: (question, paragraph); positive = a supporting paragraph (HotpotQA/2Wiki
  supporting facts, MuSiQue ``is_supporting``, PopQA: a page holding a gold answer);
- pair: (question, d1, d2); positive when both are supporting, negative for
  (supporting, distractor) and (distractor, distractor), as DR-RAG's eq. 2;
- nli: (hypothesis, premise); premise = a supporting paragraph, hypothesis = a statement
  made from the row's own annotation (2Wiki ``evidences`` triples, MuSiQue
  ``question_decomposition`` steps); negatives pair the statement with another paragraph of
  the question that lacks the object, swap the object for another row's object of the same
  relation, or swap the relation.

``FILE@K/N`` takes part K of N of a file's questions by a stable hash, so two parts never
share a question.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ...datasets import parse_data_spec, part_of
from ...errors import ConfigError, InputError
from ...state.types import Passage, make_passage
from .core import JUDGES, passage_text

def iter_pairs(question: str, passages: Iterable[str]) -> list[tuple[str, str]]:
    return [(question, p) for p in passages]




@dataclass
class Item:
    """One labelled example: ``texts`` is (question, passage), (q, d1, d2) or (hypothesis, premise)."""

    texts: tuple
    label: int
    group: str  # question id: the unit of the train/validation split
    source: str = ""


def check_data_files(specs: Iterable[str]) -> None:
    """An :class:`InputError` for a data spec (``FILE`` or ``FILE@K/N``) whose file is a folder or
    is not there: before any work (a folder named ``data@v2`` is a path, not a part)."""
    import os

    for spec in specs:
        path = parse_data_spec(spec)[0]
        if os.path.isdir(path):  # "no such data file" for a folder that is there until 2026-12-01
            raise InputError(f"--data {path} is a folder; give a data file (JSONL or JSON)")
        if not os.path.isfile(path):
            raise InputError(f"no such data file: {path}")


def spec_name(spec: str) -> str:
    """A data spec's file name (with its ``@K/N`` part), for logs and metadata."""
    path, k, n = parse_data_spec(spec)
    return os.path.basename(path) + (f"@{k}/{n}" if n is not None else "")


_SAID: set[str] = set()  # each role reads the files again: each skipped row is said once


def _say_once(msg: str) -> None:
    if msg not in _SAID:
        _SAID.add(msg)
        print(msg, file=sys.stderr)


def _row_examples(spec: str, dataset: str | None = None, limit: int | None = None, warn=None):
    """(raw row, Example) for each readable row of a benchmark file (``FILE@K/N`` for a part);
    each row left out is said, as ``eval`` says it (they were dropped without a word until 2026-12-03)."""
    from ...datasets import iter_examples

    path, part, nparts = parse_data_spec(spec)
    out = []
    for _i, row, ex in iter_examples(path, dataset, warn=warn or _say_once):
        if nparts is not None and part_of(f"{ex.id}\x1f{ex.question}", nparts) != part:
            continue
        ex.id = f"{os.path.basename(path)}:{ex.id}"
        out.append((row, ex))
        if limit and len(out) >= limit:
            break
    return out


def _ptext(p: Passage | dict, rng: random.Random, title_prob: float) -> str:
    return passage_text(p) if rng.random() < title_prob else (p.get("text") or "")


def _contains(text: str, answers: Sequence[str]) -> bool:
    from ..text import normalize_answer

    t = f" {normalize_answer(text)} "
    return any(f" {normalize_answer(a)} " in t for a in answers if normalize_answer(a))


def _balance(items: list[Item], rng: random.Random, ratio: int = 1) -> list[Item]:
    """A seeded sample with ``ratio`` negatives per positive (1: balanced)."""
    pos = [x for x in items if x.label]
    neg = [x for x in items if not x.label]
    n_pos, n_neg = min(len(pos), len(neg) // ratio), min(len(neg), ratio * len(pos))
    if n_pos == 0 or n_neg == 0:
        return []
    pos = rng.sample(pos, n_pos) if len(pos) > n_pos else pos
    neg = rng.sample(neg, n_neg) if len(neg) > n_neg else neg
    out = pos + neg
    rng.shuffle(out)
    return out


def evaluator_items(examples, rng: random.Random, title_prob: float = 1.0, mine: Callable | None = None,
                    neg_ratio: int = 1) -> list[Item]:
    """(question, paragraph) items of one file, ``neg_ratio`` negatives per positive (1: balanced).

    Where a file has fewer distractors than supporting paragraphs (PopQA: two pages per
    question, most hold the answer), ``mine(example)`` adds paragraphs of other questions
    (the nearest by embedding, as a retriever would return them) as negatives; one that
    holds a gold answer of this question is unclear and dropped.
    """
    items: list[Item] = []
    for _row, ex in examples:
        for p in ex.paragraphs:
            sup = bool((p.get("meta") or {}).get("supporting"))
            items.append(Item((ex.question, _ptext(p, rng, title_prob)), int(sup), ex.id, ex.dataset))
        if mine is not None:
            for p in mine(ex):
                if _contains(p.get("text", ""), ex.answers):
                    continue  # another question's page that happens to hold the answer: unclear, dropped
                items.append(Item((ex.question, _ptext(p, rng, title_prob)), 0, ex.id, ex.dataset + "-mined"))
    return _balance(items, rng, neg_ratio)


def pair_items(examples, rng: random.Random, title_prob: float = 1.0, neg_ratio: int = 1,
               mine: Callable | None = None) -> list[Item]:
    """DR-RAG eq. 2: C(q, d*, d*) positive; C(q, d*, dΔ) and C(q, dΔ, dΔ) negative;
    ``neg_ratio`` negatives per positive (1: balanced). ``mine(example, d*)`` adds the
    negatives CFS meets: C(q, d*, dΔ) for the paragraphs a search for q + d* ranks first."""
    items: list[Item] = []
    for _row, ex in examples:
        sup = [p for p in ex.paragraphs if (p.get("meta") or {}).get("supporting")]
        dis = [p for p in ex.paragraphs if not (p.get("meta") or {}).get("supporting")]
        if len(sup) < 2 or not dis:
            continue

        def triple(a: Passage, b: Passage, label: int, kind: str = ex.dataset) -> Item:
            return Item((ex.question, _ptext(a, rng, title_prob), _ptext(b, rng, title_prob)), label, ex.id, kind)

        if mine is not None:
            items += [triple(*_shuffled(rng, x, a), 0, ex.dataset + "-mined") for a in sup for x in mine(ex, a)]
        pos = [(a, b) for i, a in enumerate(sup) for b in sup[i + 1 :]]
        items += [triple(*_shuffled(rng, a, b), 1) for a, b in pos]
        items += [triple(*_pair_negative(rng, sup, dis), 0) for _ in range(neg_ratio * len(pos))]
    return _balance(items, rng, neg_ratio)


def _shuffled(rng: random.Random, a: Passage, b: Passage) -> tuple[Passage, Passage]:
    """``a`` and ``b`` in either order, even odds."""
    return (b, a) if rng.random() < 0.5 else (a, b)


def _pair_negative(rng: random.Random, sup: list[Passage], dis: list[Passage]) -> tuple[Passage, Passage]:
    """A negative pair: two distractors (a third of the time, where there are two), else a
    supporting paragraph and a distractor in either order."""
    if len(dis) >= 2 and rng.random() < 1 / 3:
        a, b = rng.sample(dis, 2)
        return a, b
    return _shuffled(rng, rng.choice(sup), rng.choice(dis))


def _statement(subject: str, relation: str, obj: str) -> str:
    return f"The {relation.strip()} of {subject.strip()} is {obj.strip()}."


_DECOMP = re.compile(r"^(.*?)\s*>>\s*(.*)$")


def _facts(row: dict, ex) -> list[tuple[str, str, str, Passage]]:
    """(subject, relation, object, supporting paragraph) facts annotated in a row: 2Wiki's
    evidences, MuSiQue's decomposition."""
    if "evidences" in row:  # 2WikiMultihopQA
        return _evidence_facts(row, ex)
    if "question_decomposition" in row:  # MuSiQue
        return _decomposition_facts(row)
    return []


def _evidence_facts(row: dict, ex) -> list[tuple[str, str, str, Passage]]:
    """2Wiki's (subject, relation, object) evidences whose subject titles a paragraph of the row."""
    from ...datasets import _maybe_literal

    by_title: dict[str, Passage] = {}
    for p in ex.paragraphs:
        by_title.setdefault(p["title"].strip().lower(), p)
    out: list[tuple[str, str, str, Passage]] = []
    for ev in _maybe_literal(row.get("evidences")) or []:
        if isinstance(ev, (list, tuple)) and len(ev) == 3:
            s, r, o = (str(x) for x in ev)
            p = by_title.get(s.strip().lower())
            if p is not None and s.strip() and o.strip():
                out.append((s, r, o, p))
    return out


def _decomposition_facts(row: dict) -> list[tuple[str, str, str, Passage]]:
    """MuSiQue's steps with their supporting paragraph: "subject >> relation" questions as
    (subject, relation, answer), others as (question, "", answer); ``#n`` is step n's answer."""
    from ...datasets import _maybe_literal

    raw_paras = [p for p in row.get("paragraphs") or []]
    answers: list[str] = []
    out: list[tuple[str, str, str, Passage]] = []
    for st in _maybe_literal(row.get("question_decomposition")) or []:
        if not isinstance(st, dict):
            continue
        q, a = str(st.get("question", "")), str(st.get("answer", ""))
        q = re.sub(r"#(\d+)", lambda m: answers[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(answers) else m.group(0), q)
        answers.append(a)
        idx = st.get("paragraph_support_idx")
        if not isinstance(idx, int) or not (0 <= idx < len(raw_paras)) or not a.strip():
            continue
        rp = raw_paras[idx]
        p = make_passage(rp.get("title", ""), " ".join(str(rp.get("paragraph_text", "")).split()), "corpus")
        m = _DECOMP.match(q)
        out.append((m.group(1), m.group(2), a, p) if m else (q.rstrip("?").strip() + "?", "", a, p))
    return out


def _hypothesis(s: str, r: str, o: str) -> str:
    return _statement(s, r, o) if r else f"{s} {o.strip()}."


def nli_items(examples, rng: random.Random, title_prob: float = 1.0) -> list[Item]:
    """(hypothesis, premise) items from 2Wiki evidences / MuSiQue decompositions, 1:1."""
    facts_by_row = [(ex, _facts(row, ex)) for row, ex in examples]
    objects_by_rel: dict[str, list[str]] = {}
    relations: list[str] = []
    for _ex, facts in facts_by_row:
        for s, r, o, _p in facts:
            if r:
                objects_by_rel.setdefault(r, []).append(o)
                relations.append(r)
    relations = sorted(set(relations))
    items: list[Item] = []
    for ex, facts in facts_by_row:
        for s, r, o, p in facts:
            prem = _ptext(p, rng, title_prob)
            if not _contains(p["text"] + " " + p["title"], [o]):
                continue  # the annotated object is not written in the paragraph: skip as unclear
            hyp = _hypothesis(s, r, o)
            items.append(Item((hyp, prem), 1, ex.id, ex.dataset))
            neg = _nli_negative(ex, (s, r, o, p), prem, rng, title_prob, objects_by_rel, relations)
            if neg is not None:
                items.append(neg)
    return _balance(items, rng)


def _nli_negative(ex, fact: tuple[str, str, str, Passage], prem: str, rng: random.Random, title_prob: float,
                  objects_by_rel: dict[str, list[str]], relations: list[str]) -> Item | None:
    """A fact's negative, one of three kinds by chance: another paragraph of the question that
    lacks the object, the object swapped for another of the relation's, or the relation swapped
    (the object is there, the claim is not); None when the kind drawn finds none."""
    s, r, o, p = fact
    hyp = _hypothesis(s, r, o)
    kind = rng.random()
    others = [q for q in ex.paragraphs if q["id"] != p["id"] and not _contains(q["text"] + " " + q["title"], [o])]
    if kind < 0.4 and others:
        q = rng.choice(others)
        return Item((hyp, _ptext(q, rng, title_prob)), 0, ex.id, ex.dataset + "-otherpara")
    if kind < 0.75 and r and len(objects_by_rel.get(r, [])) > 1:
        for _ in range(10):
            o2 = rng.choice(objects_by_rel[r])
            if not _contains(p["text"] + " " + p["title"], [o2]) and not _contains(o, [o2]):
                return Item((_hypothesis(s, r, o2), prem), 0, ex.id, ex.dataset + "-objswap")
        return None
    if r and len(relations) > 1:
        r2 = rng.choice(relations)
        if r2 != r and r2.split()[-1] != r.split()[-1]:
            return Item((_hypothesis(s, r2, o), prem), 0, ex.id, ex.dataset + "-relswap")
    return None


def build_items(judge: str, files: Sequence[str], seed: int = 0, limit: int | None = None, embed: Any = None,
                mine_k: int = 2, title_prob: float = 1.0, neg_ratio: int = 1,
                empty: list[str] | None = None) -> list[Item]:
    """Labelled items for ``judge`` from benchmark files, each file sampled on its own with
    ``neg_ratio`` negatives per positive (1: balanced; NLI items are always 1:1). With
    ``embed``, ``mine_k`` mined negatives are added: for the evaluator, the nearest paragraphs
    of other questions (only where a file lacks distractors); for the pair classifier, the
    nearest non-supporting paragraphs of the file to q + d* (the second stage's candidates).
    ``empty`` collects the files that gave no item for this judge."""
    if judge not in JUDGES:
        raise ConfigError(f"unknown judge {judge!r}; choose evaluator, pair or nli")
    items: list[Item] = []
    for path in files:
        rng = random.Random(f"{seed}:{judge}:{spec_name(path)}")
        rows = _row_examples(path, limit=limit)
        if not rows:
            raise InputError(f"{path}: no readable question rows")
        if judge == "evaluator":
            mine = None
            n_sup = sum(len(ex.supporting) for _r, ex in rows)
            n_all = sum(len(ex.paragraphs) for _r, ex in rows)
            if embed is not None and mine_k and n_all - n_sup < neg_ratio * n_sup:
                mine = _miner([ex for _r, ex in rows], embed, mine_k)
            got = evaluator_items(rows, rng, title_prob, mine, neg_ratio)
        elif judge == "pair":
            mine = _pair_miner([ex for _r, ex in rows], embed, mine_k) if embed is not None and mine_k else None
            got = pair_items(rows, rng, title_prob, neg_ratio, mine)
        else:
            got = nli_items(rows, rng, title_prob)
        if not got and empty is not None:
            empty.append(path)
        items += got
    return items


def _file_pool(examples) -> tuple[list[dict], list[str]]:
    """Every paragraph of a file once, with the id of the first question that has it."""
    pool: list[dict] = []
    owner: list[str] = []
    seen = set()
    for ex in examples:
        for p in ex.paragraphs:
            if p["id"] not in seen:
                seen.add(p["id"])
                pool.append(p)
                owner.append(ex.id)
    return pool, owner


def _miner(examples, embed: Callable[[list[str]], np.ndarray], k: int) -> Callable:
    """Nearest paragraphs of *other* questions of the same file, by MiniLM cosine."""
    pool, owner = _file_pool(examples)
    pe = embed([passage_text(p) for p in pool])
    qe = embed([ex.question for ex in examples])
    sims = qe @ pe.T
    index = {ex.id: i for i, ex in enumerate(examples)}
    owner_arr = np.asarray(owner)

    def mine(ex) -> list[dict]:
        s = sims[index[ex.id]].copy()
        s[owner_arr == ex.id] = -np.inf
        own = {p["id"] for p in ex.paragraphs}
        top = [pool[i] for i in np.argsort(-s)[: k + 4] if pool[i]["id"] not in own]
        return top[:k]

    return mine


def _pair_miner(examples, embed: Callable[[list[str]], np.ndarray], k: int) -> Callable:
    """The ``k`` paragraphs of the file nearest (MiniLM cosine) to ``question + d*`` that do
    not support the question: what DR-RAG's second stage hands the pair classifier."""
    pool, _owner = _file_pool(examples)
    pe = embed([passage_text(p) for p in pool])

    def mine(ex, d: dict) -> list[dict]:
        # one query per call: a padded batch embeds within float error of it, which reorders
        # near ties, and the measured `--pair-mine-k` run used these exact neighbours
        qe = embed([f"{' '.join(ex.question.split())} {passage_text(d)[:1000]}"])[0]
        gold = {p["id"] for p in ex.supporting} | {d["id"]}
        order = np.argsort(-(pe @ qe))[: k + len(gold)]
        return [pool[i] for i in order if pool[i]["id"] not in gold][:k]

    return mine


def split_items(items: list[Item], val_fraction: float, seed: int) -> tuple[list[Item], list[Item]]:
    """Hold out whole questions (by a seeded hash of the question id)."""
    def h(g: str) -> float:
        d = hashlib.sha256(f"{seed}:{g}".encode()).digest()
        return int.from_bytes(d[:8], "big") / 2**64

    val = [x for x in items if h(x.group) < val_fraction]
    tr = [x for x in items if h(x.group) >= val_fraction]
    return tr, val
