"""The messages actors exchange. Requests carry a reply in their envelope; notices do not."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..memory.format import Node
from ..memory.outcomes import WriteFailure
from ..memory.policy import Batch
from ..memory.store import Turn
from ..memory.write import WriteOutcome

__all__ = [
    "Append",
    "BatchDone",
    "EndSession",
    "Flush",
    "HeadMoved",
    "Rewind",
    "SessionMessage",
    "SetHead",
    "Tick",
    "TurnAdded",
    "WriteRequest",
]


# -- to a session actor ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Append:
    """Request: append the turn's node (replies with the `Node`)."""

    turn: Turn


@dataclass(frozen=True)
class SetHead:
    """Request: move the head."""

    node_id: str | None


@dataclass(frozen=True)
class Rewind:
    """Request: rewind the head branch back to `node_id` (inclusive)."""

    node_id: str


@dataclass(frozen=True)
class TurnAdded:
    """Request from a host that writes its own node files: this node now exists on disk."""

    node: Node


@dataclass(frozen=True)
class HeadMoved:
    """Request from a host that writes its own meta.json: the head is now `node_id`."""

    node_id: str | None


@dataclass(frozen=True)
class EndSession:
    """Request: boundary-write every live branch; replies when nothing is owed (or it failed)."""


@dataclass(frozen=True)
class Flush:
    """Request: reply when no batch is due or in flight; `force` first starts a boundary write."""

    force: bool = False


@dataclass(frozen=True)
class Tick:
    """Notice from the session's timer: a deadline (idle, abandoned branch, retry) may have passed."""


@dataclass(frozen=True)
class BatchDone:
    """Notice from the session's delivery task: the writer's answer for `batch`."""

    batch: Batch
    outcome: WriteOutcome | None = None
    failure: WriteFailure | None = None
    crashed: str | None = None  # the writer stopped before it answered (why)
    generation: int = field(default=0)


SessionMessage = Append | SetHead | Rewind | TurnAdded | HeadMoved | EndSession | Flush | Tick | BatchDone


# -- to the writer -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteRequest:
    """Request: apply one batch (archive → install → mark); replies with an `Applied`."""

    batch: Batch
