"""Find copies of forgotten texts anywhere under a home, knowing only their hashes.

Every regular file is read as bytes (SQLite pages, numpy arrays, the txlog, archives, topics alike); the
members of zip files are read decompressed; every object of every git repository (loose and packed,
trees, commits and blobs) is read decompressed through `git cat-file --batch-all-objects`; file names
count too. For each length among the hashes, a polynomial rolling hash of every window is computed with
numpy, chunk by chunk, and a window whose rolling hash matches is confirmed by its sha256. Nothing is
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
from ._forms import P

__all__ = ["Copy", "Needles", "scan_home"]

_CHUNK = 1 << 21
_INVERSE = pow(P, -1, 1 << 64)


@dataclass(frozen=True)
class Copy:
    where: str  # a path under the home, or "<repo> object <oid>"
    offset: int

    def __str__(self) -> str:
        return f"{self.where} at byte {self.offset}"


class Needles:
    """The hashes to look for, grouped by length."""

    def __init__(self, texts: Iterable[TextHash]) -> None:
        by_size: dict[int, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        for text in texts:
            by_size[text.size][text.roll].add(text.sha256)
        self.by_size = {size: dict(rolls) for size, rolls in by_size.items()}
        self.rolls = {size: np.array(sorted(rolls), dtype=np.uint64) for size, rolls in self.by_size.items()}
        self.longest = max(self.by_size, default=0)

    def __bool__(self) -> bool:
        return bool(self.by_size)

    def find(self, data: bytes) -> int | None:
        """The offset of the first window of `data` that is one of the texts, or None."""
        if not self.by_size or len(data) < min(self.by_size):
            return None
        step = _CHUNK
        for start in range(0, len(data), step):
            chunk = data[start : start + step + self.longest - 1]
            found = self._find_chunk(chunk, limit=step)
            if found is not None:
                return start + found
        return None

    def _find_chunk(self, chunk: bytes, *, limit: int) -> int | None:
        n = len(chunk)
        values = np.frombuffer(chunk, dtype=np.uint8).astype(np.uint64)
        powers = np.empty(n, dtype=np.uint64)
        powers[0] = 1
        powers[1:] = np.uint64(P)
        inverse = np.empty(n, dtype=np.uint64)
        inverse[0] = 1
        inverse[1:] = np.uint64(_INVERSE)
        with np.errstate(over="ignore"):
            powers = np.multiply.accumulate(powers, dtype=np.uint64)
            inverse = np.multiply.accumulate(inverse, dtype=np.uint64)
            prefix = np.zeros(n + 1, dtype=np.uint64)
            np.cumsum(values * powers, dtype=np.uint64, out=prefix[1:])
            best: int | None = None
            for size, rolls in self.rolls.items():
                if size > n:
                    continue
                windows = min(n - size + 1, limit)
                h = (prefix[size : size + windows] - prefix[:windows]) * inverse[:windows]
                for at in np.flatnonzero(np.isin(h, rolls)):
                    i = int(at)
                    window = chunk[i : i + size]
                    if hashlib.sha256(window).hexdigest() in self.by_size[size].get(int(h[i]), ()):
                        best = i if best is None else min(best, i)
                        break
        return best


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
