"""What the command line prints: quiet by default, everything with ``--verbose``.

By default the libraries under ragraphs keep to themselves: no transformers load reports
or "Loading weights" bars, no llama.cpp log lines, no Python warnings; ragraphs' own
output (ingest progress, answers, errors) is unchanged. ``--verbose`` or
``RAGRAPHS_DEBUG=1`` (``RAGRAPHS_VERBOSE=1`` in the environment) shows them all.
Library use (``import ragraphs``) is left alone except for llama.cpp, which logs only with
``RAGRAPHS_VERBOSE``/``RAGRAPHS_DEBUG`` set.
"""

from __future__ import annotations

import logging
import os
import warnings

# loggers of the libraries ragraphs runs; quiet means errors only
LOGGERS = (
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "torch",
    "chromadb",
    "httpx",
    "urllib3",
    "langchain",
    "langchain_core",
    "llama-cpp-python",
)


def is_verbose() -> bool:
    return bool(os.environ.get("RAGRAPHS_VERBOSE") or os.environ.get("RAGRAPHS_DEBUG"))


def configure_output(verbose: bool) -> None:
    """Quiet the libraries for a command-line run (or, with ``verbose``, let them talk).

    Set before the libraries load: environment variables they read at import (inherited by
    child processes too), the log levels of their loggers, and the warnings filter.
    """
    if verbose:
        os.environ["RAGRAPHS_VERBOSE"] = "1"
        return
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    warnings.simplefilter("ignore")
    for name in LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def quiet_llama_cpp() -> None:
    """No llama.cpp log lines, from model loading on (errors only)."""
    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
