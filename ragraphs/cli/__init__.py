"""The ``ragraphs`` command line: one module per verb group.

- :mod:`.main`: the parser and dispatch (``main``),
- :mod:`.ingest`: ``ingest``,
- :mod:`.ask`: ``ask``, ``demo``, ``methods``,
- :mod:`.debug`: ``history``, ``replay`` (persisted threads, time travel),
- :mod:`.calibrate`: ``calibrate-crag``,
- :mod:`.common`: store options, the run-and-stream loop (``--set KEY=VALUE`` is read by
  :func:`ragraphs.settings.parse_settings`).

``eval`` (:mod:`ragraphs.evaluation.cli`) and ``train-judge`` / ``judge-eval``
(:mod:`ragraphs.tools.judges_cli`) are registered from their own packages.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
