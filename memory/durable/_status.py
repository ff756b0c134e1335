"""`.dagmem/status.json`: the writer's last outcome (DESIGN §2). Written by the writer only; it never
holds provider text or secrets, only the closed reason code."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import UnsafePath
from ..format import EpochSeconds, validation_problem
from ..outcomes import ReasonCode
from ._atomic import atomic_write
from ._safe import read_regular

__all__ = ["LastFailure", "WriterStatus", "load_status", "save_status"]

log = logging.getLogger("dagmem.status")


class LastFailure(BaseModel):
    model_config = ConfigDict(frozen=True)
    at: EpochSeconds
    reason_code: ReasonCode
    retryable: bool


class WriterStatus(BaseModel):
    model_config = ConfigDict(frozen=True)
    version: Literal[1] = 1
    last_outcome: Literal["success", "failure"] | None = None
    last_success_at: EpochSeconds | None = None
    last_failure: LastFailure | None = None

    def succeeded(self, at: float) -> WriterStatus:
        return self.model_copy(update={"last_outcome": "success", "last_success_at": at})

    def failed(self, at: float, code: ReasonCode, retryable: bool) -> WriterStatus:
        failure = LastFailure(at=at, reason_code=code, retryable=retryable)
        return self.model_copy(update={"last_outcome": "failure", "last_failure": failure})

    def cleared(self) -> WriterStatus:
        """No failure outstanding (a clean pass over every session): the last outcome is the last success."""
        outcome = None if self.last_success_at is None else "success"
        return self.model_copy(update={"last_outcome": outcome, "last_failure": None})


def load_status(path: Path) -> WriterStatus:
    """The status on disk; a missing or unreadable file reads as 'nothing recorded yet'."""
    try:
        data = read_regular(path)  # never opens a FIFO or follows a symlink
        return WriterStatus() if data is None else WriterStatus.model_validate_json(data)
    except ValidationError as exc:
        log.warning("ignoring unreadable %s: %s", path, validation_problem(exc))
        return WriterStatus()
    except (OSError, UnsafePath) as exc:
        log.warning("ignoring unreadable %s: %s", path, exc)
        return WriterStatus()


def save_status(path: Path, status: WriterStatus, *, fsync: bool = True) -> None:
    atomic_write(path, (status.model_dump_json(indent=1) + "\n").encode(), fsync=fsync, site="status")
