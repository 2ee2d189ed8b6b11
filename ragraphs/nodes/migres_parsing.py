"""MIGRES output reading: the legacy free-text formats under the structured decisions, and
the query/passage comparisons the memory uses."""

from __future__ import annotations

import hashlib
import re

from ..prompts import clean_answer, one_line
from ..state.types import Passage
from ..tools.parsing import (extract_int_list, extract_string_field, looks_like_json, parse_int_list, parse_json_object,
                             parse_list_items)
from ..tools.structured import LeafExtraction, MainVerdict, QueryList, Statement
from ..tools.text import normalize_answer


# ---------------------------------------------------------------------------- parsing

_UNANSWERABLE = re.compile(
    r"\b(unanswerable|not answerable|cannot be answered|can ?not answer"
    r"|insufficient(?: (?:information|evidence|data|context))?|unknown|no answer"
    r"|(?:do not|don['’]?t|does not|doesn['’]?t) know|not (?:enough|sufficient) information"
    r"|no (?:relevant )?information"
    r"|not (?:mentioned|stated|specified) in(?: the (?:given |provided )?(?:passages?|text|context|documents?))?"
    r"|can ?not (?:be )?determined?)\b",
    re.I,
)
_NAME_WORD = re.compile(r"[A-Z][\w'’.-]*")


def refuses(text: str) -> bool:
    """Whether ``text`` says the question cannot be answered ("unknown", "insufficient
    information", "I don't know", "not mentioned in the passages", ...; "I don't know" read
    as an answer until 2026-11-30), not a name that holds such a word: "Unknown Pleasures", "The Unknown
    Soldier", "No Answer (band)" are answers (they read as refusals until 2026-11-30). A phrase
    in title case is part of a name only when a capitalised word stands beside it (not "I",
    nor a label such as "Answer:"; :func:`_names`) or an aside that says what it names follows
    (:func:`_names_what`): "Not Enough Information", "Cannot Be Determined" or "Unknown (not in
    the passages)" is a refusal (until 2026-12-01 any title-case phrase of two words or more
    read as a name, and ended MIGRES's loop as its answer)."""
    for m in _UNANSWERABLE.finditer(text or ""):
        words = m.group(0).split()
        if all(_NAME_WORD.fullmatch(w) for w in words):  # title case: part of a name?
            before = (text[: m.start()].split() or [""])[-1]
            after = (text[m.end():].split() or [""])[0]
            if any(_names(w) for w in (before, after)) or _names_what(text[m.end():]):
                continue
        return True
    return False


def _names(word: str) -> bool:
    """Whether a word beside a title-case refusal makes it part of a name: a capitalised word
    ("Pleasures," too), not "I" nor a label ("Answer:")."""
    bare = word.rstrip(",;!?\"')”’")
    return bare != "I" and not bare.endswith(":") and bool(_NAME_WORD.fullmatch(bare))


_ASIDE = re.compile(r"\s*\(([^()]{1,40})\)")
_NOT_A_KIND = {"passage", "passages", "information", "context", "text", "given", "based", "provided", "see", "document",
               "documents", "question", "answer", "mentioned", "stated", "enough", "found", "not", "no", "none",
               "unclear", "missing", "uncertain", "ambiguous", "unsure", "unspecified", "undetermined", "known"}


def _names_what(rest: str) -> bool:
    """Whether ``rest`` opens with an aside that says what a name is ("(band)", "(Ozzy Osbourne
    song)"), not one about the passages ("(not in the information given)", "(see Passage 1)")."""
    m = _ASIDE.match(rest)
    if m is None:
        return False
    words = set(re.findall(r"[a-z]+", m.group(1).lower()))  # "(2)": no word, no kind
    return bool(words) and not words & _NOT_A_KIND and len(m.group(1).split()) <= 5


def parse_main(text: str) -> dict:
    """The Main Module's verdict from its completion (the prompt's ``{"answer": "`` included).

    Returns ``{"answered", "answer", "missing", "explanation", "parsed"}``; ``parsed`` says
    whether a JSON object was read (else fields came from patterns). An empty or
    unreadable answer counts as "unanswerable".
    """
    obj = parse_json_object(text) or {}
    raw_answer = obj.get("answer")
    if isinstance(raw_answer, dict):  # the paper's {"answer": {"text": ..., "confidence": ...}}
        raw_answer = raw_answer.get("text")
    if not isinstance(raw_answer, (str, int, float)) or isinstance(raw_answer, bool):
        raw_answer = extract_string_field(text, "answer")
    missing = obj.get("missing_information")
    if not isinstance(missing, str):
        missing = extract_string_field(text, "missing_information") or ""
    explanation = obj.get("explanation")
    if not isinstance(explanation, str):
        explanation = extract_string_field(text, "explanation") or ""
    return {**verdict(str(raw_answer or ""), missing), "explanation": one_line(explanation, 1000), "parsed": bool(obj)}


def verdict(raw_answer: str, missing: str, cut_asides: bool = True, whole: bool = False) -> dict:
    """``{"answered", "answer", "missing"}`` from the Main Module's answer and missing information:
    an empty answer, or one that says "unanswerable" (or the like), is no answer."""
    answer = clean_answer(raw_answer, cut_asides=cut_asides, whole=whole)
    # a refusal as the answer reads and as written: "No Answer (band)" loses its aside to the cleaning
    answered = bool(answer) and not (refuses(answer) and refuses(raw_answer)) \
        and normalize_answer(answer) not in ("", "none", "n a", "null")
    return {"answered": answered, "answer": answer if answered else "", "missing": one_line(missing or "", 500)}


def read_main_legacy(text: str) -> MainVerdict | None:
    """The Main Module's verdict read by pattern from text no JSON reader accepts (the
    ``"answer"`` key must be there: free text is no verdict)."""
    if extract_string_field(text, "answer") is None:
        return None
    v = parse_main(text)
    return MainVerdict(answer=v["answer"] or "unanswerable", missing_information=v["missing"])


def read_leaf_legacy(text: str) -> LeafExtraction | None:
    """Leaf statements read by pattern (each ``"info": "..."`` with its ``support_passages``)."""
    items = parse_leaf(text)
    if not items and "useful_information" not in (text or ""):
        return None
    return LeafExtraction(useful_information=[Statement(info=it["info"], support_passages=it["support"]) for it in items])


def read_queries_legacy(text: str) -> QueryList | None:
    """Queries written as a numbered or bulleted list instead of JSON (None for JSON no reader
    took: its braces and keys are no query)."""
    if looks_like_json(text):
        return None
    items = [q for q in parse_list_items(text, max_items=3) if len(q) >= 3]
    return QueryList(queries=items) if items else None


def parse_leaf(text: str) -> list[dict]:
    """Statements ``[{"info", "support": [int]}]`` from the Leaf Module's completion."""
    obj = parse_json_object(text) or {}
    items = obj.get("useful_information")
    out: list[dict] = []
    if isinstance(items, list):
        for it in items:
            if isinstance(it, dict):
                info = it.get("info")
                if isinstance(info, (str, int, float)) and str(info).strip():
                    out.append({"info": one_line(str(info), 500), "support": parse_int_list(it.get("support_passages"))})
            elif isinstance(it, str) and it.strip():
                out.append({"info": one_line(it, 500), "support": []})
        return out
    # not readable as JSON: take each "info": "..." by pattern
    for m in re.finditer(r"[\"']info[\"']\s*:", text or ""):
        chunk = text[m.start():]
        nxt = re.search(r"[\"']info[\"']\s*:", chunk[1:])
        chunk = chunk[: nxt.start() + 1] if nxt else chunk
        info = extract_string_field(chunk, "info")
        if info:
            out.append({"info": one_line(info, 500), "support": extract_int_list(chunk, "support_passages")})
    return out


def _norm(s: str) -> str:
    return " ".join(normalize_answer(s).split())


def _tokens(s: str) -> set[str]:
    return set(_norm(s).split())


def similar_query(a: str, b: str, jaccard: float = 0.8) -> bool:
    """Whether two queries ask the same thing (same normalised text or near-identical words)."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return _norm(a) == _norm(b)
    return _norm(a) == _norm(b) or len(ta & tb) / len(ta | tb) >= jaccard


def content_key(p: Passage) -> str:
    """Identity of what was fed: the passage id and its (filtered) text."""
    h = hashlib.sha256((p.get("text") or "").encode("utf-8", "replace")).hexdigest()[:12]
    return f"{p['id']}:{h}"
