"""Loaders for benchmark files in their own formats.

Each loader yields :class:`Example` objects: question, gold answers (with aliases) and,
when the file has them, the question's paragraphs with supporting labels (as passages
whose ``meta["supporting"]`` is True). Supported: HotpotQA (original rows and HF-style
rows with dict-shaped ``context``/``supporting_facts``), 2WikiMultihopQA, MuSiQue, PopQA,
NQ/TriviaQA (the MIGRES ``odqa`` rows), StrategyQA, the PopQA web-results snapshot, and
FlashRAG-style JSONL (``id, question, golden_answers``), which also reads plain
question-answer rows (``question`` with ``answers`` or ``answer``).

Broken lines are reported (file and line number) and skipped; they never stop a load.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from .errors import InputError
from .state.types import Passage, make_passage
from .tools.documents import text_encoding

DATASETS = ("hotpotqa", "2wikimultihopqa", "musique", "popqa", "odqa", "nq", "triviaqa", "strategyqa", "popqa-web", "flashrag")
ALIASES = {"2wiki": "2wikimultihopqa", "hotpot": "hotpotqa", "tqa": "triviaqa", "popqa_web": "popqa-web"}


@dataclass
class Example:
    id: str
    question: str
    answers: list[str]
    dataset: str
    paragraphs: list[Passage] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def supporting(self) -> list[Passage]:
        return [p for p in self.paragraphs if (p.get("meta") or {}).get("supporting")]

    @property
    def supporting_ids(self) -> set[str]:
        return {p["id"] for p in self.supporting}


@dataclass
class LoadReport:
    path: str
    rows: int = 0
    skipped: list[str] = field(default_factory=list)


def _maybe_literal(v: Any) -> Any:
    """2Wiki rows sometimes store lists as Python-literal strings."""
    if isinstance(v, str) and v[:1] in "[{(":
        try:
            return json.loads(v)
        except ValueError:
            try:
                return ast.literal_eval(v)
            except (ValueError, SyntaxError):
                return v
    return v


def _join_sentences(sents: Any) -> str:
    if isinstance(sents, str):
        return " ".join(sents.split())
    return " ".join(" ".join(str(s).split()) for s in (sents or []) if str(s).strip())


def _pairs_context(context: Any) -> list[tuple[str, Any]]:
    context = _maybe_literal(context)
    if isinstance(context, dict):  # HF style {"title": [...], "sentences": [[...]]}
        return list(zip(context.get("title") or [], context.get("sentences") or context.get("content") or []))
    out = []
    for item in context or []:
        if isinstance(item, (list, tuple)) and len(item) >= 2:
            out.append((str(item[0]), item[1]))
        elif isinstance(item, dict):
            out.append((str(item.get("title", "")), item.get("sentences") or item.get("text") or ""))
    return out


def _support_titles(sf: Any) -> set[str]:
    sf = _maybe_literal(sf)
    if isinstance(sf, dict):
        return {str(t) for t in sf.get("title") or []}
    titles = set()
    for item in sf or []:
        if isinstance(item, (list, tuple)) and item:
            titles.add(str(item[0]))
    return titles


def gold_answers(value: Any) -> list[str]:
    """A row's gold answers as a list of strings: none for a missing answer (a test split's
    row is not scored, where it read as the gold "None" until 2026-11-30), a number as its text
    (such a row was skipped), and TriviaQA's answer object (Hugging Face's export) as its
    ``value`` and ``aliases`` (its keys were read as the answers), a boolean as "yes" / "no" (it
    was the text "True", which no answer matches, until 2026-11-30)."""
    if value is None:
        return []
    if isinstance(value, bool):  # BoolQ, a StrategyQA export without decomposition: true reads "yes"
        return ["yes" if value else "no"]
    if isinstance(value, dict):
        if "value" not in value and "aliases" not in value:
            raise ValueError(f"the answer is an object without 'value' or 'aliases' (its keys: {', '.join(list(value)[:6])})")
        value = [value.get("value"), *(value.get("aliases") or [])]
    if isinstance(value, (list, tuple)):
        return list(dict.fromkeys(str(a).strip() for a in value if a is not None and str(a).strip()))
    return [str(value).strip()] if str(value).strip() else []


def _hotpot_like(row: dict, dataset: str) -> Example:
    sup = _support_titles(row.get("supporting_facts"))
    paras = []
    for title, sents in _pairs_context(row.get("context")):
        text = _join_sentences(sents)
        if text:
            paras.append(make_passage(title, text, "corpus", supporting=title in sup))
    answers = gold_answers(row.get("answer"))
    extra = {k: row[k] for k in ("type", "level", "top_rank_questions") if k in row}
    return Example(str(row.get("_id") or row.get("id") or ""), row["question"], answers, dataset, paras, extra)


def _musique(row: dict, dataset: str) -> Example:
    paras = [
        make_passage(p.get("title", ""), _join_sentences(p.get("paragraph_text", "")), "corpus", supporting=bool(p.get("is_supporting")))
        for p in row.get("paragraphs") or []
        if (p.get("paragraph_text") or "").strip()
    ]
    answers = gold_answers([row.get("answer"), *(row.get("answer_aliases") or [])])
    extra = {"answerable": row.get("answerable", True)}
    return Example(str(row.get("id", "")), row["question"], answers, dataset, paras, extra)


def _contains_answer(text: str, answers: list[str]) -> bool:
    from .tools.text import normalize_answer

    t = f" {normalize_answer(text)} "
    return any(f" {normalize_answer(a)} " in t for a in answers if normalize_answer(a))


def _popqa(row: dict, dataset: str) -> Example:
    answers = _maybe_literal(row.get("possible_answers")) or []
    if isinstance(answers, str):
        answers = [answers]
    answers = [str(a) for a in answers]
    paras = []
    for p in row.get("paragraphs") or []:
        text = _join_sentences(p.get("text", ""))
        if text:
            # the file's own label when it has one (PopQA's subject and object pages), else
            # whether the page states an answer alias
            sup = p["is_supporting"] if isinstance(p.get("is_supporting"), bool) else _contains_answer(text, answers)
            paras.append(make_passage(p.get("title", ""), text, "corpus", supporting=sup))
    extra = {k: row[k] for k in ("s_pop", "o_pop", "prop", "subj", "obj") if k in row}
    return Example(str(row.get("id", "")), row["question"], answers, dataset, paras, extra)


def _odqa(row: dict, dataset: str) -> Example:
    answers = row.get("answer") or row.get("short_answers") or row.get("answers") or []
    answers = gold_answers(_maybe_literal(answers))
    paras = []
    ctx = row.get("context")
    if isinstance(ctx, str) and ctx.strip():
        paras.append(make_passage(str(row.get("title", "")), _join_sentences(ctx), "corpus", supporting=True))
    ds = row.get("dataset") or dataset
    rid = str(row.get("id") or row.get("example_id") or row.get("question_id") or "")
    return Example(rid, row["question"], answers, ds, paras, {})


def _strategyqa(row: dict, dataset: str) -> Example:
    ans = row.get("answer")
    # a row without a yes/no answer is not scored (it read as "no" until 2026-11-30)
    answers = ["yes"] if ans in (True, "True", "true", "yes") else ["no"] if ans in (False, "False", "false", "no") else []
    paras = [make_passage(str(row.get("term", "")), _join_sentences(f), "corpus", supporting=True) for f in row.get("facts") or [] if str(f).strip()]
    return Example(str(row.get("qid", "")), row["question"], answers, dataset, paras, {"decomposition": row.get("decomposition")})


def _popqa_web(row: dict, dataset: str) -> Example:
    paras = [
        make_passage(r.get("title", ""), _join_sentences(r.get("text", "")), "web")
        for r in row.get("results") or []
        if (r.get("text") or "").strip()
    ]
    return Example("", row["question"], [], dataset, paras, {})


def _flashrag(row: dict, dataset: str) -> Example:
    answers = next((row[k] for k in ("golden_answers", "answers", "answer") if row.get(k) is not None), None)
    rid = row.get("id") if row.get("id") is not None else row.get("question_id", "")
    return Example(str(rid), row["question"], gold_answers(answers), dataset, [], {})


LOADERS: dict[str, Callable[[dict, str], Example]] = {
    "hotpotqa": _hotpot_like,
    "2wikimultihopqa": _hotpot_like,
    "musique": _musique,
    "popqa": _popqa,
    "odqa": _odqa,
    "nq": _odqa,
    "triviaqa": _odqa,
    "strategyqa": _strategyqa,
    "popqa-web": _popqa_web,
    "flashrag": _flashrag,
}


_FORMATS: tuple[tuple[str, Callable[[dict], bool]], ...] = (
    ("popqa-web", lambda r: "results" in r and "question" in r),
    ("musique", lambda r: "paragraphs" in r and "question_decomposition" in r),
    ("popqa", lambda r: "possible_answers" in r),
    ("2wikimultihopqa", lambda r: any(k in r for k in ("evidences", "top_rank_questions", "entity_ids"))),
    ("hotpotqa", lambda r: "supporting_facts" in r or ("context" in r and "_id" in r)),
    ("strategyqa", lambda r: "facts" in r and "decomposition" in r),
    ("flashrag", lambda r: "golden_answers" in r),
    ("odqa", lambda r: "question" in r and ("answer" in r or "short_answers" in r) and "dataset" in r),
    # plain question-answer rows: {question, answers} or {question, answer}
    ("flashrag", lambda r: isinstance(r.get("question"), str) and ("answers" in r or "answer" in r)),
)
"""Each format with the keys that mark its rows, in the order they are tried (the first wins)."""


def detect_format(row: dict) -> str | None:
    """Guess a row's dataset format from its keys."""
    return next((name for name, marks in _FORMATS if marks(row)), None)


def _what_is_missing(row: dict) -> str:
    """Why a row reads as no question-answer row (it was "no recognisable question format" for
    each, until 2026-11-30)."""
    q = row.get("question")
    if "question" not in row:
        keys = ", ".join(map(repr, list(row)[:6])) or "none"
        return f"has no \"question\" key (its keys: {keys})"
    if not isinstance(q, str):
        kind = "null" if q is None else {bool: "a boolean", int: "a number", float: "a number", list: "a list",
                                         dict: "an object"}.get(type(q), type(q).__name__)
        return f"has a \"question\" that is {kind}, not text"
    if not q.strip():
        return "has an empty \"question\""
    return "has a \"question\" but no \"answer\" or \"answers\" (nor a benchmark's keys such as \"context\")"


def normalize_dataset_name(name: str | None) -> str | None:
    if not name or name == "auto":
        return None
    n = name.lower().strip()
    n = ALIASES.get(n, n)
    if n not in LOADERS:
        raise InputError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)} or auto")
    return n


def _first_line_is_json(path: str, enc: str = "utf-8-sig") -> bool:
    with open(path, encoding=enc, errors="replace") as fh:
        try:
            return isinstance(json.loads(fh.readline()), dict)
        except ValueError:
            return False


BROKEN_SHOWN = 5
"""Broken lines of a file reported one by one; the rest are counted in one line."""

QA_ROW = '{"question": ..., "answer": ...}'


def iter_rows(path: str, report: LoadReport | None = None, warn: Callable[[str], None] | None = None,
              example: str = QA_ROW) -> Iterator[dict]:
    """JSON objects of a JSONL file (or a JSON array file, or one pretty-printed object); broken
    lines are skipped, the first :data:`BROKEN_SHOWN` reported one by one and the rest counted in
    one line (a CSV gave one warning per line until 2026-11-30). A file with broken lines and no
    object at all is an :class:`InputError` saying it is not JSONL or JSON, with ``example`` as
    the row expected. UTF-8, or UTF-16 with its byte-order mark (what Windows PowerShell 5.1's
    ``>`` writes: every line was refused as broken until 2026-11-30)."""
    if not os.path.exists(path):
        raise InputError(f"no such file: {path}")
    enc, head = _encoding_and_head(path)
    whole = _whole_file_rows(path, enc, head)
    if whole is not None:
        yield from whole
        return
    yield from _jsonl_rows(path, enc, report, warn or (lambda m: print(m, file=sys.stderr)), example)


def _encoding_and_head(path: str) -> tuple[str, bytes]:
    """A file's encoding (UTF-16, with a byte-order mark or without: ``text_encoding``; else
    UTF-8) and its first characters, past the mark and leading blanks, as UTF-8."""
    with open(path, "rb") as fh:
        raw = fh.read(4096)
    if (enc := text_encoding(raw) or "").startswith("utf-16"):
        return enc, raw[:64].decode(enc, errors="ignore").encode("utf-8").lstrip()
    return "utf-8-sig", raw[:64].removeprefix(b"\xef\xbb\xbf").lstrip()


def _whole_file_rows(path: str, enc: str, head: bytes) -> list[dict] | None:
    """The objects of a JSON array file or of one pretty-printed object; None for a file read
    line by line (JSONL, or an object whose lines do not parse as a whole)."""
    if head.startswith(b"["):
        try:
            with open(path, encoding=enc, errors="replace") as fh:
                data = json.load(fh)
        except ValueError as e:
            raise InputError(f"{path}: not valid JSON ({e})") from e
        return [row for row in data if isinstance(row, dict)]
    if head.startswith(b"{") and not _first_line_is_json(path, enc):  # one pretty-printed object, not JSONL
        try:
            with open(path, encoding=enc, errors="replace") as fh:
                whole = json.load(fh)
        except ValueError:
            return None  # broken lines: read line by line, each reported
        return [whole] if isinstance(whole, dict) else None
    return None


def _json_object(line: str) -> dict:
    row = json.loads(line)
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    return row


def _jsonl_rows(path: str, enc: str, report: LoadReport | None, warn: Callable[[str], None],
                example: str) -> Iterator[dict]:
    """The objects of a JSONL file, its broken lines reported (held until a row reads: a file
    of broken lines only is one error)."""
    broken, good = 0, 0
    held: list[str] = []  # the first broken lines, held until a row reads (none may: one error then)
    with open(path, encoding=enc, errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = _json_object(line)
            except ValueError as e:
                broken += 1
                msg = f"{path}:{n}: skipped broken line ({str(e)[:80]})"
                if report is not None:
                    report.skipped.append(msg)
                if broken <= BROKEN_SHOWN:
                    (warn if good else held.append)(msg)
                continue
            for msg in held:
                warn(msg)
            held, good = [], good + 1
            if report is not None:
                report.rows += 1
            yield row
    if broken and not good:
        raise InputError(f"{path} is not JSONL or JSON: each line must be a JSON object such as {example}")
    if broken > BROKEN_SHOWN:
        warn(f"{path}: ... and {broken - BROKEN_SHOWN} more broken lines")


# formats one loader reads alike: a row detected as one of a family may be named as another
_FAMILY = {"hotpotqa": "hotpot", "2wikimultihopqa": "hotpot", "odqa": "odqa", "nq": "odqa", "triviaqa": "odqa"}


def _check_named_format(path: str, name: str, row: dict) -> None:
    """``--dataset NAME`` on a file whose rows are another dataset's: one clear error instead
    of questions read without their paragraphs or answers."""
    seen = detect_format(row)
    if seen is None or seen == name or _FAMILY.get(seen, seen) == _FAMILY.get(name, name):
        return
    raise InputError(f"{path}: its rows are {seen} rows, not {name}: drop --dataset (the format is detected) "
                     f"or pass --dataset {seen}")


def load_dataset(path: str, dataset: str | None = None, limit: int | None = None, report: LoadReport | None = None,
                 warn: Callable[[str], None] | None = None) -> list[Example]:
    """Load a benchmark file; ``dataset`` None or "auto" detects the format per row."""
    examples = (ex for _i, _row, ex in iter_examples(path, dataset, report, warn))
    return list(itertools.islice(examples, max(limit, 1) if limit else None))


def iter_examples(path: str, dataset: str | None = None, report: LoadReport | None = None,
                  warn: Callable[[str], None] | None = None) -> Iterator[tuple[int, dict, Example]]:
    """(row number from 0, the row as read, its :class:`Example`) for each question row of a benchmark file;
    each row left out is said (``warn``, else on stderr) and kept in ``report``."""
    name = normalize_dataset_name(dataset)
    say = warn or (lambda m: print(m, file=sys.stderr))
    read_one = False
    for i, row in enumerate(iter_rows(path, report, warn)):
        if name and not read_one and "question" in row:
            _check_named_format(path, name, row)
        fmt = name or detect_format(row)
        # a question that is blank or no text is skipped here (until 2026-12-03: a failure in every run and resume)
        if fmt is None or not isinstance(q := row.get("question"), str) or not q.strip():
            msg = f"{path}: row {i + 1} {_what_is_missing(row)}; skipped"
        else:
            try:
                ex = LOADERS[fmt](row, fmt)
            except (KeyError, TypeError, ValueError) as e:
                msg = f"{path}: row {i + 1} could not be read as {fmt} ({type(e).__name__}: {e}); skipped"
            else:
                ex.id, read_one = ex.id or f"{fmt}-{i}", True
                yield i, row, ex
                continue
        if report is not None:
            report.skipped.append(msg)
        say(msg)


_PART = re.compile(r"^(.*)@(\d+)/(\d+)$")


def parse_data_spec(spec: str) -> tuple[str, int | None, int | None]:
    """``FILE`` or ``FILE@K/N``: part K (0-based) of N of the file's questions, split by a
    stable hash of the question id (so two parts of one file never share a question)."""
    if os.path.exists(spec):
        return spec, None, None
    m = _PART.match(spec)
    if m:
        k, n = int(m.group(2)), int(m.group(3))
        if n < 1 or not 0 <= k < n:
            raise InputError(f"bad part in {spec!r}: use FILE@K/N with 0 <= K < N")
        return m.group(1), k, n
    return spec, None, None


def part_of(key: str, n: int) -> int:
    """The part (0 .. n-1) of a question, from a stable hash of ``id \x1f question``."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % n


def select_part(examples: list[Example], part: int | None, nparts: int | None) -> list[Example]:
    """The examples of part ``part`` of ``nparts`` (all of them when ``nparts`` is None), as
    ``FILE@K/N`` selects them; hash the ids the loader gave, before any renaming."""
    if nparts is None:
        return list(examples)
    return [ex for ex in examples if part_of(f"{ex.id}\x1f{ex.question}", nparts) == part]


def pooled_passages(examples: list[Example]) -> list[Passage]:
    """All questions' paragraphs pooled into one corpus (the distractor-pool setting)."""
    seen: dict[str, Passage] = {}
    for ex in examples:
        for p in ex.paragraphs:
            if p["id"] not in seen:
                seen[p["id"]] = {k: v for k, v in p.items() if k != "meta"}  # type: ignore[assignment]
    return list(seen.values())
