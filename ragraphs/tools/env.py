"""Settings read from the environment, checked when read: a bad value is a one-line
:class:`ConfigError` naming the variable and quoting the value. A blank value (``X=`` or
spaces) reads as unset everywhere: the default."""

from __future__ import annotations

import os

from ..errors import ConfigError

FALSE = ("", "0", "false", "no", "off")
TRUE = ("1", "true", "yes", "on")


def _number(name: str, default: float, kind: type, what: str, ok) -> float:
    v = os.environ.get(name, "").strip()
    if not v:
        return default
    try:
        n = kind(v)
    except ValueError:
        raise ConfigError(f"{name} must be {what}, got {v!r}") from None
    if not ok(n):  # NaN fails every comparison
        raise ConfigError(f"{name} must be {what}, got {v!r}")
    return n


def positive_int(name: str) -> int | None:
    """The environment variable ``name`` as a positive integer; None when it is unset or blank."""
    return int(_number(name, 0, int, "a positive integer", lambda n: n >= 1)) or None


def flag(name: str) -> bool:
    """The environment variable ``name`` as an on/off switch: unset, blank, ``0``, ``false``,
    ``no`` and ``off`` (any case) are off; ``1``, ``true``, ``yes``, ``on`` and any other value
    are on (any non-empty value was on until 2026-11-30, ``0`` included)."""
    return os.environ.get(name, "").strip().lower() not in FALSE


def whole_number(name: str, default: int, *, least: int = 0) -> int:
    """The environment variable ``name`` as a whole number of at least ``least`` (0: none
    negative); ``default`` when it is unset or blank."""
    return int(_number(name, default, int, f"a whole number >= {least}", lambda n: n >= least))


def positive_number(name: str, default: float, *, below: float = 1e7) -> float:
    """The environment variable ``name`` as a number above 0 and below ``below``;
    ``default`` when it is unset or blank."""
    return float(_number(name, default, float, f"a number above 0 and below {below:g}", lambda n: 0 < n < below))
