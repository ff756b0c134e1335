"""The node model and its on-disk naming (DESIGN §2).

A node file is `history/<shard>/<seq:06d>-<r>-<node_id>.json` with `shard = f"{seq // 256:04d}"`:
shards keep every directory small, because git writes a whole tree object per changed directory.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._ids import ID_PATTERN
from ._limits import MAX_SEQ
from ._problems import EpochSeconds

__all__ = [
    "HEAD",
    "MARKER_KEY",
    "ROLE_LETTERS",
    "SPAWNED_KEY",
    "HeadType",
    "Node",
    "Role",
    "node_filename",
    "node_relpath",
    "parse_node_filename",
    "shard_of",
]

SHARD_SIZE: Final = 256
MARKER_KEY: Final = "memory_written_dagmem"
SPAWNED_KEY: Final = "spawned"  # metadata of a node appended with spawned=True: a side branch's turn


class Role(enum.StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


ROLE_LETTERS: Final = {Role.USER: "u", Role.ASSISTANT: "a", Role.TOOL: "t", Role.SYSTEM: "s"}
_LETTER_ROLES: Final = {letter: role for role, letter in ROLE_LETTERS.items()}


class HeadType(enum.Enum):
    """`dagmem.HEAD`: append after the session's current head (which then moves)."""

    HEAD = "HEAD"

    def __repr__(self) -> str:
        return "dagmem.HEAD"


HEAD: Final = HeadType.HEAD


class Node(BaseModel):
    """One message of a session. `predecessor` is the conversation edge (None for a root)."""

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="constants")

    id: str
    seq: int = Field(ge=0, le=MAX_SEQ, strict=True)  # strict: `true` or "3" is no position
    role: Role
    content: str
    predecessor: str | None = None
    created_at: EpochSeconds
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", "predecessor")
    @classmethod
    def _full_match(cls, value: str | None) -> str | None:
        if value is not None and ID_PATTERN.fullmatch(value) is None:
            raise ValueError(f"invalid id {value!r}")
        return value

    def to_json(self) -> bytes:
        # pydantic's serialiser writes what json.dumps(indent=1, ensure_ascii=False) wrote (a float's
        # exponent aside: 1e-7 for 1e-07), ~7x faster; NaN stays NaN in a host's metadata.
        return self.model_dump_json(indent=1).encode() + b"\n"

    @property
    def relpath(self) -> str:
        return node_relpath(self.seq, self.role, self.id)


def shard_of(seq: int) -> str:
    return f"{seq // SHARD_SIZE:04d}"


def node_filename(seq: int, role: Role, node_id: str) -> str:
    return f"{seq:06d}-{ROLE_LETTERS[role]}-{node_id}.json"


def node_relpath(seq: int, role: Role, node_id: str) -> str:
    return f"history/{shard_of(seq)}/{node_filename(seq, role, node_id)}"


_FILENAME = re.compile(r"(?P<seq>\d{6,})-(?P<r>[uats])-(?P<id>[A-Za-z0-9][A-Za-z0-9_-]{0,63})\.json")


def parse_node_filename(name: str) -> tuple[int, Role, str] | None:
    """(seq, role, node_id) from a node file name, or None if the name is not one."""
    match = _FILENAME.fullmatch(name)
    if match is None:
        return None
    return int(match["seq"]), _LETTER_ROLES[match["r"]], match["id"]
