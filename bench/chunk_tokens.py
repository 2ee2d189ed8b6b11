"""How many MiniLM tokens a word costs, and how many chunks run past the encoder's window.

    python bench/chunk_tokens.py [--data ../shared/data/hotpotqa.dev.jsonl] [--docs docs/*.md]
                                 [--paths README.md docs notebooks ragraphs]

The packaged encoder reads 256 tokens of a passage (its title first) and drops the rest, so
``ragraphs ingest --chunk-words`` must leave room for them. Prints the tokens per word (median,
90th percentile) of the benchmark file's paragraphs (Wikipedia prose; those of 30 words or
more) and of the Markdown files' chunks, and for 120 / 150 / 180 words a chunk, how many of the
Markdown files' chunks (code and tables keep their lines, as ingest reads Markdown) run past
256 tokens, and how many chunks ingest's window check makes of them (a chunk past the window
cut again until it fits). Last, ingest's own chunks of ``--paths`` by file type, without and with
the window check: chunks, how many run past the window, the share of their tokens never
embedded, the median tokens, and the seconds reading and chunking took.
"""

from __future__ import annotations

import argparse
import glob
import os
import time

import numpy as np

from ragraphs.datasets import load_dataset
from ragraphs.ingest import collect_passages
from ragraphs.state.types import make_passage
from ragraphs.tools.embeddings import MiniLMEmbeddings, window_fits
from ragraphs.tools.text import chunk_text
from ragraphs.tools.vectorstore import embedded_text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data/hotpotqa.dev.jsonl")
    ap.add_argument("--docs", nargs="+", default=sorted(glob.glob("docs/*.md")))
    ap.add_argument("--paths", nargs="+", default=["README.md", "docs", "notebooks", "ragraphs"])
    a = ap.parse_args()
    # a quoted pattern ('docs/*.md') is expanded here, as the shell expands an unquoted one
    a.docs = [f for d in a.docs for f in (sorted(glob.glob(d)) if glob.has_magic(d) else [d])]
    missing = [f for f in [a.data, *a.docs] if not os.path.isfile(f)]
    if missing or not a.docs:
        ap.error(f"no such file: {missing[0]}" if missing else "--docs matched no file")
    embeddings = MiniLMEmbeddings()
    model = embeddings.model
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
        chunks = [c for t in markdown for c in chunk_text(t, words, keep_lines=True)]
        # ingest's window check (since 2026-12-02): a chunk past the window is cut again until it fits
        fitted = [c for t in markdown for c in chunk_text(t, words, keep_lines=True, fits=lambda c: n_tokens(c) <= window)]
        sizes = [n_tokens(c) for c in chunks]
        unread = sum(max(0, n - window) for n in sizes) / sum(sizes)  # the tokens the encoder drops
        print(f"{words} words a chunk: {sum(n > window for n in sizes)} of {len(chunks)} Markdown chunks past "
              f"{window} tokens ({100 * unread:.1f}% of their tokens never embedded); cut again to fit: {len(fitted)} "
              f"chunks, {sum(n_tokens(c) > window for c in fitted)} past, median {np.median([n_tokens(c) for c in fitted]):.0f} tokens")

    fit = window_fits(embeddings)
    for label, fits in (("words only", None), ("cut again to fit", lambda title, text: fit(embedded_text(make_passage(title, text))))):
        t0 = time.perf_counter()
        passages, _ = collect_passages(a.paths, fits=fits)
        seconds = time.perf_counter() - t0
        by_type: dict[str, list[int]] = {}
        for p in {p["id"]: p for p in passages if "chunk" in p.get("meta", {})}.values():  # benchmark rows are kept whole
            by_type.setdefault(os.path.splitext(p["meta"]["path"])[1] or "(none)", []).append(n_tokens(embedded_text(p)))
        print(f"ingest's chunks of {' '.join(a.paths)}, {label} (read and chunked in {seconds:.2f} s):")
        for ext, sizes in sorted(by_type.items(), key=lambda kv: -len(kv[1])) + [("all", sum(by_type.values(), []))]:
            unread = sum(max(0, n - window) for n in sizes) / max(1, sum(sizes))
            print(f"  {ext}: {len(sizes)} chunks, {sum(n > window for n in sizes)} past {window} tokens "
                  f"({100 * unread:.1f}% of their tokens never embedded), median {np.median(sizes):.0f} tokens")


if __name__ == "__main__":
    main()
