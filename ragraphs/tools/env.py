"""Settings read from the environment, checked when read: a bad value is a one-line
:class:`ConfigError` naming the variable."""

from __future__ import annotations

import os

from ..errors import ConfigError


def positive_int(name: str) -> int | None:
    """The environment variable ``name`` as a positive integer; None when it is unset or blank."""
    v = os.environ.get(name, "").strip()
    if not v:
        return None
    try:
        n = int(v)
    except ValueError:
        raise ConfigError(f"{name} must be a positive integer, got {v!r}") from None
    if n < 1:
        raise ConfigError(f"{name} must be a positive integer, got {v!r}")
    return n
