"""The session store: one interface (`SessionStore`) over two backends, files on disk (optionally
committed to git) and memory (for the simulator)."""

from __future__ import annotations

from ._base import RESERVED_METADATA_KEYS as RESERVED_METADATA_KEYS
from ._base import SessionStore as SessionStore
from ._base import check_append_args as check_append_args
from ._file import FileSessionStore as FileSessionStore
from ._git import GitError as GitError
from ._git import SessionGit as SessionGit
from ._memory import MemorySessionStore as MemorySessionStore

__all__ = [
    "RESERVED_METADATA_KEYS",
    "FileSessionStore",
    "GitError",
    "MemorySessionStore",
    "SessionGit",
    "SessionStore",
    "check_append_args",
]
