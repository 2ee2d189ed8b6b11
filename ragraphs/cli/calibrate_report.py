"""What ``ragraphs calibrate-crag`` reports beside its fit: the calibration as a person reads
it, and what a report needs to be made again (its arguments, judge and package versions)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["calibration_provenance", "print_calibration"]


def print_calibration(report: dict, args: argparse.Namespace) -> None:
    """The calibration as a person reads it: the cuts, how stable they are, and the actions' shares."""
    from ..settings import PAPER_LOWER, PAPER_UPPER

    f, stability, strip_cut = report["calibrated"], report["bootstrap_90"], report["strip_threshold"]
    other = "question" if args.unit == "doc" else "doc"
    fitted_other, missed = report[f"calibrated_{other}"], report.get("withheld_misses", 0)
    print(f"calibrated on {report['questions']} questions of {args.data} (k={args.k}, unit={args.unit}, judge={report['judge']}):")
    print(f"  upper = {f['upper']}  lower = {f['lower']}   (paper: upper {PAPER_UPPER}, lower {PAPER_LOWER})")
    if f["lower_from"] == "judge":
        print(f"  lower: the evaluator's own relevance cut (--lower judge); the paper's rule fits {f['lower_rule']}")
    if stability:
        print(f"  over {stability['resamples']} bootstrap resamples of the questions, 90% of the rule's fits lie in: upper "
              f"{stability['upper'][0]} to {stability['upper'][1]}, lower {stability['lower_rule'][0]} to "
              f"{stability['lower_rule'][1]} ({f['n'] - f['n_relevant']} irrelevant samples to fit on)")
    print(f"  objective: upper {f['objective_upper']}, the rule's lower {f['objective_lower']} (alpha {f['alpha']}; {f['n']} samples, {f['n_relevant']} relevant)")
    sh = report[f"shares_calibrated_{other}"]
    if fitted_other is None:
        print(f"  with unit={other}: not fitted (its samples are all relevant)")
    else:
        print(
            f"  with unit={other}: upper = {fitted_other['upper']}  lower = {fitted_other['lower']}: correct "
            f"{sh['correct']:.1%}, ambiguous {sh['ambiguous']:.1%}, incorrect {sh['incorrect']:.1%}"
        )
    print(f"  retrievals holding a gold paragraph: {report['retrieval_has_gold']:.1%}")
    if missed:
        sh = report["shares_withheld_calibrated"]
        print(
            f"  {missed} retrievals with the question's gold withheld (true misses): correct "
            f"{sh['correct']:.1%}, ambiguous {sh['ambiguous']:.1%}, incorrect {sh['incorrect']:.1%}"
        )
    if strip_cut is not None:
        print(f"  strip threshold = {strip_cut} ({report['strips']['n']} strips, {report['strips']['with_answer']} holding a gold answer)")
    for name in ("calibrated", "paper"):
        sh = report[f"shares_{name}"]
        q = report[f"quality_{name}"]
        print(
            f"  actions ({name} thresholds): correct {sh['correct']:.1%}, ambiguous {sh['ambiguous']:.1%}, "
            f"incorrect {sh['incorrect']:.1%}; correct precision {q['correct_precision']}, "
            f"incorrect precision {q['incorrect_precision']}"
        )
    if report["use"]:
        print(f"  use: ragraphs ask --method crag {report['use']}")
    else:
        print("  (the cosine baseline's cuts: CRAG runs the trained evaluator, whose scores these do not fit)")


def calibration_provenance(args: Any) -> dict[str, Any]:
    """What a report needs to be made again: every argument (``args``: the ``--alpha``,
    ``--retrieval``, ``--limit``, ``--lower``, ``--dataset``, ``--bootstrap`` ... the fit read;
    until 2026-11-30 the report held only some), the evaluator judge's folder and the sha256 of
    its ``ragraphs_judge.json`` (``judge_source``; every ``train-judge`` output has the same
    ``name``; None for ``--judge cosine``), and the package versions."""
    from ..evaluation.provenance import json_safe, judge_sources, versions

    given = {k: v for k, v in vars(args).items() if k != "func" and not k.startswith("_")}
    source = None
    if getattr(args, "judge", "default") == "default":
        source = next(({"variable": var, **e} for var, e in judge_sources().items() if "evaluator" in e["roles"]), None)
    return {"args": json_safe(given), "judge_source": source, "versions": versions()}
