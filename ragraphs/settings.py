"""Run settings (the graphs' ``context_schema``) and where ragraphs keeps its data."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal


def data_dir() -> Path:
    """Root for stores, reservoirs and checkpoints: ``$RAGRAPHS_HOME`` or ``~/.ragraphs``."""
    return Path(os.environ.get("RAGRAPHS_HOME") or Path.home() / ".ragraphs").expanduser()


def default_store_path() -> str:
    return str(data_dir() / "chroma")


@dataclass(kw_only=True)
class RAGContext:
    """Settings of one run, shared by every method (Studio shows these as the run's context).

    Method graphs subclass this with their own thresholds and limits.
    """

    llm: str = field(default="gemma", metadata={"description": "model spec: gemma | llamacpp:PATH | openai:MODEL"})
    k: int = field(default=4, metadata={"description": "passages retrieved per query"})
    retrieval: Literal["dense", "bm25", "hybrid"] = "dense"
    max_new_tokens: int = field(default=32, metadata={"description": "tokens the generator may write"})
    max_passage_chars: int = field(default=1200, metadata={"description": "characters per passage in a prompt"})
    skip_generation: bool = field(
        default=False, metadata={"description": "stop before the final answer (retrieval-only evaluation)"}
    )
    rerank: str = field(
        default="none",
        metadata={"description": "re-ranker of the retrieved candidates: none | evaluator (the shipped cross-encoder) | a CrossEncoder path or name"},
    )
    rerank_depth: int = field(
        default=20, metadata={"description": "candidates retrieved for the re-ranker to choose the k passages from"}
    )


def context_from(cls: type, values: dict[str, Any] | None = None, base: Any = None):
    """Build a context dataclass from a dict, ignoring unknown keys; clear errors for bad ones."""
    from .errors import ConfigError

    values = dict(values or {})
    names = {f.name for f in fields(cls)}
    known = {k: v for k, v in values.items() if k in names and v is not None}
    try:
        if base is not None and isinstance(base, cls):
            return replace(base, **known)
        return cls(**known)
    except TypeError as e:
        raise ConfigError(f"bad run setting: {e}") from e
