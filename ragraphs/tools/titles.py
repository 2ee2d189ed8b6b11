"""Title links: which passages of a corpus a text names by their title.

Wikipedia-style corpora (HotpotQA, 2WikiMultihopQA, MuSiQue, most ingested encyclopedic
text) give every paragraph its page title, and a multi-hop question's next document is very
often the page of an entity the previous one *names*: HotpotQA's bridge questions were built
by following such a hyperlink. A :class:`TitleIndex` finds those mentions without a model:
titles and texts are lower-cased word sequences (a trailing disambiguation such as
``"(film)"`` is dropped), and a title is named by a text when its words appear there in
order, with a capital letter where the title has one (so "the place of birth" does not name
the page "Place of birth"). Titles shorter than :data:`MIN_CHARS` characters or made of stop
words alone are not indexed (they would match everywhere).

Lookup is by word n-grams (a dict hit per n-gram of the text, n up to the longest title), so
it costs the same for a thousand titles or a million. Like a hyperlink, a mention is the longest
title that starts at a word: inside "New York City" the title "New York" is not named.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..state.types import Passage
from .bm25 import STOPWORDS

MIN_CHARS = 4
_WORD = re.compile(r"\w+", re.UNICODE)
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall((text or "").lower()))


def _cased(text: str) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """The lower-cased words of ``text`` and, for each, whether it has a capital letter."""
    toks = _WORD.findall(text or "")
    return tuple(t.lower() for t in toks), tuple(t != t.lower() for t in toks)


def _proper(title: str) -> bool:
    """Whether a mention of this title must carry a capital letter: when the title has one
    (a name), a mention in lower case is the common noun ("place of birth"), not the page."""
    return title != title.lower()


def title_key(title: str) -> tuple[str, ...]:
    """A title as the words it is named by: ``"The Zone (2017 film)"`` -> ``("the", "zone")``."""
    return words(_DISAMBIGUATION.sub("", title or ""))


def _indexable(key: tuple[str, ...]) -> bool:
    return len(" ".join(key)) >= MIN_CHARS and any(w not in STOPWORDS for w in key)


def names(title: str, text: str) -> bool:
    """Whether ``text`` names ``title``: its words, in order, as whole words, with a capital
    letter somewhere when the title has one."""
    key = title_key(title)
    if not _indexable(key):
        return False
    n = len(key)
    toks, caps = _cased(text)
    need_cap = _proper(title)
    return any(toks[i : i + n] == key and (not need_cap or any(caps[i : i + n])) for i in range(len(toks) - n + 1))


class TitleIndex:
    """Passages by title, for finding the passages a text names."""

    def __init__(self, passages: Iterable[Passage]):
        self._by: dict[tuple[str, ...], list[Passage]] = {}
        self._cap: dict[tuple[str, ...], bool] = {}  # a mention needs a capital (every title of the key has one)
        for p in passages:
            title = p.get("title") or ""
            key = title_key(title)
            if _indexable(key):
                self._by.setdefault(key, []).append(p)
                self._cap[key] = self._cap.get(key, True) and _proper(title)
        self._longest = max((len(k) for k in self._by), default=0)

    def __len__(self) -> int:
        return len(self._by)

    def named_in(self, text: str, limit: int | None = None, exclude: Sequence[str] = ()) -> list[Passage]:
        """The passages whose title ``text`` names, longest (most specific) title first, then
        in order of first mention; ``exclude`` holds ids to leave out."""
        toks, caps = _cased(text)
        skip = set(exclude)
        found: dict[tuple[str, ...], int] = {}
        i = 0
        while i < len(toks):  # the longest title starting at each word; a match is not searched inside
            for n in range(min(self._longest, len(toks) - i), 0, -1):
                key = toks[i : i + n]
                if key in self._by and (not self._cap[key] or any(caps[i : i + n])):
                    found.setdefault(key, i)
                    i += n - 1
                    break
            i += 1
        out: list[Passage] = []
        seen: set[str] = set()
        for key in sorted(found, key=lambda k: (-len(k), found[k])):
            for p in self._by[key]:
                if p["id"] not in skip and p["id"] not in seen:
                    seen.add(p["id"])
                    out.append(p)
        return out if limit is None else out[: max(0, int(limit))]
