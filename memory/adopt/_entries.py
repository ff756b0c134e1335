"""What the format parsers produce and the helpers they share: one `Entry` per source line (or message),
node ids derived from the source's ids, source times, text pulled out of content blocks."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import InvalidInput
from ..format import is_valid_id

__all__ = [
    "BadLine",
    "Entry",
    "Problem",
    "Turn",
    "chain_key",
    "clean",
    "shown_path",
    "source_time",
    "to_id",
]


class BadLine(InvalidInput):
    """A line (or message) that is JSON but not what its format says: reported with its place, skipped.
    `entries` are what is still known of it (a skipped entry, so that its children follow its parent)."""

    def __init__(self, reason: str, entries: Sequence[Entry] = ()) -> None:
        super().__init__(reason)
        self.entries = list(entries)


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file  # line 0: the file as a whole
        return f"{where}: {self.reason}"


@dataclass(slots=True)  # not frozen: a frozen dataclass costs 3x to make, one per line
class Turn:
    role: str  # user | assistant | tool | system
    content: str
    info: dict[str, Any] = field(
        default_factory=dict
    )  # kept under metadata["source"] (the line's type, tools)
    origin: str | None = None  # who wrote the text, when not the role's default (`format.ORIGINS`)
    # A tool call with its result (`format.ToolEvidence`): a record, unlike other tool rows.
    evidence: bool = False
    # The text an older importer stored for this line, when this one stores other text (a user line whose
    # host blocks are now stripped): a home written then holds it, and that is no conflict.
    legacy: str | None = None
    # An edit's evidence: the file it wrote (as the call named it) and `checkout.cited_of` its new text
    # (None: it wrote no line), so a reader can check the file still holds it.
    cited: tuple[str, str | None] | None = None


@dataclass(slots=True)  # not frozen: a frozen dataclass costs 3x to make, one per line
class Entry:
    """One source entry. `key` is the source's own id of it (or one derived from its place, for formats
    without ids), `parent` the key of the entry it follows (None: a root). `turn` None is a skipped entry:
    no node, but children naming it take its nearest kept ancestor. `moves_head`: after this entry the
    source's current position is here (its node, or for a skipped entry its nearest kept ancestor)."""

    key: str
    parent: str | None
    turn: Turn | None
    line: int
    time: float | None = None
    session: str | None = None  # the source's session id, when the line names one
    moves_head: bool = True
    agent: str | None = None  # the sub-agent whose transcript the line is, when it names one
    spawns: str | None = None  # the sub-agent this line reports it spawned (a task's result)
    # Where the line was said, as the host saw it: (the directory the agent worked in, its git branch);
    # `checkout.Whereabouts` makes the node's git context of it.
    where: tuple[object, object] | None = None


def to_id(raw: str) -> str:
    """A valid dagmem id (DESIGN §2) as is (a UUID is one); anything else hashed to one, stably."""
    if is_valid_id(raw):
        return raw
    return "h" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def shown_path(path: object) -> str:
    """A path as text that can be stored and printed: a file name that is not UTF-8 (its bytes kept by
    Python as lone surrogates) gets U+FFFD where those bytes were."""
    return os.fsencode(str(path)).decode("utf-8", "replace")


def chain_key(previous: str | None, raw: Any) -> str:
    """The key of an entry of a linear format without ids: derived from the previous entry's key and the
    entry itself, so the same conversation (or a file that has grown) maps to the same ids, and two
    transcripts that share a prefix and then differ fork where they differ."""
    body = json.dumps(raw, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    return "c" + hashlib.sha256(f"{previous or ''}\n{body}".encode()).hexdigest()[:32]


def clean(text: str) -> str:
    """`text` with lone surrogates (valid in JSON, not in UTF-8) replaced, so every turn can be stored."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def source_time(value: object) -> float | None:
    """Epoch seconds from an ISO-8601 string (`Z` allowed) or a number (seconds, or milliseconds when it is
    too large to be seconds); None when there is none or it is not a time."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
        if seconds > 1e11:  # milliseconds (pi's message timestamps)
            seconds /= 1000.0
        return seconds if math.isfinite(seconds) and 0 <= seconds < 1e11 else None
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
        except ValueError:
            return None
        if parsed.tzinfo is None:
            return None
        return parsed.timestamp()
    return None


def render_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def block_text(block: Any) -> str:
    """The text of a tool result's content: a string, or a list of text blocks."""
    if isinstance(block, str):
        return block
    if isinstance(block, list):
        return "\n".join(block_text(item) for item in block)
    if isinstance(block, dict):
        if isinstance(block.get("text"), str):
            return str(block["text"])
        kind = block.get("type")
        return f"[{kind}]" if isinstance(kind, str) else render_json(block)
    return "" if block is None else render_json(block)


def joined(parts: Iterable[str]) -> str:
    return "\n\n".join(part for part in parts if part)
