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
from ragraphs.evaluation.runner import RunSpec, build_context, unique_ids
from ragraphs.evaluation.metrics import gold_found
from ragraphs.graphs import build_graph
from ragraphs.tools.embeddings import MiniLMEmbeddings

S="../shared/data"; T=S+"/train"
POOL=[S+"/hotpotqa.dev.jsonl", S+"/2wikimultihopqa.dev.jsonl", T+"/hotpotqa.train.jsonl",
      T+"/hotpotqa.extra.train.jsonl", T+"/hotpotqa.retrieved.train.jsonl", T+"/2wikimultihopqa.train.jsonl",
      T+"/2wikimultihopqa.extra.train.jsonl", T+"/musique.train.jsonl", T+"/musique.extra.train.jsonl"]
name, out = sys.argv[1], sys.argv[2]
settings = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
loaded = load_dataset(S+"/musique.dev.jsonl", "musique")
every = unique_ids(loaded)
ex_all = list(every)
if name == "all":
    for p in POOL: ex_all += load_dataset(p)
emb = MiniLMEmbeddings(fast=True)
comps = Components(retriever=PooledCorpus(pooled_passages(ex_all), emb, quiet=True), embeddings=emb)
spec = RunSpec(method="dr-rag", k=4, strategy="cfs", retrieval_only=True, settings=settings)
ctx = build_context(spec)
graph = build_graph(spec.graph_method, comps)
rows = []
for ex in every:
    if not ex.supporting: continue
    f = graph.invoke({"question": ex.question}, context=ctx)
    gold = ex.supporting
    def info(ps):
        return [dict(id=p["id"], title=p.get("title"), gold=any(gold_found([p], [g])[0] for g in gold),
                     meta={k: v for k, v in (p.get("meta") or {}).items() if k in ("stage", "named_by_question", "fill", "linked_from", "link_bonus", "bridge_bonus", "pair_score", "extra", "via")}) for p in ps]
    cands2 = [p for c in f["second_stage"] for p in c]
    rows.append(dict(id=ex.id, q=ex.question, n_gold=len(gold),
                     first=info(f["first_stage"]), cands=info(f["candidates"][:20]),
                     second=info(cands2), final=info(f["passages"]),
                     recall=sum(gold_found(f["passages"], gold)) / len(gold)))
json.dump(rows, open(out, "w"))
print(name, "recall", round(100 * sum(r["recall"] for r in rows) / len(rows), 1), "n", len(rows))

kinds = Counter()
for r in rows:
    for p in r["final"]:
        m = p["meta"]
        if m.get("stage") != 2 or m.get("fill"):
            continue
        kind = ("link" if m.get("link_bonus") else "") + ("+bridge" if m.get("bridge_bonus") else "") or "plain"
        kinds[(kind + (" (linked cand)" if m.get("linked_from") else ""), "gold" if p["gold"] else "not gold")] += 1
for k, v in sorted(kinds.items()):
    print(f"  {k[0]:<28} {k[1]:<9} {v}")
