"""`ragraphs eval` with the embedded Gemma pinned to a number of llama.cpp threads.

On a small CPU shared by many processes, llama.cpp's worker threads wait for each other
at every operation and a 2-thread model runs far slower than a 1-thread one. This wrapper
pre-builds the embedded Gemma with ``MIGRES_BENCH_THREADS`` threads (default 1), then
runs the ordinary ``ragraphs`` command line with the given arguments:

    MIGRES_BENCH_THREADS=1 python bench/migres_eval.py eval --method migres \
        --dataset hotpotqa --data /path/hotpotqa.dev.jsonl --limit 20 --out DIR --json
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from ragraphs.cli import main  # noqa: E402
from ragraphs.tools import llm as L  # noqa: E402


def pin_gemma(threads: int) -> None:
    for max_tokens in (32, 64):
        L._CACHE[("gemma", max_tokens)] = L.LlamaCppCompletionChat(
            model_path=L.gemma_gguf_path(), max_tokens=max_tokens, n_threads=threads
        )


if __name__ == "__main__":
    pin_gemma(int(os.environ.get("MIGRES_BENCH_THREADS", "1")))
    raise SystemExit(main(sys.argv[1:]))
