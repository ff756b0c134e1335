"""The last step of a search: from the ranked candidates, the hits to return.

- A relative score floor: a candidate scoring below `floor` × the best candidate's score is no answer to
  the query, it only pads `k` (weak hits are injected like strong ones, and a model cannot tell them
  apart). The default cuts at a quarter of the best: padding with no query term in it scores near 0 (its
  only share is what its conversational neighbours lend it), a hit holding part of the query far above.
- One hit per claim: the same claim filed in two topic files (or twice in one) is one fact; the first,
  best-ranked one is kept and the later ones are left out, so `k` holds `k` different claims.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Final

from ..errors import InvalidInput

if TYPE_CHECKING:  # for the annotations only: `same_claim` (render_context's) needs no numpy
    from ._entries import Entry

__all__ = ["FLOOR", "check_floor", "pick"]

FLOOR: Final = 0.25


def check_floor(floor: object) -> float:
    if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0.0 <= floor <= 1.0:
        raise InvalidInput(f"floor must be a number from 0 to 1 (a share of the best score), not {floor!r}")
    return float(floor)


def same_claim(text: str) -> str:
    """What makes two claims the same one: their words, whitespace and case aside."""
    return " ".join(text.split()).casefold()


def pick(
    ranked: Iterable[int],
    score: Mapping[int, float],
    entry: Callable[[int], Entry],
    *,
    k: int,
    floor: float,
    keep: Callable[[Entry], bool] | None = None,
) -> list[tuple[int, Entry]]:
    """Up to `k` (row, entry) of `ranked`, in order, above the floor and each claim once; with `keep`,
    only entries it accepts (the reader's view: `_visible`)."""
    best = max(score.values(), default=0.0)
    cut = floor * best if best > 0 else float("-inf")
    seen: set[str] = set()
    out: list[tuple[int, Entry]] = []
    for row in ranked:
        if len(out) == k:
            break
        if score[row] < cut:
            continue
        found = entry(row)
        if keep is not None and not keep(found):
            continue
        claim = same_claim(found.text)
        if claim in seen:
            continue
        seen.add(claim)
        out.append((row, found))
    return out
