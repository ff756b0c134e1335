"""The session store: one interface (`SessionStore`) over two backends, files on disk (optionally
committed to git) and memory (for the simulator)."""

from __future__ import annotations

from ._base import SessionStore as SessionStore
from ._file import FileSessionStore as FileSessionStore
from ._git import GitError as GitError
from ._git import SessionGit as SessionGit
from ._memory import MemorySessionStore as MemorySessionStore

__all__ = ["FileSessionStore", "GitError", "MemorySessionStore", "SessionGit", "SessionStore"]
