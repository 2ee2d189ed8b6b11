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
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # no load reports
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bars
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    warnings.simplefilter("ignore")
    for name in LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


# ggml's log levels (ggml.h): NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5 (continues the
# previous message). llama-cpp-python's own callback reads them with an older numbering in
# which 3 was ERROR, so with ``verbose=False`` it still prints llama.cpp's warnings.
_GGML_ERROR, _GGML_CONT = 4, 5
_llama_log_callback = None  # the ctypes callback must outlive every call into llama.cpp
_last_level = 0


def quiet_llama_cpp() -> None:
    """llama.cpp logs its errors only (call after ``llama_cpp`` is imported: it installs
    its own log callback on import)."""
    global _llama_log_callback
    if _llama_log_callback is not None:
        return
    import ctypes
    import sys

    import llama_cpp

    @llama_cpp.llama_log_callback
    def log(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        global _last_level
        if level != _GGML_CONT:
            _last_level = level
        if _last_level == _GGML_ERROR:
            print(text.decode("utf-8", "replace"), end="", flush=True, file=sys.stderr)

    llama_cpp.llama_log_set(log, ctypes.c_void_p(0))
    _llama_log_callback = log
