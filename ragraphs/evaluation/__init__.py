"""Evaluation harness: ``ragraphs eval`` (metrics, runner, reports).

- :mod:`.metrics`: SQuAD-normalised EM/F1, substring accuracy, recall of gold paragraphs;
- :mod:`.runner`: runs any method over benchmark questions (resumable, errors recorded);
- :mod:`.corpus`: the pooled distractor corpus with an on-disk embedding cache, the oracle;
- :mod:`.report`: the Markdown report and its plots;
- :mod:`.summary`: a run's averages, its retrieval stages and how its loops ended;
- :mod:`.cli`: the ``ragraphs eval`` verb.
"""

from .metrics import accuracy, answer_scores, exact_match, f1_score, normalize, retrieval_recall
from .runner import RunSpec, run_spec
from .summary import summarize

__all__ = [
    "RunSpec",
    "accuracy",
    "answer_scores",
    "exact_match",
    "f1_score",
    "normalize",
    "retrieval_recall",
    "run_spec",
    "summarize",
]
