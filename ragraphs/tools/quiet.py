"""Quiet model loading: no weight-loading bars or load reports unless ``RAGRAPHS_DEBUG=1``."""

from __future__ import annotations

import contextlib
import logging
import os
import warnings


def verbose() -> bool:
    return os.environ.get("RAGRAPHS_DEBUG", "") not in ("", "0")


@contextlib.contextmanager
def quiet_loading():
    """Silence transformers/sentence-transformers/optimum loading output for the block."""
    if verbose():
        yield
        return
    names = ("transformers", "sentence_transformers", "optimum", "onnxruntime", "huggingface_hub")
    saved = {n: logging.getLogger(n).level for n in names}
    hf = None
    try:
        from transformers.utils import logging as hf_logging

        hf = (hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled())
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except Exception:  # pragma: no cover - transformers missing or changed
        hf = None
    for n in names:
        logging.getLogger(n).setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for n, lvl in saved.items():
            logging.getLogger(n).setLevel(lvl)
        if hf is not None:
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity(hf[0])
            if hf[1]:
                hf_logging.enable_progress_bar()
