"""The rules a topic file obeys: claim syntax, ids, citation definitions, superseded and partly superseded
lines, and (`validate_topic`) what needs the rest of the workspace: archived sources, batch-only new
citations, block links, and successors that exist (a superseded line's with no cycle)."""

from __future__ import annotations

import datetime
import functools
import posixpath
from collections.abc import Callable, Collection

from ._archive_codec import anchor_of
from ._ids import is_valid_id
from ._topic_model import (
    _ANCHOR,
    _BLOCK_ID,
    _BREAK_CHAR,
    _CITATION_ID,
    _DATE,
    _SURROGATE,
    PARTLY_PREFIX,
    STATUS_PREFIX,
    SUPERSEDE_REASONS,
    Block,
    Citation,
    Supersession,
    Topic,
    TopicFormatError,
    _scan_claim,
    block_links,
)
from ._topic_path import is_topic_path

__all__ = ["validate_topic"]


def _status_lines(block: Block) -> int:
    """How many lines come before the block's claim line: its superseded and partly superseded lines."""
    return (block.superseded is not None) + (block.partly is not None)


def _marks(block: Block, first: int) -> list[tuple[Supersession, int, str]]:
    """Each status line of the block starting at line `first`: its supersession, its line, and what it
    says of the block ("superseded", "partly superseded")."""
    marks = []
    if block.superseded is not None:
        marks.append((block.superseded, first, "superseded"))
    if block.partly is not None:
        marks.append((block.partly, first + len(marks), "partly superseded"))
    return marks


def _block_lines(topic: Topic) -> list[int]:
    """The 1-based line where each block starts in `render_topic(topic)`."""
    lines, line = [], 3
    for block in topic.blocks:
        lines.append(line)
        line += _status_lines(block) + len(block.citations) + 2
    return lines


def _line_break_reason(text: str, what: str) -> str | None:
    if "\n" in text or _BREAK_CHAR.search(text):
        return f"{what} contains a line break"
    if _SURROGATE.search(text):
        return f"{what} contains a lone surrogate (not encodable as UTF-8)"
    return None


def _claim_reason(claim: str) -> str | None:
    if not claim.strip():
        return "claim is empty"
    reason = _line_break_reason(claim, "claim")
    if reason is not None:
        return reason
    if claim.lstrip(" \t").startswith("#"):
        return "claim starts with '#' (a heading)"
    if claim.lstrip(" \t").startswith(STATUS_PREFIX):
        return f"claim starts with '{STATUS_PREFIX}' (only a superseded line, before the claim line, may)"
    if claim.lstrip(" \t").startswith(PARTLY_PREFIX):
        return (
            f"claim starts with '{PARTLY_PREFIX}' (only a partly superseded line, before the claim line, may)"
        )
    try:
        block_links(claim)
    except ValueError as error:
        return str(error)
    return None


def _label_reason(label: str) -> str | None:
    if not label.strip():
        return "source label is empty"
    reason = _line_break_reason(label, "source label")
    if reason is not None:
        return reason
    for char, why in (("[", "'['"), ("]", "']'"), ("\\", "a backslash"), ("`", "a backtick")):
        if char in label:
            return f"source label {label!r} contains {why}"
    if label.startswith("^"):
        return f"source label {label!r} starts with '^'"
    return None


def _date_reason(date: str) -> str | None:
    if not _DATE.fullmatch(date):
        return f"date {date!r} is not YYYY-MM-DD"
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        return f"date {date!r} is not a real calendar date"
    return None


class _FileChecker:
    """The rules of one file, fed block by block so errors come in file order."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.block_ids: set[str] = set()
        self.citation_ids: set[str] = set()

    def fail(self, line: int | None, reason: str) -> TopicFormatError:
        return TopicFormatError(self.path, line, reason)

    def title(self, title: str) -> None:
        if not title.strip():
            raise self.fail(1, "title is empty")
        reason = _line_break_reason(title, "title")
        if reason is None:
            try:  # the claim rules, with no link allowed at all
                _scan_claim(title, 0, len(title), None)
            except ValueError as error:
                reason = f"title: {error}".replace("inside a claim", "inside the title")
        if reason is not None:
            raise self.fail(1, reason)

    def block(self, block: Block, line: int) -> None:
        citation_ids = [citation.id for citation in block.citations]
        if _block_ok(block) and block.id not in self.block_ids and self.citation_ids.isdisjoint(citation_ids):
            # The common case, a block already seen whole (O(1) after the first time): only the file-wide
            # rules (ids unique across blocks) depend on the rest of the file.
            self.block_ids.add(block.id)
            self.citation_ids.update(citation_ids)
            return
        self._block(block, line)  # something is wrong: find the first rule broken, in file order

    def _block(self, block: Block, line: int) -> None:
        """The rules of the block starting at `line`, in line order."""
        if block.superseded is not None:
            self.supersession(block.superseded, line)
            line += 1
        if block.partly is not None:
            self.supersession(block.partly, line, partly=True)
            line += 1
        if not _BLOCK_ID.fullmatch(block.id):
            raise self.fail(line, f"malformed block id {block.id!r} (expected b-<8 hex>)")
        if block.id in self.block_ids:
            raise self.fail(line, f"duplicate block id ^{block.id}")
        self.block_ids.add(block.id)
        reason = _claim_reason(block.claim)
        if reason is not None:
            raise self.fail(line, reason)
        if not block.citations:
            raise self.fail(line, "block has no citation")
        for offset, citation in enumerate(block.citations, start=1):
            self.citation(citation, line + offset)

    def supersession(self, status: Supersession, line: int, *, partly: bool = False) -> None:
        """The rules of the superseded line (`partly`: the partly superseded line) at `line`."""
        reason = None
        if not _BLOCK_ID.fullmatch(status.by):
            reason = f"malformed successor block id {status.by!r} (expected b-<8 hex>)"
        elif not is_topic_path(status.topic):
            reason = f"successor topic {status.topic!r} is not topics/<slug>.md"
        elif (date_reason := _date_reason(status.date)) is not None:
            reason = date_reason if partly else f"superseded line: {date_reason}"
        elif status.reason not in SUPERSEDE_REASONS:
            reason = f"supersession reason {status.reason!r} is not one of {', '.join(SUPERSEDE_REASONS)}"
        if reason is not None:
            # A block may hold both lines: a partly line's reason says which one it is about.
            raise self.fail(line, f"partly superseded line: {reason}" if partly else reason)

    def block_alone(self, block: Block) -> None:
        self._block(block, 1)

    def citation(self, citation: Citation, line: int) -> None:
        if not _CITATION_ID.fullmatch(citation.id):
            raise self.fail(line, f"malformed citation id {citation.id!r} (expected c-<10 hex>)")
        if citation.id in self.citation_ids:
            raise self.fail(line, f"duplicate citation id [^{citation.id}]")
        self.citation_ids.add(citation.id)
        reason = _date_reason(citation.date)
        if reason is not None:
            raise self.fail(line, reason)
        if not citation.sources:
            raise self.fail(line, f"citation [^{citation.id}] has no source")
        seen: set[tuple[str, str]] = set()
        for source in citation.sources:
            reason = _label_reason(source.label)
            if reason is None and not is_valid_id(source.session_id):
                reason = f"invalid session id {source.session_id!r} in source link"
            if reason is None and not _ANCHOR.fullmatch(source.anchor):
                reason = f"malformed source anchor {source.anchor!r} (expected src-<16 hex>)"
            if reason is None and (source.session_id, source.anchor) in seen:
                reason = f"source {source.session_id}.md#{source.anchor} listed twice in one citation"
            if reason is not None:
                raise self.fail(line, reason)
            seen.add((source.session_id, source.anchor))


@functools.lru_cache(maxsize=16_384)
def _block_ok(block: Block) -> bool:
    """Whether one block keeps every rule that concerns it alone. Blocks are immutable, and a write
    re-checks the unchanged blocks of every file it touches: remembering them keeps a write O(edit)."""
    try:
        _FileChecker("").block_alone(block)
    except TopicFormatError:
        return False
    return True


def _check_topic(path: str, topic: Topic) -> list[int]:
    checker = _FileChecker(path)
    checker.title(topic.title)
    lines = _block_lines(topic)
    for block, line in zip(topic.blocks, lines, strict=True):
        checker.block(block, line)
    return lines


def _link_target(path: str, slug: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(path), f"{slug}.md"))


def validate_topic(
    path: str,
    new: Topic,
    old: Topic | None,
    *,
    batch_sources: Collection[str],
    is_archived: Callable[[str, str], bool],
    block_exists: Callable[[str, str], bool],
    superseded_by: Callable[[str, str], Supersession | None],
    moved: Collection[tuple[str, str]] = (),
) -> None:
    """Raise TopicFormatError unless `new` may replace `old` (None: a new file) at `path`.

    Besides the one-file rules: every source link resolves (`is_archived(session_id, anchor)`); every block
    link resolves (in `new` itself for this file, else `block_exists(topic_relpath, block_id)` with the
    target's path resolved against `path`'s directory); and a (block, source) pair that the same block id
    did not already cite in `old` must cite a source of this transaction's batch (`batch_sources`) or
    one of the `moved` (session_id, anchor) pairs: evidence that a reorganisation carries from a merged
    block to the block that absorbs it (it was cited before, so it is no new evidence).

    A superseded line may be added to any block (it cites nothing new). Its successor must exist after the
    transaction (in `new` for this file, else `block_exists`), must not be the block itself, and the chain
    of successors (`superseded_by(topic_relpath, block_id)`: that block's supersession after the
    transaction, None if it is current or missing) must end: chains are fine, a cycle is refused. The
    callbacks read only the files the chain passes through. A partly superseded line is checked the same
    way but for the chain: it leaves its block current, so it is no link of one. An unchanged block is
    checked against this file only (a block this transaction removed); `dagmem verify` checks every file.
    """
    lines = _check_topic(path, new)
    own_path = posixpath.normpath(path)
    own_blocks = {block.id: block for block in new.blocks}
    batch = {(source_id.partition("/")[0], anchor_of(source_id)) for source_id in batch_sources}
    carried = {
        (block.id, source.session_id, source.anchor)
        for block in (old.blocks if old is not None else ())
        for citation in block.citations
        for source in citation.sources
    }
    archived: dict[tuple[str, str], bool] = {}
    unchanged = set(old.blocks) if old is not None else set()
    ending: set[tuple[str, str]] = set()  # blocks whose chain of successors is known to end
    for block, first in zip(new.blocks, lines, strict=True):
        line = first + _status_lines(block)  # the claim line
        if block in unchanged:
            # Checked when it was installed; archives are append-only (O(edit), not O(file)). Only a
            # successor in this file can have gone meanwhile.
            for status, at, word in _marks(block, first) if _status_lines(block) else ():
                if posixpath.normpath(status.topic) == own_path and status.by not in own_blocks:
                    raise TopicFormatError(path, at, f"{word} by ^{status.by}, which no longer exists")
            continue
        for status, at, word in _marks(block, first):  # in line order: the superseded line's chain first
            _check_exists(path, block, status, at, word, own_blocks=own_blocks, block_exists=block_exists)
            if at == first and block.superseded is not None:
                _check_chain(
                    path, block, at, own_blocks=own_blocks, superseded_by=superseded_by, ending=ending
                )
        for link in block_links(block.claim):
            target, bid = _link_target(path, link["slug"]), link["bid"]
            exists = bid in own_blocks if target == own_path else block_exists(target, bid)
            if not exists:
                raise TopicFormatError(
                    path, line, f"dangling block link {link['slug']}.md#^{bid}: no such block"
                )
        for offset, citation in enumerate(block.citations, start=1):
            for source in citation.sources:
                key = (source.session_id, source.anchor)
                where = f"../sources/{source.session_id}.md#{source.anchor}"
                if key not in archived:
                    archived[key] = is_archived(*key)
                if not archived[key]:
                    raise TopicFormatError(
                        path, line + offset, f"source link {where} does not resolve to an archived record"
                    )
                if (block.id, *key) not in carried and key not in batch and key not in moved:
                    raise TopicFormatError(
                        path,
                        line + offset,
                        f"source {where} is not evidence of this transaction: a block may newly cite only "
                        "sources of the batch",
                    )


def _check_exists(
    path: str,
    block: Block,
    status: Supersession,
    line: int,
    word: str,
    *,
    own_blocks: dict[str, Block],
    block_exists: Callable[[str, str], bool],
) -> None:
    """The status line at `line` of `path` (`word`: what it says of `block`, "superseded" or "partly
    superseded") names a block that exists, other than `block` itself."""
    own_path = posixpath.normpath(path)
    target = posixpath.normpath(status.topic)
    if (target, status.by) == (own_path, block.id):
        raise TopicFormatError(path, line, f"block ^{block.id} is {word} by itself")
    exists = status.by in own_blocks if target == own_path else block_exists(target, status.by)
    if not exists:
        name = f"{posixpath.basename(target)}#^{status.by}"
        raise TopicFormatError(path, line, f"{word} by {name}, which does not exist")


def _check_chain(
    path: str,
    block: Block,
    line: int,
    *,
    own_blocks: dict[str, Block],
    superseded_by: Callable[[str, str], Supersession | None],
    ending: set[tuple[str, str]],
) -> None:
    """The chain of successors from the superseded line of `block` (at `line` of `path`, its successor
    known to exist) ends (a chain is fine, a cycle is not). `ending` holds the blocks already known to
    lead to an end, so checking every block of a file is linear in its blocks, however long its chains."""
    own_path = posixpath.normpath(path)
    status = block.superseded
    assert status is not None
    target = posixpath.normpath(status.topic)
    chain = [(own_path, block.id)]
    seen = set(chain)
    at: tuple[str, str] | None = (target, status.by)
    while at is not None and at not in ending:
        if at in seen:
            names = [f"{posixpath.basename(p)}#^{b}" for p, b in [*chain, at]]
            raise TopicFormatError(path, line, "supersession cycle: " + " -> ".join(names))
        chain.append(at)
        seen.add(at)
        topic, bid = at
        if topic == own_path:
            successor = own_blocks.get(bid)
            following = None if successor is None else successor.superseded
        else:
            following = superseded_by(topic, bid)
        at = None if following is None else (posixpath.normpath(following.topic), following.by)
    ending.update(chain)  # every block on it reaches the same end: no later walk goes past them again
