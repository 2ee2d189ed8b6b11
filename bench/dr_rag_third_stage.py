"""A third stage for DR-RAG on MuSiQue's dev questions: what it could reach, and one way to use it.

    python bench/dr_rag_third_stage.py OUT.json

Runs the DR-RAG graph (CFS, k = 4, every default) over every MuSiQue dev question on the dev
file's paragraphs. Then, for each partner CFS fed (a stage-2 document d'), it searches again
with q + d' (the second stage's query, ``k2`` hybrid candidates), as a third hop would, and
scores each new candidate d'' with the pair classifier C(q, d', d'') plus the same title-link
and bridge priors CFS adds. Per question shape it prints:

- ``reach``: gold paragraphs CFS missed that the third search finds;
- ``accept``: those the pair classifier accepts (score + priors >= the pair cut), and
  ``accept_other``: the non-gold candidates it accepts too;
- the recall@4 when the weakest fed partner (lowest score + priors) gives its place to the
  best accepted third-stage candidate that outscores it (``swapped``, with the gold that came
  in and went out).

Not a setting of the graph: an exploration of whether a third hop is a lever (see
docs/dr_rag.md, "A third stage").
"""
import json
import sys
from collections import Counter, defaultdict

from dr_rag_link_expand_diag import dr_rag_over, musique_dev  # the same directory

from ragraphs.datasets import pooled_passages
from ragraphs.evaluation.corpus import PooledCorpus
from ragraphs.nodes.dr_rag import concat_query, judge_text, pair_threshold
from ragraphs.nodes.dr_rag_select import priors_of
from ragraphs.nodes.dr_rag_links import pair_priors
from ragraphs.nodes.retrieve import search_many
from ragraphs.tools.embeddings import MiniLMEmbeddings
from ragraphs.tools.judges import score_triples


def strength(p: dict) -> float:
    m = p.get("meta") or {}
    return float(m.get("pair_score") or 0) + float(m.get("link_bonus") or 0) + float(m.get("bridge_bonus") or 0)


def main(out: str) -> None:
    every = musique_dev()
    corpus = PooledCorpus(pooled_passages(every), MiniLMEmbeddings(fast=True), quiet=True)
    comps, ctx, graph = dr_rag_over(corpus)
    judge = comps.judge("pair")
    cut = pair_threshold(ctx, judge)
    by: dict[str, Counter] = defaultdict(Counter)
    rows = []
    for ex in every:
        if not ex.supporting:
            continue
        shape, gold = ex.id.split("__")[0], set(ex.supporting_ids)
        fed = graph.invoke({"question": ex.question}, context=ctx)["passages"]
        fed_ids = {p["id"] for p in fed}
        partners = [p for p in fed if (p.get("meta") or {}).get("stage") == 2]
        c = by[shape]
        c["n"] += 1
        c["recall"] += len(gold & fed_ids) / len(gold)
        new_ids, row = set(fed_ids), {"id": ex.id, "shape": shape, "fed": sorted(fed_ids), "gold": sorted(gold)}
        if partners:
            hits = search_many(corpus, [concat_query(ex.question, p, int(ctx.concat_chars)) for p in partners],
                               int(ctx.k2), ctx.retrieval, ctx.fusion_k)
            pairs = [(p, h) for p, hs in zip(partners, hits) for h in hs if h["id"] not in fed_ids]
            scores = score_triples(judge, [(ex.question, judge_text(p), judge_text(h)) for p, h in pairs], ctx.pair_tokens)
            bonus, bridge = pair_priors(ctx, ex.question, pairs, corpus)
            total = [s + sum(priors_of((p["id"], h["id"]), bonus, bridge).values()) for (p, h), s in zip(pairs, scores)]
            reach = {h["id"] for p, h in pairs if h["id"] in gold}
            accepted = {h["id"] for (p, h), t in zip(pairs, total) if t >= cut}
            c["reach"] += len(reach)
            c["accept"] += len(reach & accepted)
            c["accept_other"] += len(accepted - gold)
            weakest = min(partners, key=strength)
            best = max(((t, h["id"]) for (p, h), t in zip(pairs, total) if t >= cut and t > strength(weakest)), default=None)
            if best is not None:
                new_ids.discard(weakest["id"])
                new_ids.add(best[1])
                c["swapped"] += 1
                c["gold_in"] += best[1] in gold
                c["gold_out"] += weakest["id"] in gold
                row["swap"] = {"out": weakest["id"], "in": best[1]}
        c["recall_swapped"] += len(gold & new_ids) / len(gold)
        rows.append(row)
    table = {}
    for shape, c in sorted(by.items()) + [("all", sum(by.values(), Counter()))]:
        table[shape] = {**dict(c), "recall": round(100 * c["recall"] / c["n"], 1),
                        "recall_swapped": round(100 * c["recall_swapped"] / c["n"], 1)}
        print(shape, json.dumps(table[shape]))
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"pair_cut": cut, "k2": int(ctx.k2), "by_shape": table, "questions": rows}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
