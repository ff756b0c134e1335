"""dagmem: long-term memory for agent conversations that branch.

Layering, bottom up: `dagmem.memory` is the domain (session store, DAG walks, archive, topics,
transactions, the write), mostly synchronous; `dagmem.supervision` is OTP-style supervision on anyio;
`dagmem.actors` runs one actor per session and one writer per workspace on top of both; `dagmem.sim`
drives the whole stack in virtual time. This module re-exports the public API; everything else is private.
"""

from __future__ import annotations

from .actors.runtime import Runtime as Runtime
from .actors.runtime import RuntimeCrashed as RuntimeCrashed
from .actors.runtime import RuntimeStatus as RuntimeStatus
from .memory.archive import ArchiveRecord as ArchiveRecord
from .memory.distill import BatchInput as BatchInput
from .memory.distill import Distiller as Distiller
from .memory.distill import Edits as Edits
from .memory.distill import ExtractiveDistiller as ExtractiveDistiller
from .memory.distill import TopicReader as TopicReader
from .memory.errors import DagmemError as DagmemError
from .memory.errors import InvalidInput as InvalidInput
from .memory.errors import SessionInvalid as SessionInvalid
from .memory.node import HEAD as HEAD
from .memory.node import Node as Node
from .memory.node import Role as Role
from .memory.outcomes import ReasonCode as ReasonCode
from .memory.outcomes import WriteFailure as WriteFailure
from .memory.session import SessionMeta as SessionMeta
from .memory.session import SessionSnapshot as SessionSnapshot
from .memory.session import Tip as Tip
from .memory.store import FileSessionStore as FileSessionStore
from .memory.store import MemorySessionStore as MemorySessionStore
from .memory.store import SessionStore as SessionStore
from .memory.tokens import count_tokens as count_tokens

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
