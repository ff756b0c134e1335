"""Outcomes of a write. Success is silent; a failure is a `(reason_code, retryable)` pair from a closed
enum, stable and free of provider text, so it can be persisted and acted on. Unknown errors are not
retryable."""

from __future__ import annotations

import enum
import errno
import sqlite3

from .errors import ArchiveCorrupt, DagmemError, InvalidInput, UnsafePath
from .faults import InjectedCrash

__all__ = ["RETRYABLE", "ReasonCode", "WriteFailure", "classify"]


class ReasonCode(enum.StrEnum):
    # input and state
    INVALID_INPUT = "INVALID_INPUT"  # a session (or a call) is malformed; names the session and file
    ARCHIVE_CORRUPT = "ARCHIVE_CORRUPT"  # valid frames after a damaged one; appends refused
    WORKSPACE_INVALID = "WORKSPACE_INVALID"  # e.g. an unreadable workspace-id file
    TXLOG_CORRUPT = "TXLOG_CORRUPT"  # a txlog line is not a committed transaction's; the workspace is refused
    # the transaction
    CONCURRENT_UPDATE = "CONCURRENT_UPDATE"  # lock busy, or files changed since they were distilled
    INVALID_TOPIC_FORMAT = "INVALID_TOPIC_FORMAT"  # an edit failed validation (the edit is rejected)
    PATH_OUTSIDE_WORKSPACE = "PATH_OUTSIDE_WORKSPACE"  # an edit touched something other than topics/*.md
    WRITER_NO_PROGRESS = "WRITER_NO_PROGRESS"  # the distiller's edits changed no file
    # the distiller and its model
    DISTILLER_FAILED = "DISTILLER_FAILED"  # the distiller raised something unclassified
    MODEL_TRANSPORT = "MODEL_TRANSPORT"
    MODEL_TIMEOUT = "MODEL_TIMEOUT"
    MODEL_RATE_LIMIT = "MODEL_RATE_LIMIT"
    MODEL_PROVIDER_INTERNAL = "MODEL_PROVIDER_INTERNAL"
    MODEL_AUTHENTICATION = "MODEL_AUTHENTICATION"  # 401: the API key is missing or wrong
    MODEL_AUTHORIZATION = "MODEL_AUTHORIZATION"  # 403: the key may not use this model or endpoint
    MODEL_INVALID_REQUEST = "MODEL_INVALID_REQUEST"
    MODEL_CONTEXT_LENGTH = "MODEL_CONTEXT_LENGTH"
    MODEL_CONTENT_POLICY = "MODEL_CONTENT_POLICY"  # the provider refused the batch's content
    MODEL_BAD_RESPONSE = "MODEL_BAD_RESPONSE"  # malformed or invalid edits, even after the repair round
    # the machine
    DISK_FULL = "DISK_FULL"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    IO_ERROR = "IO_ERROR"
    GIT_FAILED = "GIT_FAILED"
    # the runtime
    WRITER_CRASHED = "WRITER_CRASHED"  # the writer actor died mid-batch; it restarts and the batch is owed
    # anything else
    WRITER_FAILURE_UNKNOWN = "WRITER_FAILURE_UNKNOWN"


RETRYABLE = frozenset(
    {
        ReasonCode.CONCURRENT_UPDATE,
        ReasonCode.MODEL_TRANSPORT,
        ReasonCode.MODEL_TIMEOUT,
        ReasonCode.MODEL_RATE_LIMIT,
        ReasonCode.MODEL_PROVIDER_INTERNAL,
        ReasonCode.DISK_FULL,
        ReasonCode.IO_ERROR,
        ReasonCode.WRITER_CRASHED,
    }
)


class WriteFailure(DagmemError):
    """A write did not happen. `detail` is for logs; only `code` and `retryable` are persisted.
    `retry_after` (seconds) is the earliest retry the cause asks for (a model server's `Retry-After`)."""

    def __init__(
        self,
        code: ReasonCode,
        detail: str = "",
        *,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code}: {detail}" if detail else str(code))
        self.code = code
        self.detail = detail
        self.retryable = code in RETRYABLE if retryable is None else retryable
        self.retry_after = retry_after


def classify(exc: BaseException) -> WriteFailure:
    """Map any exception raised by a write to a `WriteFailure`. A simulated crash is never classified:
    it must keep propagating like the process death it models."""
    if isinstance(exc, InjectedCrash):
        raise exc
    if isinstance(exc, WriteFailure):
        return exc
    if isinstance(exc, UnsafePath):
        return WriteFailure(ReasonCode.WORKSPACE_INVALID, str(exc))
    if isinstance(exc, ArchiveCorrupt):
        return WriteFailure(ReasonCode.ARCHIVE_CORRUPT, str(exc))
    if isinstance(exc, InvalidInput):
        return WriteFailure(ReasonCode.INVALID_INPUT, str(exc))
    code = getattr(exc, "code", None)
    if isinstance(exc, DagmemError) and isinstance(code, ReasonCode):  # an error that names its own code
        return WriteFailure(code, str(exc))
    if isinstance(exc, sqlite3.Error):  # the index cache; SQLite's errors are not OSErrors
        text = str(exc).lower()
        if "full" in text:  # "database or disk is full"
            return WriteFailure(ReasonCode.DISK_FULL, str(exc))
        if "readonly" in text or "read-only" in text or "unable to open" in text:
            return WriteFailure(ReasonCode.PERMISSION_DENIED, str(exc))
        if "locked" in text or "busy" in text:
            return WriteFailure(ReasonCode.CONCURRENT_UPDATE, str(exc))
        return WriteFailure(ReasonCode.IO_ERROR, f"{type(exc).__name__}: {exc}")
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return WriteFailure(ReasonCode.DISK_FULL, str(exc))
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return WriteFailure(ReasonCode.PERMISSION_DENIED, str(exc))
        return WriteFailure(ReasonCode.IO_ERROR, str(exc))
    return WriteFailure(ReasonCode.WRITER_FAILURE_UNKNOWN, f"{type(exc).__name__}: {exc}")
