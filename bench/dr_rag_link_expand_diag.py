"""Which partners CFS picks on MuSiQue's dev questions, on the dev corpus or the every-file pool.

    python bench/dr_rag_link_expand_diag.py dev OUT.json ['{"link_expand": 5}']
    python bench/dr_rag_link_expand_diag.py all OUT.json ['{"link_expand": 5}']

Runs the DR-RAG graph (CFS, k = 4, the defaults and the JSON settings given) over every MuSiQue
dev question, on the dev file's paragraphs (``dev``) or on every multi-hop file here pooled
(``all``, the 19,822 passages of bench/results/dr_rag_tenfold_per_text/), keeps each question's
static documents, second-stage candidates and fed passages (gold or not, and the meta the
graph gives them), writes them to OUT.json and prints the recall and the partners fed by kind:
the priors they carried (link, bridge, none) and whether only a title link brought them
(``linked cand``). The diagnostic of bench/results/dr_rag_link_expand_scale/PLAN.txt.
"""
import json
import sys
from collections import Counter

from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.evaluation.corpus import PooledCorpus
from ragraphs.evaluation.metrics import gold_found
from ragraphs.evaluation.runner import RunSpec, build_context, unique_ids
from ragraphs.graphs import build_graph
from ragraphs.tools.embeddings import MiniLMEmbeddings

S = "../shared/data"
T = S + "/train"
#: the other multi-hop files of the every-file pool, after MuSiQue's dev file, in the eval's order
POOL = [S + "/hotpotqa.dev.jsonl", S + "/2wikimultihopqa.dev.jsonl", T + "/hotpotqa.train.jsonl",
        T + "/hotpotqa.extra.train.jsonl", T + "/hotpotqa.retrieved.train.jsonl", T + "/2wikimultihopqa.train.jsonl",
        T + "/2wikimultihopqa.extra.train.jsonl", T + "/musique.train.jsonl", T + "/musique.extra.train.jsonl"]
META = ("stage", "named_by_question", "fill", "linked_from", "link_bonus", "bridge_bonus", "pair_score", "extra", "via")


def musique_dev() -> list:
    """MuSiQue's dev questions, with the ids the eval gives them."""
    return unique_ids(load_dataset(S + "/musique.dev.jsonl", "musique"))


def every_file_pool(first: list) -> list:
    """``first`` followed by every example of :data:`POOL`: the corpus of the every-file pool."""
    out = list(first)
    for path in POOL:
        out += load_dataset(path)
    return out


def dr_rag_over(corpus: PooledCorpus, strategy: str = "cfs", settings: dict | None = None):
    """(components, context, graph) of DR-RAG at k = 4, retrieval only, over ``corpus``."""
    comps = Components(retriever=corpus, embeddings=corpus.embeddings)
    spec = RunSpec(method="dr-rag", k=4, strategy=strategy, retrieval_only=True, settings=dict(settings or {}))
    return comps, build_context(spec), build_graph(spec.graph_method, comps)


def stages(corpus_name: str, settings: dict) -> list[dict]:
    """Each MuSiQue dev question's stages under DR-RAG (CFS, k = 4, ``settings``)."""
    every = musique_dev()
    examples = every_file_pool(every) if corpus_name == "all" else every
    _, ctx, graph = dr_rag_over(PooledCorpus(pooled_passages(examples), MiniLMEmbeddings(fast=True), quiet=True),
                                settings=settings)
    rows = []
    for ex in every:
        if not ex.supporting:
            continue
        f = graph.invoke({"question": ex.question}, context=ctx)
        gold = ex.supporting

        def info(ps):
            return [dict(id=p["id"], title=p.get("title"), gold=any(gold_found([p], gold)),
                         meta={k: v for k, v in (p.get("meta") or {}).items() if k in META}) for p in ps]

        rows.append(dict(id=ex.id, q=ex.question, n_gold=len(gold), first=info(f["first_stage"]),
                         cands=info(f["candidates"][:20]), second=info([p for c in f["second_stage"] for p in c]),
                         final=info(f["passages"]), recall=sum(gold_found(f["passages"], gold)) / len(gold)))
    return rows


def partner_kinds(rows: list[dict]) -> Counter:
    """The partners fed (stage 2, not the fill), by the priors they carried and whether only a
    title link brought them, gold or not."""
    kinds = Counter()
    for r in rows:
        for p in r["final"]:
            m = p["meta"]
            if m.get("stage") != 2 or m.get("fill"):
                continue
            kind = ("link" if m.get("link_bonus") else "") + ("+bridge" if m.get("bridge_bonus") else "") or "plain"
            kinds[(kind + (" (linked cand)" if m.get("linked_from") else ""), "gold" if p["gold"] else "not gold")] += 1
    return kinds


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in ("dev", "all"):
        raise SystemExit(__doc__)
    rows = stages(argv[0], json.loads(argv[2]) if len(argv) > 2 else {})
    json.dump(rows, open(argv[1], "w"))
    print(argv[0], "recall", round(100 * sum(r["recall"] for r in rows) / len(rows), 1), "n", len(rows))
    for k, v in sorted(partner_kinds(rows).items()):
        print(f"  {k[0]:<28} {k[1]:<9} {v}")


if __name__ == "__main__":
    main(sys.argv[1:])
