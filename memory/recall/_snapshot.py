"""A recall snapshot: the whole index as of one txlog line, in flat files a reader maps in milliseconds.

    .dagmem/recall/snap-<seq:08d>/
        meta.json        {"version", "model", "seq", "tx", "txlog_start", "txlog_end", "txlog_sha", "docs"}
        docs.jsonl       one entry a line (without its vector); docs.off.npy: byte offsets, docs + 1
        vec.npy          docs x 256 float16 (full vectors, for rescoring candidates)
        coarse.npy       docs x 64 float32, the unit-normalised Matryoshka prefix (the first pass)
        dl.npy           document lengths in terms (float32)
        terms.txt        the vocabulary, one term a line; post_off.npy (terms + 1), post_doc.npy, post_tf.npy,
                         post_w.npy: the postings (CSR by term: rows int32, term frequencies float32, and
                         BM25's term-frequency part with this snapshot's average length, float32)
        topic.npy        each row's topic (index into topics.txt)
        nb_key.npy       sorted (session index << 32 | seq) of every cited record; nb_row.npy its row;
                         sessions.txt the session ids (neighbours in a conversation, for the window score)
        row_span.npy     each row's (session index, lowest seq, highest seq) cited, -1 when none (int64)
        delta.jsonl      installs after `seq`, appended by writers (see `_delta.py`)

`meta.json` is written last and the directory renamed into place, so a reader sees a whole snapshot or
none. A snapshot is a cache: it names the txlog line it reflects (offsets and sha256), so a txlog that is
no longer the one it was built from is noticed and the index rebuilt from the files.
"""

from __future__ import annotations

import contextlib
import errno
import io
import itertools
import json
import math
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Self

import numpy as np
import numpy.typing as npt

from ..durable import fsync_all, fsync_dir
from ._embed import MODEL

__all__ = [
    "VERSION",
    "Arrays",
    "FileOut",
    "NpyOut",
    "Snapshot",
    "begin_snapshot",
    "finish_snapshot",
    "list_snapshots",
    "npy_layout",
    "remove_old_snapshots",
    "write_lines",
    "write_snapshot",
]

VERSION: Final = 2  # 2: BM25 parts with the documents' average length (1 averaged the postings')
_PREFIX: Final = "snap-"
_LINES: Final = 1 << 14  # lines of a text file joined per write


@dataclass
class Arrays:
    """What a snapshot holds, in memory (to write) or mapped (as read)."""

    docs: bytes | npt.NDArray[np.uint8]  # docs.jsonl (mapped when read)
    doc_off: npt.NDArray[np.int64]
    vec: npt.NDArray[np.float16]
    coarse: npt.NDArray[np.float32]
    dl: npt.NDArray[np.float32]
    terms: list[str]
    post_off: npt.NDArray[np.int64]
    post_doc: npt.NDArray[np.int32]
    post_tf: npt.NDArray[np.float32]
    post_w: npt.NDArray[np.float32]
    topics: list[str]
    topic: npt.NDArray[np.int32]
    sessions: list[str]
    nb_key: npt.NDArray[np.int64]
    nb_row: npt.NDArray[np.int32]
    row_span: npt.NDArray[np.int64]

    @property
    def n(self) -> int:
        return len(self.doc_off) - 1

    def doc_json(self, row: int) -> dict[str, Any]:
        start, end = int(self.doc_off[row]), int(self.doc_off[row + 1])
        body: dict[str, Any] = json.loads(bytes(self.docs[start:end]))
        return body


def empty_arrays() -> Arrays:
    return Arrays(
        docs=b"",
        doc_off=np.zeros(1, np.int64),
        vec=np.zeros((0, 256), np.float16),
        coarse=np.zeros((0, 64), np.float32),
        dl=np.zeros(0, np.float32),
        terms=[],
        post_off=np.zeros(1, np.int64),
        post_doc=np.zeros(0, np.int32),
        post_tf=np.zeros(0, np.float32),
        post_w=np.zeros(0, np.float32),
        topics=[],
        topic=np.zeros(0, np.int32),
        sessions=[],
        nb_key=np.zeros(0, np.int64),
        nb_row=np.zeros(0, np.int32),
        row_span=np.zeros((0, 3), np.int64),
    )


@dataclass
class Snapshot:
    path: Path | None  # None: the empty index before any snapshot was written
    meta: dict[str, Any]
    arrays: Arrays

    @property
    def seq(self) -> int:
        return int(self.meta["seq"])

    @classmethod
    def empty(cls) -> Snapshot:
        meta = {"version": VERSION, "model": MODEL, "seq": 0, "tx": None, "txlog_start": 0, "txlog_end": 0}
        return cls(None, meta | {"txlog_sha": "", "docs": 0}, empty_arrays())

    @classmethod
    def load(cls, path: Path) -> Snapshot:
        """Map a snapshot's files (raises OSError or ValueError when it is incomplete or not ours)."""
        meta = json.loads((path / "meta.json").read_bytes())
        if meta.get("version") != VERSION or meta.get("model") != MODEL:
            raise ValueError(f"{path}: a recall snapshot of another version or model")

        def array(name: str) -> Any:
            return np.load(path / name, mmap_mode="r", allow_pickle=False)

        def lines(name: str) -> list[str]:
            text = (path / name).read_text(encoding="utf-8")
            return text.split("\n")[:-1] if text else []

        docs_size = (path / "docs.jsonl").stat().st_size
        docs: bytes | npt.NDArray[np.uint8] = b""
        if docs_size:
            docs = np.memmap(path / "docs.jsonl", dtype=np.uint8, mode="r")
        arrays = Arrays(
            docs=docs,
            doc_off=array("docs.off.npy"),
            vec=array("vec.npy"),
            # In memory: numpy's matrix-vector product on a mapped array is 25x slower (measured).
            coarse=np.array(array("coarse.npy"), dtype=np.float32),
            dl=np.array(array("dl.npy"), dtype=np.float32),
            terms=lines("terms.txt"),
            post_off=array("post_off.npy"),
            post_doc=array("post_doc.npy"),
            post_tf=array("post_tf.npy"),
            post_w=array("post_w.npy"),
            topics=lines("topics.txt"),
            topic=np.array(array("topic.npy"), dtype=np.int32),
            sessions=lines("sessions.txt"),
            nb_key=array("nb_key.npy"),
            nb_row=array("nb_row.npy"),
            row_span=np.array(array("row_span.npy"), dtype=np.int64),
        )
        if arrays.n != int(meta["docs"]) or len(arrays.post_off) != len(arrays.terms) + 1:
            raise ValueError(f"{path}: recall snapshot files disagree with its meta.json")
        return cls(path, meta, arrays)


def list_snapshots(root: Path) -> list[tuple[int, Path]]:
    """(seq, path) of the complete snapshots under `root`, newest first."""
    found: list[tuple[int, Path]] = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.scandir(root):
            name = entry.name
            digits = name[len(_PREFIX) :]
            if name.startswith(_PREFIX) and digits.isdigit() and (Path(entry.path) / "meta.json").exists():
                found.append((int(digits), Path(entry.path)))
    return sorted(found, reverse=True)


def write_snapshot(root: Path, meta: dict[str, Any], arrays: Arrays, *, fsync: bool) -> Path:
    """Write a snapshot of `arrays` (in memory) under `root`; `_arrays.write_index` streams an index's
    instead. The caller holds the workspace lock (or owns the workspace, as a benchmark does)."""
    temp, final = begin_snapshot(root, int(meta["seq"]))
    files: dict[str, Any] = {
        "docs.off.npy": arrays.doc_off,
        "vec.npy": arrays.vec,
        "coarse.npy": arrays.coarse,
        "dl.npy": arrays.dl,
        "post_off.npy": arrays.post_off,
        "post_doc.npy": arrays.post_doc,
        "post_tf.npy": arrays.post_tf,
        "post_w.npy": arrays.post_w,
        "topic.npy": arrays.topic,
        "nb_key.npy": arrays.nb_key,
        "nb_row.npy": arrays.nb_row,
        "row_span.npy": arrays.row_span,
    }
    for name, value in files.items():
        np.save(temp / name, np.ascontiguousarray(value), allow_pickle=False)
    (temp / "docs.jsonl").write_bytes(bytes(arrays.docs))
    for name, items in (("terms.txt", arrays.terms), ("topics.txt", arrays.topics)):
        write_lines(temp / name, items)
    write_lines(temp / "sessions.txt", arrays.sessions)
    return finish_snapshot(temp, final, meta, arrays.n, fsync=fsync)


def begin_snapshot(root: Path, seq: int) -> tuple[Path, Path]:
    """A new temp directory under `root` to write snapshot `seq`'s files in, and the snapshot's path."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{_PREFIX}{seq:08d}"
    # Snapshots are written under the workspace lock: any temp directory here is a dead writer's.
    for stale in root.glob(f".{_PREFIX}*.tmp"):
        shutil.rmtree(stale, ignore_errors=True)
    temp = root / f".{final.name}.{os.getpid()}.tmp"
    temp.mkdir()
    return temp, final


def finish_snapshot(temp: Path, final: Path, meta: dict[str, Any], docs: int, *, fsync: bool) -> Path:
    """Complete the snapshot written in `temp` (an empty delta, meta.json last, every file fsynced when
    `fsync`) and rename it to `final`. Returns `final`."""
    (temp / "delta.jsonl").write_bytes(b"")
    (temp / "meta.json").write_text(json.dumps(meta | {"docs": docs}), encoding="utf-8")
    if fsync:
        fds: list[int] = []
        try:
            for child in temp.iterdir():
                fds.append(os.open(child, os.O_RDONLY))
            fsync_all(fds)  # all at once (ext4 folds them into one journal commit), as the writer's files
        finally:
            for fd in fds:
                os.close(fd)
        fsync_dir(temp)
    if final.exists():  # the same seq written before (a rebuild): replace it whole
        shutil.rmtree(final, ignore_errors=True)
    os.replace(temp, final)
    if fsync:
        fsync_dir(final.parent)
    return final


def write_lines(path: Path, items: Iterable[str]) -> None:
    """One item a line (UTF-8), written a batch of lines at a time."""
    it = iter(items)
    with path.open("wb") as f:
        while batch := list(itertools.islice(it, _LINES)):
            f.write("".join(f"{item}\n" for item in batch).encode("utf-8"))


def remove_old_snapshots(root: Path, keep: int = 2) -> None:
    """Keep the newest `keep` snapshots (a reader may still be opening the one before the newest)."""
    for _seq, path in list_snapshots(root)[keep:]:
        shutil.rmtree(path, ignore_errors=True)


# -- writing a snapshot's files piece by piece (a compaction streams them: see `_arrays.write_index`) -------

_COPY_MAX: Final = 1 << 20  # bytes read per step when the kernel cannot copy between the files
# Errors that mean "this kind of copy is not supported here" (a filesystem, an old kernel, macOS).
_UNSUPPORTED: Final = frozenset(
    {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOTSOCK}
)


class FileOut:
    """A new file written front to back through its descriptor, so that bytes of another file can be
    copied into it in the kernel (`copy_file_range`, else `sendfile`, else reads of at most 1 MiB),
    never through this process's memory or a mapping of the source."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._how = 0 if hasattr(os, "copy_file_range") else 1  # 0 copy_file_range, 1 sendfile, 2 reads

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        _write_all(self.fd, data)

    def copy(self, src: int, offset: int, count: int) -> None:
        """Append bytes [offset, offset + count) of the file open at `src`."""
        end = offset + count
        while offset < end:
            offset += self._copy(src, offset, end - offset)

    def _copy(self, src: int, offset: int, count: int) -> int:
        kernel_copies = (
            lambda: os.copy_file_range(src, self.fd, count, offset),
            lambda: os.sendfile(self.fd, src, offset, count),
        )
        while self._how < len(kernel_copies):
            try:
                done = kernel_copies[self._how]()
            except OSError as exc:
                if exc.errno not in _UNSUPPORTED:
                    raise
                done = 0
            if done:
                return done
            self._how += 1  # unsupported, or nothing copied (some filesystems): the next way
        data = os.pread(src, min(count, _COPY_MAX), offset)
        if not data:
            raise ValueError("a recall snapshot file is shorter than its offsets say")
        return _write_all(self.fd, data)


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> int:
    view = memoryview(data).cast("B")
    size = len(view)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    return size


def npy_header(dtype: np.dtype[Any], shape: tuple[int, ...]) -> bytes:
    """The header `np.save` writes for a C-ordered array of `dtype` and `shape`. Its length does not
    depend on the first axis (numpy pads it for in-place growth), so it can be rewritten at the end."""
    out = io.BytesIO()
    header = np.lib.format.header_data_from_array_1_0(np.empty((0, *shape[1:]), dtype))
    np.lib.format.write_array_header_1_0(out, header | {"shape": shape})
    return out.getvalue()


class NpyOut(FileOut):
    """A `.npy` file of rows of `dtype` (each of shape `tail`) appended in pieces; its header is
    written again with the row count on `close`. The bytes are those `np.save` writes for the whole."""

    def __init__(self, path: Path, dtype: npt.DTypeLike, tail: tuple[int, ...] = ()) -> None:
        super().__init__(path)
        self.dtype, self.tail, self.rows = np.dtype(dtype), tail, 0
        self._header = npy_header(self.dtype, (0, *tail))
        self.write(self._header)
        self.data_offset = len(self._header)

    def append(self, rows: npt.ArrayLike) -> None:
        data = np.ascontiguousarray(rows, dtype=self.dtype)
        if data.shape[1:] != self.tail:
            raise ValueError(f"rows of shape {data.shape[1:]} appended to an array of rows {self.tail}")
        self.write(data.reshape(-1).view(np.uint8).data)
        self.rows += len(data)

    def copy_rows(self, src: int, offset: int, rows: int) -> None:
        """Append `rows` rows stored at `offset` of the file open at `src` (same dtype and shape)."""
        self.copy(src, offset, rows * self.dtype.itemsize * math.prod(self.tail))
        self.rows += rows

    def close(self) -> None:
        if self.fd >= 0:
            header = npy_header(self.dtype, (self.rows, *self.tail))
            if len(header) != len(self._header):
                raise ValueError("a .npy header changed length")  # numpy pads it so that it cannot
            os.pwrite(self.fd, header, 0)
        super().close()


def npy_layout(path: Path) -> tuple[int, np.dtype[Any], tuple[int, ...]] | None:
    """(offset of the data, dtype, shape) of a C-ordered `.npy` file; None for another layout."""
    with path.open("rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            return None
        return None if fortran else (f.tell(), dtype, tuple(shape))
