"""Text utilities: a download-free sentence splitter, chunking, answer normalisation and the text
of a chat message."""

from __future__ import annotations

import re
import string
import unicodedata
from typing import Any, Callable, Iterable

_ABBREV = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "vs", "etc", "inc", "ltd",
    "co", "corp", "no", "vol", "fig", "gen", "col", "lt", "sgt", "capt", "rev", "gov", "sen",
    "rep", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "u.s", "u.k", "e.g", "i.e", "approx", "est", "b", "c", "ca", "al",
}

# Chinese, Japanese and Korean letters: Han, Hiragana, Katakana (with the half-width forms), Hangul
# (tools/bm25 reads them as character pairs; a chunk counts a sentence of them by its length)
CJK_LETTERS = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
HAS_CJK = re.compile(f"[{CJK_LETTERS}]")

# a sentence's end: Latin-style end punctuation, its closing quotes or brackets and the white
# space after it (what follows is checked by _starts_sentence: an opening quote or bracket may come
# first); CJK full stops, with or without white space after; the Devanagari danda, Arabic question
# mark and Urdu full stop before white space
_CLOSE = "\"'\u201d\u2019)\\]"
_CJK_CLOSE = _CLOSE + "\u00bb\u300d\u300f\u3011\u3009\u300b\uff09\uff3d"
_BOUNDARY = re.compile(
    rf"(?P<latin>[.!?]+[{_CLOSE}]*)\s+(?=[\"'\u201c\u2018(\[\u00ab\u201e]?(?P<next>.))"
    rf"|(?P<cjk>[\u3002\uff01\uff1f\uff0e\uff61]+(?P<cjk_close>[{_CJK_CLOSE}]*))(?P<cjk_space>\s*)"
    rf"|(?P<other>[\u0964\u0965\u061f\u06d4]+[{_CJK_CLOSE}]*)\s+"
)


def _starts_sentence(ch: str) -> bool:
    """Whether ``ch`` may begin a sentence after ". ": an ASCII capital or digit, a Latin-1 or
    Latin Extended letter (À-ɏ, as before 2026-11-30), any other capital (Cyrillic, Greek), a letter
    of a script without case (Chinese, Arabic, Devanagari) or a decimal digit of any script."""
    if "A" <= ch <= "Z" or "0" <= ch <= "9" or "\u00c0" <= ch <= "\u024f" or ch.isupper():
        return True
    if ch.isalpha():
        return not ch.islower()  # a letter without case
    return unicodedata.category(ch) == "Nd"


_CJK_END = re.compile(rf"[\u3002\uff01\uff1f\uff0e\uff61][{_CJK_CLOSE}]*$")


def join_sentences(sentences: Iterable[str]) -> str:
    """Sentences joined back into text: with a space, but none after a CJK full stop (Chinese
    and Japanese put none between sentences), so English text joins as ``" ".join`` does."""
    out = ""
    for s in sentences:
        out += s if not out or _CJK_END.search(out) else " " + s
    return out


def text_key(text: str | None) -> str:
    """Text's identity for spotting copies: white space collapsed, case-folded."""
    return " ".join((text or "").split()).casefold()


def passage_key(p: Any) -> str:
    """A passage's identity for spotting copies under other ids (one text ingested from two
    files, or a file and its address): :func:`text_key` of its title and text; "" for a passage
    without text, which is never a copy."""
    return text_key(f"{p.get('title') or ''}\n{p.get('text') or ''}") if p.get("text") else ""


class Held:
    """The passages a list holds, by id and by :func:`passage_key`: a copy of one under another id
    (the same text ingested from two files, a memory entry and the page it was stored from)
    counts as held. DR-RAG's selections, ERM4's mixed order and its filter's second pass use it."""

    def __init__(self, docs: Iterable[Any] = ()):
        self.ids: set[str] = set()
        self.texts: set[str] = set()
        for p in docs:
            self.add(p)

    def add(self, p: Any) -> None:
        self.ids.add(p["id"])
        key = passage_key(p)
        if key:
            self.texts.add(key)

    def __contains__(self, p: Any) -> bool:
        key = passage_key(p)
        return p["id"] in self.ids or bool(key) and key in self.texts


def split_sentences(text: str) -> list[str]:
    """Split text into sentences with rules only (no model or data download).

    A sentence ends at ``.``, ``!`` or ``?`` (and closing quotes or brackets) followed by white
    space and a capital of any script (Latin, Cyrillic, Greek), a letter of a script without case
    (Chinese, Arabic, Devanagari) or a digit, an opening quote or bracket allowed first; at a CJK
    full stop (``。！？．``) with or without white space after, unless a closing quote follows it
    without white space (「はい。」と言った stays one); and at ``।`` ``॥`` ``؟`` ``۔`` followed
    by white space. Common abbreviations, initials ("J. R. R. Tolkien", "А. С. Пушкин") and
    decimals ("３．１４") are not ends. Empty input gives an empty list. Until 2026-11-30 only a Latin
    capital or digit began a sentence, so Russian, Greek, Chinese, Japanese, Hindi and Arabic
    text came back as one sentence; English text splits exactly as it did.
    """
    text = " ".join((text or "").split())
    if not text:
        return []
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if m.group("latin"):
            if not _starts_sentence(m.group("next")):
                continue
            end = m.end("latin")
            piece = text[start:end]
            last = piece.rstrip("\"'\u201d\u2019)]").rstrip(".!?")
            word = last.rsplit(" ", 1)[-1].lower()
            if m.group("latin").startswith(".") and (word in _ABBREV or (len(word) == 1 and word.isalpha())):
                continue
        elif m.group("cjk"):
            end = m.end("cjk")
            if end == len(text) or (m.group("cjk_close") and not m.group("cjk_space")):
                continue  # the text's end, or a quoted sentence the outer one goes on after
            if m.group("cjk")[0] == "\uff0e" and m.start() > 0 and text[m.start() - 1].isdigit() \
                    and text[end].isdigit():
                continue  # a full-width decimal point
        else:
            end = m.end("other")
        out.append(text[start:end].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


# words per passage: Wikipedia prose reads 1.34 MiniLM tokens a word (1.56 at the 90th percentile),
# so 150 words and a title fit the encoder's 256 tokens (`python bench/chunk_tokens.py`)
CHUNK_WORDS = 150


CHARS_PER_WORD = 10  # the longest a chunk's words are taken to be on average: 150 words, 1,500 characters


def _words(unit: str) -> int:
    """What a sentence counts for against ``max_words``: its words, or its length over
    ``CHARS_PER_WORD`` where that is more; a sentence of CJK letters without spaces (Chinese,
    Japanese) by its length rounded up, so many short ones never fill a chunk past
    ``max_words * CHARS_PER_WORD``. Text without CJK letters counts as before 2026-11-30 (rounded
    down: "Methodology" is 1), so an unchanged English file chunks, and is embedded, as it was."""
    if " " not in unit and HAS_CJK.search(unit):
        return max(1, -(-len(unit) // CHARS_PER_WORD))
    return max(len(unit.split()), len(unit) // CHARS_PER_WORD)


def _overlap_words(unit: str) -> int:
    """What a sentence carried over into the next chunk counts for there: its words (as before
    2026-11-30), or :func:`_words` for a CJK sentence without spaces."""
    return _words(unit) if " " not in unit and HAS_CJK.search(unit) else len(unit.split())


_FENCE = re.compile(r"\s*(```|~~~)")


def line_blocks(text: str) -> list[tuple[bool, str]]:
    """Markdown text as ``(kept, block)`` pairs in order: fenced code (from its fence to the
    closing one, or the end) and pipe tables (lines starting with ``|``) are kept line by line;
    the rest is prose."""
    out: list[tuple[bool, str]] = []
    lines, prose, i = (text or "").splitlines(), [], 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence:
            j = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith(fence.group(1))), len(lines) - 1)
        elif lines[i].lstrip().startswith("|"):
            j = next((j for j in range(i, len(lines)) if not lines[j].lstrip().startswith("|")), len(lines)) - 1
        else:
            prose.append(lines[i])
            i += 1
            continue
        if prose:
            out.append((False, "\n".join(prose)))
            prose = []
        out.append((True, "\n".join(line.rstrip() for line in lines[i : j + 1])))
        i = j + 1
    if prose:
        out.append((False, "\n".join(prose)))
    return out


def _line_pieces(block: str, max_words: int) -> list[str]:
    """A kept block cut at line ends into pieces of at most ``max_words`` words and
    ``max_words * CHARS_PER_WORD`` characters (a longer line cut at that length)."""
    cap = max_words * CHARS_PER_WORD
    lines = [line[i : i + cap] for line in block.split("\n") for i in range(0, max(len(line), 1), cap)]
    pieces: list[str] = []
    cur: list[str] = []
    for line in lines:
        joined = "\n".join([*cur, line])
        if cur and (_words(joined) > max_words or len(joined) > cap):
            pieces.append("\n".join(cur))
            cur = []
        cur.append(line)
    if cur:
        pieces.append("\n".join(cur))
    return [p.strip("\n") for p in pieces if p.strip()]  # no blank line opens or closes a chunk


def chunk_lines(text: str, max_words: int = CHUNK_WORDS, *, fits: Callable[[str], bool] | None = None) -> list[str]:
    """Source code and other text whose lines matter: chunks of whole lines, indentation kept,
    of at most ``max_words`` words and ``max_words * CHARS_PER_WORD`` characters; with ``fits``,
    a chunk it refuses is cut again (:func:`chunk_text`)."""
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    pieces = _line_pieces("\n".join(line.rstrip() for line in (text or "").strip("\n").splitlines()), max_words)
    return pieces if fits is None else _fitted([[(p, True)] for p in pieces], max_words, 0, fits)


def chunk_table(text: str, max_words: int = CHUNK_WORDS, *, fits: Callable[[str], bool] | None = None) -> list[str]:
    """A CSV or TSV file's chunks: whole rows, each chunk opening with the header row, which
    names the columns (rows were run into sentences until 2026-12-02); ``fits`` as in
    :func:`chunk_text`, unless the header row alone is past it."""
    head, _, rows = (text or "").strip("\n").partition("\n")
    if fits is not None and not fits(head):  # a header past the window: no cut helps, rows are chunked as without
        fits = None
    if not rows.strip():
        return chunk_lines(head, max_words, fits=fits)
    room = max(1, max_words // 2, max_words - max(len(head.split()), len(head) // CHARS_PER_WORD))
    with_head = None if fits is None else (lambda t: fits(f"{head}\n{t}"))
    return [f"{head}\n{piece}" for piece in chunk_lines(rows, room, fits=with_head)]


def _sentence_units(para: str, max_words: int) -> list[str]:
    """A paragraph's sentences, one longer than ``max_words`` cut by words, and text without spaces
    at ``CHARS_PER_WORD`` characters a word (at the last space before that where there is one)."""
    units: list[str] = []
    cap = max_words * CHARS_PER_WORD
    for s in split_sentences(para):
        words = s.split()
        pieces = [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)] \
            if len(words) > max_words else [s]
        for piece in pieces:
            while len(piece) > cap:
                cut = piece.rfind(" ", cap // 2, cap + 1)
                cut = cut if cut > 0 else cap
                units.append(piece[:cut].strip())
                piece = piece[cut:].strip()
            if piece:
                units.append(piece)
    return units


def _join_units(units: list[tuple[str, bool]]) -> str:
    """A chunk's units as text: sentences joined as :func:`join_sentences` does, a kept block on
    lines of its own."""
    parts: list[str] = []
    run: list[str] = []
    for u, kept in units:
        if kept:
            parts += [join_sentences(run)] if run else []
            parts.append(u)
            run = []
        else:
            run.append(u)
    return "\n".join(parts + ([join_sentences(run)] if run else []))


def _pack(units: list[tuple[str, bool]], max_words: int, overlap_sentences: int) -> list[list[tuple[str, bool]]]:
    """Units packed into chunks of at most about ``max_words`` words, each chunk opening with the
    last ``overlap_sentences`` of the one before (left out where it would overfill the chunk)."""
    chunks: list[list[tuple[str, bool]]] = []
    cur: list[tuple[str, bool]] = []
    cur_words = 0
    for u, kept in units:
        n = _words(u)
        if cur and cur_words + n > max_words:
            chunks.append(cur)
            cur = cur[-overlap_sentences:] if overlap_sentences and len(cur) > overlap_sentences else []
            cur_words = sum(_overlap_words(x) for x, _ in cur)
            if cur_words + n > max_words:  # the overlap would overfill the next chunk: left out
                cur, cur_words = [], 0
        cur.append((u, kept))
        cur_words += n
    return chunks + [cur] if cur else chunks


FIT_MIN_WORDS = 8  # a chunk is not cut below this many words to fit (a title alone may fill the window)


def _fitted(chunks: list[list[tuple[str, bool]]], max_words: int, overlap_sentences: int,
            fits: Callable[[str], bool] | None) -> list[str]:
    """The chunks' texts; a chunk that ``fits`` refuses (one past the encoder's window) cut again
    at half the words, sentences and lines whole, until it fits or ``FIT_MIN_WORDS`` is reached."""
    out: list[str] = []
    for units in chunks:
        text, half = _join_units(units), max_words // 2
        if fits is None or half < FIT_MIN_WORDS or fits(text):
            out.append(text)
            continue
        recut = [(piece, kept) for u, kept in units
                 for piece in (_line_pieces(u, half) if kept else _sentence_units(u, half))]
        out += _fitted(_pack(recut, half, overlap_sentences), half, overlap_sentences, fits)
    return out


def chunk_text(text: str, max_words: int = CHUNK_WORDS, overlap_sentences: int = 1, *, keep_lines: bool = False,
               fits: Callable[[str], bool] | None = None) -> list[str]:
    """Cut text into chunks of whole sentences of at most about ``max_words`` words.

    Sentences are split within each paragraph (blank lines), so none spans two; short
    paragraphs are packed together, long ones cut at sentence boundaries with
    ``overlap_sentences`` of overlap (left out where it would overfill the chunk). A single
    sentence longer than ``max_words`` is cut by words, and text without spaces (Japanese,
    base64, a minified file) at ``CHARS_PER_WORD`` characters a word: it was one passage of
    any length, embedded by its first 256 tokens only, until 2026-11-30. With ``keep_lines``
    (Markdown), fenced code and pipe tables keep their lines and indentation (:func:`line_blocks`;
    a long one is cut at line ends): they were run together into one line until 2026-12-02.
    With ``fits`` (whether a chunk's text fits the encoder's window; ingest's, since 2026-12-02),
    a chunk it refuses is cut again at half the words, until it fits (words count for more
    tokens in code, tables and symbols than in prose).
    """
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    units: list[tuple[str, bool]] = []
    for kept, block in line_blocks(text) if keep_lines else [(False, text or "")]:
        if kept:
            units += [(piece, True) for piece in _line_pieces(block, max_words)]
            continue
        for para in (p for p in re.split(r"\n\s*\n", block) if p.strip()):
            units += [(u, False) for u in _sentence_units(para, max_words)]
    return _fitted(_pack(units, max_words, overlap_sentences), max_words, overlap_sentences, fits)


def strips(text: str, sentences_per_strip: int = 3) -> list[str]:
    """CRAG-style decomposition: one or two sentences stay whole, longer text is cut
    into units of a few sentences."""
    sents = split_sentences(text)
    if len(sents) <= 2:
        return [join_sentences(sents)] if sents else []
    return [join_sentences(sents[i : i + sentences_per_strip]) for i in range(0, len(sents), sentences_per_strip)]


# ---------------------------------------------------------------- answer normalisation
_PUNCT = set(string.punctuation)


def _is_punct(ch: str) -> bool:
    return ch in _PUNCT or unicodedata.category(ch).startswith("P")


def normalize_answer(s: str | None, *, articles: bool = True) -> str:
    """SQuAD normalisation: lower case, strip punctuation, articles and extra space. Beyond
    SQuAD's ASCII set, Unicode NFKC comes first and every Unicode punctuation mark goes too
    (an en dash, curly quotes), so "Breaking Dawn – Part 2" equals "Breaking Dawn - Part 2".
    ``articles=False`` keeps the articles (for a gold that is nothing else: "The The")."""
    s = unicodedata.normalize("NFKC", s or "").lower()
    s = "".join(ch for ch in s if not _is_punct(ch))
    if articles:
        s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def message_text(content: Any, sep: str = " ") -> str:
    """The text of a chat message's ``content``: the string itself, or its text blocks joined
    by ``sep`` (a list of strings and ``{"type": "text", "text": ...}`` blocks; images, reasoning
    and the like are skipped)."""
    if isinstance(content, str):
        return content
    return sep.join(b if isinstance(b, str) else str(b.get("text", "")) for b in content or []
                    if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text"))
