"""The messages actors exchange, each named as what it asks (`Append`, `ReloadHead`, `Wake`): requests carry a
reply in their envelope, notices do not. What the session actor then feeds its machine are events, named as
what happened (`memory.policy.machine`: `NodeAdded`, `HeadMoved`, `TimerFired`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..memory.format import Node
from ..memory.outcomes import WriteFailure
from ..memory.policy import Batch
from ..memory.store import Turn
from ..memory.workspace import Workspace
from ..memory.write import WriteOutcome

__all__ = [
    "AdoptTurn",
    "Append",
    "BatchDone",
    "EndSession",
    "Flush",
    "ReloadHead",
    "Rewind",
    "RunOnWorkspace",
    "SessionMessage",
    "SetHead",
    "Wake",
    "WriteBatch",
    "WriterMessage",
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
class AdoptTurn:
    """Request from a host that writes its own node files: take this node, now on disk, as appended."""

    node: Node


@dataclass(frozen=True)
class ReloadHead:
    """Request from a host that writes its own meta.json: read the head again (it is now `node_id`)."""

    node_id: str | None


@dataclass(frozen=True)
class EndSession:
    """Request: boundary-write every live branch; replies when nothing is owed (or it failed)."""


@dataclass(frozen=True)
class Flush:
    """Request: reply when no batch is due or in flight; `force` first starts a boundary write."""

    force: bool = False


@dataclass(frozen=True)
class Wake:
    """Notice from the session's timer: wake up, a deadline (idle, abandoned branch, retry) may have passed."""


@dataclass(frozen=True)
class BatchDone:
    """Notice from the session's delivery task: the writer's answer for `batch`."""

    batch: Batch
    outcome: WriteOutcome | None = None
    failure: WriteFailure | None = None
    crashed: str | None = None  # the writer stopped before it answered (why)
    generation: int = field(default=0)


SessionMessage = Append | SetHead | Rewind | AdoptTurn | ReloadHead | EndSession | Flush | Wake | BatchDone


# -- to the writer -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteBatch:
    """Request: apply one batch (archive → install → mark); replies with an `Applied`."""

    batch: Batch


@dataclass(frozen=True)
class RunOnWorkspace:
    """Request: run `job` on the writer's open workspace between two batches (a reorganisation, a forget);
    replies with what it returns, or fails with what it raised."""

    job: Callable[[Workspace], object]


WriterMessage = WriteBatch | RunOnWorkspace
