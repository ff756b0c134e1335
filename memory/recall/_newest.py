"""Two current hits that state one fact of the person with different values: the newer first.

A supersession is recorded only when the writer recognised the update; when it did not ("scrapped the old
banger and got a Yaris" after "my Ford Focus failed its MOT"), both blocks stay current and relevance
alone would often rank the older one first, as it may share more words with the question. Among the hits
picked, a current hit said later moves just above a current hit ranked above it when both are the
person's own words (turns they typed, never pasted or quoted material) and either

- they state one fact with another value (`text.same_fact`: the same topic, a newer value), or
- the later one is said as a change ("I've switched to ...", "change of plan", "jetzt", "改成") and a
  sentence of each holds a word of the question: both answer it, and the later one says it changed,

so a missed rule costs a label, never the answer. Only for a question the person asks about themselves in
the present ("where do I live?", "what's my hobby at the moment?"; not "when did Caroline go to the
support group?", which asks about an event, not what is so now), only between hits of one branch class (the branch rule
is not crossed), by when each was said, and never past a hit that holds a value the question names and
the later one does not ("lighthouse keeper number 5" asks for that one, not the newest keeper)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from ..text import changes, first_person, held, same_fact, sayings
from ._entries import Entry
from ._text import term_set

__all__ = ["NEWEST_WINDOW", "asks_about_now", "newest_first"]

NEWEST_WINDOW = 10  # how many of the first hits are reordered, whatever the number asked for

_OWN = (None, "user", "imported")  # a user turn's origins that are the person's own words


def asks_about_now(query: str) -> bool:
    """Does the question ask about the person who asks, as things are now: about the speaker, not a past,
    and in the first person or naming no one ("¿dónde vivo?" drops its pronoun; "what is Caroline's
    job?" asks about Caroline)?"""
    said = sayings(query)
    if not said or any(s.kind == "past" or s.subject != "speaker" for s in said):
        return False
    return any(first_person(s) for s in said) or not any(v[:1].isalpha() for s in said for v in s.values)


def _said_at(entry: Entry) -> float:
    return max((s.created_at for s in entry.sources if s.created_at is not None), default=0.0)


def _own_words(entry: Entry) -> str:
    return " ".join(s.excerpt for s in entry.sources if s.role == "user" and s.origin in _OWN)


def _holds(text: str, value: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text.casefold()) is not None


def _answers(units: Sequence[object], terms: Collection[str]) -> bool:
    return any(not term_set(getattr(u, "text", "")).isdisjoint(terms) for u in units)


def newest_first(
    chosen: Sequence[tuple[int, Entry]],
    current: Callable[[int], bool],
    same_class: Callable[[int, int], bool],
    terms: Collection[str] = (),
    query: str = "",
) -> list[tuple[int, Entry]]:
    """`chosen` (rows in rank order, with their entries) with each current hit that gives a newer value
    of what a current hit above it states moved just above that hit; every other hit keeps its order.
    `terms`: the question's analysed words; `query`: the question."""
    out = list(chosen)
    if not asks_about_now(query):
        return out
    asked = {v for said in sayings(query) for v in said.values}
    for j in range(1, len(out)):
        row, entry = out[j]
        words = _own_words(entry) if current(row) else ""
        if not words:
            continue
        said = _said_at(entry)
        changed = bool(terms) and _answers(changes(words), terms)
        for i in range(j):
            above, older = out[i]
            if not (current(above) and same_class(above, row) and _said_at(older) < said):
                continue
            before = _own_words(older)
            if any(_holds(before, v) and not _holds(words, v) for v in asked):
                continue
            if before and (same_fact(before, words) or (changed and _answers(held(before), terms))):
                out.insert(i, out.pop(j))
                break
    return out
