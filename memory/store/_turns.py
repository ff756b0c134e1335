"""What a caller asks to append, and its checks, stated once: `SessionStore.append` and `append_many` check
each turn here, and `Runtime.append` runs the same checks before anything reaches a session actor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import InvalidInput
from ..format import (
    FORGOTTEN_KEY,
    GIT_KEY,
    HEAD,
    MARKER_KEY,
    ORIGIN_KEY,
    ORIGINS,
    SPAWNED_KEY,
    HeadType,
    Role,
    check_content,
    check_id,
    check_metadata,
    check_spawned_from,
    default_origin,
    git_context_of,
)

__all__ = ["RESERVED_METADATA_KEYS", "WRITTEN_BY_DAGMEM", "CheckedTurn", "NewTurn", "check_append_args"]

#: Metadata keys dagmem owns, refused in a caller's append: a forged marker would stop every walk there and
#: leave the turns before it unwritten for good, `rewound` is what `rewind` sets and `spawned` what
#: `append(..., spawned=True)` sets. `git` (where in git the turn was said) is read from a checkout by
#: dagmem itself (an importer, the hooks' worker, `append(..., checkout=...)`): a caller's metadata naming
#: a branch could pass its words off as merged into the reader's. `display` stays the host's to set, as a
#: string: "runtime" marks a runtime-scheduled turn (not a record, DESIGN §3).
RESERVED_METADATA_KEYS: Final = frozenset(
    {MARKER_KEY, "rewound", SPAWNED_KEY, ORIGIN_KEY, FORGOTTEN_KEY, GIT_KEY}
)

#: Metadata keys dagmem itself adds to a node after its append (the marker, a rewind): a retried append is
#: compared without them.
WRITTEN_BY_DAGMEM: Final = RESERVED_METADATA_KEYS | {"rewound_at"}

_ROLE_NAMES = tuple(role.value for role in Role)
_ROLES: Final = {role.value: role for role in Role}  # a dict lookup: `Role(name)` costs a microsecond a turn


@dataclass(slots=True)  # not frozen: made per turn (an import makes thousands), a frozen one costs 3x
class NewTurn:
    """One turn for `SessionStore.append_many`: the arguments of `append`, with their meaning."""

    role: Role | str
    content: str
    predecessor: str | HeadType | None = HEAD
    node_id: str | None = None
    metadata: Mapping[str, Any] | None = None
    spawned: bool = False
    spawned_from: str | None = None
    origin: str | None = None
    # An import's tombstone for a turn whose text was forgotten (`dagmem forget`): empty content, and the
    # node says when (`metadata.forgotten_at`, a key dagmem owns), as a forgotten node does.
    forgotten_at: float | None = None
    # Where in git it was said (`format.GitContext`, read by dagmem from a checkout or a transcript's own
    # fields): kept as `metadata["git"]`, a key dagmem owns.
    git: object = None


@dataclass(slots=True)  # not frozen: a frozen dataclass costs 3x to make, and one is made per turn
class CheckedTurn:
    """A turn past its argument checks: its role, its text, and the metadata its node file will hold
    (`spawned` and `origin` in it already)."""

    role: Role
    content: str
    metadata: dict[str, Any]
    predecessor: str | HeadType | None
    node_id: str | None
    spawned: bool
    spawned_from: str | None

    @classmethod
    def of(cls, session_id: str, turn: NewTurn) -> CheckedTurn:
        """`turn` checked (`InvalidInput` naming its first problem)."""
        role, content, metadata = check_append_args(
            session_id,
            turn.role,
            turn.content,
            predecessor=turn.predecessor,
            node_id=turn.node_id,
            metadata=turn.metadata,
            spawned=turn.spawned,
            spawned_from=turn.spawned_from,
            origin=turn.origin,
        )
        if turn.spawned:
            metadata[SPAWNED_KEY] = True
        if turn.origin is not None and turn.origin != default_origin(role.value):
            metadata[ORIGIN_KEY] = turn.origin
        if turn.git is not None:
            git = git_context_of(turn.git)
            if git is None:
                raise InvalidInput(f"git context {turn.git!r} is not one (docs/formats.md, git context)")
            metadata[GIT_KEY] = git.to_json()
        if turn.forgotten_at is not None:
            if content:
                raise InvalidInput("a tombstone (forgotten_at) has no content")
            metadata[FORGOTTEN_KEY] = turn.forgotten_at
        return cls(role, content, metadata, turn.predecessor, turn.node_id, turn.spawned, turn.spawned_from)


def _check_role(role: object) -> Role:
    found = _ROLES.get(role) if isinstance(role, str) else None
    if found is not None:
        return found
    raise InvalidInput(f"invalid role {role!r}: expected one of {', '.join(_ROLE_NAMES)}")


def check_append_args(
    session_id: object,
    role: object,
    content: object,
    *,
    predecessor: object = HEAD,
    node_id: object = None,
    metadata: object = None,
    spawned: object = False,
    spawned_from: object = None,
    origin: object = None,
) -> tuple[Role, str, dict[str, Any]]:
    """The argument checks of `append`, in one place: the store runs them, and `Runtime.append` runs them
    before anything reaches a session actor. Returns (role, content, a JSON-clean copy of the metadata);
    anything a turn may not hold (`format.content_problem`, `format.check_metadata`, a key dagmem owns)
    raises `InvalidInput`."""
    check_id(session_id, "session id")
    if not isinstance(spawned, bool):
        raise InvalidInput(f"spawned must be True or False, not {spawned!r}")
    if spawned_from is not None:
        check_spawned_from(spawned_from)
    if origin is not None and (not isinstance(origin, str) or origin not in ORIGINS):
        raise InvalidInput(f"invalid origin {origin!r}: expected one of {', '.join(sorted(ORIGINS))}")
    checked_role = _check_role(role)
    text = check_content(content)
    if node_id is not None:
        check_id(node_id, "node id")
    if predecessor is not None and predecessor is not HEAD:
        check_id(predecessor, "predecessor id")
    clean = check_metadata(metadata)
    owned = sorted(RESERVED_METADATA_KEYS.intersection(clean))
    if owned:
        raise InvalidInput(f"metadata key {owned[0]!r} is dagmem's own: a caller may not set it")
    if "display" in clean and not isinstance(clean["display"], str):
        raise InvalidInput(f"metadata 'display' must be a string, not {type(clean['display']).__name__}")
    return checked_role, text, clean
