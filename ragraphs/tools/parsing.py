"""Lenient parsing of LLM output: JSON-ish objects, quoted fields, index lists, query lists.

Small models (Gemma 3 270M base) often write almost-JSON: single quotes, smart quotes,
trailing commas, Python literals, a missing closing brace, text before or after the
object, an object cut off by the token limit, or unescaped quotes inside a string. The
functions here recover what can be recovered and never raise on any input: the worst case
is an empty result (``None``, ``""`` or ``[]``), which the caller treats as "nothing said".

Typical use with a completion prompt that ends inside a JSON object::

    text = prompt_tail + completion          # e.g. '{"answer": "' + 'Paris", "explanation": ...'
    obj = parse_json_object(text) or {}
    answer = obj.get("answer") or extract_string_field(text, "answer")
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

__all__ = [
    "parse_json_object",
    "parse_json_value",
    "extract_string_field",
    "extract_int_list",
    "parse_int_list",
    "parse_list_items",
    "close_json",
]

_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'", "\u00ab": '"', "\u00bb": '"'})
_FENCE = re.compile(r"```(?:json|JSON)?")


def _normalise(text: str) -> str:
    text = (text or "").translate(_SMART)
    return _FENCE.sub("", text)


def _readings(text: str) -> list[str]:
    """The text as written, then normalised (smart quotes made straight, code fences dropped):
    a valid JSON value whose strings hold a fence or a smart quote is read unchanged."""
    raw = text or ""
    norm = _normalise(raw)
    return [raw] if norm == raw else [raw, norm]


def _in_strings(text: str) -> tuple[list[bool], bool, bool]:
    """For each character of a JSON text, whether it belongs to a string literal (its quotes
    included, backslash escapes honoured); then whether the text ends inside a string, and
    right after a backslash."""
    mask: list[bool] = []
    in_str = esc = False
    for ch in text:
        if in_str:
            mask.append(True)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        else:
            in_str = ch == '"'
            mask.append(in_str)
    return mask, in_str, esc


def close_json(text: str) -> str:
    """Close what a cut-off JSON text left open: an open string, then open brackets.

    Scans outside/inside strings (honouring backslash escapes); a dangling ``,`` or ``:``
    at the cut is dropped (a dangling key gets ``null``).
    """
    stack: list[str] = []
    mask, in_str, esc = _in_strings(text)
    for ch, inside in zip(text, mask):
        if inside:
            continue
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if stack and stack[-1] == ch:
                stack.pop()
    out = text
    if in_str:
        if esc:
            out = out[:-1]
        out += '"'
    stripped = out.rstrip()
    if stack and stack[-1] == "}":
        # a key cut before its colon ('{"a": 1, "ke'): drop it
        dangling = re.search(r'([,{])\s*"(?:[^"\\]|\\.)*"\s*$', stripped)
        if dangling:
            stripped = stripped[: dangling.start(1) + (1 if dangling.group(1) == "{" else 0)]
            out = stripped
    if stripped.endswith(","):
        out = stripped[:-1]
    elif stripped.endswith(":"):
        out = stripped + " null"
    return out + "".join(reversed(stack))


_CLOSES = re.compile(r"\s*[}\]]")


def drop_trailing_commas(text: str) -> str:
    """``[1, 2,]`` -> ``[1, 2]``: drop each comma that only whitespace separates from a closing
    bracket, outside strings (a ``",}"`` inside a string value stays as written)."""
    mask = _in_strings(text)[0]
    return "".join(ch for i, (ch, inside) in enumerate(zip(text, mask))
                   if inside or ch != "," or not _CLOSES.match(text, i + 1))


def _candidates(text: str) -> list[str]:
    """Substrings that may be one JSON value: from each opening bracket to its match or to the end."""
    out = []
    starts = [i for i, ch in enumerate(text) if ch in "{["][:8]
    for s in starts:
        depth = 0
        in_str = False
        esc = False
        end = None
        for j in range(s, len(text)):
            ch = text[j]
            if in_str:
                if esc:
                    esc = False
                elif ch == "\\":
                    esc = True
                elif ch == '"':
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    end = j + 1
                    break
        out.append(text[s:end] if end else text[s:])
    return out


def _try_load(s: str) -> Any:
    s = s.strip()
    if not s:
        return None
    for attempt in (s, drop_trailing_commas(s)):
        try:
            return json.loads(attempt)
        except (ValueError, RecursionError):
            pass
    closed = close_json(drop_trailing_commas(s))
    try:
        return json.loads(drop_trailing_commas(closed))
    except (ValueError, RecursionError):
        pass
    # Python-literal style: single quotes, True/False/None
    if len(s) < 20000:
        try:
            return ast.literal_eval(closed)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return None


def _first(text: str, accept, objects_only: bool = False) -> Any:
    """The first candidate of any reading of ``text`` that loads (repaired) to a value
    ``accept`` takes, else None; a parser of model output must never crash a run."""
    try:
        for reading in _readings(text):
            for cand in _candidates(reading):
                if objects_only and not cand.startswith("{"):
                    continue
                val = _try_load(cand)
                if accept(val):
                    return val
    except Exception:
        return None
    return None


def looks_like_json(text: str) -> bool:
    """Whether ``text`` opens as a JSON object or list (a fenced block too): text that a
    decision's plain-text reader must not take as its words."""
    t = (text or "").lstrip()
    if t.startswith("```"):
        t = t.split("\n", 1)[-1].lstrip() if "\n" in t else ""
    return t[:1] in ("{", "[")


def parse_json_value(text: str) -> Any:
    """The first JSON object or array that can be read from ``text`` (repaired), else None."""
    return _first(text, lambda v: isinstance(v, (dict, list)))


def parse_json_object(text: str) -> dict | None:
    """The first JSON object readable from ``text``, else None (arrays are skipped)."""
    return _first(text, lambda v: isinstance(v, dict), objects_only=True)


def extract_string_field(text: str, key: str) -> str | None:
    """The value of ``"key": "..."`` read by pattern, for text no JSON parser accepts.

    Tolerates single or smart quotes, a missing closing quote (cut-off output) and
    unescaped quotes inside the value (the value ends at the quote followed by ``,`` ``}``
    or end of line). A bare value (``"key": 1889,``) is returned as text. None when the key
    is absent.
    """
    try:
        text = _normalise(text)
        m = re.search(r"[\"']" + re.escape(key) + r"[\"']\s*:\s*", text)
        if not m:
            return None
        rest = text[m.end():]
        if rest[:1] in ("{", "["):
            # nested value: take its "text" field, else its first string
            inner = parse_json_value(rest)
            if isinstance(inner, dict):
                for k in ("text", "answer", "value"):
                    if isinstance(inner.get(k), (str, int, float)):
                        return str(inner[k]).strip()
            m2 = re.search(r"[\"']([^\"']*)[\"']", rest)
            return m2.group(1).strip() if m2 else ""
        if rest[:1] in ("'", '"'):
            q = rest[0]
            body = rest[1:]
            # end at a closing quote followed by a separator; else at end of line
            end = re.search(re.escape(q) + r"\s*(?:,?\s*[\"'][\w ]+[\"']\s*:|[,}\]]|$)", body, flags=re.M)
            value = body[: end.start()] if end else body.split("\n", 1)[0]
            return value.replace('\\"', '"').strip()
        bare = re.match(r"([^,}\n]*)", rest)
        value = (bare.group(1) if bare else "").strip()
        return None if value.lower() == "null" else value
    except Exception:
        return None


def parse_int_list(value: Any) -> list[int]:
    """Integers from a citation value: ``[0, 2]``, ``"1,3"``, ``"[Passage 2]"``, ``3`` -> list."""
    try:
        if value is None or isinstance(value, bool):
            return []
        if isinstance(value, (int, float)):
            return [int(value)]
        if isinstance(value, (list, tuple)):
            out: list[int] = []
            for v in value:
                out.extend(parse_int_list(v))
            return out
        return [int(x) for x in re.findall(r"-?\d{1,6}", str(value))]
    except Exception:
        return []


def extract_int_list(text: str, key: str) -> list[int]:
    """Integers following ``"key":`` in raw text (``"support_passages": [0, 2]``)."""
    try:
        m = re.search(r"[\"']" + re.escape(key) + r"[\"']\s*:\s*(\[[^\]]*\]?|[^,}\n]*)", _normalise(text))
        return parse_int_list(m.group(1)) if m else []
    except Exception:
        return []


_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\(?\d{1,2}[.):]|Q\d{1,2}[.):]|Query\s*\d*\s*[.):])\s*", re.I)


def parse_list_items(text: str, max_items: int | None = None, stop_prefixes: tuple[str, ...] = ()) -> list[str]:
    """Items of a numbered, bulleted or one-per-line list; a JSON array of strings also works.

    Reading stops at a blank line after the first item, or at a line starting with one of
    ``stop_prefixes`` (the next few-shot block). Items are stripped of numbering and quotes
    and de-duplicated in order.
    """
    try:
        text = _normalise(text)
        arr = None
        if text.lstrip()[:1] == "[":
            arr = parse_json_value(text)
        if isinstance(arr, list) and arr and all(isinstance(x, str) for x in arr):
            raw = arr
        else:
            raw = []
            for line in text.splitlines():
                if not line.strip():
                    if raw:
                        break
                    continue
                if stop_prefixes and line.strip().lower().startswith(tuple(p.lower() for p in stop_prefixes)):
                    break
                raw.append(line)
        out: list[str] = []
        seen: set[str] = set()
        for item in raw:
            s = _ITEM.sub("", str(item)).strip().strip("\"'").strip().rstrip(",").strip().strip("\"'").strip()
            key = " ".join(s.lower().split())
            if not s or key in seen:
                continue
            seen.add(key)
            out.append(s)
            if max_items and len(out) >= max_items:
                break
        return out
    except Exception:
        return []
