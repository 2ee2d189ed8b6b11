"""Is CFS's selection the lever on MuSiQue? Selection variants replayed on DR-RAG's own stages.

    python bench/dr_rag_selection.py OUT_DIR [--datasets hotpotqa,2wikimultihopqa,musique] [--part K/N]

(``--part K/N``: only part K of N of each file's questions, FILE@K/N's split; with
``RAGRAPHS_JUDGES_DIR`` it reads a cross-fitted judge on the half it did not train on.)

Runs the DR-RAG graph (CFS, k = 4, the defaults) once over each whole dev file (each file's
paragraphs pooled, as ``ragraphs eval --retrieval-only`` does) and keeps every question's
stages: the first stage's candidates, the static documents d_1, d_2, each one's second-stage
list and the pair classifier's decisions. It scores every candidate with the evaluator, and
runs one more retrieval per question, a third hop q + p_1 (p_1: the partner CFS chose for d_1),
scored by the pair classifier with p_1. Then it replays selection rules over the same stages,
each within the budget of 4 documents:

- ``cfs``: the graph's own pick (the replay reproduces it: ``cfs (replayed)``);
- ``distinct titles``: no second paragraph of a page already picked (MuSiQue's corpora hold
  several paragraphs per page);
- ``+ beta / rank``, ``+ gamma * evaluator``: a partner's score plus a share of its
  second-stage rank or of the evaluator's score of (q, partner);
- ``pair score mixed with evaluator(q + d_i, d')``: the evaluator reads the second stage's
  own query (q followed by d_i) with the partner, in place of or beside the pair classifier;
- ``weak d_2 -> partners of d_1``: where the evaluator scores d_2 under tau, d_1's best
  accepted partners take d_2's two places;
- ``third hop``: where the evaluator scores d_2 under tau, the context is d_1, p_1 and the two
  best accepted third-hop documents (a chain q -> d_1 -> p_1 -> ...);
- two bounds without the budget: the gold among every candidate of both stages, and with the
  third hop's accepted documents added.

Prints and writes ``OUT_DIR/table.md`` (recall@4 per file, and per MuSiQue question shape).
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragraphs.evaluation.metrics import gold_found  # noqa: E402

DATASETS = ("hotpotqa", "2wikimultihopqa", "musique")


def stages(ds: str, path: str, part: tuple[int, int] | None = None) -> list[dict]:
    """Every question's DR-RAG stages, the evaluator's score of each candidate, the third hop.
    With ``part`` (K, N) only part K of N of the questions is run, over the whole file's
    paragraphs, as ``ragraphs eval --data FILE@K/N`` runs them."""
    from ragraphs.components import Components
    from ragraphs.datasets import load_dataset, pooled_passages, select_part
    from ragraphs.evaluation.corpus import PooledCorpus
    from ragraphs.evaluation.runner import RunSpec, build_context, unique_ids
    from ragraphs.graphs import build_graph
    from ragraphs.nodes.dr_rag import concat_query, judge_text
    from ragraphs.nodes.dr_rag_links import linked_candidates, pair_priors
    from ragraphs.nodes.retrieve import search_many
    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.judges.core import passage_text, score_triples

    loaded = load_dataset(path, ds)
    examples = select_part(loaded, *part) if part else list(loaded)  # hashed on the loader's ids, as eval does
    every = unique_ids(loaded)  # renames the same objects; the corpus pools the whole file
    emb = MiniLMEmbeddings(fast=True)
    comps = Components(retriever=PooledCorpus(pooled_passages(every), emb, quiet=True), embeddings=emb)
    spec = RunSpec(method="dr-rag", k=4, strategy="cfs", retrieval_only=True, settings={})
    ctx = build_context(spec)
    graph = build_graph(spec.graph_method, comps)
    evaluator, pair = comps.judge("evaluator"), comps.judge("pair")
    out = []
    for ex in examples:
        if not ex.supporting:
            continue
        f = graph.invoke({"question": ex.question}, context=ctx)
        q = ex.question
        pool = {p["id"]: p for p in list(f["candidates"]) + [p for c in f["second_stage"] for p in c]}
        ev = dict(zip(pool, map(float, evaluator.score_batch([(q, passage_text(p)) for p in pool.values()]))))
        row = {"id": ex.id, "question": q, "gold": ex.supporting, "candidates": f["candidates"], "first": f["first_stage"],
               "second": f["second_stage"], "decisions": f["classifier_scores"], "th": f["pair_threshold"],
               "passages": f["passages"], "ev": ev, "hop3": None}
        d1 = f["first_stage"][0]
        p1 = next((p for p in f["passages"] if (p.get("meta") or {}).get("via") == d1["id"]
                   and not (p.get("meta") or {}).get("extra")), None)
        if p1 is not None:
            cands = search_many(comps.retriever, [concat_query(q, p1, int(ctx.concat_chars))], int(ctx.k2),
                                ctx.retrieval, ctx.fusion_k)[0]
            cands = [c for c in linked_candidates(comps.retriever, [p1], [cands], int(ctx.link_expand))[0]
                     if c["id"] not in (d1["id"], p1["id"])]
            s = score_triples(pair, [(q, judge_text(p1), judge_text(c)) for c in cands], ctx.pair_tokens)
            pairs = [(p1, c) for c in cands]
            lb, bb = pair_priors(ctx, q, pairs, comps.retriever)
            tot = [x + lb.get((p1["id"], c["id"]), 0.0) + bb.get((p1["id"], c["id"]), 0.0) for x, c in zip(s, cands)]
            row["hop3"] = {"d1": d1, "p1": p1, "ranked": [c for _, c in sorted(zip(tot, cands), key=lambda z: -z[0])
                                                          if _ >= row["th"]]}
        out.append(row)
    return with_concat_scores(out, evaluator, int(ctx.concat_chars))


def with_concat_scores(rows: list[dict], evaluator, chars: int) -> list[dict]:
    """Each pair decision's evaluator score of (q + d_i, d'): the second stage's own query
    read by the evaluator, an alternative to the pair classifier (``r["evc"]``)."""
    from ragraphs.nodes.dr_rag import concat_query
    from ragraphs.tools.judges.core import passage_text

    for r in rows:
        first = {x["id"]: x for x in r["first"]}
        pool = {x["id"]: x for c in r["second"] for x in c}
        keys = [(x["first"], x["second"]) for x in r["decisions"]]
        pairs = [(concat_query(r["question"], first[a], chars), passage_text(pool[b])) for a, b in keys]
        r["evc"] = dict(zip(keys, map(float, evaluator.score_batch(pairs)))) if pairs else {}
    return rows


def _total(x: dict) -> float:
    return x["score"] + x.get("link_bonus", 0.0) + x.get("bridge_bonus", 0.0)


def _fill(out: list, more, k: int = 4, titles: set | None = None) -> list:
    ids = {p["id"] for p in out}
    for p in more:
        if len(out) >= k:
            break
        if p["id"] not in ids and (titles is None or p["title"] not in titles):
            out.append(p)
            ids.add(p["id"])
            if titles is not None:
                titles.add(p["title"])
    return out


def cfs(r: dict, beta: float = 0.0, gamma: float = 0.0, distinct: bool = False, k: int = 4) -> list:
    """CFS as the graph runs it (best accepted partner per d_i, extra partners, fill), with the
    variants' changes to a partner's score and to which pages may repeat."""
    dec = {(x["first"], x["second"]): x for x in r["decisions"]}
    first = list(r["first"])
    out, spare = list(first), []
    have = {p["id"] for p in first}
    titles = {p["title"] for p in first} if distinct else None
    first_ids = {p["id"] for p in first}
    for i, cands in enumerate(r["second"]):
        best = None
        for rank, p in enumerate(cands):
            x = dec.get((first[i]["id"], p["id"]))
            if x is None or p["id"] in first_ids or _total(x) < r["th"]:
                continue
            s = _total(x) + beta / (1 + rank) + gamma * r["ev"].get(p["id"], 0.0)
            spare.append((s, p))
            if p["id"] in have or (titles is not None and p["title"] in titles):
                continue
            if best is None or s > best[0]:
                best = (s, p)
        if len(out) < k and best:
            out.append(best[1])
            have.add(best[1]["id"])
            if titles is not None:
                titles.add(best[1]["title"])
    out = _fill(out, [p for _, p in sorted(spare, key=lambda z: -z[0])], k, titles)
    return _fill(out, r["candidates"], k, titles)


def concat_mix(r: dict, w: float) -> list:
    """CFS with each pair's score mixed with the evaluator's (q + d_i, d') score, mapped to
    [0, 1]: (1 - w) * pair + w * (evaluator + 1) / 2."""
    mixed = [{**x, "score": (1 - w) * x["score"] + w * (r["evc"][(x["first"], x["second"])] + 1) / 2}
             for x in r["decisions"]]
    return cfs({**r, "decisions": mixed})


def weak_d2(r: dict, tau: float, k: int = 4) -> list:
    first = r["first"]
    if len(first) < 2 or r["ev"][first[1]["id"]] >= tau:
        return r["passages"]
    d1 = first[0]
    dec = {(x["first"], x["second"]): x for x in r["decisions"]}
    scored = [(_total(dec[(d1["id"], p["id"])]), p) for p in r["second"][0] if (d1["id"], p["id"]) in dec]
    return _fill([d1], [p for s, p in sorted(scored, key=lambda z: -z[0]) if s >= r["th"]] + r["candidates"], k)


def third_hop(r: dict, tau: float, k: int = 4) -> list:
    first, h = r["first"], r["hop3"]
    if h is None or len(first) < 2 or r["ev"][first[1]["id"]] >= tau:
        return r["passages"]
    return _fill([h["d1"], h["p1"]] + h["ranked"][:2], r["candidates"] + r["passages"], k)


def is_gold(p: dict, gold: list) -> bool:
    return any(gold_found([p], gold))


def recall(ps: list, gold: list) -> float:
    f = gold_found(ps, gold)
    return sum(f) / len(f)


VARIANTS = {
    "cfs (the graph's own pick)": lambda r: r["passages"],
    "cfs (replayed)": cfs,
    "distinct titles": lambda r: cfs(r, distinct=True),
    **{f"+ {b} / rank": (lambda r, b=b: cfs(r, beta=b)) for b in (0.1, 0.3)},
    **{f"+ {g} * evaluator": (lambda r, g=g: cfs(r, gamma=g)) for g in (0.05, 0.1, 0.2, 0.4)},
    **{f"pair score mixed with evaluator(q + d_i, d'), weight {w}": (lambda r, w=w: concat_mix(r, w))
       for w in (0.25, 0.5, 1.0)},
    **{f"weak d_2 (evaluator < {t}) -> partners of d_1": (lambda r, t=t: weak_d2(r, t)) for t in (-0.5, 0.0, 0.3)},
    **{f"third hop where the evaluator scores d_2 < {t}": (lambda r, t=t: third_hop(r, t)) for t in (-0.5, 0.0, 0.5, 2.0)},
    "(bound, no budget) every candidate of both stages": lambda r: list(r["candidates"]) + [p for c in r["second"] for p in c],
    "(bound, no budget) ... and the third hop's accepted": lambda r: (list(r["candidates"]) + [p for c in r["second"] for p in c]
                                                                   + (r["hop3"]["ranked"] if r["hop3"] else [])),
}


def shape(qid: str) -> str:
    head = str(qid).partition("__")[0]
    return head[:4] if "hop" in head else "other"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--part", default=None, metavar="K/N",
                    help="only part K of N of each file's questions (FILE@K/N's split), over the whole file's paragraphs")
    args = ap.parse_args(argv)
    part = tuple(int(x) for x in args.part.split("/")) if args.part else None
    import torch

    torch.set_num_threads(int(os.environ.get("RAGRAPHS_JUDGE_THREADS", "2")))
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = args.datasets.split(",")
    data = {}
    for ds in files:
        tag = f".part{part[0]}of{part[1]}" if part else ""
        cache = out / f"{ds}{tag}.stages.pkl"  # a local cache of the stages (not meant to be committed)
        if not cache.is_file():
            with open(cache, "wb") as fh:
                pickle.dump(stages(ds, os.path.join(args.data_dir, f"{ds}.dev.jsonl"), part), fh)
        with open(cache, "rb") as fh:
            data[ds] = pickle.load(fh)
    shapes = sorted({shape(r["id"]) for r in data.get("musique", [])})
    head = "| selection (CFS, k = 4) | " + " | ".join(f"{ds} (n = {len(data[ds])})" for ds in files)
    head += "".join(f" | MuSiQue {s} (n = {sum(shape(r['id']) == s for r in data['musique'])})" for s in shapes) + " |"
    lines = [head, "| --- " * (1 + len(files) + len(shapes)) + "|"]
    for name, pick in VARIANTS.items():
        cells = [f"{100 * sum(recall(pick(r), r['gold']) for r in data[ds]) / len(data[ds]):.1f}" for ds in files]
        by = defaultdict(list)
        for r in data.get("musique", []):
            by[shape(r["id"])].append(recall(pick(r), r["gold"]))
        cells += [f"{100 * sum(by[s]) / len(by[s]):.1f}" for s in shapes]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    # what CFS's picks are, by the place they fill, and how many of them are gold
    lines += ["", "| CFS's picks: gold / picks | " + " | ".join(files) + " |", "| --- " * (1 + len(files)) + "|"]
    for kind in ("static", "partner", "extra partner", "fill"):
        cells = []
        for ds in files:
            n = g = 0
            for r in data[ds]:
                for p in r["passages"]:
                    m = p.get("meta") or {}
                    k = "fill" if m.get("fill") else "extra partner" if m.get("extra") else (
                        "partner" if m.get("stage") == 2 else "static")
                    if k == kind:
                        n += 1
                        g += is_gold(p, r["gold"])
            cells.append(f"{g} / {n}")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    # how well each score ranks the gold partners among the pairs the classifier scored
    from sklearn.metrics import roc_auc_score

    lines += ["", "| AUC over the scored pairs (gold partner or not) | " + " | ".join(files) + " |",
              "| --- " * (1 + len(files)) + "|"]
    auc: dict = {"n pairs": [], "pair classifier C(q, d_i, d')": [], "evaluator(q + d_i, d')": []}
    for ds in files:
        y, a, b = [], [], []
        for r in data[ds]:
            pool = {x["id"]: x for c in r["second"] for x in c}
            for x in r["decisions"]:
                p = pool[x["second"]]
                y.append(is_gold(p, r["gold"]))
                a.append(x["score"])
                b.append(r["evc"][(x["first"], x["second"])])
        auc["n pairs"].append(str(len(y)))
        auc["pair classifier C(q, d_i, d')"].append(f"{roc_auc_score(y, a):.3f}")
        auc["evaluator(q + d_i, d')"].append(f"{roc_auc_score(y, b):.3f}")
    lines += [f"| {k} | " + " | ".join(v) + " |" for k, v in auc.items()]
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
