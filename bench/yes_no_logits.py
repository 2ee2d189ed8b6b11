"""Does the embedded reader know yes from no? Its next-token probabilities after "Answer:".

    python bench/yes_no_logits.py runs/strategyqa/runs/strategyqa/vanilla/results.jsonl [...]

For each yes/no question of the given `ragraphs eval` records (gold "yes" or "no"), rebuilds
the answer prompt over the passages the run handed the reader (`prompts.rag_answer_prompt`),
runs the embedded Gemma once and reads P(" yes" | " Yes") and P(" no" | " No") for the first
answer token. Prints the AUC of log P(yes) - log P(no) against the gold, the accuracy of the
best constant shift of that difference, and the accuracy after contextual calibration (the
same difference on a content-free prompt subtracted, Zhao et al. 2021). An AUC near 0.5 means
no rule over these two probabilities can sort the answers.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from sklearn.metrics import roc_auc_score


def main(paths: list[str]) -> None:
    import llama_cpp

    from ragraphs.prompts import rag_answer_prompt
    from ragraphs.tools.llama import gemma_gguf_path

    llm = llama_cpp.Llama(model_path=gemma_gguf_path(), n_ctx=4096, n_threads=2, verbose=False)

    def first(s: str) -> int:
        return llm.tokenize(s.encode(), add_bos=False)[0]

    yes, no = [first(" yes"), first(" Yes")], [first(" no"), first(" No")]

    def probs(prompt: str) -> tuple[float, float]:
        llm.reset()
        llm.eval(llm.tokenize(prompt.encode(), add_bos=True))
        ptr = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
        lg = np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).astype(np.float64)
        p = np.exp(lg - lg.max())
        p /= p.sum()
        return float(p[yes].sum()), float(p[no].sum())

    gold, diff = [], []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                g = str((r.get("gold") or [""])[0]).strip().lower()
                if g not in ("yes", "no"):
                    continue
                py, pn = probs(rag_answer_prompt(r["question"], r.get("passages") or [], max_chars=1200))
                gold.append(g == "yes")
                diff.append(np.log(py) - np.log(pn))
    y, d = np.array(gold), np.array(diff)
    if len(set(y)) < 2:
        raise SystemExit("need yes/no questions with both answers")
    cy, cn = probs(rag_answer_prompt("N/A", [], max_chars=1200))
    best = max(float(((d >= t) == y).mean()) for t in np.unique(d))
    print(f"n = {len(y)}, gold yes {y.mean():.3f}; reader says yes (P(yes) > P(no)) for {(d > 0).mean():.3f}")
    print(f"AUC of log P(yes) - log P(no): {roc_auc_score(y, d):.3f}")
    print(f"accuracy: as decoded {((d >= 0) == y).mean():.3f}, best constant shift {best:.3f}, "
          f"contextual calibration {((d - (np.log(cy) - np.log(cn)) >= 0) == y).mean():.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
