"""The speaker prior: a query about one person puts what that person said first.

Asked "what did Caroline paint?", the answer is almost always a turn of Caroline's (measured on LoCoMo:
about 96 % of the evidence of a question naming one of the two speakers is that speaker's), and asked "where
did I park?", a turn of the person's own. The speakers are known from the data, never from a list:
- a record's speaker is its role, and, when its text starts with a name and a colon (a chat among named
  people, or a transcript imported as `<name>: <text>`), that name; a label counts as a speaker's name
  when at least two records among the query's `PEEK` best lexical matches carry it (one "Note: ..." is no
  speaker);
- a query asks about a speaker when it holds the speaker's name (as recall's terms: case, possessives and
  stems aside), or, for the user-role speaker, a first-person word ("I", "me", "my", "mine", "myself":
  `memory.text`'s `FIRST_PERSON_WORDS`).
  A query naming several asks about the one it names first (the question's subject: "what did Caroline
  tell Melanie").

Then, within a hit, the asked speaker's records come first (after the records that answer: `_answers`).
The speakers are found among the `PEEK` best lexical matches (a fixed number, not k: a smaller k's hits
stay the first of a larger k's), so the prior reads a bounded number of index entries per query, never a
scan.

Measured on LoCoMo with blocks that keep a question with its answer: ranking the blocks themselves by the
asked speaker's share of their match (up to a quarter more) and letting conversational neighbours lend
twice as much lowered recall (all@1 / all@10 0.376 / 0.689 without either, 0.359 / 0.682 with both;
each made it lower as its constant grew, see the project's benchmark notes): they made up for a question and its answer filed in two
blocks, and in one block the query's words are often in the other speaker's question. So the prior only
orders each hit's evidence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from ..text import FIRST_PERSON_WORDS
from ._entries import Entry, Source
from ._text import analyse

__all__ = [
    "PEEK",
    "Asked",
    "asked_about",
    "asked_among",
    "label_of",
    "name_of",
    "speaker_first",
    "speakers",
    "without_speakers",
]

PEEK: Final = 8  # best lexical matches whose speakers a query may name (each an index entry read)
USER_ROLE: Final = "user"
# "Caroline: ...", "Mary Ann: ...": one to three capitalised words, then a colon and a space.
_LABEL: Final = re.compile(r"\s*([^\W\d_][\w'’.-]{0,30}(?: [^\W\d_][\w'’.-]{0,30}){0,2}):\s")
_WORD: Final = re.compile(r"[^\W\d_]+")  # "I'm" -> "i", "m"


def label_of(text: str) -> str | None:
    """The speaker's name a record's text starts with ("Caroline: hi" -> "Caroline"), else None."""
    found = _LABEL.match(text)
    if found is None or not all(word[0].isupper() for word in found[1].split()):
        return None
    return found[1]


def _spoken(source: Source) -> str | None:
    """The speaker's label a turn opens with; a tool's record names no speaker ("Bash: mix test" is a
    tool call, not someone called Bash)."""
    return None if source.role not in ("user", "assistant") else label_of(source.excerpt)


@dataclass(frozen=True)
class Asked:
    """Who a query asks about: a speaker's name (its terms), or the user-role speaker (`name` None)."""

    name: tuple[str, ...] | None

    def said_by(self, source: Source) -> bool:
        if self.name is None:
            return source.role == USER_ROLE
        label = _spoken(source)
        return label is not None and name_of(label) == self.name


@functools.lru_cache(maxsize=4096)
def name_of(label: str) -> tuple[str, ...]:
    """A speaker's name as recall's terms ("Mary Ann" -> ("mari", "ann")): labels repeat, so kept."""
    return tuple(analyse(label))


def _first_person(token: str) -> bool:
    return any(word in FIRST_PERSON_WORDS for word in _WORD.findall(token.casefold()))


def speakers(entries: Iterable[Entry]) -> list[str]:
    """The speakers' labels among `entries` (a query's best lexical matches): each label that at least
    two of their records open with, in the order first met."""
    records: dict[str, set[tuple[str, str]]] = {}
    for entry in entries:
        for source in entry.sources:
            label = _spoken(source)
            if label is not None and name_of(label):
                records.setdefault(label, set()).add((source.session, source.anchor))
    return [label for label, said in records.items() if len(said) >= 2]


def asked_about(query: str, entries: Iterable[Entry]) -> Asked | None:
    """The speaker `query` asks about, among the speakers of `entries` (its best lexical matches) and
    the user; None when it names none of them."""
    return asked_among(query, speakers(entries))


def asked_among(query: str, labels: Sequence[str]) -> Asked | None:
    """`asked_about` with the speakers' labels already found (`speakers`)."""
    names = list(dict.fromkeys(name_of(label) for label in labels))
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


def without_speakers(query: str, labels: Sequence[str]) -> str:
    """`query` with the speakers' names taken out ("what instruments does Melanie play?" -> "what
    instruments does play?"), for the query's vector: every turn of a labelled chat starts with its
    speaker's name, so a name in the query pulls its vector towards everything that speaker said, away
    from what the question asks. The whole query when nothing else is left."""
    if not labels:
        return query
    pattern = r"\b(?:" + "|".join(re.escape(label) for label in labels) + r")(?:['’]s)?\b"
    out = " ".join(re.sub(pattern, " ", query, flags=re.IGNORECASE).split())
    return out if _WORD.search(out) else query


def speaker_first(sources: Sequence[Source], asked: Asked | None) -> list[Source]:
    """`sources` with the asked speaker's first, each part in its order."""
    if asked is None:
        return list(sources)
    return [s for s in sources if asked.said_by(s)] + [s for s in sources if not asked.said_by(s)]
