"""DR-RAG's title links (not in the paper): the pages a text names by title.

A multi-hop question's next document is often the page of an entity the previous one names
(see :mod:`ragraphs.tools.titles`). DR-RAG follows such links in three places, each a run
setting (``DRRAGContext.link_*``): the first stage puts the candidates whose title the question
names first (:func:`ragraphs.nodes.links.question_links`), the second stage adds to each static document's
candidates the passages whose title it names (:func:`linked_candidates`), and CFS / CIS add a
bonus to the pair classifier's score of a candidate its static document names
(:func:`link_bonus`), unless the corpus names that page everywhere (a hub such as a country).
A smaller bonus goes to a candidate that shares a name with its static document, the bridge
entity (:func:`bridge_bonus`). With the link settings at 0 / false no link is followed; the
paper's cascade also needs the settings that depart from it elsewhere (``retrieval=dense``,
``second_rerank=none``, ``fill=false``, ``pick=first``, ``extra_partners=false``,
``bridge_bonus=0``, ``answer_prompt=paper``; README, DR-RAG's settings).
"""

from __future__ import annotations

from functools import cache
from typing import Any, Sequence

from ..state.types import Passage, with_meta
from ..tools.text import text_key
from ..tools.titles import proper_names
from .links import index_names, title_index_of


def uses_question_links(ctx: Any, strategy: str) -> bool:
    """Title links in the first stage: two-stage strategies only (SM stays top-k by similarity)."""
    return strategy != "sm" and bool(ctx.link_question)


def same_page(d: Passage, dp: Passage) -> bool:
    """Whether two passages are parts of one page (the same title): d names its own title, and
    an ingested file's chunks share one, so neither prior nor title link joins them (a
    sibling chunk took a partner's place with both bonuses until 2026-11-30)."""
    title = text_key(d.get("title"))
    return bool(title) and title == text_key(dp.get("title"))


def link_bonus(ctx: Any, pairs: Sequence[tuple[Passage, Passage]], index: Any = None) -> dict:
    """The title-link prior of CFS/CIS: ``ctx.link_bonus`` for each (d_i, d') whose d_i names
    the title of d' (see :mod:`ragraphs.tools.titles`; ``index``: the corpus's title index),
    keyed by their ids; none for a page the corpus's passages name everywhere (a hub, see
    :meth:`~ragraphs.tools.titles.TitleIndex.is_hub` and ``ctx.link_hub_share``). A d' that
    only d_i's title link brought (``meta["linked_from"]`` is d_i, see
    :func:`linked_candidates`) gets ``ctx.expand_bonus`` instead, where it is set."""
    b = float(ctx.link_bonus or 0.0)
    if not b:
        return {}
    expand = getattr(ctx, "expand_bonus", None)
    share = float(ctx.link_hub_share)
    is_hub = getattr(index, "is_hub", None)  # a title index of the user's own may not count hubs
    out = {}
    for d, dp in pairs:
        title = dp.get("title") or ""
        if same_page(d, dp):
            continue
        if index_names(index, title, d.get("text") or "") and not (is_hub is not None and is_hub(title, share)):
            only_linked = (dp.get("meta") or {}).get("linked_from") == d["id"]
            value = float(expand) if expand is not None and only_linked else b
            if value:
                out[(d["id"], dp["id"])] = value
    return out


def bridge_bonus(ctx: Any, question: str, pairs: Sequence[tuple[Passage, Passage]], index: Any = None) -> dict:
    """The bridge prior of CFS/CIS (not in the paper): ``ctx.bridge_bonus`` for each (d_i, d')
    whose texts share a capitalised name the question does not hold, the bridge entity of a
    two-hop question ("Copper is voiced by *Kurt Russell*" ... "*Kurt Russell* plays John
    Ruth"), keyed by their ids (see :func:`ragraphs.tools.titles.proper_names`).

    A name that is the title of a hub of ``index`` (the corpus's title index; see
    :func:`link_bonus`) is no bridge: a page such as "California" shares its own name with
    every passage that names it, and the hub rule that refuses it the link bonus refuses it
    this one too. Two passages of one page (:func:`same_page`) share its name and get none."""
    b = float(ctx.bridge_bonus or 0.0)
    if not b:
        return {}
    asked = proper_names(question)
    is_hub = getattr(index, "is_hub", None)
    hub = cache(lambda name: bool(is_hub(name, float(ctx.link_hub_share)))) if is_hub else (lambda name: False)
    seen: dict[str, frozenset] = {}

    def names_of(p: Passage) -> frozenset:
        if p["id"] not in seen:
            seen[p["id"]] = proper_names(f"{p.get('title') or ''}. {p.get('text') or ''}") - asked
        return seen[p["id"]]

    return {(d["id"], dp["id"]): b for d, dp in pairs
            if not same_page(d, dp) and any(not hub(n) for n in names_of(d) & names_of(dp))}


def pair_priors(ctx: Any, question: str, pairs: Sequence[tuple[Passage, Passage]], retriever: Any) -> tuple[dict, dict]:
    """The two priors CFS and CIS add to C(q, d_i, d'), (link bonus, bridge bonus), both read
    against the retriever's title index (its hubs earn neither)."""
    index = title_index_of(retriever)
    return link_bonus(ctx, pairs, index), bridge_bonus(ctx, question, pairs, index)


def linked_candidates(retriever: Any, first: Sequence[Passage], second: Sequence[list[Passage]], n: int) -> list[list[Passage]]:
    """Each d_i's second-stage list followed by up to ``n`` passages of the corpus whose title
    d_i names (not in the list, not a static document, not of d_i's own page); unchanged where
    the retriever has no title index."""
    index = title_index_of(retriever) if n > 0 else None
    if index is None:
        return [list(c) for c in second]
    first_ids = [d["id"] for d in first]
    out = []
    for d, cands in zip(first, second):
        named = index.named_in(d.get("text") or "", None, exclude=first_ids + [p["id"] for p in cands])
        extra = [p for p in named if not same_page(d, p)][:n]
        out.append(list(cands) + [with_meta(p, stage=2, linked_from=d["id"]) for p in extra])
    return out


__all__ = ["bridge_bonus", "link_bonus", "linked_candidates", "pair_priors", "same_page", "uses_question_links"]
