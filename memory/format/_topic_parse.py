"""Parsing a topic file into its model (DESIGN §2); every file is checked on its own as it is parsed."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Final, cast

from ._topic_model import (
    _BREAK_CHAR,
    _PARTLY,
    _REF,
    _SOURCE,
    _SPACE,
    _STATUS,
    _STATUS_TARGET,
    PARTLY_PREFIX,
    STATUS_PREFIX,
    Block,
    Citation,
    SourceRef,
    SupersedeReason,
    Supersession,
    Topic,
    TopicFormatError,
)
from ._topic_validate import _FileChecker

__all__ = ["TopicLookup", "parse_topic"]

_DEFINITION: Final = re.compile(
    r"\[\^(?P<cid>[^\]\s]*)\]: Time: `(?P<date>[^`]*)`; Sources: (?P<sources>.*)\Z"
)


_DEFINITION_START: Final = re.compile(r"\[\^[^\]\s]*\]:")


def _parse_sources(text: str) -> tuple[SourceRef, ...] | None:
    sources, pos = [], 0
    while True:
        match = _SOURCE.match(text, pos)
        if match is None:
            return None
        sources.append(SourceRef(match["label"], match["sid"], match["anchor"]))
        pos = match.end()
        if pos == len(text):
            return tuple(sources)
        if not text.startswith(", ", pos):
            return None
        pos += 2


def _split_claim_line(line: str) -> tuple[str, list[str], str] | None:
    """(claim, citation ids, block id) of `<claim> [^id] ... ^id`, the claim being all before the longest
    trailing run of references; None without a trailing ` ^<id>`. Linear in the line's length."""
    at = line.rfind(" ^")
    if at < 0 or _SPACE.search(line, at + 2):
        return None
    refs: list[str] = []
    end = at
    while (start := line.rfind(" [^", 0, end)) >= 0 and (ref := _REF.fullmatch(line, start, end)) is not None:
        refs.append(ref[1])
        end = start
    refs.reverse()
    return line[:end], refs, line[at + 2 :]


def is_status_line(line: str) -> bool:
    """Whether `line` is meant as a superseded line (then it must be one exactly): no claim starts so."""
    return line.lstrip(" \t").startswith(STATUS_PREFIX)


def is_partly_line(line: str) -> bool:
    """Whether `line` is meant as a partly superseded line (then it must be one exactly): no claim starts
    so either."""
    return line.lstrip(" \t").startswith(PARTLY_PREFIX)


def _parse_status(
    fail: Callable[[int, str], TopicFormatError], line: str, number: int, *, partly: bool = False
) -> Supersession:
    """The superseded (`partly`: partly superseded) line's parts, taken verbatim; `_FileChecker` judges
    the date, ids and reason."""
    pattern, prefix, name = (
        (_PARTLY, PARTLY_PREFIX, "partly superseded line")
        if partly
        else (_STATUS, STATUS_PREFIX, "superseded line")
    )
    match = pattern.fullmatch(line)
    if match is None:
        raise fail(
            number,
            f"malformed {name} (expected {prefix} on `YYYY-MM-DD` by "
            "[b-<8 hex>](<slug>.md#^b-<8 hex>) (update|retraction):)",
        )
    target = _STATUS_TARGET.fullmatch(match["target"])
    if target is None:
        raise fail(number, f"{name}'s link {match['target']!r} is not <slug>.md#^b-<8 hex>")
    if match["text"] != target["bid"]:
        raise fail(number, f"{name}'s link text {match['text']!r} is not its block id {target['bid']!r}")
    reason = cast(SupersedeReason, match["reason"])  # the checker refuses any other word
    return Supersession(target["bid"], f"topics/{target['slug']}.md", match["date"], reason)


def _parse_partly(
    fail: Callable[[int, str], TopicFormatError], lines: list[str], first: int
) -> tuple[Supersession | None, list[str], int]:
    """The block's partly superseded line, if lines[0] is one (on file line `first`), and the lines and
    line number after it."""
    if not is_partly_line(lines[0]):
        return None, lines, first
    partly = _parse_status(fail, lines[0], first, partly=True)
    lines, first = lines[1:], first + 1
    if not lines:
        raise fail(first - 1, "partly superseded line is not followed by its block's claim line")
    if is_partly_line(lines[0]):
        raise fail(first, "block has more than one partly superseded line")
    if is_status_line(lines[0]):
        raise fail(
            first, "superseded line after the partly superseded line (the superseded line comes first)"
        )
    return partly, lines, first


def _parse_block(fail: Callable[[int, str], TopicFormatError], lines: list[str], first: int) -> Block:
    """The block whose first line is lines[0], on file line `first`: its superseded line, if any, its
    partly superseded line, if any, then its claim line and definitions."""
    superseded = None
    if is_status_line(lines[0]):
        superseded = _parse_status(fail, lines[0], first)
        lines, first = lines[1:], first + 1
        if not lines:
            raise fail(first - 1, "superseded line is not followed by its block's claim line")
        if is_status_line(lines[0]):
            raise fail(first, "block has more than one superseded line")
    partly, lines, first = _parse_partly(fail, lines, first)
    claim_line = lines[0]
    if _DEFINITION_START.match(claim_line):
        raise fail(first, "block starts with a definition line instead of its claim line")
    split = _split_claim_line(claim_line)
    if split is None:
        raise fail(first, "claim line does not end with its block id ' ^b-<8 hex>'")
    claim, refs, bid = split
    if not refs:
        raise fail(first, "block has no citation (the claim ends with [^c-<10 hex>] before its block id)")
    if len(lines) == 1:
        raise fail(first, f"citation [^{refs[0]}] is used but has no definition in its block")
    definitions: dict[str, tuple[int, Citation]] = {}
    for number, line in enumerate(lines[1:], start=first + 1):
        match = _DEFINITION.match(line)
        if match is None:
            raise fail(
                number,
                "malformed definition line (expected [^c-<10 hex>]: Time: `YYYY-MM-DD`; "
                "Sources: [label](../sources/<sid>.md#src-<16 hex>), ...)",
            )
        cid = match["cid"]
        if cid in definitions:
            raise fail(number, f"citation [^{cid}] is defined twice in its block")
        if not match["sources"]:
            raise fail(number, f"citation [^{cid}] has no source")
        sources = _parse_sources(match["sources"])
        if sources is None:
            raise fail(
                number, "malformed Sources list (expected [label](../sources/<sid>.md#src-<16 hex>), ...)"
            )
        definitions[cid] = (number, Citation(cid, match["date"], sources))
    used: set[str] = set()
    for cid in refs:
        if cid in used:
            raise fail(first, f"citation [^{cid}] is used twice in one claim")
        used.add(cid)
        if cid not in definitions:
            raise fail(first, f"citation [^{cid}] is used but has no definition in its block")
    for cid, (number, _) in definitions.items():
        if cid not in used:
            raise fail(number, f"definition [^{cid}] has no use in its claim")
    if list(definitions) != refs:
        raise fail(first + 1, "definitions are not in the order of their citations in the claim")
    citations = tuple(definitions[cid][1] for cid in refs)
    return Block(bid, claim, citations, superseded, partly)


def parse_topic(text: str, path: str) -> Topic:
    """The topic in `text` (the file at `path`, used in errors). Strict: any departure from the format or
    from the one-file rules raises TopicFormatError, so a parsed file renders back to the same text."""
    return _parse_topic_cached(text, path)


@functools.lru_cache(maxsize=32)
def _parse_topic_cached(text: str, path: str) -> Topic:
    # A write parses the same old text twice (the distiller, then the validator); a Topic is immutable,
    # so sharing the result is safe. Errors are not cached (lru_cache does not keep exceptions).
    topic = _parse_by_blocks(text, path)
    return topic if topic is not None else _parse_lines(text, path)


@functools.lru_cache(maxsize=4_096)
def _parse_chunk(chunk: str) -> Block | None:
    """One block's lines (joined by `\n`), parsed and checked on its own; None if it breaks a rule.
    A write re-parses every unchanged block of the files it touches: remembering them keeps it O(edit).
    4,096 (~16 MiB): 16,384 held 63 MiB in a 1,500-session simulation, and missed 28k fewer blocks in a
    1,000-session one (about 2% of its time)."""
    checker = _FileChecker("")
    try:
        block = _parse_block(checker.fail, chunk.split("\n"), 1)
        checker.block(block, 1)
    except TopicFormatError:
        return None
    return block


def _parse_by_blocks(text: str, path: str) -> Topic | None:
    """The topic of a well-formed file, block by block through `_parse_chunk`; None at anything unusual,
    for `_parse_lines` to find and name (so both give the same topic, and errors come from one place)."""
    if not text.endswith("\n") or _BREAK_CHAR.search(text) is not None:
        return None
    title_line, *chunks = text[:-1].split("\n\n")
    if not title_line.startswith("# ") or "\n" in title_line:
        return None
    checker = _FileChecker(path)
    title = title_line[2:]
    try:
        checker.title(title)
    except TopicFormatError:
        return None
    blocks: list[Block] = []
    for chunk in chunks:
        if not chunk or chunk[0] == "\n" or chunk[-1] == "\n":
            return None  # more than one empty line somewhere
        block = _parse_chunk(chunk)
        if block is None or block.id in checker.block_ids:
            return None
        cids = [citation.id for citation in block.citations]
        if not checker.citation_ids.isdisjoint(cids):
            return None
        checker.block_ids.add(block.id)
        checker.citation_ids.update(cids)
        blocks.append(block)
    return Topic(title, tuple(blocks))


def _parse_lines(text: str, path: str) -> Topic:
    """The line-by-line parser: the reference, and the one that names the first rule a file breaks."""
    checker = _FileChecker(path)

    def fail(line: int, reason: str) -> TopicFormatError:
        return checker.fail(line, reason)

    if not text:
        raise fail(1, "file is empty (expected '# <title>')")
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        bad = _BREAK_CHAR.search(line)
        if bad is not None:
            raise fail(number, f"line break character {bad.group()!r} inside a line (only \\n ends a line)")
    if lines[-1] != "":
        raise fail(len(lines), "file does not end with a newline")
    lines.pop()
    if lines[-1] == "" and len(lines) > 1:
        raise fail(len(lines), "empty line at the end of the file")
    if not lines[0].startswith("# "):
        raise fail(1, "first line is not the title '# <title>'")
    title = lines[0][2:]
    checker.title(title)
    blocks: list[Block] = []
    if len(lines) > 1 and lines[1] != "":
        raise fail(2, "no empty line after the title")
    number = 3
    while number <= len(lines):
        end = number
        while end <= len(lines) and lines[end - 1] != "":
            end += 1
        if end == number:
            raise fail(number, "more than one empty line between blocks")
        block = _parse_block(fail, lines[number - 1 : end - 1], number)
        checker.block(block, number)
        blocks.append(block)
        number = end + 1
    return Topic(title, tuple(blocks))


class TopicLookup:
    """The topic files as a transaction leaves them, each read and parsed at most once: `validate_topic`'s
    `block_exists` and `superseded_by`. `read(relpath)` gives a file's bytes after the transaction (the
    staged bytes of a file it touches, else the file on disk; None when there is none)."""

    def __init__(self, read: Callable[[str], bytes | None]) -> None:
        self._read = read
        self._blocks: dict[str, dict[str, Block]] = {}

    def block(self, relpath: str, block_id: str) -> Block | None:
        """Raises TopicFormatError (or UnicodeDecodeError) if the file is not a valid topic file."""
        blocks = self._blocks.get(relpath)
        if blocks is None:
            data = self._read(relpath)
            topic = None if data is None else parse_topic(data.decode("utf-8"), relpath)
            blocks = self._blocks[relpath] = {} if topic is None else {b.id: b for b in topic.blocks}
        return blocks.get(block_id)

    def block_exists(self, relpath: str, block_id: str) -> bool:
        return self.block(relpath, block_id) is not None

    def superseded_by(self, relpath: str, block_id: str) -> Supersession | None:
        block = self.block(relpath, block_id)
        return None if block is None else block.superseded
