"""The session store: one interface (`SessionStore`) over two backends, files on disk (optionally
committed to git) and memory (for the simulator)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._base import SessionStore as SessionStore
    from ._base import _Backend as Backend  # the backends' seam: the simulator and the benchmarks wrap them
    from ._base import _Held as Held
    from ._file import FileSessionStore as FileSessionStore
    from ._file import _FileBackend as FileBackend
    from ._git import GitError as GitError
    from ._git import SessionGit as SessionGit
    from ._git import _env as git_env
    from ._git import rewrite_history as rewrite_history
    from ._memory import MemorySessionStore as MemorySessionStore
    from ._memory import _MemoryBackend as MemoryBackend
    from ._turns import RESERVED_METADATA_KEYS as RESERVED_METADATA_KEYS
    from ._turns import Turn as Turn

__all__ = [
    "RESERVED_METADATA_KEYS",
    "Backend",
    "FileBackend",
    "FileSessionStore",
    "GitError",
    "Held",
    "MemoryBackend",
    "MemorySessionStore",
    "SessionGit",
    "SessionStore",
    "Turn",
    "git_env",
    "rewrite_history",
]

# Each name loads its module on first use: a reader of session files needs no git.
__getattr__, __dir__ = lazy(
    __name__,
    globals(),
    {
        "Backend": "._base:_Backend",
        "FileBackend": "._file:_FileBackend",
        "FileSessionStore": "._file",
        "GitError": "._git",
        "Held": "._base:_Held",
        "MemoryBackend": "._memory:_MemoryBackend",
        "MemorySessionStore": "._memory",
        "RESERVED_METADATA_KEYS": "._turns",
        "SessionGit": "._git",
        "SessionStore": "._base",
        "Turn": "._turns",
        "git_env": "._git:_env",
        "rewrite_history": "._git",
    },
)
