"""A set of models by identity, weakly held: the models an endpoint refused a parameter for."""

from __future__ import annotations

import weakref
from typing import Any


class ModelMarks:
    """A set of models, by identity, that forgets a model when it is collected (weakly held;
    one that takes no weak reference is held). Holding every marked model kept each one a
    server had refused alive for the life of the process until 2026-11-30; a plain id could
    be another model's once the first was collected."""

    def __init__(self) -> None:
        self._weak: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self._held: dict[int, Any] = {}

    def add(self, model: Any) -> None:
        try:
            self._weak[id(model)] = model
        except TypeError:
            self._held[id(model)] = model

    def __contains__(self, model: Any) -> bool:
        return self._weak.get(id(model)) is model or self._held.get(id(model)) is model

    def __len__(self) -> int:
        return len(self._weak) + len(self._held)
