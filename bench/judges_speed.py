"""Speed of the default judges (ONNX int8, batched) on this CPU: the shipped ones, or those
``RAGRAPHS_JUDGES_DIR`` / ``RAGRAPHS_RERANKER`` name (tokens are counted with the shipped tokenizer).

Measures what the methods do: the evaluator on (question, passage) pairs padded to about 256
tokens (real HotpotQA paragraphs, repeated to length), the evaluator on 200-character strips
(CRAG's refinement, MIGRES's sentences), the pair classifier on (q, d1, d2) triples (two
strips; and two whole paragraphs, as DR-RAG's CFS reads them, in its
``pair_tokens`` budget and in the whole 256 tokens).

    python bench/judges_speed.py [--batch 32] [--n 256] [--repeat 3]

onnxruntime uses every core; run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from ragraphs.settings import DRRAGContext
from ragraphs.tools.judges import load_default_judge, passage_text
from ragraphs.tools.judges.core import load_cross_encoder, weights_dir

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "hotpotqa.sample.jsonl"


def _timed(fn, items, batch, repeat=1):
    """Milliseconds per item: the median of ``repeat`` passes over ``items`` (a shared
    machine's passes can differ by half), after one warm-up batch."""
    fn(items[:batch])
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        for s in range(0, len(items), batch):
            fn(items[s : s + batch])
        runs.append((time.perf_counter() - t) * 1000 / len(items))
    return float(statistics.median(runs))


def speed_inputs(tok, n: int) -> tuple[list, list, list]:
    """The bench's inputs from real HotpotQA paragraphs: (question, passage) pairs repeated
    to about 256 tokens, (question, 200-character strip) pairs, and (q, d_i, d') triples of
    two whole paragraphs."""
    from ragraphs.datasets import load_dataset

    exs = load_dataset(str(DATA), "hotpotqa")
    paras = [(ex.question, passage_text(p)) for ex in exs for p in ex.paragraphs]
    long_pairs, strips = [], []
    for q, p in paras:
        text = p
        while len(tok(q, text, verbose=False)["input_ids"]) < 256:  # a length measured: no warning past 256
            text += " " + p
        long_pairs.append((q, text))
        strips.append((q, p[:200]))
    whole_triples = [(q, p, paras[i - 1][1]) for i, (q, p) in enumerate(paras)]
    return long_pairs[:n], strips[:n], whole_triples[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3, help="passes per measurement; the median is reported")
    a = ap.parse_args()
    if min(a.batch, a.n, a.repeat) < 1:
        ap.error("--batch, --n and --repeat must each be at least 1")
    model, _meta = load_cross_encoder(weights_dir())
    tok = model.tokenizer
    long_pairs, strips, whole_triples = speed_inputs(tok, a.n)
    ntok = sum(min(256, len(tok(q, t, truncation=True, max_length=256)["input_ids"])) for q, t in long_pairs) / len(long_pairs)
    ev, pair = load_default_judge("evaluator"), load_default_judge("pair")
    ev.batch_size = pair.batch_size = a.batch
    res = {
        "ms_per_256_token_pair": round(_timed(ev.score_batch, long_pairs, a.batch, a.repeat), 2),
        "mean_tokens": round(ntok, 1),
        "ms_per_200_char_strip": round(_timed(ev.score_batch, strips, a.batch, a.repeat), 2),
        "ms_per_triple": round(_timed(pair.score_pairs, [(q, p, strips[i - 1][1]) for i, (q, p) in enumerate(strips)], a.batch,
                                        a.repeat), 2),
        # what DR-RAG's CFS reads: (q, d_i, d') of two whole paragraphs, in its pair_tokens
        # budget shared by both, and in the model's whole 256 tokens
        "ms_per_dr_rag_triple": round(_timed(lambda t: pair.score_pairs(t, max_tokens=DRRAGContext().pair_tokens),
                                             whole_triples, a.batch, a.repeat), 2),
        "ms_per_dr_rag_triple_256": round(_timed(pair.score_pairs, whole_triples, a.batch, a.repeat), 2),
        "dr_rag_pair_tokens": DRRAGContext().pair_tokens,
        "batch": a.batch, "n": len(long_pairs), "repeat": a.repeat,
    }
    print(json.dumps(res))


if __name__ == "__main__":
    main()
