"""The messages actors exchange. Requests carry a reply in their envelope; notices do not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..memory.format import HeadType, Node, Role
from ..memory.outcomes import WriteFailure
from ..memory.policy import Batch
from ..memory.workspace import Workspace
from ..memory.write import WriteOutcome

__all__ = [
    "Append",
    "BatchDone",
    "EndSession",
    "Flush",
    "HeadMoved",
    "Rewind",
    "RunOnWorkspace",
    "SessionMessage",
    "SetHead",
    "Tick",
    "TurnAdded",
    "WriteRequest",
    "WriterMessage",
]


# -- to a session actor ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Append:
    """Request: append a node (replies with the `Node`)."""

    role: Role | str
    content: str
    predecessor: str | HeadType | None
    node_id: str | None = None
    metadata: dict[str, Any] | None = None
    spawned: bool = False
    spawned_from: str | None = None
    origin: str | None = None
    git: object = None  # a `format.GitContext`: where in git it was said


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


@dataclass(frozen=True)
class RunOnWorkspace:
    """Request: run `job` on the writer's open workspace between two batches (a reorganisation, a forget);
    replies with what it returns, or fails with what it raised."""

    job: Callable[[Workspace], object]


WriterMessage = WriteRequest | RunOnWorkspace
