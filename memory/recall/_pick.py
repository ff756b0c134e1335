"""The last step of a search: from the ranked candidates, the hits to return.

- A relative score floor: a candidate scoring below `floor` × the best candidate's score is no answer to
  the query, it only pads `k` (weak hits are injected like strong ones, and a model cannot tell them
  apart). The default cuts at a quarter of the best: padding with no query term in it scores near 0 (its
  only share is what its conversational neighbours lend it), a hit holding part of the query far above.
- One hit per statement: the same claim filed in two topic files (or twice in one) is one fact, and so
  is a block that cites exactly the records another cites and holds every word of it (or all of whose
  words that one holds): the extractive distiller files a first-person sentence of a turn in
  `topics/core.md` and the whole turn in its topic, one statement said twice. The first, best-ranked one
  is kept and the later ones are left out, so `k` holds `k` different statements. `render_context`
  applies the same rule between the core facts it injects and the hits (`same_statement`).
- What comes with a hit (`follow`; the search's: the current block holding the newer value of part of a
  partly superseded one) is taken right after it, on the same terms, unless it was taken before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for the annotations only: `same_claim` (render_context's) needs no numpy
    from ._entries import Entry
from ._text import term_set

__all__ = ["Statement", "pick", "same_claim", "same_statement", "statement"]


def same_claim(text: str) -> str:
    """What makes two claims the same one: their words, whitespace and case aside."""
    return " ".join(text.split()).casefold()


Statement = tuple[str, frozenset[str], frozenset[tuple[str, str]]]  # (claim, its words, its records)


def statement(text: str, records: Iterable[tuple[str, str]]) -> Statement:
    """What `same_statement` compares: the claim, its analysed words, the (session, anchor) it cites."""
    return same_claim(text), term_set(text), frozenset(records)


def same_statement(a: Statement, b: Statement) -> bool:
    """The same claim, or the same records said in words one of the two holds all of (see the module)."""
    if a[0] == b[0]:
        return True
    return bool(a[2]) and a[2] == b[2] and (a[1] <= b[1] or b[1] <= a[1])


def pick(
    ranked: Iterable[int],
    score: Mapping[int, float],
    entry: Callable[[int], Entry],
    *,
    k: int,
    floor: float,
    keep: Callable[[Entry], bool] | None = None,
    follow: Callable[[int], Iterable[int]] = lambda _row: (),
    unfloored: Callable[[int], bool] = lambda _row: False,
) -> list[tuple[int, Entry]]:
    """Up to `k` (row, entry) of `ranked`, in order, above the floor and each claim once; with `keep`,
    only entries it accepts (the reader's view: `_visible`). `follow(row)`: the rows that come with a
    picked one, taken right after it (and theirs after them) on the same terms but the floor (they come
    for the one they follow, whatever their own score), unless taken already; `unfloored(row)`: a row
    the floor does not apply to either (it is asked for whatever its score)."""
    best = max(score.values(), default=0.0)
    cut = floor * best if best > 0 else float("-inf")
    seen: list[Statement] = []
    out: list[tuple[int, Entry]] = []
    taken: set[int] = set()

    def take(row: int, *, followed: bool = False) -> bool:
        if row in taken or (score[row] < cut and not followed and not unfloored(row)):
            return False
        found = entry(row)
        if keep is not None and not keep(found):
            return False
        said = statement(found.text, ((s.session, s.anchor) for s in found.sources))
        if any(same_statement(said, other) for other in seen):
            return False
        seen.append(said)
        out.append((row, found))
        taken.add(row)
        return True

    for row in ranked:
        if len(out) == k:
            break
        pending = [row]
        while pending and len(out) < k:
            if take(nxt := pending.pop(0), followed=nxt != row) and len(out) < k:
                pending[:0] = follow(nxt)  # depth first: each right after the one it comes with
    return out
