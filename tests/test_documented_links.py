"""Every relative link in the Markdown a user reads leads somewhere: to a file of the
repository and, with ``#anchor``, to a heading of that file as GitHub names it. The README and
the docs link each other's sections by their anchors, so a heading renamed in one file would
otherwise leave dead links in the others."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import DOC_FILES, ROOT

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped (hyphens and
    underscores kept), each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for m in re.finditer(r"^#{1,6} (.+)$", _FENCE.sub("", path.read_text(encoding="utf-8")), re.M):
        slug = github_anchor(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")  # a repeated heading: -1, -2, ...
    return found


def relative_links(path: Path) -> list[str]:
    """The links of ``path`` outside code blocks that name no scheme (``http:``, ``mailto:``, ...)."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return [m.group(1) for m in _LINK.finditer(text) if not re.match(r"[a-z][a-z0-9+.-]*:", m.group(1))]


def dead(source: Path, link: str) -> str | None:
    """Why ``link`` in ``source`` leads nowhere, or None."""
    path, _, fragment = link.partition("#")
    target = (source.parent / path).resolve() if path else source
    if not target.exists():
        return f"{link}: no such file"
    if fragment and target.suffix == ".md" and fragment not in anchors(target):
        return f"{link}: no heading #{fragment} in {target.name}"
    return None


def test_github_anchor_names_headings_as_github_does():
    assert github_anchor("DR-RAG: recall of the supporting paragraphs (the paper's Table 5)") == (
        "dr-rag-recall-of-the-supporting-paragraphs-the-papers-table-5")
    assert github_anchor("State (`ragraphs/state/migres.py`)") == "state-ragraphsstatemigrespy"
    assert github_anchor("Every method on the whole dev files (2026-11-29)") == "every-method-on-the-whole-dev-files-2026-11-29"


def test_a_dead_link_is_named(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# One title\n\n## One title\n\n[a](#one-title) [b](#one-title-1) [c](#two) [d](gone.md)\n"
                    "```\n[e](#in-code)\n```\n[f](https://example.org/#x)\n", encoding="utf-8")
    links = relative_links(page)
    assert links == ["#one-title", "#one-title-1", "#two", "gone.md"]
    assert [dead(page, link) for link in links] == [None, None, "#two: no heading #two in page.md", "gone.md: no such file"]


def test_the_docs_hold_links_to_check():
    assert sum(len(relative_links(p)) for p in DOC_FILES) >= 200  # the README alone links the docs' sections dozens of times


@pytest.mark.parametrize("source", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_link_of_a_document_leads_to_a_file_and_heading(source):
    assert [why for link in relative_links(source) if (why := dead(source, link))] == []
