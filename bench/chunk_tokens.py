"""How many MiniLM tokens a word costs, and how many chunks run past the encoder's window.

    python bench/chunk_tokens.py [--data ../shared/data/hotpotqa.dev.jsonl] [--docs docs/*.md]

The packaged encoder reads 256 tokens of a passage (its title first) and drops the rest, so
``ragraphs ingest --chunk-words`` must leave room for them. Prints the tokens per word (median,
90th percentile) of the benchmark file's paragraphs (Wikipedia prose; those of 30 words or
more) and of the Markdown files' chunks, and for 120 / 150 / 180 words a chunk, how many of the
Markdown files' chunks run past 256 tokens.
"""

from __future__ import annotations

import argparse
import glob
import os

import numpy as np

from ragraphs.datasets import load_dataset
from ragraphs.tools.embeddings import MiniLMEmbeddings
from ragraphs.tools.text import chunk_text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data/hotpotqa.dev.jsonl")
    ap.add_argument("--docs", nargs="+", default=sorted(glob.glob("docs/*.md")))
    a = ap.parse_args()
    # a quoted pattern ('docs/*.md') is expanded here, as the shell expands an unquoted one
    a.docs = [f for d in a.docs for f in (sorted(glob.glob(d)) if glob.has_magic(d) else [d])]
    missing = [f for f in [a.data, *a.docs] if not os.path.isfile(f)]
    if missing or not a.docs:
        ap.error(f"no such file: {missing[0]}" if missing else "--docs matched no file")
    model = MiniLMEmbeddings().model
    tok, window = model.tokenizer, int(model.max_seq_length)

    def n_tokens(text: str) -> int:
        return len(tok(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])

    def rates(texts: list[str]) -> str:
        r = [n_tokens(t) / len(t.split()) for t in texts if len(t.split()) >= 30]
        return f"median {np.median(r):.2f}, 90th percentile {np.percentile(r, 90):.2f} (n = {len(r)})"

    paragraphs = list({p["id"]: p["text"] for ex in load_dataset(a.data) for p in ex.paragraphs}.values())
    markdown = [open(f, encoding="utf-8").read() for f in a.docs]
    print(f"window: {window} tokens")
    print(f"{a.data} paragraphs, tokens per word: {rates(paragraphs)}")
    print(f"Markdown chunks of 150 words, tokens per word: {rates([c for t in markdown for c in chunk_text(t, 150)])}")
    for words in (120, 150, 180):
        chunks = [c for t in markdown for c in chunk_text(t, words)]
        print(f"{words} words a chunk: {sum(n_tokens(c) > window for c in chunks)} of {len(chunks)} Markdown chunks past {window} tokens")


if __name__ == "__main__":
    main()
