"""Topic files, `topics/<slug>.md`: the distilled memory (DESIGN §2).

A file is a `# Title` line, an empty line, then blocks separated by one empty line, ending in one `\\n`::

    <claim> [^c-<10 hex>] [^c-<10 hex>] ^b-<8 hex>
    [^c-<10 hex>]: Time: `YYYY-MM-DD`; Sources: [<label>](../sources/<sid>.md#src-<16 hex>), ...

The parser reads lines (split on `\\n` only) and takes the claim to be everything before the trailing run of
citation references, so structure comes from line positions, never from what a claim says. Text quoted
from records goes through `inert()` first, and the claim rules below refuse every unescaped construct a
markdown viewer would read as a citation, block id, link or heading, so no record can forge one either for
this parser or for a person's viewer. Ids are hashes of content, so distilling the same batch twice gives
the same bytes. `parse_topic` checks one file on its own; `validate_topic` adds what needs the rest of the
workspace (archived sources, other topics' blocks) and the batch rule.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import posixpath
import re
from collections.abc import Callable, Collection, Container, Sequence
from dataclasses import dataclass
from typing import Final

from .archive import anchor_of
from .errors import InvalidInput
from .ids import is_valid_id

__all__ = [
    "Block",
    "Citation",
    "SourceRef",
    "Topic",
    "TopicFormatError",
    "anchor_of",
    "block_id",
    "block_links",
    "citation_id",
    "inert",
    "make_block",
    "parse_topic",
    "render_block",
    "render_topic",
    "validate_topic",
]

# What markdown treats as a line ending is \n, \r\n and \r; str.splitlines() also breaks on these. None of
# them may appear inside a line, so a file's lines are the same for this parser and for any other reader.
_BREAKS: Final = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_FOLD: Final = re.compile(r"\r\n|[\n" + _BREAKS + "]")
_BREAK_CHAR: Final = re.compile("[" + _BREAKS + "]")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_ESCAPES: Final = {ord(c): "\\" + c for c in "\\[]()^<>`*_#|"}

_BLOCK_ID: Final = re.compile(r"b-[0-9a-f]{8}")
_CITATION_ID: Final = re.compile(r"c-[0-9a-f]{10}")
_ANCHOR: Final = re.compile(r"src-[0-9a-f]{16}")
_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

# Loose patterns: they capture verbatim (so render(parse(x)) == x) and the checks below judge the parts.
_REF: Final = re.compile(r" \[\^([^\]\s]*)\]")
_SPACE: Final = re.compile(r"\s")
_DEFINITION: Final = re.compile(
    r"\[\^(?P<cid>[^\]\s]*)\]: Time: `(?P<date>[^`]*)`; Sources: (?P<sources>.*)\Z"
)
_DEFINITION_START: Final = re.compile(r"\[\^[^\]\s]*\]:")
_SOURCE: Final = re.compile(r"\[(?P<label>[^\]]*)\]\(\.\./sources/(?P<sid>[^)#]*)\.md#(?P<anchor>[^)]*)\)")

# The one link a claim may hold: to a block of a topic in the same directory (or of this file).
_BLOCK_LINK: Final = re.compile(
    r"\[(?P<text>(?:\\.|[^\\\[\]])+)\]\((?P<slug>[A-Za-z0-9][A-Za-z0-9_-]{0,63})\.md#\^(?P<bid>b-[0-9a-f]{8})\)"
)
_ASCII_PUNCTUATION: Final = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_HTML_START: Final = re.compile(r"[A-Za-z/!?]")
# No unescaped "[", "]", "^" or "<" (a backslash escapes the character after it): no construct at all.
_PLAIN_CLAIM: Final = re.compile(r"(?:[^\\\[\]^<]|\\[\s\S])*\\?")


class TopicFormatError(InvalidInput):
    """A topic file (or a topic about to be written) breaks the format; `reason` names the rule."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        where = f"line {line}" if line is not None else "no single line"
        super().__init__(f"topic {path}, {where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class SourceRef:
    """One archived record: the link target is `../sources/<session_id>.md#<anchor>`."""

    label: str
    session_id: str
    anchor: str


@dataclass(frozen=True)
class Citation:
    id: str
    date: str
    sources: tuple[SourceRef, ...]


@dataclass(frozen=True)
class Block:
    id: str
    claim: str
    citations: tuple[Citation, ...]


@dataclass(frozen=True)
class Topic:
    title: str
    blocks: tuple[Block, ...]


def inert(text: str) -> str:
    """Record text made safe to quote in a claim: line breaks folded to one space each, markdown's active
    characters backslash-escaped, and lone surrogates (which UTF-8 cannot hold) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", _FOLD.sub(" ", text)).translate(_ESCAPES)


# --- ids ----------------------------------------------------------------------------------------------


def _free_id(prefix: str, width: int, material: str, taken: Container[str]) -> str:
    counter = 0
    while True:
        data = material if counter == 0 else f"{material}\n{counter}"
        digest = hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()
        candidate = prefix + digest[:width]
        if candidate not in taken:
            return candidate
        counter += 1


def block_id(topic_path: str, claim: str, taken: Container[str]) -> str:
    """`b-` + 8 hex of sha256(f"{topic_path}\\n{claim}"); on collision `\\n1`, `\\n2`, ... is appended."""
    return _free_id("b-", 8, f"{topic_path}\n{claim}", taken)


def citation_id(block_id: str, source_ids: Sequence[str], taken: Container[str]) -> str:
    """`c-` + 10 hex of sha256 of the block id and the sorted source ids, one a line; counter on collision."""
    return _free_id("c-", 10, "\n".join([block_id, *sorted(source_ids)]), taken)


def _split_source_id(source_id: str) -> tuple[str, str]:
    session_id, _, node_id = source_id.partition("/")
    if not (is_valid_id(session_id) and is_valid_id(node_id)):
        raise InvalidInput(f"invalid source id {source_id!r}: expected <session_id>/<node_id>")
    return session_id, node_id


def make_block(
    topic_path: str,
    claim: str,
    groups: Sequence[tuple[str, Sequence[tuple[str, str]]]],
    taken: set[str],
) -> Block:
    """A block citing one citation per `(date, [(label, source_id), ...])` group; its ids go into `taken`.

    `claim` is used as given (quote record text with `inert()`); `validate_topic` judges the result.
    """
    if not groups:
        raise InvalidInput("a block needs at least one citation")
    for _, sources in groups:
        if not sources:
            raise InvalidInput("a citation needs at least one source")
        ids = [source_id for _, source_id in sources]
        if len(set(ids)) != len(ids):
            raise InvalidInput(f"a citation lists a source twice: {sorted(ids)}")
        for source_id in ids:
            _split_source_id(source_id)
    bid = block_id(topic_path, claim, taken)
    taken.add(bid)
    citations = []
    for date, sources in groups:
        cid = citation_id(bid, [source_id for _, source_id in sources], taken)
        taken.add(cid)
        refs = tuple(
            SourceRef(label, _split_source_id(source_id)[0], anchor_of(source_id))
            for label, source_id in sources
        )
        citations.append(Citation(cid, date, refs))
    return Block(bid, claim, tuple(citations))


# --- rendering ----------------------------------------------------------------------------------------


def block_links(claim: str) -> list[re.Match[str]]:
    """The block links `[text](<slug>.md#^b-<8 hex>)` of a claim that markdown would read as links (not
    escaped), in order; groups `text`, `slug`, `bid`. Raises ValueError naming any forbidden construct."""
    links: list[re.Match[str]] = []
    _scan_claim(claim, 0, len(claim), links)
    return links


def render_block(block: Block, *, base: str = "") -> str:
    """The block's lines without a final newline. `base` is the topics directory as seen from the file the
    block goes into: "" inside `topics/`, "topics/" from the workspace root (`memory/core.md`)."""
    claim = block.claim
    if base:
        parts, end = [], 0
        for link in block_links(claim):
            parts += [claim[end : link.start("slug")], base]
            end = link.start("slug")
        claim = "".join([*parts, claim[end:]])
    sources_dir = posixpath.normpath(base + "../sources") + "/"
    refs = "".join(f" [^{c.id}]" for c in block.citations)
    lines = [f"{claim}{refs} ^{block.id}"]
    for c in block.citations:
        links = ", ".join(f"[{s.label}]({sources_dir}{s.session_id}.md#{s.anchor})" for s in c.sources)
        lines.append(f"[^{c.id}]: Time: `{c.date}`; Sources: {links}")
    return "\n".join(lines)


def render_topic(topic: Topic) -> str:
    """The file's text. `parse_topic(render_topic(t)) == t` for every topic that `validate_topic` accepts."""
    return f"# {topic.title}\n" + "".join(f"\n{render_block(block)}\n" for block in topic.blocks)


def _claim_lines(topic: Topic) -> list[int]:
    """The 1-based line of each block's claim in `render_topic(topic)`."""
    lines, line = [], 3
    for block in topic.blocks:
        lines.append(line)
        line += len(block.citations) + 2
    return lines


# --- checks of one file -------------------------------------------------------------------------------


def _scan_claim(claim: str, start: int, end: int, links: list[re.Match[str]] | None) -> None:
    """Walk claim[start:end] as markdown does for backslash escapes; raise ValueError at the first
    unescaped construct a claim may not hold. Allowed block links are appended to `links`; inside a link's
    text (links is None) no further link is allowed."""
    if _PLAIN_CLAIM.fullmatch(claim, start, end):
        return  # the common case (every record quoted by `inert`): nothing unescaped to look at
    opened = False  # an unescaped "[" that is not an allowed link: a following "](" makes a link
    i = start
    while i < end:
        char = claim[i]
        nxt = claim[i + 1] if i + 1 < end else ""
        if char == "\\" and nxt in _ASCII_PUNCTUATION:
            i += 2
            continue
        if char == "[":
            if nxt == "^":
                raise ValueError("footnote reference '[^' inside a claim (citations follow the claim)")
            link = _BLOCK_LINK.match(claim, i, end) if links is not None else None
            if links is not None and link is not None:
                _scan_claim(claim, link.start("text"), link.end("text"), None)
                links.append(link)
                i = link.end()
                continue
            opened = True
        elif char == "]" and nxt == "(" and opened:
            raise ValueError("markdown link inside a claim (only [text](<slug>.md#^b-<8 hex>) is allowed)")
        elif char == "^" and claim.startswith("b-", i + 1, end):
            raise ValueError("block id marker '^b-' inside a claim")
        elif char == "<" and _HTML_START.match(nxt):
            raise ValueError("raw HTML or autolink '<...' inside a claim")
        i += 1


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


def _check_topic(path: str, topic: Topic) -> list[int]:
    checker = _FileChecker(path)
    checker.title(topic.title)
    lines = _claim_lines(topic)
    for block, line in zip(topic.blocks, lines, strict=True):
        checker.block(block, line)
    return lines


# --- parsing ------------------------------------------------------------------------------------------


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


def _parse_block(fail: Callable[[int, str], TopicFormatError], lines: list[str], first: int) -> Block:
    """The block whose claim is lines[0], on file line `first`."""
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
    return Block(bid, claim, citations)


def parse_topic(text: str, path: str) -> Topic:
    """The topic in `text` (the file at `path`, used in errors). Strict: any departure from the format or
    from the one-file rules raises TopicFormatError, so a parsed file renders back to the same text."""
    return _parse_topic_cached(text, path)


@functools.lru_cache(maxsize=32)
def _parse_topic_cached(text: str, path: str) -> Topic:
    # A write parses the same old text twice (the distiller, then the validator); a Topic is immutable,
    # so sharing the result is safe. Errors are not cached (lru_cache does not keep exceptions).
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


# --- validation against the workspace -----------------------------------------------------------------


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
) -> None:
    """Raise TopicFormatError unless `new` may replace `old` (None: a new file) at `path`.

    Besides the one-file rules: every source link resolves (`is_archived(session_id, anchor)`); every block
    link resolves (in `new` itself for this file, else `block_exists(topic_relpath, block_id)` with the
    target's path resolved against `path`'s directory); and a (block, source) pair that the same block id
    did not already cite in `old` must cite a source of this transaction's batch (`batch_sources`).
    """
    lines = _check_topic(path, new)
    own_path = posixpath.normpath(path)
    own_blocks = {block.id for block in new.blocks}
    batch = {(source_id.partition("/")[0], anchor_of(source_id)) for source_id in batch_sources}
    carried = {
        (block.id, source.session_id, source.anchor)
        for block in (old.blocks if old is not None else ())
        for citation in block.citations
        for source in citation.sources
    }
    archived: dict[tuple[str, str], bool] = {}
    unchanged = set(old.blocks) if old is not None else set()
    for block, line in zip(new.blocks, lines, strict=True):
        if block in unchanged:
            continue  # checked when it was installed; archives are append-only (O(edit), not O(file))
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
                if (block.id, *key) not in carried and key not in batch:
                    raise TopicFormatError(
                        path,
                        line + offset,
                        f"source {where} is not evidence of this transaction: a block may newly cite only "
                        "sources of the batch",
                    )
