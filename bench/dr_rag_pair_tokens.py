"""DR-RAG's CFS with the judges reading fewer tokens: recall against retrieval time.

The pair classifier reads (q, d_i, d') as one input of up to the judges' ``max_length``
tokens (256), and it is most of CFS's retrieval time. This sets a shorter budget on the
loaded judges, then runs the same ``ragraphs eval --retrieval-only`` as the README's tables.

    python bench/dr_rag_pair_tokens.py 192 hotpotqa [--data-dir ../shared/data] [--out runs/pair-tokens]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragraphs.cli import main as ragraphs_main
from ragraphs.tools.judges.core import load_cross_encoder, weights_dir


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tokens", type=int, help="tokens per judge input (the shipped judges read 256)")
    ap.add_argument("dataset", choices=["hotpotqa", "2wikimultihopqa", "musique"])
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--out", default="runs/pair-tokens")
    a = ap.parse_args(argv)
    if a.tokens < 16:
        raise SystemExit("tokens must be at least 16")
    model, _meta = load_cross_encoder(weights_dir())  # the process-wide model every judge role shares
    model.max_length = a.tokens
    return ragraphs_main(["eval", "--method", "dr-rag", "--strategy", "cfs", "--k", "4", "--retrieval-only",
                          "--dataset", a.dataset, "--data", str(Path(a.data_dir) / f"{a.dataset}.dev.jsonl"),
                          "--out", f"{a.out}/{a.tokens}/{a.dataset}", "--json"])


if __name__ == "__main__":
    raise SystemExit(main())
