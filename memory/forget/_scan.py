"""Find copies of forgotten texts anywhere under a home, knowing only their hashes.

Every regular file is read as bytes (SQLite pages, numpy arrays, the txlog, archives, topics alike); the
members of zip files are read decompressed; every object of every git repository (loose and packed,
trees, commits and blobs) is read decompressed through `git cat-file --batch-all-objects`; file names
count too. A polynomial hash of every 8-byte window is computed with numpy, chunk by chunk, in one pass
whatever the number and lengths of the texts; a window whose hash is a text's head is confirmed by the
sha256 of the bytes from it. Nothing is
written: the scan holds the bytes it reads, never a forgotten text (it has none)."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..format import TextHash
from ..store import git_env
from ._forms import HEAD_MASK, MIN_BYTES, P, roll

__all__ = ["Copy", "Needles", "scan_home"]

_CHUNK = 1 << 21


@dataclass(frozen=True)
class Copy:
    where: str  # a path under the home, or "<repo> object <oid>"
    offset: int

    def __str__(self) -> str:
        return f"{self.where} at byte {self.offset}"


class Needles:
    """The hashes to look for: a window of `MIN_BYTES` whose rolling hash's low 32 bits are a head is a
    candidate; it is one of the texts if the bytes from it, as long as one with that head, have its sha256."""

    def __init__(self, texts: Iterable[TextHash]) -> None:
        by_head: dict[int, set[tuple[int, str]]] = defaultdict(set)
        for text in texts:
            by_head[text.head].add((text.size, text.sha256))
        self.by_head = dict(by_head)
        self.heads = np.array(sorted(self.by_head), dtype=np.uint64)

    def __bool__(self) -> bool:
        return bool(self.by_head)

    def find(self, data: bytes) -> int | None:
        """The offset of the first window of `data` that is one of the texts, or None."""
        if not self.by_head or len(data) < MIN_BYTES:
            return None
        for start in range(0, len(data), _CHUNK):
            chunk = data[start : start + _CHUNK + MIN_BYTES - 1]
            for at in self._candidates(chunk):
                i = start + at
                for size, digest in self.by_head[int(self._head_of(data, i))]:
                    if hashlib.sha256(data[i : i + size]).hexdigest() == digest:
                        return i
        return None

    @staticmethod
    def _head_of(data: bytes, i: int) -> int:
        return roll(data[i : i + MIN_BYTES]) & HEAD_MASK

    def _candidates(self, chunk: bytes) -> list[int]:
        """Offsets in `chunk` of the windows whose head is one of ours, in order."""
        n = len(chunk) - MIN_BYTES + 1
        if n <= 0:
            return []
        values = np.frombuffer(chunk, dtype=np.uint8).astype(np.uint64)
        with np.errstate(over="ignore"):
            h = np.zeros(n, dtype=np.uint64)
            for k in range(MIN_BYTES):  # sum(b[i + k] * P**k): eight vector steps, whatever the texts
                h += values[k : k + n] * np.uint64(pow(P, k, 1 << 64))
        h &= np.uint64(HEAD_MASK)
        return [int(i) for i in np.flatnonzero(np.isin(h, self.heads))]


def _git_objects(git_dir: Path) -> Iterator[tuple[str, bytes]]:
    """(oid, decompressed body) of every object of a repository, loose or packed."""
    base = ["git", f"--git-dir={git_dir}", "cat-file", "--batch-all-objects"]
    listing = subprocess.run(
        [*base, "--batch-check=%(objectname)"], capture_output=True, env=git_env(), check=False
    )
    if listing.returncode != 0 or not listing.stdout:
        return
    with subprocess.Popen(
        [*base, "--batch", "--unordered"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, env=git_env()
    ) as proc:
        assert proc.stdout is not None
        out = proc.stdout  # buffered: readline and read(n) over the pipe
        while header := out.readline():
            oid, _kind, size = header.split()
            body = out.read(int(size))
            out.read(1)
            yield oid.decode(), body


def _files(home: Path) -> Iterator[Path]:
    for directory, dirs, names in os.walk(home):
        dirs.sort()
        for name in sorted(names):
            yield Path(directory) / name


def scan_home(home: Path, needles: Needles) -> list[Copy]:
    """Every place under `home` that still holds one of the texts (at most one copy named per file or
    object)."""
    copies: list[Copy] = []
    if not needles:
        return copies
    home = Path(home)
    for path in _files(home):
        rel = path.relative_to(home).as_posix()
        name_at = needles.find(rel.encode())
        if name_at is not None:
            copies.append(Copy(f"{rel} (its name)", name_at))
        if path.is_symlink() or not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        at = needles.find(data)
        if at is not None:
            copies.append(Copy(rel, at))
        if zipfile.is_zipfile(io.BytesIO(data)):
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for member in archive.namelist():
                    at = needles.find(archive.read(member))
                    if at is not None:
                        copies.append(Copy(f"{rel}:{member}", at))
    for git_dir in sorted(p.parent for p in home.rglob("HEAD") if (p.parent / "objects").is_dir()):
        repo = git_dir.relative_to(home).as_posix()
        for oid, body in _git_objects(git_dir):
            at = needles.find(body)
            if at is not None:
                copies.append(Copy(f"{repo} object {oid}", at))
    return copies
