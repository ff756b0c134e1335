"""Durable file primitives: atomic rewrites (temp + fsync + rename + directory fsync) and fsynced appends.

Every step passes a named fault site (`faults.hit`) so crash tests can stop the process between any two
of them. `fsync=False` is for the simulator's speed only; the order of operations stays the same.
Temp names end in `.tmp` (never `.json`/`.md`), so a reader globbing for data files never sees one.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from pathlib import Path

from . import faults

__all__ = ["TMP_SUFFIX", "append_bytes", "atomic_write", "atomic_write_many", "fsync_dir", "is_temp_name"]

TMP_SUFFIX = ".tmp"
_counter = itertools.count()


def is_temp_name(name: str) -> bool:
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def _temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}-{next(_counter)}{TMP_SUFFIX}")


def _write_all(fd: int, data: bytes, site: str) -> None:
    try:
        faults.hit(f"{site}:write")
    except faults.Tear as tear:
        os.write(fd, data[: tear.keep])
        raise
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(directory: Path, *, site: str = "dir") -> None:
    faults.hit(f"{site}:dirsync")
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temp(path: Path, data: bytes, *, fsync: bool, site: str) -> Path:
    tmp = _temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        _write_all(fd, data, site)
        if fsync:
            faults.hit(f"{site}:fsync")
            os.fsync(fd)
    except faults.InjectedCrash:
        os.close(fd)  # a 'dead' process leaves its temp file behind, as a real crash would
        raise
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def atomic_write(path: Path, data: bytes, *, fsync: bool = True, site: str = "file") -> None:
    """Replace `path` with `data` so that a reader sees the old bytes or the new, never a mix."""
    atomic_write_many([(path, data)], fsync=fsync, site=site)


def atomic_write_many(items: Iterable[tuple[Path, bytes]], *, fsync: bool = True, site: str = "file") -> None:
    """Atomically replace several files; each is atomic on its own, and each directory is fsynced once."""
    directories: dict[Path, None] = {}
    for path, data in items:
        tmp = _write_temp(path, data, fsync=fsync, site=site)
        faults.hit(f"{site}:rename")
        os.replace(tmp, path)
        directories[path.parent] = None
    if fsync:
        for directory in directories:
            fsync_dir(directory, site=site)


def append_bytes(path: Path, data: bytes, *, fsync: bool = True, site: str = "append") -> int:
    """Append `data` to `path` (created if missing) and fsync it; returns the offset it was written at."""
    created = not path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        offset = os.lseek(fd, 0, os.SEEK_END)
        _write_all(fd, data, site)
        if fsync:
            faults.hit(f"{site}:fsync")
            os.fsync(fd)
    finally:
        os.close(fd)
    if created and fsync:
        fsync_dir(path.parent, site=site)
    return offset
