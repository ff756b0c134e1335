"""Topic files, `topics/<slug>.md`: the distilled memory (DESIGN §2).

A file is a `# Title` line, an empty line, then blocks separated by one empty line, ending in one `\\n`::

    <claim> [^c-<10 hex>] [^c-<10 hex>] ^b-<8 hex>
    [^c-<10 hex>]: Time: `YYYY-MM-DD`; Sources: [<label>](../sources/<sid>.md#src-<16 hex>), ...

A block that a newer one superseded (DESIGN §12) starts with one more line, its status, before the claim::

    **Superseded** on `YYYY-MM-DD` by [b-<8 hex>](<slug>.md#^b-<8 hex>) (update|retraction):

A block one of whose facts a newer block updated, while its others still stand ("I live in Paris and I work
as a nurse", then "I moved to Berlin"), is partly superseded: it stays current, and one more line, after the
superseded line if there is one and before the claim, names the block holding the newer value of that part::

    **Partly superseded** on `YYYY-MM-DD` by [b-<8 hex>](<slug>.md#^b-<8 hex>) (update|retraction):

A viewer shows either line as the start of the claim's paragraph. Neither can be a claim line (they do not
end in a block id, and no claim may start with `**Superseded**` or `**Partly superseded**`), and record
text, folded into its claim line, can never start a line of its own; a block without them is current and
whole, so files written before them read as all current.

The parser reads lines (split on `\\n` only) and takes the claim to be everything before the trailing run of
citation references, so structure comes from line positions, never from what a claim says. Text quoted
from records goes through `inert()` first, and the claim rules below refuse every unescaped construct a
markdown viewer would read as a citation, block id, link or heading, so no record can forge one either for
this parser or for a person's viewer. Ids are hashes of content, so distilling the same batch twice gives
the same bytes. `parse_topic` checks one file on its own; `validate_topic` adds what needs the rest of the
workspace (archived sources, other topics' blocks) and the batch rule."""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ..errors import InvalidInput
from ._archive_codec import anchor_of
from ._ids import is_valid_id
from ._topic_path import TOPIC_SLUG_PATTERN

__all__ = [
    "Block",
    "Citation",
    "SourceRef",
    "SupersedeReason",
    "Supersession",
    "Topic",
    "TopicFormatError",
    "block_id",
    "block_links",
    "citation_id",
    "inert",
    "make_block",
    "render_block",
    "render_topic",
    "uninert",
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


_SOURCE: Final = re.compile(r"\[(?P<label>[^\]]*)\]\(\.\./sources/(?P<sid>[^)#]*)\.md#(?P<anchor>[^)]*)\)")


# The one link a claim may hold: to a block of a topic in the same directory (or of this file).
_BLOCK_LINK: Final = re.compile(
    r"\[(?P<text>(?:\\.|[^\\\[\]])+)\]\((?P<slug>" + TOPIC_SLUG_PATTERN + r")\.md#\^(?P<bid>b-[0-9a-f]{8})\)"
)


_ASCII_PUNCTUATION: Final = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


_HTML_START: Final = re.compile(r"[A-Za-z/!?]")


# No unescaped "[", "]", "^" or "<" (a backslash escapes the character after it): no construct at all.
# Unrolled (runs of plain characters between escapes): one regex step per run, not per character.
_PLAIN_CLAIM: Final = re.compile(r"[^\\\[\]^<]*(?:\\[\s\S][^\\\[\]^<]*)*\\?")


SupersedeReason = Literal["update", "retraction"]


SUPERSEDE_REASONS: Final[tuple[SupersedeReason, ...]] = ("update", "retraction")


STATUS_PREFIX: Final = "**Superseded**"


PARTLY_PREFIX: Final = "**Partly superseded**"


def _status_pattern(prefix: str) -> re.Pattern[str]:
    """A status line after its `prefix`: loose like the patterns above (the checks name the part that is
    wrong); the link target is judged apart."""
    return re.compile(
        re.escape(prefix) + r" on `(?P<date>[^`]*)` by \[(?P<text>[^\]]*)\]\((?P<target>[^)]*)\)"
        r" \((?P<reason>[^)]*)\):"
    )


_STATUS: Final = _status_pattern(STATUS_PREFIX)


_PARTLY: Final = _status_pattern(PARTLY_PREFIX)


_STATUS_TARGET: Final = re.compile(r"(?P<slug>" + TOPIC_SLUG_PATTERN + r")\.md#\^(?P<bid>.*)")


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
class Supersession:
    """Why a block is no longer current: the block `by` in the topic file `topic` (may be the block's own
    file) states a newer value of its fact, since `date` (YYYY-MM-DD). As a block's `partly`: of one of
    its facts, the others still standing."""

    by: str  # the successor's block id, b-<8 hex>
    topic: str  # the successor's topic path, topics/<slug>.md
    date: str
    reason: SupersedeReason


@dataclass(frozen=True)
class Block:
    """One claim and its citations. `superseded` is None for a current block; `partly` names the block
    that holds a newer value of part of it (it stays current). Marking a block either way
    (`dataclasses.replace(block, superseded=...)`, `partly=...`) never changes its id, which comes from
    the claim only."""

    id: str
    claim: str
    citations: tuple[Citation, ...]
    superseded: Supersession | None = None
    partly: Supersession | None = None  # last: positional constructions keep working


@dataclass(frozen=True)
class Topic:
    title: str
    blocks: tuple[Block, ...]


def inert(text: str) -> str:
    """Record text made safe to quote in a claim: line breaks folded to one space each, markdown's active
    characters backslash-escaped, and lone surrogates (which UTF-8 cannot hold) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", _FOLD.sub(" ", text)).translate(_ESCAPES)


_ESCAPED: Final = re.compile(r"\\(.)")


def uninert(text: str) -> str:
    """Text made inert (`inert`), as a person reads it: the backslash escapes undone."""
    return _ESCAPED.sub(r"\1", text) if "\\" in text else text


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
    lines = [] if block.superseded is None else [render_status(block.superseded, base=base)]
    if block.partly is not None:
        lines.append(render_status(block.partly, base=base, prefix=PARTLY_PREFIX))
    lines.append(f"{claim}{refs} ^{block.id}")
    for c in block.citations:
        links = ", ".join(f"[{s.label}]({sources_dir}{s.session_id}.md#{s.anchor})" for s in c.sources)
        lines.append(f"[^{c.id}]: Time: `{c.date}`; Sources: {links}")
    return "\n".join(lines)


def render_status(status: Supersession, *, base: str = "", prefix: str = STATUS_PREFIX) -> str:
    """A superseded block's first line (`base` as for `render_block`); with `PARTLY_PREFIX`, the partly
    superseded line."""
    target = f"{base}{posixpath.basename(status.topic)}#^{status.by}"
    return f"{prefix} on `{status.date}` by [{status.by}]({target}) ({status.reason}):"


def render_topic(topic: Topic) -> str:
    """The file's text. `parse_topic(render_topic(t)) == t` for every topic that `validate_topic` accepts."""
    return topic_head(topic.title) + "".join(map(block_chunk, topic.blocks))


def topic_head(title: str) -> str:
    """A topic file's text before its first block (`render_topic` is this, then each `block_chunk`)."""
    return f"# {title}\n"


def block_chunk(block: Block) -> str:
    """A block's part of its topic file's text: an empty line, its lines, a newline."""
    return f"\n{render_block(block)}\n"


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
