"""dagmem: long-term memory for agent conversations that branch.

Layering, bottom up: `dagmem.memory` is the domain (session store, DAG walks, archive, topics,
transactions, the write, recall, importers), mostly synchronous; `dagmem.supervision` is OTP-style
supervision on anyio; `dagmem.actors` runs one actor per session and one writer per workspace on top of
both. Over the runtime: `dagmem.cluster` (homes served by Ray actors, the `ray` extra), `dagmem.serve` (the
MCP server, the `mcp` extra), `dagmem.view` (the HTML page, read-only), `dagmem.sim` (the whole stack in
virtual time), `dagmem.bench` (the benchmarks) and `dagmem.cli` (the `dagmem` command). Beside the
runtime, on the domain only: `dagmem.hooks` (the agent hosts' hooks and their installs). This module
re-exports the public API; everything else is private.
"""

from __future__ import annotations

from . import _lazy
from ._version import __version__ as __version__

TYPE_CHECKING = False  # not `typing`'s: importing typing would cost every fresh process about 2 ms
if TYPE_CHECKING:
    from .actors import EventHandler as EventHandler
    from .actors import Runtime as Runtime
    from .actors import RuntimeClosed as RuntimeClosed
    from .actors import RuntimeConfig as RuntimeConfig
    from .actors import RuntimeCrashed as RuntimeCrashed
    from .actors import RuntimeStatus as RuntimeStatus
    from .actors import SessionCrashed as SessionCrashed
    from .memory.currency import Status as Status
    from .memory.durable import LastFailure as LastFailure
    from .memory.errors import ArchiveCorrupt as ArchiveCorrupt
    from .memory.errors import DagmemError as DagmemError
    from .memory.errors import InvalidInput as InvalidInput
    from .memory.errors import MemoryOff as MemoryOff
    from .memory.errors import SessionInvalid as SessionInvalid
    from .memory.errors import UnknownNode as UnknownNode
    from .memory.errors import UnknownSession as UnknownSession
    from .memory.forget import ForgetReport as ForgetReport
    from .memory.format import HEAD as HEAD
    from .memory.format import ArchiveRecord as ArchiveRecord
    from .memory.format import GitContext as GitContext
    from .memory.format import Node as Node
    from .memory.format import Role as Role
    from .memory.format import SessionMeta as SessionMeta
    from .memory.format import SessionSnapshot as SessionSnapshot
    from .memory.format import Tip as Tip
    from .memory.format import ToolEvidence as ToolEvidence
    from .memory.format import count_tokens as count_tokens
    from .memory.outcomes import ReasonCode as ReasonCode
    from .memory.outcomes import WriteFailure as WriteFailure
    from .memory.recall import Evidence as Evidence
    from .memory.recall import Hit as Hit
    from .memory.recall import RecallQuery as RecallQuery
    from .memory.recall import render_context as render_context
    from .memory.store import FileSessionStore as FileSessionStore
    from .memory.store import GitError as GitError
    from .memory.store import MemorySessionStore as MemorySessionStore
    from .memory.store import SessionStore as SessionStore
    from .memory.store import Turn as Turn
    from .memory.trust import OutOfScope as OutOfScope
    from .memory.trust import Scope as Scope
    from .memory.trust import load_scope as load_scope
    from .memory.workspace import HomeBusy as HomeBusy
    from .memory.write import BatchInput as BatchInput
    from .memory.write import Distiller as Distiller
    from .memory.write import Edits as Edits
    from .memory.write import ExtractiveDistiller as ExtractiveDistiller
    from .memory.write import TopicReader as TopicReader
    from .supervision import RestartIntensityExceeded as RestartIntensityExceeded
    from .supervision import SupervisorEvent as SupervisorEvent
else:
    # Each name loads its module on first use, so `import dagmem` (and `dagmem --version`) loads none of
    # numpy, WordLlama, tiktoken, pydantic, anyio: a process pays for the surfaces it touches.
    __getattr__, __dir__, __all__ = _lazy.lazy(
        __name__,
        globals(),
        {
            "EventHandler": ".actors",
            "Runtime": ".actors",
            "RuntimeClosed": ".actors",
            "RuntimeConfig": ".actors",
            "RuntimeCrashed": ".actors",
            "RuntimeStatus": ".actors",
            "SessionCrashed": ".actors",
            "Status": ".memory.currency",
            "LastFailure": ".memory.durable",
            "ArchiveCorrupt": ".memory.errors",
            "DagmemError": ".memory.errors",
            "InvalidInput": ".memory.errors",
            "MemoryOff": ".memory.errors",
            "SessionInvalid": ".memory.errors",
            "UnknownNode": ".memory.errors",
            "UnknownSession": ".memory.errors",
            "ForgetReport": ".memory.forget",
            "HEAD": ".memory.format",
            "ArchiveRecord": ".memory.format",
            "GitContext": ".memory.format",
            "Node": ".memory.format",
            "Role": ".memory.format",
            "SessionMeta": ".memory.format",
            "SessionSnapshot": ".memory.format",
            "Tip": ".memory.format",
            "ToolEvidence": ".memory.format",
            "count_tokens": ".memory.format",
            "ReasonCode": ".memory.outcomes",
            "WriteFailure": ".memory.outcomes",
            "Evidence": ".memory.recall",
            "Hit": ".memory.recall",
            "RecallQuery": ".memory.recall",
            "render_context": ".memory.recall",
            "FileSessionStore": ".memory.store",
            "GitError": ".memory.store",
            "MemorySessionStore": ".memory.store",
            "SessionStore": ".memory.store",
            "Turn": ".memory.store",
            "OutOfScope": ".memory.trust",
            "Scope": ".memory.trust",
            "load_scope": ".memory.trust",
            "HomeBusy": ".memory.workspace",
            "BatchInput": ".memory.write",
            "Distiller": ".memory.write",
            "Edits": ".memory.write",
            "ExtractiveDistiller": ".memory.write",
            "TopicReader": ".memory.write",
            "RestartIntensityExceeded": ".supervision",
            "SupervisorEvent": ".supervision",
        },
    )

del TYPE_CHECKING  # not a public name
