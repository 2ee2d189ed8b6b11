"""CRAG's lower cut, replayed: every lower cut between the shipped one and the upper cut, from two runs.

    python bench/crag_lower_replay.py --data ../shared/data/popqa.dev.jsonl \
        --run normal=OLD_NORMAL/results.jsonl:NEW_NORMAL/results.jsonl \
        --run withheld=OLD_WITHHELD/results.jsonl:NEW_WITHHELD/results.jsonl \
        [--vanilla normal=V1/results.jsonl --vanilla withheld=V2/results.jsonl] \
        [--lowers -0.98,-0.5,0,0.3,0.5] [--mark -0.05] [--out DIR]

``--data FILE@K/N`` replays part K of N of the file's questions (the corpus pools the whole file).

CRAG's action depends on one number per question, the highest evaluator score among its
retrieved documents: Correct above ``upper``, Incorrect below ``lower``, Ambiguous between.
With ``upper`` fixed, a question's answer under any ``lower`` at or under ``upper`` is the
answer of one of two runs already made:

- OLD, a run with the shipped cuts (``lower`` under every score): the answer when the
  question goes to Correct or Ambiguous;
- NEW, a run whose ``lower`` is above every ``lower`` replayed (e.g. the withheld fit, 0.89):
  the answer when it goes to Incorrect (the web search only; the same whatever ``upper`` is).

The script scores each question's retrieval again with the shipped evaluator (the corpus of
the whole file pooled, dense top-k, as ``ragraphs eval`` and ``calibrate-crag`` retrieve;
``withheld`` runs withhold each question's gold as ``--withhold-gold`` does), checks that the
routes recorded in both runs agree with those scores, and prints, per ``lower``: the action
shares, the share of true misses (no gold paragraph retrieved) sent to Incorrect, the share of
retrievals holding gold sent there, and EM / F1 / accuracy (with a paired bootstrap interval
against the shipped cut, and against vanilla when given). The LLM is not run again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from crag_actions import action_of as route_of  # noqa: E402  (the evaluate entry's route)

from ragraphs.evaluation.paired import format_difference, paired_differences  # noqa: E402
from ragraphs.evaluation.records import read_results  # noqa: E402
from ragraphs.nodes.crag import decide_action  # noqa: E402

METRICS = ("em", "f1", "acc")


class Scorer:
    """The whole file's pooled corpus and the shipped evaluator, built once for every run."""

    def __init__(self, data: str):
        from ragraphs.components import Components
        from ragraphs.datasets import load_dataset, parse_data_spec, pooled_passages, select_part
        from ragraphs.evaluation.corpus import PooledCorpus
        from ragraphs.tools.embeddings import MiniLMEmbeddings

        path, part, nparts = parse_data_spec(data)
        every = load_dataset(path)
        self.examples = select_part(every, part, nparts)
        emb = MiniLMEmbeddings()
        self.corpus = PooledCorpus(pooled_passages(every), emb, quiet=True)
        self.judge = Components(retriever=self.corpus, embeddings=emb).judge("evaluator")

    def max_scores(self, withheld: bool, k: int) -> dict[str, tuple[float, bool]]:
        """question id -> (highest evaluator score of its top-k, whether a gold paragraph is among them)."""
        from ragraphs.cli.calibrate import score_hits
        from ragraphs.evaluation.corpus import WithheldRetriever

        held = WithheldRetriever(self.corpus)
        hits = []
        for ex in self.examples:  # one question at a time, as the graph retrieves (a query's int8 vector depends on its batch)
            held.withhold(ex.supporting_ids if withheld else ())
            hits.append(held.search(ex.question, k))
        rows = score_hits(self.examples, hits, self.judge)
        return {ex.id: (max(r["scores"]) if r["scores"] else -1.0, any(r["labels"])) for ex, r in zip(self.examples, rows)}


def action(m: float, upper: float, lower: float) -> str:
    return decide_action([m], upper, lower)[0]


def plot(rows: list[dict], path: str, upper: float, mark: float | None = None) -> None:
    """Left: where the questions go as the lower cut rises; right: the answers' F1 and EM."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 3.6), dpi=110)
    for name in dict.fromkeys(r["run"] for r in rows):
        rs = [r for r in rows if r["run"] == name]
        x = [r["lower"] for r in rs]
        mi = [100 * r["misses_to_incorrect"][0] / max(1, r["misses_to_incorrect"][1]) for r in rs]
        if any(r["misses_to_incorrect"][1] for r in rs):
            left.plot(x, mi, marker="o", label=f"{name}: true misses sent to Incorrect")
        if any(r["gold_to_incorrect"][1] for r in rs):
            gi = [100 * r["gold_to_incorrect"][0] / r["gold_to_incorrect"][1] for r in rs]
            left.plot(x, gi, marker="s", linestyle="--", label=f"{name}: gold retrieved, sent to Incorrect")
        right.plot(x, [r["f1"] for r in rs], marker="o", label=f"{name}: F1")
        right.plot(x, [r["em"] for r in rs], marker="s", linestyle="--", label=f"{name}: EM")
    for ax in (left, right):
        if mark is not None:
            ax.axvline(mark, color="grey", linestyle=":", label=f"lower {mark:g}")
        ax.set_xlabel(f"lower cut (upper {upper:g})")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    left.set_ylabel("% of those questions")
    right.set_ylabel("points")
    fig.suptitle("CRAG's lower cut, replayed", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="FILE or FILE@K/N (part K of N of its questions, over the whole file's corpus)")
    ap.add_argument("--run", action="append", required=True, help="NAME=OLD.jsonl:NEW.jsonl (NAME 'withheld' withholds the gold)")
    ap.add_argument("--vanilla", action="append", default=[], help="NAME=VANILLA.jsonl")
    ap.add_argument("--upper", type=float, default=0.56)
    ap.add_argument("--old-lower", type=float, default=-0.98)
    ap.add_argument("--new-lower", type=float, default=0.89)
    ap.add_argument("--new-upper", type=float, default=0.93)
    ap.add_argument("--lowers", default="-0.98,-0.9,-0.75,-0.5,-0.25,-0.05,0,0.1,0.2,0.3,0.4,0.5,0.56")
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--mark", type=float, default=None, help="draw this lower cut on the plot (e.g. the default)")
    ap.add_argument("--out", default=None, help="write table.md and rows.json here")
    a = ap.parse_args(argv)
    lowers = [float(x) for x in a.lowers.split(",")]
    if max(lowers) > min(a.upper, a.new_lower):
        ap.error("every replayed lower must be at or under both --upper and --new-lower")
    vanillas = dict(v.split("=", 1) for v in a.vanilla)
    lines, rows_out = [], []
    scorer = Scorer(a.data)
    for spec in a.run:
        name, paths = spec.split("=", 1)
        old_p, new_p = paths.split(":", 1)
        old, new = read_results(old_p), read_results(new_p)
        van = read_results(vanillas[name]) if name in vanillas else None
        scores = scorer.max_scores(name == "withheld", a.k)
        ids = [i for i in scores if i in old and i in new and (van is None or i in van)]
        bad = [i for i in ids if route_of(old[i]) != action(scores[i][0], a.upper, a.old_lower)
               or route_of(new[i]) != action(scores[i][0], a.new_upper, a.new_lower)]
        if bad:
            print(f"{name}: {len(bad)} of {len(ids)} recorded routes disagree with the scores "
                  f"(e.g. {bad[:5]}); they are left out", file=sys.stderr)
        ids = [i for i in ids if i not in set(bad)]
        misses = [i for i in ids if not scores[i][1]]
        base = {i: old[i] for i in ids}
        lines += [f"\n### {name} (n = {len(ids)}; {len(misses)} retrievals hold no gold paragraph)\n",
                  f"| lower | Correct / Ambiguous / Incorrect % | true misses to Incorrect | gold retrieved, to Incorrect "
                  f"| EM / F1 / acc | minus lower {a.old_lower:g}: EM / F1 / acc"
                  + (" | minus vanilla: EM / F1 / acc |" if van else " |"),
                  "| --- | --- | --- | --- | --- | ---" + (" | --- |" if van else " |")]
        for lo in lowers:
            acts = {i: action(scores[i][0], a.upper, lo) for i in ids}
            recs = {i: (new[i] if acts[i] == "incorrect" else old[i]) for i in ids}
            n = len(ids)
            sh = [100 * sum(v == x for v in acts.values()) / n for x in ("correct", "ambiguous", "incorrect")]
            mi = sum(acts[i] == "incorrect" for i in misses)
            hit = [i for i in ids if scores[i][1]]
            fi = sum(acts[i] == "incorrect" for i in hit)
            means = {m: 100 * sum(float(recs[i][m]) for i in ids) / n for m in METRICS}
            d_old = paired_differences(recs, base, metrics=METRICS) if lo != a.old_lower else None
            cell_old = " / ".join(format_difference(p) for p in d_old) if d_old else "-"
            row = {"run": name, "lower": lo, "n": n, "shares": dict(zip(("correct", "ambiguous", "incorrect"), sh)),
                   "misses_to_incorrect": [mi, len(misses)], "gold_to_incorrect": [fi, len(hit)], **means}
            cell_van = ""
            if van:
                d_v = paired_differences(recs, {i: van[i] for i in ids}, metrics=METRICS)
                cell_van = " | " + " / ".join(format_difference(p) for p in d_v)
            lines.append(f"| {lo:g} | {sh[0]:.1f} / {sh[1]:.1f} / {sh[2]:.1f} | {mi} of {len(misses)} | {fi} of {len(hit)} "
                         f"| {means['em']:.1f} / {means['f1']:.1f} / {means['acc']:.1f} | {cell_old}{cell_van} |")
            rows_out.append(row)
    text = "\n".join(lines).lstrip("\n") + "\n"
    print(text)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "table.md"), "w", encoding="utf-8") as fh:
            fh.write(text)
        with open(os.path.join(a.out, "rows.json"), "w", encoding="utf-8") as fh:
            json.dump(rows_out, fh, indent=1)
        plot(rows_out, os.path.join(a.out, "lower_cut.png"), a.upper, a.mark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
