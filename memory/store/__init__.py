"""The session store: one interface (`SessionStore`) over two backends, files on disk (optionally
committed to git) and memory (for the simulator), and `FakeClock`, the clock of runs that must write the
same bytes (the simulator's, the benchmarks', the tests')."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._base import SessionStore as SessionStore
    from ._base import _Backend, _Held
    from ._clock import FakeClock as FakeClock
    from ._file import FileSessionStore as FileSessionStore
    from ._file import _FileBackend
    from ._git import GitError as GitError
    from ._git import SessionGit as SessionGit
    from ._git import _env
    from ._git import rewrite_history as rewrite_history
    from ._memory import MemorySessionStore as MemorySessionStore
    from ._memory import _MemoryBackend
    from ._turns import RESERVED_METADATA_KEYS as RESERVED_METADATA_KEYS
    from ._turns import Turn as Turn

    Backend = _Backend  # the backends' seam: the simulator and the benchmarks wrap them
    Held = _Held
    FileBackend = _FileBackend
    git_env = _env
    MemoryBackend = _MemoryBackend
else:
    # Each name loads its module on first use: a reader of session files needs no git.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "SessionStore": "._base",
            "Backend": "._base:_Backend",
            "Held": "._base:_Held",
            "FakeClock": "._clock",
            "FileSessionStore": "._file",
            "FileBackend": "._file:_FileBackend",
            "GitError": "._git",
            "SessionGit": "._git",
            "git_env": "._git:_env",
            "rewrite_history": "._git",
            "MemorySessionStore": "._memory",
            "MemoryBackend": "._memory:_MemoryBackend",
            "RESERVED_METADATA_KEYS": "._turns",
            "Turn": "._turns",
        },
    )
