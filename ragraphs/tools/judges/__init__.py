"""Compact judges: cross-encoders that read question and passage together.

- :mod:`.core`: loading and scoring (``load_default_judge``, ``load_judge``, roles);
- :mod:`.data`: labelled items built from the benchmark files' own annotations;
- :mod:`.train`: fine-tuning with sentence-transformers' trainer, ONNX int8 export;
- :mod:`.metrics`: scikit-learn metrics, threshold fitting, ``evaluate_judge``;
- :mod:`.baselines`: MiniLM cosine baselines and the LLM-prompted judge.
"""

from .baselines import CachedMiniLM, CosineJudge, CosineNLIJudge, CosinePairJudge, LLMJudge
from .core import JUDGES, CrossEncoderJudge, Judge, load_default_judge, load_judge, own_threshold, passage_text, score_triples, weights_dir
from ...datasets import parse_data_spec
from .data import Item, build_items, iter_pairs, nli_items, pair_items, evaluator_items, spec_name, split_items
from .data import _facts, _row_examples  # noqa: F401  (used by bench scripts and tests)
from .metrics import auc_score, best_threshold, evaluate_judge, judge_scores, metrics_at

__all__ = [  # what a type checker counts as this package's own (TrainConfig, train_judges: below, lazily)
    "JUDGES", "CachedMiniLM", "CosineJudge", "CosineNLIJudge", "CosinePairJudge", "CrossEncoderJudge", "Item", "Judge",
    "LLMJudge", "auc_score", "baseline_judge", "best_threshold", "build_items", "evaluate_judge", "evaluator_items",
    "iter_pairs", "judge_scores", "load_default_judge", "load_judge", "metrics_at", "nli_items", "own_threshold",
    "pair_items", "parse_data_spec", "passage_text", "score_triples", "spec_name", "split_items", "weights_dir",
]


def baseline_judge(name: str, embeddings=None):
    """The cosine-similarity baseline for ``name``."""
    from ...errors import ConfigError

    if name == "evaluator":
        return CosineJudge(embeddings)
    if name == "nli":
        return CosineNLIJudge(embeddings)
    if name == "pair":
        return CosinePairJudge(embeddings)
    raise ConfigError(f"unknown judge {name!r}; choose evaluator, pair or nli")


def __getattr__(name):  # training pulls in datasets/accelerate: import it only when asked
    if name in ("TrainConfig", "train_judges"):
        from . import train

        return getattr(train, name)
    raise AttributeError(name)
