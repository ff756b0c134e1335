"""The speaker prior: a query about one person favours what that person said.

Asked "what did Caroline paint?", the answer is almost always a turn of Caroline's (measured on LoCoMo:
about 96 % of the evidence of a question naming one of the two speakers is that speaker's), and asked "where
did I park?", a turn of the person's own. The speakers are known from the data, never from a list:
- a record's speaker is its role, and, when its text starts with a name and a colon (a chat among named
  people, or a transcript imported as `<name>: <text>`), that name; a label counts as a speaker's name
  when at least two records among the query's `PEEK` best lexical matches carry it (one "Note: ..." is no
  speaker);
- a query asks about a speaker when it holds the speaker's name (as recall's terms: case, possessives and
  stems aside), or, for the user-role speaker, a first-person word ("I", "me", "my", "mine", "myself").
  A query naming several asks about the one it names first (the question's subject: "what did Caroline
  tell Melanie").

Then three things change, each measured on LoCoMo (see the project's benchmark notes):
- a candidate ranks as if it scored `1 + WEIGHT × share` times as much (its score, which the floor of
  `_pick` is a share of, is left as it is), where `share` is the part of its match with the query
  (idf-weighted query terms, the speaker's name left out: it says who, not what) that lies in the asked
  speaker's records;
- conversational neighbours lend `NEIGHBOUR` of their score, twice what they lend otherwise: with two
  speakers taking turns, the asked speaker's previous and next turns lie one block away, and the turn
  after the one that matches often holds the answer ("I started a boot camp" ... "we have more energy");
- within a hit, the asked speaker's records come first.
The speakers are found among the `PEEK` best lexical matches and the `RESCORED` best candidates are
re-scored (fixed numbers, not k: a smaller k's hits stay the first of a larger k's), so the prior reads a
bounded number of index entries per query, never a scan.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ._entries import Entry, Source
from ._text import analyse

__all__ = [
    "NEIGHBOUR",
    "PEEK",
    "RESCORED",
    "WEIGHT",
    "Asked",
    "asked_about",
    "favour",
    "label_of",
    "name_of",
    "share",
    "speaker_first",
]

WEIGHT: Final = 0.25  # a candidate all of whose match is the asked speaker's scores a quarter more
NEIGHBOUR: Final = 1.0 / 3.0  # what a neighbour lends under the prior (1/6 otherwise)
RESCORED: Final = 8  # candidates re-scored by the prior (a fixed number, so not k)
PEEK: Final = 8  # best lexical matches whose speakers a query may name (each an index entry read)
USER_ROLE: Final = "user"
FIRST_PERSON: Final = frozenset({"i", "me", "my", "mine", "myself"})
# "Caroline: ...", "Mary Ann: ...": one to three capitalised words, then a colon and a space.
_LABEL: Final = re.compile(r"\s*([^\W\d_][\w'’.-]{0,30}(?: [^\W\d_][\w'’.-]{0,30}){0,2}):\s")
_WORD: Final = re.compile(r"[^\W\d_]+")  # "I'm" -> "i", "m"


def label_of(text: str) -> str | None:
    """The speaker's name a record's text starts with ("Caroline: hi" -> "Caroline"), else None."""
    found = _LABEL.match(text)
    if found is None or not all(word[0].isupper() for word in found[1].split()):
        return None
    return found[1]


@dataclass(frozen=True)
class Asked:
    """Who a query asks about: a speaker's name (its terms), or the user-role speaker (`name` None)."""

    name: tuple[str, ...] | None

    def said_by(self, source: Source) -> bool:
        if self.name is None:
            return source.role == USER_ROLE
        label = label_of(source.excerpt)
        return label is not None and name_of(label) == self.name


@functools.lru_cache(maxsize=4096)
def name_of(label: str) -> tuple[str, ...]:
    """A speaker's name as recall's terms ("Mary Ann" -> ("mari", "ann")): labels repeat, so kept."""
    return tuple(analyse(label))


def _first_person(token: str) -> bool:
    return any(word in FIRST_PERSON for word in _WORD.findall(token.casefold()))


def asked_about(query: str, entries: Iterable[Entry]) -> Asked | None:
    """The speaker `query` asks about, among the speakers of `entries` (its best lexical matches) and
    the user; None when it names none of them."""
    records: dict[tuple[str, ...], set[tuple[str, str]]] = {}
    for entry in entries:
        for source in entry.sources:
            label = label_of(source.excerpt)
            name = name_of(label) if label is not None else ()
            if name:
                records.setdefault(name, set()).add((source.session, source.anchor))
    names = [name for name, said in records.items() if len(said) >= 2]
    # Each whitespace-separated word's terms, as recall analyses the query (a term never spans words).
    tokens = [(token, analyse(token)) for token in query.split()]
    for at, (token, terms) in enumerate(tokens):
        if _first_person(token):
            return Asked(None)
        later = {term for _token, more in tokens[at:] for term in more}
        for name in names:
            if name[0] in terms and set(name) <= later:
                return Asked(name)
    return None


def _relevance(source: Source, weights: Mapping[str, float], who: frozenset[str]) -> float:
    return sum(weights.get(word, 0.0) for word in set(analyse(source.excerpt)) if word not in who)


def share(entry: Entry, asked: Asked, weights: Mapping[str, float]) -> float:
    """The part of the entry's match with the query that lies in the asked speaker's records: 1 when it
    is all theirs (or it matches nothing but it is theirs), 0 when none of it is."""
    who = frozenset(asked.name or ())
    theirs = total = 0.0
    mine = False
    for source in entry.sources:
        value = _relevance(source, weights, who)
        total += value
        if asked.said_by(source):
            theirs += value
            mine = True
    if total <= 0.0:
        return 1.0 if mine else 0.0
    return theirs / total


def favour(
    ranked: list[int],
    score: Mapping[int, float],
    entry_of: Callable[[int], Entry],
    asked: Asked,
    weights: Mapping[str, float],
) -> list[int]:
    """`ranked` with its first `RESCORED` in the order of their scores raised by the prior (ties keep
    their order), the rest after them (the prior only raises a score). The scores themselves stay as
    they are: raising the best one would raise the floor every hit must reach (a share of the best),
    and cut hits the prior never looked at."""
    head = ranked[:RESCORED]
    raised = {row: score[row] * (1.0 + WEIGHT * share(entry_of(row), asked, weights)) for row in head}
    return sorted(head, key=lambda row: -raised[row]) + ranked[RESCORED:]


def speaker_first(sources: Sequence[Source], asked: Asked | None) -> list[Source]:
    """`sources` with the asked speaker's first, each part in its order."""
    if asked is None:
        return list(sources)
    return [s for s in sources if asked.said_by(s)] + [s for s in sources if not asked.said_by(s)]
