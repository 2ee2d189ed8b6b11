"""DR-RAG recall@4 (SM and CFS) of the training files' questions, each on its own file's paragraphs
and on the every-file pool, for one or more values of ``link_expand``.

    python bench/dr_rag_link_expand_confirm.py 5,2 > confirm.jsonl

The pool is the corpus of the MuSiQue tenfold run of bench/results/dr_rag_tenfold_per_text/
(19,822 passages), built in the same file order, so the eval's cached vectors are reused.
Prints one JSON line per (file, corpus, value): recall in points, n with gold, seconds per
strategy. The confirmation step of bench/results/dr_rag_link_expand_scale/PLAN.txt.
"""
import json
import sys
import time

from dr_rag_link_expand_diag import T, dr_rag_over, every_file_pool, musique_dev
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.evaluation.corpus import PooledCorpus
from ragraphs.evaluation.metrics import retrieval_recall
from ragraphs.evaluation.runner import unique_ids
from ragraphs.tools.embeddings import MiniLMEmbeddings

FILES = [("hotpotqa", "hotpotqa.train"), ("2wikimultihopqa", "2wikimultihopqa.train"),
         ("2wikimultihopqa", "2wikimultihopqa.extra.train"), ("musique", "musique.train"), ("musique", "musique.extra.train")]
values = [int(v) for v in sys.argv[1].split(",")]
emb = MiniLMEmbeddings(fast=True)
big = PooledCorpus(pooled_passages(every_file_pool(musique_dev())), emb, quiet=True)


def run(corpus, examples, v):
    out = {}
    for strat in ("sm", "cfs"):
        _, ctx, graph = dr_rag_over(corpus, strat, {"link_expand": v})
        rec, t0 = [], time.time()
        for ex in examples:
            if ex.supporting:
                f = graph.invoke({"question": ex.question}, context=ctx)
                rec.append(retrieval_recall(f["passages"], ex.supporting))
        out[strat] = round(100 * sum(rec) / len(rec), 2); out["n_with_gold"] = len(rec)
        out[strat + "_s"] = round(time.time() - t0, 1)
    return out

for ds, name in FILES:
    loaded = load_dataset(f"{T}/{name}.jsonl", ds)
    ex = unique_ids(loaded)
    own = PooledCorpus(pooled_passages(ex), emb, quiet=True)
    for v in values:
        for cname, corpus in (("own", own), ("pool", big)):
            r = run(corpus, ex, v)
            print(json.dumps({"file": name, "corpus": cname, "passages": len(corpus.passages) if hasattr(corpus, "passages") else None,
                              "link_expand": v, **r}), flush=True)
