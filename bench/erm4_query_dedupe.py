"""Which questions does ERM4's query de-duplication (2026-11-30) reach? For every question of
the given files, the embedded model's Rewriter+ decision (one LLM call, as the graph makes it)
read with the queries compared by case only (before) and by words, case and punctuation aside
(now); prints the questions whose query lists differ and the count per file.

    RAGRAPHS_LLM_THREADS=2 python bench/erm4_query_dedupe.py ../shared/data/hotpotqa.dev.jsonl ...
"""

from __future__ import annotations

import argparse
import json
import re

from ragraphs.components import Components
from ragraphs.datasets import load_dataset
from ragraphs.nodes import erm4_parsing as P
from ragraphs.nodes.erm4 import rewrite_prompt
from ragraphs.settings import ERM4Context
from ragraphs.tools.structured import RewritePlus, decide


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    ctx, c = ERM4Context(), Components()
    llm = c.llm(ctx.llm, max_tokens=int(ctx.max_new_tokens))
    for path in a.files:
        differ = []
        examples = load_dataset(path)
        for ex in examples:
            q = " ".join(ex.question.split())
            out = decide(llm, rewrite_prompt(q), RewritePlus, stop=["\n", "[Original Question]"],
                         max_tokens=int(ctx.rewrite_max_tokens), legacy=P.read_rewrite_legacy(q, ctx.max_queries))
            if out.value is None:
                continue
            now = P.check_rewrite([out.value.rewritten_question], out.value.queries, q, ctx.max_queries)[1]
            key = P.query_key
            P.query_key = lambda s: (s or "").casefold()  # the comparison before 2026-11-30
            try:
                before = P.check_rewrite([out.value.rewritten_question], out.value.queries, q, ctx.max_queries)[1]
            finally:
                P.query_key = key
            if before != now:
                differ.append({"id": ex.id, "question": q, "before": before, "now": now})
        for d in differ:
            print(json.dumps(d, ensure_ascii=False))
        print(f"{re.sub(r'.*/', '', path)}: {len(differ)} of {len(examples)} questions have other queries now")


if __name__ == "__main__":
    main()
