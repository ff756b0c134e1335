"""A turn as one value: `Turn`, what a caller asks to append, checked once when it is made. It flows whole
from `Runtime.append` (or an importer) through the session actor to `SessionStore.append_turn`, and over
the cluster's wire, so a turn's next field is added here and nowhere else."""

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
    GitContext,
    HeadType,
    Role,
    check_content,
    check_id,
    check_metadata,
    check_spawned_from,
    default_origin,
    git_context_of,
)

__all__ = ["RESERVED_METADATA_KEYS", "WRITTEN_BY_DAGMEM", "Turn"]

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


@dataclass(frozen=True, slots=True, init=False)
class Turn:
    """One turn to append, checked when it is made: anything a turn may not hold raises `InvalidInput`
    naming its first problem, so a `Turn` that exists is one the store takes as it is.

    `role` and `content` are what was said; `predecessor=HEAD` continues the head, `None` starts a new
    root, an id forks there; `node_id` names the node (default: the store makes one); `metadata` is the
    caller's (JSON, without dagmem's own keys; kept as a JSON-clean copy). `spawned=True`: a side branch's
    turn (a sub-agent's), which leaves the head where it was. `spawned_from="<session>/<node>"`, at a
    session's first append: where the session was spawned from. `origin`: where the text came from when it
    is not the role's default (`"tool"` for a pasted page in a user-role turn). `git`: where in git it was
    said (a `GitContext` within its bounds, or its JSON). `forgotten_at`: an import's tombstone for a turn
    whose text `dagmem forget` removed (empty content; the node says when)."""

    role: Role
    content: str
    predecessor: str | HeadType | None
    node_id: str | None
    metadata: dict[str, Any]
    spawned: bool
    spawned_from: str | None
    origin: str | None
    git: GitContext | None
    forgotten_at: float | None

    def __init__(
        self,
        role: Role | str,
        content: str,
        *,
        predecessor: str | HeadType | None = HEAD,
        node_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        spawned: bool = False,
        spawned_from: str | None = None,
        origin: str | None = None,
        git: GitContext | Mapping[str, Any] | None = None,
        forgotten_at: float | None = None,
    ) -> None:
        if not isinstance(spawned, bool):
            raise InvalidInput(f"spawned must be True or False, not {spawned!r}")
        if spawned_from is not None:
            check_spawned_from(spawned_from)
        if origin is not None and (not isinstance(origin, str) or origin not in ORIGINS):
            raise InvalidInput(f"invalid origin {origin!r}: expected one of {', '.join(sorted(ORIGINS))}")
        checked_role = _check_role(role)
        check_content(content)
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
        where = None if git is None else git_context_of(git)
        if git is not None and where is None:
            raise InvalidInput(f"git must be a GitContext within its bounds (docs/formats.md), not {git!r}")
        if forgotten_at is not None and content:
            raise InvalidInput("a tombstone (forgotten_at) has no content")
        put = object.__setattr__  # frozen: each field is set once, here
        put(self, "role", checked_role)
        put(self, "content", content)
        put(self, "predecessor", predecessor)
        put(self, "node_id", node_id)
        put(self, "metadata", clean)
        put(self, "spawned", spawned)
        put(self, "spawned_from", spawned_from)
        put(self, "origin", origin)
        put(self, "git", where)
        put(self, "forgotten_at", forgotten_at)

    def node_metadata(self) -> dict[str, Any]:
        """The metadata its node file holds: the caller's, with dagmem's own keys for `spawned`, an origin
        other than the role's default, `git` and a tombstone's `forgotten_at` (a new dict each call)."""
        metadata = dict(self.metadata)
        if self.spawned:
            metadata[SPAWNED_KEY] = True
        if self.origin is not None and self.origin != default_origin(self.role.value):
            metadata[ORIGIN_KEY] = self.origin
        if self.git is not None:
            metadata[GIT_KEY] = self.git.to_json()
        if self.forgotten_at is not None:
            metadata[FORGOTTEN_KEY] = self.forgotten_at
        return metadata


def _check_role(role: object) -> Role:
    found = _ROLES.get(role) if isinstance(role, str) else None
    if found is not None:
        return found
    raise InvalidInput(f"invalid role {role!r}: expected one of {', '.join(_ROLE_NAMES)}")
