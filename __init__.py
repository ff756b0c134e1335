"""dagmem: long-term memory for agent conversations that branch.

Layering, bottom up: `dagmem.memory` is the domain (session store, DAG walks, archive, topics,
transactions, the write), mostly synchronous; `dagmem.supervision` is OTP-style supervision on anyio;
`dagmem.actors` runs one actor per session and one writer per workspace on top of both; `dagmem.sim`
drives the whole stack in virtual time. This module re-exports the public API; everything else is private.
"""

from __future__ import annotations

from .actors import Runtime as Runtime
from .actors import RuntimeCrashed as RuntimeCrashed
from .actors import RuntimeStatus as RuntimeStatus
from .memory.errors import DagmemError as DagmemError
from .memory.errors import InvalidInput as InvalidInput
from .memory.errors import SessionInvalid as SessionInvalid
from .memory.format import HEAD as HEAD
from .memory.format import ArchiveRecord as ArchiveRecord
from .memory.format import Node as Node
from .memory.format import Role as Role
from .memory.format import SessionMeta as SessionMeta
from .memory.format import SessionSnapshot as SessionSnapshot
from .memory.format import Tip as Tip
from .memory.format import count_tokens as count_tokens
from .memory.outcomes import ReasonCode as ReasonCode
from .memory.outcomes import WriteFailure as WriteFailure
from .memory.store import FileSessionStore as FileSessionStore
from .memory.store import MemorySessionStore as MemorySessionStore
from .memory.store import SessionStore as SessionStore
from .memory.write import BatchInput as BatchInput
from .memory.write import Distiller as Distiller
from .memory.write import Edits as Edits
from .memory.write import ExtractiveDistiller as ExtractiveDistiller
from .memory.write import TopicReader as TopicReader

__version__ = "0.1.0"

__all__ = [
    "HEAD",
    "ArchiveRecord",
    "BatchInput",
    "DagmemError",
    "Distiller",
    "Edits",
    "ExtractiveDistiller",
    "FileSessionStore",
    "InvalidInput",
    "MemorySessionStore",
    "Node",
    "ReasonCode",
    "Role",
    "Runtime",
    "RuntimeCrashed",
    "RuntimeStatus",
    "SessionInvalid",
    "SessionMeta",
    "SessionSnapshot",
    "SessionStore",
    "Tip",
    "TopicReader",
    "WriteFailure",
    "count_tokens",
]
