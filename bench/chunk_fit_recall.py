"""Does cutting a chunk again until it fits the encoder's window make its end findable?

    python bench/chunk_fit_recall.py [--paths README.md docs] [--k 4] [--n N --seed 0]

Reads ``--paths`` as ingest does, once by words only (as before 2026-12-02) and once with the
window check (a chunk past the encoder's 256 tokens cut again until it fits). The queries are
real sentences of those files: from each words-only chunk that runs past the window, the
longest sentence (8 to 30 words, on one line) lying wholly past its 256th token, which the encoder never
read; and, as a control, the longest such sentence wholly within its first 256 tokens. A query is
found when a passage holding that sentence is among the ``--k`` nearest by the packaged encoder
(dense search), in each store. Prints found / n for both stores and both kinds of query.
"""

from __future__ import annotations

import argparse
import random

from ragraphs.ingest import collect_passages
from ragraphs.state.types import make_passage
from ragraphs.tools.embeddings import MiniLMEmbeddings, window_fits
from ragraphs.tools.text import split_sentences
from ragraphs.tools.vectorstore import InMemoryCorpus, embedded_text


def fair(sentence: str, text: str) -> bool:
    """A sentence any chunking keeps whole: 8 to 30 words on one line (a longer one, such as a
    table row, may be cut by words; one spanning lines may be cut at a line end)."""
    return 8 <= len(sentence.split()) <= 30 and sentence in text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--paths", nargs="+", default=["README.md", "docs"])
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--n", type=int, default=0, help="at most this many queries, a seeded sample (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    embeddings = MiniLMEmbeddings()
    tok, window = embeddings.model.tokenizer, int(embeddings.model.max_seq_length)
    fit = window_fits(embeddings)
    words_only, _ = collect_passages(a.paths)
    fitted, _ = collect_passages(a.paths, fits=lambda title, text: fit(embedded_text(make_passage(title, text))))

    past, within = [], []  # from each over-window chunk: a sentence the encoder never read, and one it read
    for p in words_only:
        text = embedded_text(p)
        ids = tok(text, add_special_tokens=True, truncation=False, verbose=False, return_offsets_mapping=True)
        if len(ids["input_ids"]) <= window:
            continue
        read_to = ids["offset_mapping"][window - 2][1]  # the last character the encoder reads ([SEP] closes the window)
        flat = text.replace("\n", " ")  # the same offsets
        tail = [s for s in split_sentences(flat[read_to:]) if fair(s, text) and flat.find(s) >= read_to]
        head = [s for s in split_sentences(flat[:read_to]) if fair(s, text) and flat.find(s) + len(s) <= read_to]
        past += [max(tail, key=len)] if tail else []
        within += [max(head, key=len)] if head else []
    stores = {label: InMemoryCorpus(passages, embeddings) for label, passages in (("words only", words_only),
                                                                                  ("cut again to fit", fitted))}
    for name, queries in (("past the window", past), ("within the window (a control)", within)):
        queries = list(dict.fromkeys(queries))
        random.Random(a.seed).shuffle(queries)
        queries = queries[: a.n or None]
        print(f"{len(queries)} queries: a sentence {name} of a words-only chunk past it, {' '.join(a.paths)}")
        for label, corpus in stores.items():
            hits = corpus.dense_search_vectors(corpus.embed_queries(queries), a.k)
            found = sum(any(q in p["text"].replace("\n", " ") for p in got) for q, got in zip(queries, hits))
            print(f"  {label}: {len(corpus.passages)} passages; found in the top {a.k}: {found} of {len(queries)} "
                  f"({100 * found / max(1, len(queries)):.1f}%)")


if __name__ == "__main__":
    main()
