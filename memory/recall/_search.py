"""Hybrid, branch-aware search over a `RecallIndex` (DESIGN §8).

1. Candidates: the WIDTH best BM25 rows and the WIDTH best rows by the coarse (64-d) vectors (every row
   tied with the last one too), chosen without regard to k.
2. Each candidate gets 0.6 × BM25 + 0.4 × cosine of its full vector, each min-max normalised over the
   candidates (measured on LoCoMo: the weighted fusion beat either alone and reciprocal rank fusion).
   The query's vector is made without the names of the speakers its best lexical matches are labelled
   with (`_speaker.without_speakers`): in a chat every turn opens with its speaker's name, so the name
   pulls the vector towards all that speaker said (BM25 still weighs the name). Measured on LoCoMo dev,
   all@1 / all@10 / multi-hop all@10: 0.382 / 0.687 / 0.162 before, 0.375 / 0.695 / 0.176 without the
   names, 0.382 / 0.700 / 0.183 with the cosine's share at 0.4 (0.35: 0.380 / 0.699 / 0.176; 0.45:
   0.379 / 0.697 / 0.190).
3. A block said right before or after a good block shares its context (a question's evidence often spans
   neighbouring turns): a sixth of each conversational neighbour's fused score is added (measured: +3
   points of all@10). Neighbours are the blocks citing the records just before and after this block's
   (the best of them on each side, when several blocks cite one record).
4. Branch classes (when the reader is in a session) and currency statuses (DESIGN §12) for the best
   max(CLASSED, 4k) candidates, from their index entries and the reader's DAG shapes only (never a topic
   file; a successor is found through the block-id table). With `siblings="demote"` no sibling hit among
   them is ranked above an on-branch one, `"exclude"` drops siblings, `"include"` leaves the order alone.
   Then, unless `history`, no superseded or left hit is ranked above a current one (a stable demotion
   applied last, so it wins: a current fact said on a sibling branch ranks above a superseded one said on
   the reader's own). With `history` ("what did I used to…") they keep their place by relevance, each
   labelled with its status. A reader at a git checkout (`checkout`, `memory.checkout.GitReader`) gives
   the same candidates git labels from their records' git contexts: no hit said on a branch not merged
   into the reader's HEAD (or in another repository) ranks above one of the reader's own (a stable
   demotion after the sibling one, before the current-first one).
   Entity expansion (`_entities`) adds the pages of the entities a query names to the candidates of
   step 1, each with a bonus.
5. The hits: from the ranked candidates, up to k above a floor relative to the best score, each claim
   once (`_pick`). A current hit that is partly superseded (one of its facts has a newer value in
   another block, the others stand) brings that block's current statement right after it, scored at
   least as it is (unless it came already, or the reader may not see it: `keep`, excluded siblings).
6. Each hit's evidence is ordered by how much of the query its record holds (idf-weighted terms), the
   asked speaker's records first (`_speaker`: a query naming a speaker, or asking about "my ..."), and
   the records that only ask about the query after those that answer (`_answers`).

A block's score is a function of the query and the live blocks alone: not of k, nor of the index's
history (a snapshot's rows or a delta's), and equal scores are ordered by topic and block id, not by row.
So for k ≤ WIDTH / 8 the k best are the first k of any larger such k, with the same scores (with a
session too: the branch classes are those of the first CLASSED candidates for each such k). What is
approximate: a block in neither candidate list is never a hit, and for a k above WIDTH / 8 the lists
widen to 8k (so that k hits can be found), scored with the normalisation of the first WIDTH (scores stay
the same; a block the wider lists add may rank above one of a smaller k's hits).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..checkout import GitLabel, GitReader
from ..currency import Reader, Status, resolve
from ..errors import InvalidInput
from ..format import is_held_topic
from ._answers import answers_first
from ._embed import embed
from ._entities import BONUS as ENTITY_BONUS
from ._entities import EXPAND, entity_rows
from ._entries import Entry, Source
from ._found import BranchClass, Found, FoundEvidence, Siblings
from ._index import RecallIndex
from ._newest import (
    NEWEST_WINDOW,
    asks_about_now,
    asks_of_change,
    common_words,
    newest_first,
    person_first,
    states_of_person,
)
from ._passage import PASSAGE_CHARS, passage, spread
from ._pick import pick
from ._query import RecallQuery
from ._speaker import PEEK, Asked, asked_among, speaker_first, speakers, without_speakers
from ._text import analyse, term_set
from ._visible import Visible, visible

if TYPE_CHECKING:
    from ._hit import Hit

__all__ = ["find_hits", "search"]

_NEIGHBOUR = 1.0 / 6.0
_DENSE = 0.4  # the cosine's share of the fused score (BM25 has the rest); see step 2 of the module
_CHAIN = 16  # successors followed from one superseded candidate (a chain of updates)
WIDTH = 200  # candidates of each kind (measured on LoCoMo at k = 25, where it was 8k)
CLASSED = 100  # candidates given a branch class when a session is given (4k for a larger k)
_TIES = 4  # rows tied at a list's last place taken, up to this many times its width
# A window of a shared passage budget (`spread_chars`), at most: measured on the coding questions' dev
# set (real Claude Code sessions): 350 cut answers off, 450-600 held them alike.
SPREAD_WINDOW = 450


def _top(scores: npt.NDArray[np.float32], count: int, floor: float) -> npt.NDArray[np.int64]:
    """Rows of the `count` best scores above `floor` (unordered), and every row tied with the last of
    them (up to `_TIES * count` in all), so the set does not depend on how rows are numbered. A
    threshold from every 16th score first (expecting twice `count` above it), so the partition runs on
    a few hundred rows, not all: 0.06 ms against 0.64 ms at 100,000 (measured); when too few pass, the
    whole array is partitioned."""
    n = len(scores)
    rows: npt.NDArray[np.intp] | None = None
    if n > 64 * count:
        sample = scores[::16]
        m = max(1, 2 * count * len(sample) // n)
        threshold = np.partition(sample, len(sample) - m)[len(sample) - m]
        passed = np.flatnonzero(scores >= max(threshold, np.float32(floor)))
        if len(passed) >= count:  # the count-th best is at least the threshold: all of them passed
            rows = passed
    if rows is None:
        rows = np.arange(n)
    rows = rows[scores[rows] > floor]
    if len(rows) > count:
        values = scores[rows]
        last = np.partition(values, len(rows) - count)[len(rows) - count]
        best = rows[values >= last]
        if len(best) > _TIES * count:  # a tie-heavy list: the first rows of the tie (documented)
            best = np.concatenate([rows[values > last], rows[values == last]])[: _TIES * count]
        rows = best
    return rows.astype(np.int64)


def _union(*parts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """`np.union1d` of all `parts`: their rows sorted, each once. Not through `np.unique`, whose check
    for a masked array imports `numpy.ma` (15 ms of a fresh process's query)."""
    rows = np.sort(np.concatenate(parts))
    if len(rows) < 2:
        return rows
    out: npt.NDArray[np.int64] = rows[np.concatenate([[True], rows[1:] != rows[:-1]])]
    return out


def _candidates(
    index: RecallIndex,
    qvec: npt.NDArray[np.float32],
    lexical: npt.NDArray[np.float32],
    coarse: npt.NDArray[np.float32],
    width: int,
    *,
    pages: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """(candidate rows, those and their neighbours: the rows scored, each scored row's full cosine);
    `pages`: rows of named entities' pages, candidates too."""
    rows = _union(_top(lexical, width, 0.0), _top(coarse, width, -1.5), pages)
    if not len(rows):
        return rows, rows, np.zeros(0, np.float32)
    # Neighbours in the conversation are scored like candidates (they need not be candidates).
    _slot, links = index.neighbours(rows)
    scored = _union(rows, links)
    dense = np.einsum("ij,j->i", index.vectors(scored), qvec).astype(np.float32)
    return rows, scored, dense


def _range(values: npt.NDArray[np.float32]) -> tuple[float, float]:
    return (float(values.min()), float(values.max())) if len(values) else (0.0, 0.0)


def _scale(values: npt.NDArray[np.float32], bounds: tuple[float, float]) -> npt.NDArray[np.float64]:
    """Min-max normalisation with the bounds of the first WIDTH candidates (so not of k)."""
    lo, hi = bounds
    if hi <= lo:
        return np.zeros(len(values)) if hi <= 0 else np.ones(len(values))
    return (values.astype(np.float64) - lo) / (hi - lo)


def _order_key(entry: Entry) -> tuple[str, str]:
    return (entry.topic, entry.block_id)


def _ranked(
    index: RecallIndex, rows: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], need: int
) -> list[int]:
    """The first `need` of `rows` best first (and any rows tied with the last); equal scores by (topic,
    block id), which no row numbering changes."""
    order = np.lexsort((rows, -scores))
    values = scores[order]
    end = min(need, len(order))
    while end < len(order) and values[end] == values[end - 1]:
        end += 1  # the whole of a tie at the last place
    ranked: list[int] = rows[order[:end]].tolist()
    i = 0
    while i < min(need, len(ranked)):
        j = i + 1
        while j < len(ranked) and values[j] == values[i]:
            j += 1
        if j - i > 1:
            ranked[i:j] = sorted(ranked[i:j], key=lambda row: _order_key(index.entry(row)))
        i = j
    return ranked


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _evidence(
    sources: Sequence[Source], weights: dict[str, float], asked: Asked | None = None
) -> tuple[FoundEvidence, ...]:
    def relevance(source: Source) -> float:
        # fsum: exact, so a tie stays a tie whatever order the set gives (it varied with the hash seed)
        return math.fsum(weights.get(word, 0.0) for word in term_set(source.excerpt))

    ranked = sorted(sources, key=relevance, reverse=True) if len(sources) > 1 and weights else sources
    ranked = speaker_first(ranked, asked)  # the asked speaker's records first (`_speaker`)
    who = set(asked.name or ()) if asked is not None else set()
    ranked = answers_first(ranked, weights.keys() - who)  # then the records that answer (`_answers`)
    return tuple(
        FoundEvidence(
            source_id=s.source_id,
            session=s.session,
            node=s.node,
            role=s.role,
            time=_iso(s.created_at),
            text=s.excerpt,
            seq=s.seq,
            origin=s.effective_origin,
            git=None if s.git is None else s.git.to_json(),
        )
        for s in ranked
    )


Currency = tuple[Status, str | None, str | None]  # (status, superseded by, superseded on)
_CURRENT: Currency = ("current", None, None)


def _currency(index: RecallIndex, entry: Entry, reader: Reader) -> Currency:
    """A candidate's status for `reader`: its successor chain walked through the block-id table (a
    successor that is not in the index, a dangling supersession, hides nothing)."""
    known: dict[str, Entry | None] = {entry.block_id: entry}
    where: dict[str, str] = {}  # block id -> the topic its predecessor names for it

    def lookup(block_id: str) -> Entry | None:
        if block_id not in known:
            found = [index.entry(row) for row in index.block_rows(block_id)]
            named = [e for e in found if e.topic == where.get(block_id)]
            known[block_id] = (named or found)[0] if found else None
        return known[block_id]

    def superseded_by(block_id: str) -> str | None:
        found = lookup(block_id)
        if found is None or found.superseded is None:
            return None
        successor, topic, _date = found.superseded
        where.setdefault(successor, topic)
        return successor if lookup(successor) is not None else None

    def evidence_of(block_id: str) -> list[tuple[str, str | None]]:
        found = lookup(block_id)
        return [] if found is None else [(s.session, s.node) for s in found.sources]

    status, by = resolve(entry.block_id, superseded_by, evidence_of, reader)
    on = entry.superseded[2] if status == "superseded" and entry.superseded is not None else None
    return status, by, on


def _demote(ranked: list[int], high: Callable[[int], bool], low: Callable[[int], bool]) -> list[int]:
    """No `low` row above a `high` one: the rows up to the last high one, the low ones among them moved
    after the others (each in its order), then the rest as they were."""
    last = max((i for i, row in enumerate(ranked) if high(row)), default=-1)
    head = ranked[: last + 1]
    return [r for r in head if not low(r)] + [r for r in head if low(r)] + ranked[last + 1 :]


def _current_first(
    ranked: list[int],
    current: Callable[[int], bool] | None,
    score: dict[int, float],
    floor: float,
    successors: Callable[[int], list[int]],
    *,
    replaced: Callable[[int], bool] = lambda _row: False,
    sibling: Callable[[int], bool] = lambda _row: False,
    unfloored: Callable[[int], bool] = lambda _row: False,
    above: Callable[[int, int], bool] = lambda _first, _row: False,
) -> Iterator[int]:
    """`ranked` with every current row before every other, each kind in its order (what `_demote` gives
    for two kinds that cover every row), worked out as it is read: a row's status is resolved only when
    the reader gets to it, and none for rows below the floor (`pick` leaves them out). A non-current
    row's current successor takes its place (`successors`), unless it came already. Among the current
    rows, those `replaced` on a branch this reader does not see come after the others (their newer
    value may be the reader's own branch's, which no supersession could link: an older fact has one
    successor), but never after a `sibling` row when they are not siblings themselves: the branch rule
    (no sibling above the reader's own branch) holds among current rows. `current` None
    (`history=True`): relevance order, each superseded row followed by its current successor.
    `unfloored(row)`: a row below the floor that is given all the same (`pick`).

    The branch rule holds for successors too (`above(a, b)`: `a` must rank above `b`; `ranked` already
    obeys it): one that a row still to come must rank above waits until that row is given (a sibling's
    newer value, replacing a hit of the reader's own); before a row that is a `sibling`, the successors
    of the rows further down that must rank above it are given first (the reader's own newer value,
    replacing a sibling's hit), which resolves those rows' statuses; one that must rank above a row
    already given is not given in its predecessor's place (the predecessor names it)."""
    best = max(score.values(), default=0.0)
    cut = floor * best if best > 0 else float("-inf")
    held: list[int] = []
    later: list[int] = []
    given: set[int] = set()
    shown: list[int] = []  # what was given, in order
    waiting: list[int] = []  # successors a row still to come must rank above
    found: dict[int, list[int]] = {}

    def successors_of(row: int) -> list[int]:
        if row not in found:
            found[row] = successors(row)
        return found[row]

    def before_a_sibling() -> Iterator[int]:
        """The replaced rows waiting in `later` that a sibling row must not pass."""
        for waiting_row in [r for r in later if r not in given and not sibling(r)]:
            later.remove(waiting_row)
            given.add(waiting_row)
            shown.append(waiting_row)
            yield waiting_row

    def low(row: int) -> bool:
        """Below the floor, and not given all the same."""
        return score[row] < cut and not unfloored(row)

    def blocked(row: int, start: int) -> bool:
        """Whether a row of `ranked` from `start` on, given as itself when it comes, must rank above."""
        return any(
            above(first, row)
            and first not in given
            and not low(first)
            and (current is None or current(first))
            for first in ranked[start:]
        )

    def give(row: int, start: int) -> Iterator[int]:
        """`row`, after what must rank above it: before a sibling, the successors of the rows from
        `start` on that must (unless a row still to come must rank above them), and the replaced rows."""
        if sibling(row):
            for first in ranked[start:]:
                if low(first) or first in given or (current is not None and current(first)):
                    continue
                for successor in successors_of(first):
                    if successor in given or not above(successor, row) or blocked(successor, start):
                        continue
                    if current is not None and replaced(successor):
                        continue
                    given.add(successor)
                    shown.append(successor)
                    yield successor
            if later:
                yield from before_a_sibling()
        given.add(row)
        shown.append(row)
        yield row

    def released(start: int) -> Iterator[int]:
        """The waiting successors no row from `start` on must rank above any more."""
        for successor in [r for r in waiting if not blocked(r, start)]:
            waiting.remove(successor)
            if successor not in given:
                yield from give(successor, start)

    for i, row in enumerate(ranked):
        if waiting:
            yield from released(i)
        if low(row) or row in given:
            continue  # `pick` never takes a row below the floor: no status needed
        if current is None or current(row):
            if current is not None and replaced(row):
                later.append(row)
                continue
            yield from give(row, i + 1)
            if current is not None:
                continue
        else:
            held.append(row)
        for successor in successors_of(row):
            if successor in given or successor in waiting:
                continue
            if current is not None and replaced(successor):
                later.append(successor)
                continue
            if blocked(successor, i + 1):
                waiting.append(successor)
            elif not any(above(successor, other) for other in shown):
                yield from give(successor, i + 1)
    yield from released(len(ranked))
    yield from dict.fromkeys(row for row in later if row not in given)
    yield from held


def _hit(
    entry: Entry,
    score: float,
    branch: BranchClass | None,
    weights: dict[str, float],
    currency: Currency = _CURRENT,
    *,
    asked: Asked | None = None,
    passage_chars: int = PASSAGE_CHARS,
    partly_by: str | None = None,
    git: GitLabel | None = None,
) -> Found:
    status, by, on = currency
    return Found(
        text=entry.text,
        topic=entry.topic,
        block_id=entry.block_id,
        score=round(score, 6),
        branch=branch,
        held=is_held_topic(entry.topic),
        date=entry.date or None,
        evidence=_evidence(entry.sources, weights, asked),
        status=status,
        superseded_by=by,
        superseded_on=on,
        passage=passage(f"{entry.text} {entry.more}" if entry.more else entry.text, weights, passage_chars),
        partly_by=partly_by,
        git=git,
    )


def search(
    index: RecallIndex,
    query: RecallQuery,
    *,
    reader: Reader | None = None,
    keep: Visible | None = None,
    checkout: GitReader | None = None,
) -> list[Hit]:
    """The `query.k` best hits for `query`, each claim once and none scoring below `query.floor` times
    the best (see `_pick`); branch classes and statuses for `reader` (a session and its tip; default:
    nobody in particular, with no session's DAG known). `query.history` ranks superseded and left hits by
    relevance. `keep`: the blocks this reader may see (`visible`; default: all but the hold queue's).
    `checkout`: the reader's git checkout, for each hit's git label (and ranking: see `find_hits`)."""
    from ._hit import hit_of

    found = find_hits(index, query, reader=reader, keep=keep, checkout=checkout)
    return [hit_of(hit) for hit in found]


def find_hits(
    index: RecallIndex,
    query: RecallQuery,
    *,
    reader: Reader | None = None,
    keep: Visible | None = None,
    passages: Sequence[int] = (PASSAGE_CHARS,),
    spread_chars: int | None = None,
    checkout: GitReader | None = None,
) -> list[Found]:
    """`search`'s hits as plain records (`Found`): for a caller that only renders them
    (`render_context`), without the `Hit` models. `passages`: the characters of each hit's passage by
    its rank (the last for every rank after; a host that injects a few hits gives the first more room).
    `spread_chars`: instead, one budget of passage characters shared out over the hits where the query's
    words are (`_passage.spread`); a hit that gets none of it is left out. `checkout`: the reader's git
    checkout: each hit gets its git label, and no hit said on a branch not merged into the reader's HEAD
    (or in another repository) ranks above one of the reader's own (as a conversation's sibling). The
    query was checked when it was made."""
    if not isinstance(query, RecallQuery):
        raise InvalidInput(f"query must be a RecallQuery, not {type(query).__name__}")
    reader = reader if reader is not None else Reader(_no_shapes)
    with index.lock:
        index.refresh()
        return _search(
            index,
            query.text,
            k=query.k,
            reader=reader,
            siblings=query.siblings,
            history=query.history,
            floor=query.floor,
            keep=visible() if keep is None else keep,
            passages=tuple(passages) or (PASSAGE_CHARS,),
            spread_chars=spread_chars,
            checkout=checkout,
        )


def _no_shapes(_session: str) -> None:
    return None


def _search(
    index: RecallIndex,
    query: str,
    *,
    k: int,
    reader: Reader,
    siblings: Siblings,
    history: bool,
    floor: float,
    keep: Visible,
    passages: tuple[int, ...] = (PASSAGE_CHARS,),
    spread_chars: int | None = None,
    checkout: GitReader | None = None,
) -> list[Found]:
    if not index.live or not query.strip():
        return []
    entries: dict[int, Entry] = {}

    def entry_of(row: int) -> Entry:
        found = entries.get(row)
        if found is None:
            found = entries[row] = index.entry(row)
        return found

    words = analyse(query)
    lexical = index.bm25(words)
    # The speaker prior (`_speaker`, which orders each hit's evidence): who the query asks about, from the
    # speakers of its best lexical matches (a fixed number of them, not k).
    labels = speakers(map(entry_of, _top(lexical, PEEK, 0.0).tolist()))
    asked = asked_among(query, labels)
    # The query's vector without the speakers' names (`without_speakers`): what is asked, not who.
    qvec = embed([without_speakers(query, labels)], index.memory)[0]
    coarse = index.coarse(qvec)
    # Entity expansion (`_entities`): the pages of the entities the query names.
    pages = entity_rows(index, query) if EXPAND else np.zeros(0, np.int64)
    pages = pages[np.sort(_top(coarse[pages], WIDTH, -1.5))] if len(pages) else pages
    # The normalisation is over the first WIDTH of each list whatever k is; a larger k widens the lists.
    base = _candidates(index, qvec, lexical, coarse, WIDTH, pages=pages)
    if not len(base[0]):
        return []
    lex_range, dense_range = _range(lexical[base[1]]), _range(base[2])
    wide = base if 8 * k <= WIDTH else _candidates(index, qvec, lexical, coarse, 8 * k, pages=pages)
    rows, scored, dense = wide
    slot, links = index.neighbours(rows)
    fused = (1.0 - _DENSE) * _scale(lexical[scored], lex_range) + _DENSE * _scale(dense, dense_range)
    # The best neighbour on each side of each candidate (several blocks may cite one record).
    around = np.zeros(2 * len(rows), np.float64)
    np.maximum.at(around, slot, fused[np.searchsorted(scored, links)])
    final_rows = fused[np.searchsorted(scored, rows)] + _NEIGHBOUR * around.reshape(-1, 2).sum(axis=1)
    if len(pages):
        final_rows = final_rows + ENTITY_BONUS * np.isin(rows, pages)
    need = max(CLASSED, 4 * k)
    ranked = _ranked(index, rows, final_rows, need)
    at = np.searchsorted(rows, ranked)
    final = dict(zip(ranked, final_rows[at].tolist(), strict=True))
    n_live = max(index.live, 1)
    weights = {}
    for word in set(words):
        df = index.df(word)
        if df:
            weights[word] = math.log(1.0 + (n_live - df + 0.5) / (df + 0.5))

    # Classes for the best candidates only (each costs an entry read), when the reader is in a session:
    # enough to fill k after demotion, and as many for every k up to CLASSED / 4, so a smaller k's hits
    # are the first of a larger k's. Statuses are resolved as the hits are picked, in that order: the
    # current ones first (a stable partition of the same candidates), so a query reads the entries it
    # returns and those it passes over, not all of them when no session asks for classes.
    ranked = ranked[:need]

    classes: dict[int, BranchClass | None] = dict.fromkeys(ranked)
    if reader.session_id is not None:
        classes = {row: reader.branch((s.session, s.node) for s in entry_of(row).sources) for row in ranked}
    currency: dict[int, Currency] = {}

    def currency_of(row: int) -> Currency:
        found = currency.get(row)
        if found is None:
            found = currency[row] = _currency(index, entry_of(row), reader)
        return found

    if siblings == "exclude":
        ranked = [row for row in ranked if classes[row] != "sibling"]
    elif siblings == "demote":
        ranked = _demote(ranked, lambda row: classes[row] == "on", lambda row: classes[row] == "sibling")
    gits: dict[int, GitLabel | None] = {}

    def git_of(row: int) -> GitLabel | None:
        if checkout is None:
            return None
        if row not in gits:
            gits[row] = checkout.label((s.git, s.created_at) for s in entry_of(row).sources)
        return gits[row]

    def git_own(row: int) -> bool:
        found = git_of(row)
        return found is not None and found.merged

    def git_foreign(row: int) -> bool:
        found = git_of(row)
        return found is not None and not found.merged

    if checkout is not None:  # the git axis: as a sibling, never above the reader's own (applied second)
        ranked = _demote(ranked, git_own, git_foreign)

    about_now = asks_about_now(query)
    matched = frozenset(row for row, score in final.items() if score > 0)  # what the question found
    lent: set[int] = set()

    def successors(row: int) -> list[int]:
        """What replaced a superseded candidate, ranked where it was: asked about an old value, the
        reader is given the current one (its words may share little with the question)."""
        return current_from(row, currency_of(row)[1])

    def current_from(row: int, by: str | None, *, rescore: bool = True) -> list[int]:
        """The first block current for the reader on the chain of successors from the block `by`, if
        any, scored at least as `row` (what it stands for); with `rescore` False, a block the question
        found keeps its own score, another takes `row`'s the first time (it may have been picked since)."""
        found: list[int] = []
        seen = {entry_of(row).block_id}
        while by is not None and by not in seen and len(seen) <= _CHAIN:
            seen.add(by)
            rows = index.block_rows(by)
            if not rows:
                break
            nxt = rows[0]
            if rescore:
                final[nxt] = max(final.get(nxt, 0.0), final[row])
            elif nxt not in matched and nxt not in lent:  # once: it may have been picked already
                lent.add(nxt)
                final[nxt] = final[row]
            if nxt not in classes:
                classes[nxt] = (
                    reader.branch((s.session, s.node) for s in entry_of(nxt).sources)
                    if reader.session_id is not None
                    else None
                )
            status, by, _ = currency_of(nxt)
            if status == "current":
                found.append(nxt)
                break
        return found

    current = (lambda row: currency_of(row)[0] == "current") if not history else None

    def replaced(row: int) -> bool:
        """Current for this reader, though a successor is recorded (said on a branch it does not see)."""
        return entry_of(row).superseded is not None

    def sibling(row: int) -> bool:
        return (siblings == "demote" and classes.get(row) == "sibling") or git_foreign(row)

    def partly_named(row: int) -> str | None:
        """The block a current candidate's partly superseded line names, if it is in the index."""
        mark = entry_of(row).partly
        if mark is None or currency_of(row)[0] != "current" or not index.block_rows(mark[0]):
            return None
        return mark[0]

    brought: dict[int, str] = {}  # a picked partly superseded row -> its successor's current block

    def low_on(row: int) -> set[str]:
        """The axes on which a row is demoted: a sibling of the conversation (`siblings="demote"`), said
        on a git branch not merged into the reader's HEAD."""
        axes = {"branch"} if siblings == "demote" and classes.get(row) == "sibling" else set()
        return axes | {"git"} if git_foreign(row) else axes

    def high_on(row: int) -> set[str]:
        """The axes on which a row is the reader's own (the ones no demoted row ranks above)."""
        axes = {"branch"} if siblings == "demote" and classes.get(row) == "on" else set()
        return axes | {"git"} if git_own(row) else axes

    below: set[str] = set()  # the axes on which a picked row was demoted

    def comes_with(row: int) -> list[int]:
        """What a picked partly superseded block brings along, right after it: the current statement of
        the part that changed (asked about the block, the reader is given that part's newer value too).
        Only for a question about how things are now that asks about the part that changed ("where do I
        live?" of "I live in Paris and I work as a nurse", then "I moved to Berlin"; not "what do I do?"):
        otherwise the newer part would push an answer out (one the question's words find ranks on its own).
        Not when the reader excludes siblings and it is one. The branch rule (no demoted hit above one
        of the reader's own, on either axis) holds for it too: one demoted where the hit is not does not
        come with it (a hit of the reader's own may follow), nor does one of the reader's own once a
        demoted hit was picked; it then ranks where it would alone, and the hit still names it in
        `partly_by`. `pick` asks this of every row it takes, in the order it takes them, so `below`
        knows what was picked."""
        below.update(low_on(row))
        by = partly_named(row)
        found = current_from(row, by, rescore=False) if by is not None else []
        found = [
            r
            for r in found
            if about_now
            and asks_of_change(
                entry_of(row), entry_of(r), query, common_words((entry_of(row), entry_of(r)), index.df)
            )
        ]
        if found:
            brought[row] = entry_of(found[0]).block_id
        return [
            r
            for r in found
            if (siblings != "exclude" or classes[r] != "sibling")
            and low_on(r) <= low_on(row)
            and not high_on(r) & below
        ]

    def partly_by(row: int) -> str | None:
        """What a hit names as holding the newer value of part of it: the current block that came with
        it (the next hit, unless it ranked above), else the block its topic file names."""
        return brought.get(row) or partly_named(row)

    def unfloored(row: int) -> bool:
        """Asked about the person now, their own current statement on its topic, whatever it scores."""
        return about_now and current is not None and current(row) and states_of_person(entry_of(row), query)

    def above(first: int, row: int) -> bool:
        """The branch rule: `first` must rank above `row` (the reader's own on an axis where `row` is
        demoted; where the two axes disagree, git's demotion wins, as in `ranked`)."""
        if git_own(first) and git_foreign(row):
            return True
        if git_foreign(first) and git_own(row):
            return False
        return siblings == "demote" and classes.get(first) == "on" and classes.get(row) == "sibling"

    order = _current_first(
        ranked,
        current,
        final,
        floor,
        successors,
        replaced=replaced,
        sibling=sibling,
        above=above,
        unfloored=unfloored,
    )

    def same_class(a: int, b: int) -> bool:
        # On both axes: a newer statement said on an unmerged git branch is not moved above the reader's own.
        return classes.get(a) == classes.get(b) and git_foreign(a) == git_foreign(b)

    if current is None:
        chosen = pick(order, final, entry_of, k=k, floor=floor, keep=keep, follow=comes_with)
    else:
        # Reordered within a window of the same width whatever `k` is, so a smaller k gives the first
        # hits of a larger one.
        chosen = pick(
            order,
            final,
            entry_of,
            k=max(k, NEWEST_WINDOW),
            floor=floor,
            keep=keep,
            follow=comes_with,
            unfloored=unfloored,
        )
        window = person_first(chosen[:NEWEST_WINDOW], current, same_class, query)
        common = common_words((entry for _, entry in window), index.df) if about_now else frozenset()
        window = newest_first(window, current, same_class, set(words), query=query, common=common)
        chosen = (window + chosen[NEWEST_WINDOW:])[:k]
    found = [
        _hit(
            entry,
            final[row],
            classes[row],
            weights,
            currency_of(row),
            asked=asked,
            passage_chars=passages[min(n, len(passages) - 1)],
            partly_by=partly_by(row),
            git=git_of(row),
        )
        for n, (row, entry) in enumerate(chosen)
    ]
    if spread_chars is None:
        return found
    texts = [f"{entry.text} {entry.more}" if entry.more else entry.text for _, entry in chosen]
    shared = spread(texts, weights, spread_chars, SPREAD_WINDOW)
    return [
        dataclasses.replace(hit, passage=quoted) for hit, quoted in zip(found, shared, strict=True) if quoted
    ]
