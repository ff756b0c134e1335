"""`FileSessionStore`: sessions as sharded node files on disk (DESIGN §2), optionally committed to git."""

from __future__ import annotations

import time
from pathlib import Path

from ..durable import atomic_write_many, fsync_dir, is_temp_name, sweep_temp
from ._base import Clock, SessionStore
from ._git import SessionGit

__all__ = ["FileSessionStore"]


class _FileBackend:
    def __init__(self, home: Path, *, git: bool, fsync: bool) -> None:
        self.root = home / "sessions"
        self.git = git
        self.fsync = fsync
        self._gits: dict[str, SessionGit] = {}  # one per session: each keeps its last commit's trees

    def path(self, sid: str, relpath: str = "") -> Path:
        base = self.root / sid
        return base / relpath if relpath else base

    def sessions(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return [
            entry.name for entry in self.root.iterdir() if entry.is_dir() and not entry.name.startswith(".")
        ]

    def exists(self, sid: str) -> bool:
        return (self.root / sid).is_dir()

    def read(self, sid: str, relpath: str) -> bytes | None:
        try:
            return (self.root / sid / relpath).read_bytes()
        except FileNotFoundError:
            return None

    def history(self, sid: str) -> list[str]:
        history = self.root / sid / "history"
        if not history.is_dir():
            return []
        found: list[str] = []
        for shard in sorted(history.iterdir()):
            if is_temp_name(shard.name) or shard.name.startswith("."):
                continue
            if not shard.is_dir():
                found.append(f"history/{shard.name}")
                continue
            for entry in sorted(shard.iterdir()):
                if entry.name.startswith("."):
                    continue  # temp files of an interrupted write, editor dotfiles
                found.append(f"history/{shard.name}/{entry.name}")
        return found

    def write(self, sid: str, items: list[tuple[str, bytes]], site: str) -> None:
        base = self.root / sid
        created: list[Path] = []
        for relpath, _ in items:
            parent = (base / relpath).parent
            if not parent.is_dir():
                for missing in reversed([parent, *parent.parents]):
                    if not missing.exists():
                        try:
                            missing.mkdir()
                        except FileExistsError:
                            continue  # another session's first append made it (a shared parent)
                        created.append(missing)
        atomic_write_many([(base / relpath, data) for relpath, data in items], fsync=self.fsync, site=site)
        if self.fsync:
            # New directories must survive a power loss too: fsync each one's parent.
            for directory in dict.fromkeys(path.parent for path in created):
                fsync_dir(directory, site=site)

    def commit(self, sid: str, relpaths: list[str], message: str) -> None:
        if self.git:
            repo = self._gits.get(sid)
            if repo is None:
                repo = self._gits.setdefault(sid, SessionGit(self.root / sid, fsync=self.fsync))
            repo.commit(relpaths, message)

    def sweep(self, sid: str) -> list[Path]:
        base = self.root / sid
        removed = sweep_temp(base)
        history = base / "history"
        removed.extend(sweep_temp(history))
        if history.is_dir():
            for shard in sorted(history.iterdir()):
                if shard.is_dir() and not shard.name.startswith("."):
                    removed.extend(sweep_temp(shard))
        return removed


class FileSessionStore(SessionStore):
    """Sessions under `<home>/sessions/`, durable on disk; `git=True` commits each turn per session."""

    blocking = True

    def __init__(
        self,
        home: Path | str,
        *,
        git: bool = False,
        fsync: bool = True,
        clock: Clock = time.time,
        read_only: bool = False,
    ) -> None:
        """`read_only` (for `status` and `verify`): never sweep dead writers' temp files on first use."""
        self.home = Path(home)
        super().__init__(_FileBackend(self.home, git=git, fsync=fsync), clock=clock)
        self._read_only = read_only
