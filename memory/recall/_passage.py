"""The passage of a hit that answers the query: the sentences of its text that hold what was asked, with
enough around them to read, instead of the first few hundred characters of a long turn. `passage` picks
one hit's; `spread` shares one budget out over several hits, where the query's words are.

A block's searchable text is its claim (the start of each cited turn) and the rest of every turn it cuts
short (`Entry.more`). The answer to "which env vars does the review session pass?" sits wherever those
words are said, often thousands of characters into a session's summary or a command's output. So the
text is cut into sentences (at `.`, `!`, `?` or `;` before a space, at a closing quote, and every
`_PIECE` characters within a longer run such as a log line), each scored by the weights (idf) of the
distinct query terms it holds, and the passage is the best sentence grown on both sides while it gains,
within `limit`; a second window around the best sentence left out follows when room is left (an answer
in two places: the command and its outcome). Windows keep text order, joined by " … ".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from ._text import term_set

__all__ = ["PASSAGE_CHARS", "passage", "spread"]

PASSAGE_CHARS: Final = 420
_PIECE: Final = 160  # characters of one scored piece, at most
_SPLIT: Final = re.compile(r"(?<=[.!?;”])\s+|(?<=[:])\s+(?=[A-Z“`])")
_GAP: Final = " … "


def _pieces(text: str) -> list[str]:
    out: list[str] = []
    for sentence in _SPLIT.split(text):
        rest = sentence
        while len(rest) > _PIECE:
            cut = rest.rfind(" ", _PIECE // 2, _PIECE)
            cut = cut if cut > 0 else _PIECE
            out.append(rest[:cut])
            rest = rest[cut:].lstrip()
        if rest:
            out.append(rest)
    return out


def passage(text: str, weights: Mapping[str, float], limit: int = PASSAGE_CHARS) -> str:
    """The part of `text` that best answers a query whose terms weigh `weights` (at most about `limit`
    characters; the whole text when it fits; its start when no piece holds a query term)."""
    if len(text) <= limit:
        return text
    pieces = _pieces(text)
    sets = [term_set(p) for p in pieces]
    scores = [sum(weights.get(t, 0.0) for t in terms) for terms in sets]
    if not pieces or max(scores) <= 0.0:
        return _head(text, limit)
    windows: list[tuple[int, int]] = []
    covered: set[str] = set()
    for _ in range(2):
        room = limit - _used(pieces, windows)
        best = _best(scores, sets, covered, windows)
        if best is None or len(pieces[best]) > room:
            break
        window = _grow(pieces, scores, best, room, windows)
        windows.append(window)
        for i in range(window[0], window[1] + 1):
            covered |= sets[i]
    # Room left: the text around the windows, the following side first (an answer comes after its name).
    windows = sorted(windows)
    for n, (start, end) in enumerate(windows):
        room = limit - _used(pieces, windows)
        windows[n] = _grow(pieces, [1.0] * len(pieces), start, room, windows[:n] + windows[n + 1 :], end=end)
    windows = _merged(sorted(windows))
    parts = [" ".join(pieces[s : e + 1]) for s, e in windows]
    head = "… " if windows[0][0] > 0 else ""
    tail = " …" if windows[-1][1] < len(pieces) - 1 else ""
    return head + _GAP.join(parts) + tail


def _used(pieces: list[str], windows: list[tuple[int, int]]) -> int:
    return sum(len(pieces[i]) + 1 for s, e in windows for i in range(s, e + 1)) + len(_GAP) * len(windows)


def _merged(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in windows:
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _best(
    scores: list[float], sets: list[frozenset[str]], covered: set[str], windows: list[tuple[int, int]]
) -> int | None:
    """The piece outside every window that adds the most query weight not covered yet."""
    best, value = None, 0.0
    for i, terms in enumerate(sets):
        if any(s <= i <= e for s, e in windows):
            continue
        gain = _new(scores, i, terms, covered)
        if gain > value:
            best, value = i, gain
    return best


def _new(scores: list[float], i: int, terms: frozenset[str], covered: set[str]) -> float:
    """Piece `i`'s score, in proportion to the terms it holds that no window holds yet."""
    return scores[i] * (len(terms - covered) / len(terms)) if terms else 0.0


def _grow(
    pieces: list[str],
    scores: list[float],
    at: int,
    room: int,
    others: list[tuple[int, int]],
    *,
    end: int | None = None,
) -> tuple[int, int]:
    """The window from piece `at` (to `end`), grown a piece at a time over the pieces that score,
    toward the side that scores more (the following piece on a tie), while it fits in `room` and
    meets no other window."""
    start, end = at, at if end is None else end
    used = sum(len(pieces[i]) + 1 for i in range(start, end + 1))
    taken = {i for s, e in others for i in range(s, e + 1)}

    def fits(i: int) -> bool:
        return 0 <= i < len(pieces) and i not in taken and scores[i] > 0 and used + len(pieces[i]) + 1 <= room

    while True:
        left = start - 1 if fits(start - 1) else None
        right = end + 1 if fits(end + 1) else None
        if left is None and right is None:
            return start, end
        if right is not None and (left is None or scores[right] >= scores[left]):
            end = right
            used += len(pieces[right]) + 1
        else:
            assert left is not None
            start = left
            used += len(pieces[left]) + 1


def _head(text: str, limit: int) -> str:
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit] + " …"


_RANK_DECAY: Final = 0.3  # a piece of the n-th hit weighs 1 / (1 + 0.3 n) of the same piece of the first
_COVERED: Final = 0.3  # a term a window already quotes weighs this share again in a later one


def spread(texts: list[str], weights: Mapping[str, float], total: int, window: int) -> list[str | None]:
    """Passages for hits whose texts are `texts` (best hit first), `total` characters in all: window after
    window, each grown around the piece (of any hit) that quotes the most query weight not quoted yet, a
    better hit's piece weighing more, at most `window` characters each, then the text that follows it. A
    hit no window falls in gets None (the budget went to what answers). Windows of one hit keep their order."""
    pieces = [_pieces(text) for text in texts]
    sets = [[term_set(p) for p in hit] for hit in pieces]
    scores = [[sum(weights.get(t, 0.0) for t in terms) for terms in hit] for hit in sets]
    windows: list[list[tuple[int, int]]] = [[] for _ in texts]
    covered: set[str] = set()
    used = 0
    while total - used >= _PIECE // 2:
        best: tuple[int, int] | None = None
        value = 0.0
        for i, hit_sets in enumerate(sets):
            for j, terms in enumerate(hit_sets):
                if any(s <= j <= e for s, e in windows[i]):
                    continue
                new = sum(weights.get(t, 0.0) for t in terms - covered)
                again = sum(weights.get(t, 0.0) for t in terms & covered)
                gain = (new + _COVERED * again) / (1.0 + _RANK_DECAY * i)
                if gain > value:
                    best, value = (i, j), gain
        if best is None:
            break
        i, j = best
        room = min(window, total - used)
        if len(pieces[i][j]) > room:
            break
        start, end = _grow(pieces[i], scores[i], j, room, windows[i])
        start, end = _grow(pieces[i], [1.0] * len(pieces[i]), start, room, windows[i], end=end)
        windows[i].append((start, end))
        used += sum(len(pieces[i][x]) + 1 for x in range(start, end + 1)) + len(_GAP)
        for x in range(start, end + 1):
            covered |= sets[i][x]
    out: list[str | None] = []
    for hit_pieces, found in zip(pieces, windows, strict=True):
        if not found:
            out.append(None)
            continue
        merged = _merged(sorted(found))
        head = "… " if merged[0][0] > 0 else ""
        tail = " …" if merged[-1][1] < len(hit_pieces) - 1 else ""
        out.append(head + _GAP.join(" ".join(hit_pieces[s : e + 1]) for s, e in merged) + tail)
    return out
