"""Settings read from the environment, checked when read: a bad value is a one-line
:class:`ConfigError` naming the variable and quoting the value. A blank value (``X=`` or
spaces) reads as unset everywhere: the default."""

from __future__ import annotations

import os

from ..errors import ConfigError

FALSE = ("", "0", "false", "no", "off")
TRUE = ("1", "true", "yes", "on")


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


def flag(name: str) -> bool:
    """The environment variable ``name`` as an on/off switch: unset, blank, ``0``, ``false``,
    ``no`` and ``off`` (any case) are off; ``1``, ``true``, ``yes``, ``on`` and any other value
    are on (any non-empty value was on until 2026-11-30, ``0`` included)."""
    return os.environ.get(name, "").strip().lower() not in FALSE
