"""The exceptions dagmem raises. `InvalidInput` is public (a `ValueError`); the rest subclass it or
`DagmemError` so a host can catch everything of ours with one clause.

Each class stays beside the code that raises it; this drawing is the one place that shows them all (a test
keeps it complete). Indentation is inheritance, then comes the file the class lives in; "also" names a
class's further bases (a class is drawn once, under its first base).

Exception tree:
    BaseException
        InjectedCrash  memory/faults.py  -- a simulated process death: no `except Exception` may catch it
            Tear  memory/faults.py  -- the death tears the write in progress
    Exception
        DagmemError  memory/errors.py  -- everything of ours
            ExtraMissing  memory/errors.py  (also ImportError)  -- an optional extra is not installed
            InvalidInput  memory/errors.py  (also ValueError)  -- the caller's mistake or a bad file; nothing written
                UnknownSession  memory/errors.py
                UnknownNode  memory/errors.py
                AmbiguousNode  memory/listing.py
                BrokenChain  memory/errors.py
                SessionInvalid  memory/errors.py
                TopicFormatError  memory/format/_topic_model.py
                ForgottenCorrupt  memory/format/_forgotten.py  -- no forget is begun or finished
                BadLine  memory/adopt/_entries.py  -- an importer skips the line
                LLMConfigError  memory/write/_llm_config.py
                ArgumentError  serve/_tools.py  -- an MCP tool's argument
                QueryRefused  memory/recall/_query.py  -- a recall query's argument, named
                OutOfScope  memory/trust/_scope.py  -- a reader asked for what its scope does not allow
                _Duplicate  hooks/_install.py  -- internal: a settings file gives a key twice
                Unfollowable  hooks/_toml_lines.py  -- a Codex config the install does not edit
            ArchiveCorrupt  memory/errors.py
            MemoryOff  memory/errors.py  -- memory=False or DAGMEM_MEMORY=off: nothing opened or created
            TxlogCorrupt  memory/format/_txrecord.py
            UnsafePath  memory/errors.py
            WriteFailure  memory/outcomes.py  -- classified: a reason code, retryable or not
            GitError  memory/store/_git.py
            HomeBusy  memory/workspace/_serving.py
            Damaged  memory/recall/_snapshot.py  (also ValueError)  -- internal: the cache is rebuilt
            _Stale  memory/recall/_index.py  -- internal: the index is rebuilt
            InvalidAnswer  memory/write/_llm_wire.py  -- internal: a repair round
            MailboxClosed  actors/_mailbox.py
                RuntimeClosed  actors/_runtime.py
            ActorStopped  actors/_mailbox.py
            SessionCrashed  actors/_session.py
            RuntimeCrashed  actors/_runtime.py
            RestartIntensityExceeded  supervision/_spec.py
            ClusterError  cluster/_ray.py
                RayMissing  cluster/_ray.py  (also ExtraMissing)
                HomeUnavailable  cluster/_ray.py
            CommandError  cli/_errors.py  -- the command line's own refusal (exit 2)
            PayloadError  hooks/_payload.py  -- internal: a hook logs it and answers nothing
            Changed  hooks/_install_file.py  -- internal: the host wrote its file meanwhile; merged again
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ArchiveCorrupt",
    "BrokenChain",
    "DagmemError",
    "ExtraMissing",
    "InvalidInput",
    "MemoryOff",
    "SessionInvalid",
    "UnknownNode",
    "UnknownSession",
    "UnsafePath",
]


class DagmemError(Exception):
    """Base class of dagmem's own errors."""


class ExtraMissing(DagmemError, ImportError):
    """A feature needs an optional extra (`pip install 'dagmem[<extra>]'`) that is not installed. Also an
    `ImportError`, so code that probes for an optional part with `except ImportError` sees it as missing."""

    code = "EXTRA_MISSING"


class InvalidInput(DagmemError, ValueError):
    """Bad input from the caller or a bad file on disk. Nothing was written."""


class MemoryOff(DagmemError):
    """Memory is switched off (`Runtime.open(..., memory=False)` or `DAGMEM_MEMORY=off`): a memory verb
    refuses before anything is opened or created."""

    code = "MEMORY_OFF"

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what}: memory is off (DAGMEM_MEMORY=off or memory=False); nothing was opened or created"
        )


class UnknownSession(InvalidInput):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"unknown session {session_id!r}")
        self.session_id = session_id


class UnknownNode(InvalidInput):
    def __init__(self, session_id: str, node_id: str) -> None:
        super().__init__(f"session {session_id!r} has no node {node_id!r}")
        self.session_id = session_id
        self.node_id = node_id


class BrokenChain(InvalidInput):
    """A predecessor walk met a cycle or a predecessor that does not exist."""

    def __init__(self, session_id: str, node_id: str, reason: str) -> None:
        super().__init__(f"session {session_id!r}: node {node_id!r}: {reason}")
        self.session_id = session_id
        self.node_id = node_id
        self.reason = reason


class SessionInvalid(InvalidInput):
    """A session on disk is malformed; `path` names the first offending file."""

    def __init__(self, session_id: str, path: Path | None, reason: str) -> None:
        where = f" ({path})" if path is not None else ""
        super().__init__(f"session {session_id!r} is invalid{where}: {reason}")
        self.session_id = session_id
        self.path = path
        self.reason = reason


class ArchiveCorrupt(DagmemError):
    """An evidence archive has valid frames after a damaged one; appends are refused."""

    def __init__(self, path: Path, offset: int, reason: str) -> None:
        super().__init__(f"archive {path} is corrupt at byte {offset}: {reason}")
        self.path = path
        self.offset = offset
        self.reason = reason


class UnsafePath(DagmemError):
    """A path dagmem would write (or must read) is a symbolic link or not a regular file or directory:
    dagmem never writes through a symlink nor opens a FIFO or device. Nothing was written."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path = path
        self.reason = reason
