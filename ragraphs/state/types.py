"""Shared state types and reducers used by every method's graph state."""

from __future__ import annotations

import hashlib
from typing import Any, Iterable, Mapping, Protocol, TypeVar

from langgraph.runtime import Runtime
from langgraph.typing import ContextT  # a run context type (a dataclass, TypedDict, pydantic model or None)
from typing_extensions import NotRequired, TypedDict  # pydantic (Studio schemas) needs these on Python < 3.12

StateT_contra = TypeVar("StateT_contra", contravariant=True)


class Node(Protocol[StateT_contra, ContextT]):
    """A graph node: ``node(state, runtime)`` returns a partial state update.

    LangGraph hands the node the run's ``Runtime``; its ``context`` is the method's settings
    (``Node[CRAGState, CRAGContext]``). A node shared by several methods is ``Node[Any, Any]``.
    """

    def __call__(self, state: StateT_contra, runtime: Runtime[ContextT]) -> dict[str, Any]: ...


class Passage(TypedDict):
    """One unit of knowledge handed between nodes.

    ``id`` is stable for the same content (a hash of title and text), so the same
    paragraph reached by two routes is one passage.
    """

    id: str
    title: str
    text: str
    source: str  # "corpus", "web", "memory", "llm", ...
    score: float | None
    meta: NotRequired[dict[str, Any]]


def passage_id(title: str, text: str) -> str:
    h = hashlib.sha256()
    h.update((title or "").strip().encode("utf-8", "replace"))
    h.update(b"\x1f")
    h.update((text or "").strip().encode("utf-8", "replace"))
    return h.hexdigest()[:20]


def make_passage(
    title: str,
    text: str,
    source: str = "corpus",
    score: float | None = None,
    id: str | None = None,
    **meta: Any,
) -> Passage:
    p: Passage = {
        "id": id or passage_id(title, text),
        "title": title or "",
        "text": text or "",
        "source": source,
        "score": score,
    }
    if meta:
        p["meta"] = meta
    return p


def merge_passages(left: list[Passage] | None, right: list[Passage] | None) -> list[Passage]:
    """Reducer: append new passages, de-duplicated by id, keeping first-seen order.

    When a passage arrives again, its score is updated to the newer non-None score.
    Passing ``None`` as the update leaves the list unchanged; to clear the list a
    node returns ``{"passages": RESET}``-style sentinel (see :data:`RESET`).
    """
    left = list(left or [])
    if right is None:
        return left
    if isinstance(right, dict) and right.get("__reset__"):
        return list(right.get("value") or [])
    index = {p["id"]: i for i, p in enumerate(left)}
    for p in right:
        if not isinstance(p, Mapping):
            raise TypeError(f"a passage is a dict such as make_passage(title, text) builds, not {type(p).__name__}")
        if "id" not in p:  # a user's node's passage without one: its id as make_passage gives it (KeyError until 2026-12-03)
            p = {**p, "id": passage_id(str(p.get("title") or ""), str(p.get("text") or ""))}
        i = index.get(p["id"])
        if i is None:
            index[p["id"]] = len(left)
            left.append(p)
        elif p.get("score") is not None:
            left[i] = {**left[i], "score": p["score"]}
    return left


def with_meta(p: Passage, **meta: Any) -> Passage:
    """A copy of the passage with ``meta`` merged into its ``meta``."""
    return {**p, "meta": {**(p.get("meta") or {}), **meta}}


WHERE_KEYS = ("url", "path", "page")  # where a passage comes from, when its meta says


def passage_where(p: Mapping[str, Any]) -> dict[str, Any]:
    """The address, file and page a passage's ``meta`` gives (``url``, ``path``, ``page``),
    those it has: what the method tool's message and the chat's AI message show of a source."""
    meta = p.get("meta") or {}
    return {k: meta[k] for k in WHERE_KEYS if meta.get(k) not in (None, "")}


def passage_place(p: Mapping[str, Any]) -> str:
    """Where a passage comes from, as a person reads it: its page's address or its file's path,
    with a PDF's page (``guide.pdf, page 3``); empty for a benchmark paragraph. ``ask``,
    ``chat`` and the method tool's message show it."""
    loc = passage_where(p)
    where = str(loc.get("url") or loc.get("path") or "")
    return f"{where}, page {loc['page']}" if where and loc.get("page") else where


def with_score(p: Passage, score: float | None) -> Passage:
    """A copy of the passage with ``score``."""
    return {**p, "score": score}


def reset(value: Iterable[Passage] = ()) -> Any:
    """An update for a :func:`merge_passages` field that replaces the list."""
    return {"__reset__": True, "value": list(value)}


def written(value: Any) -> Any:
    """What an update (``stream_mode="updates"``) writes to a key: the value, or the value an
    ``Overwrite`` carries past the key's reducer (a new question on a used thread, see
    ``graphs._common.start_at``), also in the JSON forms a LangGraph server streams it in
    (``{"value": ..., "type": "__overwrite__"}``, ``{"__overwrite__": ...}``), or the list a
    node's :func:`reset` of the passages carries."""
    from langgraph.types import Overwrite

    if isinstance(value, Overwrite):
        return value.value
    if isinstance(value, dict):
        if value.get("type") == "__overwrite__" and "value" in value and len(value) == 2:
            return value["value"]
        if len(value) == 1 and "__overwrite__" in value:
            return value["__overwrite__"]
        if value.get("__reset__") is True and set(value) == {"__reset__", "value"}:  # a node's reset()
            return value["value"]
    return value


def add_trace(left: list[dict] | None, right: list[dict] | dict | None) -> list[dict]:
    """Reducer: append trace entries (a dict or a list of dicts)."""
    out = list(left or [])
    if right is None:
        return out
    if isinstance(right, dict):
        out.append(right)
    else:
        out.extend(right)
    return out


def cut_text(text: str, max_chars: int) -> str:
    """``text`` on one line, cut at the last word boundary within ``max_chars`` (then " ...")."""
    text = " ".join((text or "").split())
    return text[:max_chars].rsplit(" ", 1)[0] + " ..." if len(text) > max_chars else text


def format_passages(passages: Iterable[Passage], max_chars: int = 1200) -> str:
    """Render passages as numbered, quoted data blocks for a prompt."""
    lines = []
    for i, p in enumerate(passages, 1):
        text = cut_text(p.get("text") or "", max_chars)
        title = " ".join((p.get("title") or "").split())  # one line: a title cannot open a new prompt line
        head = f"[{i}] {title}: " if title else f"[{i}] "
        lines.append(head + text)
    return "\n".join(lines)


def question_of(state: Mapping[str, Any], key: str = "question") -> str:
    """The run's question (or the query at ``key``), checked before any work: text, not empty."""
    from ..errors import InputError

    if key not in state:
        raise InputError(f"no {key} given: run the graph with {{{key!r}: \"...\"}} as its input")
    q = state.get(key)
    if q is not None and not isinstance(q, str):
        raise InputError(f"the question must be text, got {type(q).__name__}")
    if q is None or not q.strip():
        raise InputError("the question is empty")
    return q
