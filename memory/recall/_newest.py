"""Two current hits that state one fact of the person with different values: the newer first.

A supersession is recorded only when the writer recognised the update; when it did not ("scrapped the old
banger and got a Yaris" after "my Ford Focus failed its MOT"), both blocks stay current and relevance
alone would often rank the older one first, as it may share more words with the question. Among the hits
picked, a current hit said later moves just above a current hit ranked above it when both are the
person's own words (turns they typed, never pasted or quoted material) and either

- they state one fact with another value (`text.same_fact`: the same topic, a newer value), or
- the later one is said as a change ("I've switched to ...", "change of plan", "jetzt", "改成") and a
  sentence of each holds a word of the question: both answer it, and the later one says it changed, or
- the later one changes a sentence of the earlier that holds a word of the question (`text.changed_in`:
  "my IELTS is on 8 June, two months to go" then "wait, the exam is actually on the 15th"),

so a missed rule costs a label, never the answer. Only for a question the person asks about themselves in
the present ("where do I live?", "what's my hobby at the moment?"; not "when did Caroline go to the
support group?", which asks about an event, not what is so now), only between hits of one branch class (the branch rule
is not crossed), by when each was said, and never past a hit that holds a value the question names and
the later one does not ("lighthouse keeper number 5" asks for that one, not the newest keeper)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence

from ..text import (
    COMMON_STATEMENTS,
    asks_about_now,
    changed_in,
    changes,
    held,
    same_fact,
    sayings,
    states_of_self,
    user_text,
)
from ._entries import Entry
from ._text import analyse, term_set

__all__ = [
    "NEWEST_WINDOW",
    "asks_about_now",
    "asks_of_change",
    "newest_first",
    "person_first",
    "states_of_person",
]

NEWEST_WINDOW = 10  # how many of the first hits are reordered, whatever the number asked for

_OWN = (None, "user", "imported")  # a user turn's origins that are the person's own words


def _said_at(entry: Entry) -> float:
    return max((s.created_at for s in entry.sources if s.created_at is not None), default=0.0)


def _own_words(entry: Entry) -> str:
    """The person's own words the hit's claim quotes (not the rest of the turns it cites: a core fact
    cites a whole turn and states one clause of it), if it cites a turn they typed."""
    if not any(s.role == "user" and s.origin in _OWN for s in entry.sources):
        return ""
    return user_text(entry.text)


def _holds(text: str, value: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text.casefold()) is not None


def _answers(units: Sequence[object], terms: Collection[str]) -> bool:
    return any(not term_set(getattr(u, "text", "")).isdisjoint(terms) for u in units)


def newest_first(
    chosen: Sequence[tuple[int, Entry]],
    current: Callable[[int], bool],
    same_class: Callable[[int, int], bool],
    terms: Collection[str] = (),
    *,
    query: str = "",
    common: frozenset[str] = frozenset(),
) -> list[tuple[int, Entry]]:
    """`chosen` (rows in rank order, with their entries) with each current hit that gives a newer value
    of what a current hit above it states moved just above that hit; every other hit keeps its order.
    `terms`: the question's analysed words; `query`: the question; `common`: the words so common in the
    index that they relate no two statements (`text.update`)."""
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
            if before and (
                same_fact(before, words, common)
                or (changed and _answers(held(before), terms))
                or _answers(changed_in(before, words, common), terms)
            ):
                out.insert(i, out.pop(j))
                break
    return out


def common_words(entries: Iterable[Entry], df: Callable[[str], int]) -> frozenset[str]:
    """The words of the entries' own words that more than `COMMON_STATEMENTS` entries of the index hold
    (`df`: how many hold a word), as keys (`w:<word>`): the vocabulary of a chat about one thing, which
    relates no two facts."""
    words = {w for entry in entries for said in sayings(_own_words(entry)) for w in said.words}
    return frozenset(
        f"w:{w}" for w in words if max((df(t) for t in analyse(w)), default=0) > COMMON_STATEMENTS
    )


def states_of_person(entry: Entry, query: str) -> bool:
    """Does the hit hold the person's own statement, as so now, on the question's topic (`person_first`)?
    Asked of a question about the person now, such a hit is no padding, whatever it scores: "where do I
    live?" asks for "I rent a flat in Melbourne", which shares none of its words."""
    return states_of_self(_own_words(entry), query)


def asks_of_change(older: Entry, newer: Entry, query: str, common: frozenset[str] = frozenset()) -> bool:
    """Does the question ask about what of the older hit the newer one changed (`text.changed_in`)? When
    the words do not tell which part changed (a model's distiller marked it), the mark is taken as it is."""
    changed = changed_in(_own_words(older), _own_words(newer), common)
    return not changed or states_of_self(" ".join(c.text for c in changed), query)


def person_first(
    chosen: Sequence[tuple[int, Entry]],
    current: Callable[[int], bool],
    same_class: Callable[[int, int], bool],
    query: str = "",
) -> list[tuple[int, Entry]]:
    """`chosen` with, for a question the person asks about themselves now, each current hit in which they
    state, as so now, something on the question's topic (`text.states_of_self`) moved above the hits of
    its branch class ranked above it that state nothing of the kind: their partner's new job, a quote from
    their landlord, a line of their novel, a joke, where they used to live, a job advert they pasted."""
    out = list(chosen)
    if not asks_about_now(query):
        return out
    states = {row: current(row) and states_of_person(entry, query) for row, entry in out}
    for j in range(1, len(out)):
        i = j
        while (
            i > 0 and states[out[i][0]] and not states[out[i - 1][0]] and same_class(out[i - 1][0], out[i][0])
        ):
            out[i - 1], out[i] = out[i], out[i - 1]
            i -= 1
    return out
