"""What recall is asked, as one value: `RecallQuery`, checked once when it is made. Every way in makes one
(`Runtime.recall`, `dagmem recall`, the MCP `recall` tool, the cluster's client, a host's hook) and the
search takes it as it is.

The query's text (`check_query`) is a `str` of valid Unicode, so no lone surrogate (it cannot be encoded
for the model, and a command line gets one from bytes that are not UTF-8), of bounded length (the cost of
a search grows with the query: an 8 MB one took 10 s), with something in it. One rule for every way in: an
empty query, or one of whitespace only, is refused (`InvalidInput`; exit 2; `-32602`), never answered with
no hits: it asks nothing, so "nothing matches" would hide the caller's mistake (a template's variable left
empty). A host hook given an empty prompt injects nothing instead of asking."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

from ..errors import InvalidInput
from ..format import check_id

if TYPE_CHECKING:  # for the annotations only: `_found` loads the checkout and currency layers
    from ._found import Siblings

__all__ = [
    "FLOOR",
    "MAX_QUERY_CHARS",
    "SIBLINGS",
    "QueryRefused",
    "RecallQuery",
    "check_floor",
    "check_query",
]

T = TypeVar("T")

MAX_QUERY_CHARS: Final = 16_384  # a few pages: any question, and a pasted prompt, at a few ms
FLOOR: Final = 0.25  # a hit scoring below this share of the best is left out (`_pick`)
SIBLINGS: tuple[Siblings, ...] = ("demote", "exclude", "include")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class QueryRefused(InvalidInput):
    """A recall query's argument is not one recall takes: `argument` names it (as `Runtime.recall` and
    the MCP `recall` tool call it), the message says why."""

    def __init__(self, argument: str, reason: str) -> None:
        super().__init__(reason)
        self.argument = argument


def _named(argument: str, check: Callable[[object], T], value: object) -> T:
    try:
        return check(value)
    except InvalidInput as exc:
        raise QueryRefused(argument, str(exc)) from None


@dataclass(frozen=True, slots=True, init=False)
class RecallQuery:
    """What recall is asked, checked when it is made: anything recall cannot take raises `QueryRefused`
    (an `InvalidInput`) naming its first problem and the argument, so a `RecallQuery` that exists is one the search takes as it is.

    `text`: what to look for. `session_id` and `tip`: the reader, for each hit's branch class (a tip
    needs its session; default: the head). `k`: how many hits, at least 1. `siblings`: "demote" (no
    sibling hit above an on-branch one), "exclude" or "include". `history`: rank superseded and left hits
    by relevance too. `floor`: leave out a hit scoring below this share of the best (0 keeps every one).
    `held`: the candidate core facts held for review come back too (labelled)."""

    text: str
    session_id: str | None
    tip: str | None
    k: int
    siblings: Siblings
    history: bool
    floor: float
    held: bool

    def __init__(
        self,
        text: str,
        *,
        session_id: str | None = None,
        tip: str | None = None,
        k: int = 5,
        siblings: Siblings = "demote",
        history: bool = False,
        floor: float = FLOOR,
        held: bool = False,
    ) -> None:
        _named("query", check_query, text)
        if not isinstance(held, bool):
            raise QueryRefused("held", f"held must be True or False, not {held!r}")
        if session_id is not None:
            _named("session_id", _session_id, session_id)
        if tip is not None:
            _named("tip", _tip_id, tip)
            if session_id is None:
                raise QueryRefused("tip", "a tip needs its session_id")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise QueryRefused("k", f"k must be a whole number of at least 1, not {k!r}")
        if not isinstance(history, bool):
            raise QueryRefused("history", f"history must be true or false, not {history!r}")
        checked_floor = _named("floor", check_floor, floor)
        if siblings not in SIBLINGS:
            raise QueryRefused("siblings", f"siblings must be one of {', '.join(SIBLINGS)}, not {siblings!r}")
        put = object.__setattr__  # frozen: each field is set once, here
        put(self, "text", text)
        put(self, "session_id", session_id)
        put(self, "tip", tip)
        put(self, "k", k)
        put(self, "siblings", siblings)
        put(self, "history", history)
        put(self, "floor", checked_floor)
        put(self, "held", held)


def check_query(query: object) -> str:
    """`query` if recall can take it as its text; `InvalidInput` naming the problem (never quoting the
    query: text with a lone surrogate cannot even be printed) otherwise."""
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a string, not {type(query).__name__}")
    if not query.strip():
        raise InvalidInput("query is empty: recall needs some text to look for")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"query is {len(query):,} characters; recall takes at most {MAX_QUERY_CHARS:,} (shorten it)"
        )
    bad = _SURROGATE.search(query)
    if bad is not None:
        raise InvalidInput(
            f"query is not valid text: a lone surrogate (U+{ord(bad.group()):04X}) at character "
            f"{bad.start() + 1} (bytes that are not UTF-8?)"
        )
    return query


def _session_id(value: object) -> str:
    return check_id(value, "session id")


def _tip_id(value: object) -> str:
    return check_id(value, "tip id")


def check_floor(floor: object) -> float:
    if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0.0 <= floor <= 1.0:
        raise InvalidInput(f"floor must be a number from 0 to 1 (a share of the best score), not {floor!r}")
    return float(floor)
