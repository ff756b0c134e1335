"""The evidence archive `sources/<sid>.md`: one append-only file of frames per session (DESIGN §2).

A frame is four header lines (anchor, source id, canonical base64url meta, `record-lines: N`), N content
lines (the content split on `\\n` only, the first prefixed `[<ISO time>] <role>: `) and one empty line.
The explicit line count is what makes the format unambiguous: content that quotes a whole frame, header
lines and all, stays content.

The parser is strict and never resynchronises: it accepts frames in order and stops at the first one that is
not exactly what `render_frame` would have written. What follows decides the damage's name. A crash mid-append
leaves a prefix of a write, so nothing that parses as a frame can follow it: that is a *torn tail*, and the next
append truncates it. A valid frame after the damage cannot come from a crash, so the archive is *corrupt*:
appends are refused and nothing is deleted, because deleting evidence to make room for more would be worse.

`SessionArchive` keeps the valid end and the id map in memory so that an append costs O(batch): it compares
the file size with the valid end, scans only a tail another writer added, and rescans in full only when the
file shrank or lost its header. Appends take an `flock` on the file itself, so two processes archiving the same
session cannot interleave (a duplicate frame would be damage)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from ..errors import InvalidInput
from ._git_context import GitContext, git_context_of
from ._ids import anchor_of, check_id
from ._limits import MAX_RECORD_LINES, MAX_SEQ, check_content, time_problem

__all__ = [
    "HEADER",
    "MAX_RECORD_LINES",
    "MAX_SEQ",
    "ORIGINS",
    "ROLES",
    "ArchiveRecord",
    "anchor_of",
    "default_origin",
    "render_frame",
    "render_tombstone",
]

HEADER: Final = b"<!-- dagmem-archive:v1 -->\n\n"


ROLES: Final = frozenset({"user", "assistant", "tool", "system"})


#: Where a record's text came from: `user` (typed by the person), `assistant`, `tool` (a tool's output, a
#: file or page read, pasted material), `imported` (brought in from another program's transcript), `system`.
ORIGINS: Final = frozenset({"user", "assistant", "tool", "imported", "system"})


def default_origin(role: str) -> str:
    """The origin a record of `role` has unless told otherwise (and that every frame written before origins
    existed reads as): its role's name."""
    return role


@dataclass(frozen=True)
class ArchiveRecord:
    """One record to archive; `render_frame` validates it."""

    session_id: str
    node_id: str
    role: str
    seq: int
    created_at: float
    content: str
    origin: str | None = None  # None: the role's default (`default_origin`)
    git: GitContext | None = None  # where in git it was said, when known (`_git_context`)

    @property
    def effective_origin(self) -> str:
        return self.origin if self.origin is not None else default_origin(self.role)

    @property
    def source_id(self) -> str:
        return f"{self.session_id}/{self.node_id}"


def _iso(created_at: float) -> str:
    return datetime.fromtimestamp(created_at, UTC).isoformat(timespec="seconds")


def _meta_json(
    created_at: float, role: str, seq: int, origin: str | None = None, git: GitContext | None = None
) -> bytes:
    # Byte for byte `json.dumps({...}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` for these
    # types (json prints a finite float with `float.__repr__`; a role from ROLES and an origin from ORIGINS
    # need no escaping), at a fraction of the cost: a full scan re-encodes every frame's meta. A test pins
    # the equality. `origin` is written only when it is not the role's default, and `git` only when known
    # (its own canonical JSON: paths and branches may need escaping), so a frame of a default origin and no
    # git context is byte for byte what it was before either existed.
    at = float.__repr__(created_at)
    where = "" if git is None else f'"git":{git.canonical()},'
    said = "" if origin is None or origin == default_origin(role) else f'"origin":"{origin}",'
    return f'{{"created_at":{at},{where}{said}"role":"{role}","seq":{int.__repr__(seq)}}}'.encode()


def _meta_token(
    created_at: float, role: str, seq: int, origin: str | None = None, git: GitContext | None = None
) -> bytes:
    return base64.urlsafe_b64encode(_meta_json(created_at, role, seq, origin, git)).rstrip(b"=")


def _first_line_prefix(created_at: float, role: str) -> bytes:
    return f"[{_iso(created_at)}] {role}: ".encode()


def render_frame(record: ArchiveRecord) -> bytes:
    """The frame's exact bytes (ending in `\\n\\n`). Refuses, with `InvalidInput`, what the parser would reject."""
    session_id = check_id(record.session_id, "session id")
    node_id = check_id(record.node_id, "node id")
    role = str(record.role)
    if role not in ROLES:
        raise InvalidInput(f"{record.source_id}: role {role!r} is not one of {sorted(ROLES)}")
    origin = record.origin
    if origin is not None and origin not in ORIGINS:
        raise InvalidInput(f"{record.source_id}: origin {origin!r} is not one of {sorted(ORIGINS)}")
    seq = record.seq
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQ:
        raise InvalidInput(f"{record.source_id}: seq must be an int in [0, 2**63), not {seq!r}")
    created_at = record.created_at
    problem = time_problem(created_at)
    if problem is not None:
        raise InvalidInput(f"{record.source_id}: created_at {problem}")
    created_at = float(created_at)
    try:
        prefix = _first_line_prefix(created_at, role)
    except (OverflowError, OSError, ValueError) as error:
        raise InvalidInput(f"{record.source_id}: created_at {created_at!r} is not a valid time") from error
    git = record.git
    if git is not None and git_context_of(git) != git:
        raise InvalidInput(f"{record.source_id}: git context {git!r} is out of bounds")
    # The same limits as the store's append (one function), so no accepted turn is refused here.
    content = check_content(record.content, record.source_id).encode()
    lines = content.count(b"\n") + 1
    source_id = f"{session_id}/{node_id}"
    return b"".join(
        [
            f'<a id="{anchor_of(source_id)}"></a>\n<!-- source-id: {source_id} -->\n'.encode(),
            b"<!-- source-meta: " + _meta_token(created_at, role, seq, origin, git) + b" -->\n",
            f"<!-- record-lines: {lines} -->\n".encode(),
            prefix,
            content,
            b"\n\n",
        ]
    )


def _forgotten_line(forgotten_at: float) -> bytes:
    return f"<!-- forgotten: {_iso(forgotten_at)} -->\n".encode()


def render_tombstone(
    session_id: str,
    node_id: str,
    *,
    role: str,
    seq: int,
    created_at: float,
    forgotten_at: float,
    origin: str | None = None,
    git: GitContext | None = None,
) -> bytes:
    """A forgotten record's frame (`dagmem forget`): the anchor, source-id and source-meta lines of its
    frame, then `<!-- forgotten: <ISO time> -->` in place of `record-lines` and its content, then the empty
    terminator. Written only by the atomic rewrite of a whole archive, never appended: no crash tears one,
    and no record text can forge one (content lives inside the counted lines of a record frame)."""
    source_id = f"{check_id(session_id, 'session id')}/{check_id(node_id, 'node id')}"
    if role not in ROLES:
        raise InvalidInput(f"{source_id}: role {role!r} is not one of {sorted(ROLES)}")
    return b"".join(
        [
            f'<a id="{anchor_of(source_id)}"></a>\n<!-- source-id: {source_id} -->\n'.encode(),
            b"<!-- source-meta: " + _meta_token(float(created_at), role, seq, origin, git) + b" -->\n",
            _forgotten_line(forgotten_at),
            b"\n",
        ]
    )
