"""Title links: which passages of a corpus a text names by their title.

Wikipedia-style corpora (HotpotQA, 2WikiMultihopQA, MuSiQue, most ingested encyclopedic
text) give every paragraph its page title, and a multi-hop question's next document is very
often the page of an entity the previous one *names*: HotpotQA's bridge questions were built
by following such a hyperlink. A :class:`TitleIndex` finds those mentions without a model:
titles and texts are lower-cased word sequences (a trailing disambiguation such as
``"(film)"`` is dropped), and a title is named by a text when its words appear there in
order, with a capital letter where the title has one (so "the place of birth" does not name
the page "Place of birth"); a one-word name joined to another capitalised word is part of a
longer name ("Vice President" does not name the page "President"). Titles shorter than
:data:`MIN_CHARS` characters or made of stop words alone are not indexed (they would match
everywhere).

A page is also named by its **short name** where the corpus leaves no doubt which page it is
(:func:`short_key`): the part of the title before a comma, Wikipedia's qualifier for places
and nobles ("Arthurdale, West Virginia" is "Arthurdale" in the text that links it; "Matilda of
Brabant, Countess of Holland"), and a club name without its "F.C."-style suffix ("Nottingham
Forest F.C."). A short name is used only when no page has it as its own title, when every
page with that short name has the same title, and, if it is one word, when it is not generic
in the corpus (the rule for one-word pages below), so "Cleveland" does not name "Cleveland,
North Carolina" in a corpus where Cleveland means the city in Ohio.

Lookup is by word n-grams (a dict hit per n-gram of the text, n up to the longest title), so
it costs the same for a thousand titles or a million. Building an index scans every passage's
text once to count the passages that name each page (about 0.2 ms per passage on one core:
2.4 s for 12,000 passages): a one-word page with a disambiguation that too many name is
generic, and any page that many name is a hub (:meth:`TitleIndex.is_hub`), whose link says
little. Like a hyperlink, a mention is the longest title that starts at a word:
inside "New York City" the title "New York" is not named.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..state.types import Passage
from .bm25 import STOPWORDS

MIN_CHARS = 4
# A one-word title with a disambiguation ("Arizona (song)") is generic in a corpus where more
# than this share of the passages (and more than GENERIC_MIN of them) name it.
GENERIC_SHARE, GENERIC_MIN = 0.005, 10
# A page is a hub of a corpus when more than a share of its passages (and more than HUB_MIN)
# name it ("United States", "Australia", "FA Cup"): a link to it says little about the text.
HUB_SHARE, HUB_MIN = 0.005, 5
_WORD = re.compile(r"\w+", re.UNICODE)
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")
_QUALIFIER = re.compile(r",.*$", re.S)  # "Tucson, Arizona" -> "Tucson"
_CLUB = re.compile(r"\s+(?:A\.?F\.?C|F\.?C|C\.?F|S\.?C)\.?$")  # "Nottingham Forest F.C." -> "Nottingham Forest"


def words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall((text or "").lower()))


def _cased(text: str) -> tuple[tuple[str, ...], tuple[bool, ...], tuple[bool, ...]]:
    """The lower-cased words of ``text``; for each, whether it has a capital letter; and
    whether it is joined to the next word by white space alone (no punctuation between)."""
    text = text or ""
    found = list(_WORD.finditer(text))
    toks = tuple(m.group().lower() for m in found)
    caps = tuple(m.group() != m.group().lower() for m in found)
    joined = tuple(not text[a.end() : b.start()].strip() for a, b in zip(found, found[1:])) + (False,) * bool(found)
    return toks, caps, joined


def _inside_name(toks: Sequence[str], caps: Sequence[bool], joined: Sequence[bool], i: int, n: int) -> bool:
    """Whether the one-word mention at ``i`` is part of a longer capitalised name: a capitalised
    word that is not a stop word ("Are Sutera ..." starts a sentence) joins it without
    punctuation ("Vice President", "President Bill Clinton"), so the text names that longer
    thing, not the one-word page."""
    if n != 1:
        return False

    def name_word(j: int) -> bool:
        return caps[j] and toks[j] not in STOPWORDS

    before = i > 0 and joined[i - 1] and name_word(i - 1)
    after = i + 1 < len(caps) and joined[i] and name_word(i + 1)
    return bool(before or after)


def _cased_mention(
    toks: Sequence[str], caps: Sequence[bool], joined: Sequence[bool], i: int, n: int, need_cap: bool
) -> bool:
    """Whether the words at ``i..i+n`` (which spell a title) are written as its mention: with a
    capital letter when the title needs one, and not inside a longer name (:func:`_inside_name`)."""
    return not need_cap or (any(caps[i : i + n]) and not _inside_name(toks, caps, joined, i, n))


def _proper(title: str) -> bool:
    """Whether a mention of this title must carry a capital letter: when the title has one
    (a name), a mention in lower case is the common noun ("place of birth"), not the page."""
    return title != title.lower()


def title_key(title: str) -> tuple[str, ...]:
    """A title as the words it is named by: ``"The Zone (2017 film)"`` -> ``("the", "zone")``."""
    return words(_DISAMBIGUATION.sub("", title or ""))


def short_key(title: str) -> tuple[str, ...] | None:
    """The words of a title's short name, or None where it has none: the title without its
    disambiguation, cut at its first comma ("Tucson, Arizona" -> ("tucson",)) or stripped of a
    club suffix ("Nottingham Forest F.C." -> ("nottingham", "forest"))."""
    base = _DISAMBIGUATION.sub("", title or "").strip()
    short = _QUALIFIER.sub("", base).strip()
    if short == base:
        short = _CLUB.sub("", base).strip()
    key = words(short)
    return key if short != base and _indexable(key) else None


def _indexable(key: tuple[str, ...]) -> bool:
    return len(" ".join(key)) >= MIN_CHARS and any(w not in STOPWORDS for w in key)


def names(title: str, text: str) -> bool:
    """Whether ``text`` names ``title``: its words, in order, as whole words, with a capital
    letter somewhere when the title has one."""
    key = title_key(title)
    return _indexable(key) and _named(key, _proper(title), text)


def _named(key: tuple[str, ...], need_cap: bool, text: str) -> bool:
    n = len(key)
    toks, caps, joined = _cased(text)
    return any(
        toks[i : i + n] == key and _cased_mention(toks, caps, joined, i, n, need_cap) for i in range(len(toks) - n + 1)
    )


def _one_word(key: tuple[str, ...]) -> bool:
    return sum(w not in STOPWORDS for w in key) == 1


class TitleIndex:
    """Passages by title, for finding the passages a text names."""

    def __init__(self, passages: Iterable[Passage]):
        self._by: dict[tuple[str, ...], list[Passage]] = {}
        self._cap: dict[tuple[str, ...], bool] = {}  # a mention needs a capital (every title of the key has one)
        self._short: dict[str, tuple[str, ...]] = {}  # title -> its short name, where it is used
        passages = list(passages)
        word_pages, shorts = self._index_titles(passages)  # word_pages: one-word names with a disambiguation
        self._index_short_names(shorts, word_pages)
        self._longest = max((len(k) for k in self._by), default=0)
        self._size = len(passages)
        # how many passages name each title, with the same scan as named_in (one-word
        # disambiguated pages that too many name are generic; any page is a hub, see is_hub)
        named: dict[tuple[str, ...], int] = {}
        for p in passages:
            for key in self._mentions(p.get("text") or ""):
                named[key] = named.get(key, 0) + 1
        self._named_by = named
        cut = max(GENERIC_MIN, GENERIC_SHARE * len(passages))
        self._generic: frozenset = frozenset(k for k in word_pages if named.get(k, 0) > cut)
        for title, key in list(self._short.items()):
            if key in self._generic:  # a generic short name names nothing
                del self._by[key], self._cap[key], self._short[title]

    def _index_titles(self, passages: list[Passage]) -> tuple[set[tuple[str, ...]], dict[tuple[str, ...], list[Passage]]]:
        """Each page's title indexed (a file's name is not one); returns the one-word names with
        a disambiguation ("Arizona (song)") and the passages by their title's short name."""
        word_pages: set[tuple[str, ...]] = set()
        shorts: dict[tuple[str, ...], list[Passage]] = {}
        for p in passages:
            if (p.get("meta") or {}).get("title_from") == "file":  # a file's name, not a page's title
                continue
            title = p.get("title") or ""
            key = title_key(title)
            if _indexable(key):
                self._by.setdefault(key, []).append(p)
                self._cap[key] = self._cap.get(key, True) and _proper(title)
                if _DISAMBIGUATION.search(title) and _one_word(key):
                    word_pages.add(key)
            short = short_key(title)
            if short is not None:
                shorts.setdefault(short, []).append(p)
        return word_pages, shorts

    def _index_short_names(self, shorts: dict[tuple[str, ...], list[Passage]], word_pages: set[tuple[str, ...]]) -> None:
        """Short names indexed where no page has one as its own title and one title is behind each."""
        for key, ps in shorts.items():
            if key not in self._by and len({p.get("title") for p in ps}) == 1:
                self._by[key] = ps
                self._cap[key] = all(_proper(p.get("title") or "") for p in ps)
                self._short[ps[0].get("title") or ""] = key
                if _one_word(key):
                    word_pages.add(key)

    def __len__(self) -> int:
        return len(self._by)

    def is_generic(self, title: str) -> bool:
        """Whether ``title`` is a one-word page with a disambiguation that too many passages
        of the corpus name to be the page they mean ("September (2007 film)", "President
        (corporate title)"): more than :data:`GENERIC_SHARE` of them, and more than
        :data:`GENERIC_MIN`. Such a mention means the common word, not the page."""
        return bool(_DISAMBIGUATION.search(title or "")) and title_key(title) in self._generic

    def named_by(self, title: str) -> int:
        """How many passages of the corpus name ``title`` (by its title or its short name)."""
        n = self._named_by.get(title_key(title), 0)
        short = self._short.get(title)
        return n + (self._named_by.get(short, 0) if short is not None else 0)

    def is_hub(self, title: str, share: float = HUB_SHARE) -> bool:
        """Whether ``title`` is a hub of the corpus: more than ``share`` of its passages, and
        more than :data:`HUB_MIN`, name it. Country, city and competition pages are named
        everywhere, so a text naming one rarely leads to it; ``share`` >= 1 makes no hub."""
        if share >= 1:
            return False
        return self.named_by(title) > max(HUB_MIN, share * self._size)

    def names(self, title: str, text: str) -> bool:
        """:func:`names`, except that a generic title (:meth:`is_generic`) is never named, and
        that the title's short name, where the index uses it, names it too."""
        if self.is_generic(title):
            return False
        if names(title, text):
            return True
        short = self._short.get(title)
        return short is not None and _named(short, self._cap[short], text)

    def _mentions(self, text: str) -> dict[tuple[str, ...], int]:
        """The titles ``text`` names (keys), each with the word position of its first mention."""
        toks, caps, joined = _cased(text)
        found: dict[tuple[str, ...], int] = {}
        i = 0
        while i < len(toks):  # the longest title starting at each word; a match is not searched inside
            for n in range(min(self._longest, len(toks) - i), 0, -1):
                key = toks[i : i + n]
                if key in self._by and _cased_mention(toks, caps, joined, i, n, self._cap[key]):
                    found.setdefault(key, i)
                    i += n - 1
                    break
            i += 1
        return found

    def named_in(self, text: str, limit: int | None = None, exclude: Sequence[str] = ()) -> list[Passage]:
        """The passages whose title ``text`` names, longest (most specific) title first, then
        in order of first mention; ``exclude`` holds ids to leave out; generic titles
        (:meth:`is_generic`) are left out."""
        skip = set(exclude)
        found = self._mentions(text)
        out: list[Passage] = []
        seen: set[str] = set()
        for key in sorted(found, key=lambda k: (-len(k), found[k])):
            for p in self._by[key]:
                if key in self._generic and self.is_generic(p.get("title") or ""):
                    continue  # "Arizona" names the page Arizona, not "Arizona (song)"
                if p["id"] not in skip and p["id"] not in seen:
                    seen.add(p["id"])
                    out.append(p)
        return out if limit is None else out[: max(0, int(limit))]


# ------------------------------------------------------------------ names two texts share
# A capitalised word, then more joined by spaces, optionally through a lower-case particle
# ("Bank of America", "Ludwig van Beethoven").
_NAME = re.compile(r"[A-Z][\w'\-]+(?:\s+(?:of|de|the|von|van|la|du)?\s*[A-Z][\w'\-]+)*")
# sentence-opening words that are capitalised without being names
_OPENERS = frozenset(
    "the a an in on of and for to at by with from as is was it he she they his her their this that these those "
    "after before during when while its but or not".split()
)


def proper_names(text: str) -> frozenset[str]:
    """The capitalised names in ``text``, lower-cased: runs of capitalised words ("Kurt Russell",
    "Bank of America"); a name of one word needs :data:`MIN_CHARS` characters and must not be
    a sentence opener such as "The" or "When". No model: a cue, not a named-entity tagger."""
    out = set()
    for m in _NAME.finditer(text or ""):
        name = m.group(0)
        if " " not in name and (len(name) < MIN_CHARS or name.lower() in _OPENERS):
            continue
        out.add(" ".join(name.lower().split()))
    return frozenset(out)
