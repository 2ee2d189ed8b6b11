"""What the command line prints: quiet by default, everything with ``--verbose``.

By default the libraries under ragraphs keep to themselves: no transformers load reports
or "Loading weights" bars, no llama.cpp log lines, no Python warnings; ragraphs' own
output (ingest progress, answers, errors) is unchanged. ``--verbose`` or
``RAGRAPHS_DEBUG=1`` (``RAGRAPHS_VERBOSE=1`` in the environment) shows them all.
Library use (``import ragraphs``) is left alone except for llama.cpp, which logs only with
``RAGRAPHS_VERBOSE``/``RAGRAPHS_DEBUG`` on (``0``, ``false``, ``no``, ``off`` are off).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from typing import Iterator

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
    """``RAGRAPHS_VERBOSE`` or ``RAGRAPHS_DEBUG`` on (:func:`ragraphs.tools.env.flag`: ``0``,
    ``false``, ``no``, ``off`` are off; until 2026-11-30 any value, ``0`` too, was on)."""
    from .tools.env import flag

    return flag("RAGRAPHS_VERBOSE") or flag("RAGRAPHS_DEBUG")


# read by the libraries when they are imported (and by child processes)
QUIET_ENV = {
    "TRANSFORMERS_VERBOSITY": "error",  # no load reports
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # no "Loading weights" bars
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "PYTHONWARNINGS": "ignore",
}


# what the command line runs with, verbose or not (library use sets none of them): the package's
# models load from local files only, and the hub libraries must not try the network either
CLI_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@contextlib.contextmanager
def output(verbose: bool) -> Iterator[None]:
    """A command-line run, quiet (or, with ``verbose``, with the libraries' output).

    Set before the libraries load: environment variables they read at import, the log
    levels of their loggers, the warnings filter; all restored on exit, so that a run of
    ``main()`` inside another program (the tests) leaves it as it was. With ``verbose``
    the quiet variables are cleared for the run and ``RAGRAPHS_VERBOSE=1`` is set.
    """
    env: dict[str, str | None] = {**QUIET_ENV, **CLI_ENV, "RAGRAPHS_VERBOSE": None}
    saved_env = {k: os.environ.get(k) for k in env}
    for k, v in CLI_ENV.items():  # quiet or not: the command line never asks a model hub
        os.environ.setdefault(k, v)
    saved_levels = {name: logging.getLogger(name).level for name in LOGGERS}
    with warnings.catch_warnings():
        if verbose:
            for k in QUIET_ENV:
                os.environ.pop(k, None)
            os.environ["RAGRAPHS_VERBOSE"] = "1"
        else:
            for k, v in QUIET_ENV.items():
                os.environ.setdefault(k, v)
            warnings.simplefilter("ignore")
            for name in LOGGERS:
                logging.getLogger(name).setLevel(logging.ERROR)
        try:
            yield
        finally:
            for k, old in saved_env.items():
                if old is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = old
            for name, level in saved_levels.items():
                logging.getLogger(name).setLevel(level)


# ggml's log levels (ggml.h): NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5 (continues the
# previous message). llama-cpp-python's own callback reads them with an older numbering in
# which 3 was ERROR, so with ``verbose=False`` it still prints llama.cpp's warnings.
_GGML_ERROR, _GGML_CONT = 4, 5
_llama_log_callback = None  # the ctypes callback must outlive every call into llama.cpp
_last_level = 0


def route_llama_cpp_logs() -> None:
    """llama.cpp logs its errors only, everything when verbose (call after ``llama_cpp`` is
    imported: it installs its own log callback on import)."""
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
        if _last_level == _GGML_ERROR or is_verbose():
            print(text.decode("utf-8", "replace"), end="", flush=True, file=sys.stderr)

    llama_cpp.llama_log_set(log, ctypes.c_void_p(0))
    _llama_log_callback = log


_LOADING = threading.RLock()  # the warning filters and log levels are the process's: one block at a time


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Load a model without transformers' load report and bars (library use too), unless
    verbose; the previous verbosity is restored after the block. Loads in two threads take
    turns: the warning filters and logger levels are process-wide, and two blocks interleaving
    their saves and restores left them silenced for good (until 2026-11-30)."""
    if is_verbose():
        yield
        return
    with _LOADING:
        with _quiet_block():
            yield


@contextlib.contextmanager
def _quiet_block() -> Iterator[None]:
    saved = {name: logging.getLogger(name).level for name in LOGGERS}
    hf = None
    with warnings.catch_warnings():
        # before the first import of transformers: it imports tqdm.auto, which warns in a
        # notebook kernel without ipywidgets ("IProgress not found")
        warnings.simplefilter("ignore")
        try:
            from transformers.utils import logging as hf_logging

            hf = (hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled())
            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
        except ImportError:  # pragma: no cover
            pass
        for name in LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
        try:
            yield
        finally:
            if hf is not None:
                hf_logging.set_verbosity(hf[0])
                if hf[1]:
                    hf_logging.enable_progress_bar()
            for name, level in saved.items():  # after transformers' own: each logger's exact level back
                logging.getLogger(name).setLevel(level)
