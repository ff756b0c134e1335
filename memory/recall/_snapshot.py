"""A recall snapshot: the whole index as of one txlog line, in flat files a reader maps in milliseconds.

    .dagmem/recall/snap-<seq:08d>/
        meta.json        {"version", "model", "seq", "tx", "txlog_start", "txlog_end", "txlog_sha", "docs",
                          "sums", "written", "sum"}
        docs.jsonl       one entry a line (without its vector); docs.off.npy: byte offsets, docs + 1
        vec.npy          docs x 256 float16 (full vectors, for rescoring candidates)
        coarse.npy       docs x 64 float32, the unit-normalised Matryoshka prefix (the first pass)
        dl.npy           document lengths in terms (float32)
        terms.txt        the vocabulary, one term a line; post_off.npy (terms + 1), post_doc.npy, post_tf.npy,
                         post_w.npy: the postings (CSR by term: rows int32, term frequencies float32, and
                         BM25's term-frequency part with this snapshot's average length, float32: no
                         longer read, as search weighs each posting with the live average length)
        topic.npy        each row's topic (index into topics.txt)
        nb_key.npy       sorted (session index << 32 | seq) of every cited record; nb_row.npy its row;
                         sessions.txt the session ids (neighbours in a conversation, for the window score)
        row_span.npy     each row's (session index, lowest seq, highest seq) cited, -1 when none (int64)
        bid_key.npy      sorted block ids (the 8 hex digits as an int64); bid_row.npy its row (int32): a
                         successor's row in O(log n), so a hit's status needs no topic file (DESIGN §12)
        delta.jsonl      installs after `seq`, appended by writers (see `_delta.py`)

`meta.json` is written last and the directory renamed into place, so a reader sees a whole snapshot or
none. A snapshot is a cache: it names the txlog line it reflects (offsets and sha256), so a txlog that is
no longer the one it was built from is noticed and the index rebuilt from the files. For the same reason
meta.json holds each other file's size and CRC-32 (`sums`) and a CRC-32 of itself (`sum`): a damaged file
(emptied, cut short, overwritten, replaced by a symlink or a FIFO, which are never followed or opened for
reading) makes the snapshot unusable, never wrong. Checksumming every file costs a read of the whole
snapshot (hundreds of MB at 100,000 blocks), too much for a process that answers one query, so the writer
also stamps each file with a modification time a second in the past and records it with the file's inode
(`written`): a file with that inode, size and time is the one its writer left (any later write sets the
time to now), and is trusted without being read; any other (a copy, an edit, a restore) is checksummed.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import itertools
import json
import math
import mmap
import os
import stat
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Self, overload

import numpy as np
import numpy.typing as npt

from ..durable import fsync_all, fsync_dir
from ..errors import DagmemError
from ._embed import MODEL

__all__ = [
    "FILES",
    "VERSION",
    "Arrays",
    "Damaged",
    "FileOut",
    "NpyOut",
    "Snapshot",
    "begin_snapshot",
    "block_key",
    "file_crc",
    "finish_snapshot",
    "list_snapshots",
    "map_npy",
    "meta_sum",
    "npy_layout",
    "open_regular",
    "read_regular",
    "remove_old_snapshots",
    "remove_path",
    "write_lines",
    "write_meta",
    "write_snapshot",
]

# 5: partly supersessions in the documents; 4: supersessions in the documents and the block-id table; 3:
# checksums in meta.json; 2: BM25 parts with the documents' average length. A snapshot of another version
# is rebuilt from the files.
VERSION: Final = 5
_PREFIX: Final = "snap-"
_LINES: Final = 1 << 14  # lines of a text file joined per write
_READ: Final = 1 << 20  # bytes read per step when a file is checksummed
_DTYPES: Final[dict[str, np.dtype[Any]]] = {
    "docs.off.npy": np.dtype(np.int64),
    "vec.npy": np.dtype(np.float16),
    "coarse.npy": np.dtype(np.float32),
    "dl.npy": np.dtype(np.float32),
    "post_off.npy": np.dtype(np.int64),
    "post_doc.npy": np.dtype(np.int32),
    "post_tf.npy": np.dtype(np.float32),
    "post_w.npy": np.dtype(np.float32),
    "topic.npy": np.dtype(np.int32),
    "nb_key.npy": np.dtype(np.int64),
    "nb_row.npy": np.dtype(np.int32),
    "row_span.npy": np.dtype(np.int64),
    "bid_key.npy": np.dtype(np.int64),
    "bid_row.npy": np.dtype(np.int32),
}
# Every file of a snapshot but meta.json and delta.jsonl (which checks its own lines): checksummed.
FILES: Final = (*_DTYPES, "docs.jsonl", "terms.txt", "topics.txt", "sessions.txt")


class Damaged(DagmemError, ValueError):
    """A recall cache file that is not what its writer wrote: the cache is stale, rebuilt from the files."""


def open_regular(path: Path) -> int:
    """A descriptor of `path` to read, if it is a regular file: a symlink is not followed, and a FIFO
    opened non-blocking and refused (it would hang a reader), as is anything else (`Damaged`)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Damaged(f"{path.name} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _pread_all(fd: int, size: int, offset: int = 0) -> bytes:
    parts: list[bytes] = []
    end = offset + size
    while offset < end:
        data = os.pread(fd, min(end - offset, 1 << 30), offset)
        if not data:
            raise Damaged("a recall cache file is shorter than it was")
        parts.append(data)
        offset += len(data)
    return b"".join(parts)


def read_regular(path: Path) -> bytes:
    """The bytes of the regular file `path` (see `open_regular`)."""
    fd = open_regular(path)
    try:
        return _pread_all(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def file_crc(fd: int, size: int) -> int:
    """CRC-32 of the first `size` bytes of the file open at `fd` (read, never mapped: 1.8 GB/s)."""
    crc, offset = 0, 0
    while offset < size:
        data = os.pread(fd, min(_READ, size - offset), offset)
        if not data:
            raise Damaged("a recall cache file is shorter than it was")
        crc = zlib.crc32(data, crc)
        offset += len(data)
    return crc


def meta_sum(meta: dict[str, Any]) -> int:
    """The CRC-32 of a snapshot's meta.json without its own `sum`."""
    body = {key: value for key, value in meta.items() if key != "sum"}
    return zlib.crc32(json.dumps(body, sort_keys=True).encode())


def map_npy(fd: int, size: int, dtype: np.dtype[Any], ndim: int, tail: tuple[int, ...] = ()) -> Any:
    """The array of the `.npy` file open at `fd` (`size` bytes), mapped read-only; `Damaged` unless it
    is a C-ordered array of `dtype` with `ndim` axes, rows of shape `tail`, and exactly that many bytes."""
    found = _written_layout(fd, dtype)
    if found is None:
        header = _header(fd)
        if header is None:
            raise Damaged("a .npy file of a version numpy does not write")
        offset, kind, shape, fortran = header
        if fortran or kind != dtype:
            raise Damaged("a .npy file of another layout")
    else:
        shape, offset = found
    if len(shape) != ndim or tuple(shape[1:]) != tail:
        raise Damaged("a .npy file of another layout")
    if offset + math.prod(shape) * dtype.itemsize != size:
        raise Damaged("a .npy file whose size is not its header's")
    if not math.prod(shape):
        return np.zeros(shape, dtype)
    # A plain array over the map (what `np.memmap` makes, without its subclass's work on every slice).
    mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    return np.frombuffer(mapped, dtype, math.prod(shape), offset).reshape(shape)


_NPY_1_0: Final = b"\x93NUMPY\x01\x00"


def _written_layout(fd: int, dtype: np.dtype[Any]) -> tuple[tuple[int, ...], int] | None:
    """The shape and data offset of a `.npy` file whose header is the one `np.save` writes for a C-ordered
    array of `dtype` (version 1.0: `{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 64), }`,
    padded with spaces, then a newline), read by comparing bytes: numpy's reader parses every header with
    `ast.literal_eval` (1.5 ms of each open of a snapshot's 14 arrays). None for any other header, which
    numpy's reader then judges (`_header`)."""
    head = os.pread(fd, 512, 0)
    end = 10 + int.from_bytes(head[8:10], "little")
    if not head.startswith(_NPY_1_0) or len(head) < end or head[end - 1 : end] != b"\n":
        return None
    prefix = b"{'descr': '" + dtype.str.encode() + b"', 'fortran_order': False, 'shape': ("
    text = head[10 : end - 1].rstrip(b" ")
    if not text.startswith(prefix) or not text.endswith(b"), }"):
        return None
    inner = text[len(prefix) : -len(b"), }")]
    dims = [inner[:-1]] if inner.endswith(b",") else inner.split(b", ") if inner else []
    if not all(dim.isdigit() for dim in dims):
        return None
    shape = tuple(int(dim) for dim in dims)
    return (shape, end) if npy_header(dtype, shape) == head[:end] else None  # byte for byte, or numpy's


def _header(fd: int) -> tuple[int, np.dtype[Any], tuple[int, ...], bool] | None:
    """(offset of the data, dtype, shape, Fortran order) of the `.npy` file open at `fd`, by numpy's
    reader; None for a version numpy does not write."""
    with os.fdopen(os.dup(fd), "rb") as f:
        f.seek(0)  # the descriptor's offset is shared with `fd`'s
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            return None
        return f.tell(), dtype, tuple(shape), bool(fortran)


class Lines(Sequence[str]):
    """The lines of a snapshot's text file (each ends in a newline), split on first use: the vocabulary's
    60,000 terms at 100,000 blocks took a fresh process milliseconds to split, and a query finds its dozen
    terms in the bytes instead (`_index._TermScan`). Decoded when read, so a file that is not UTF-8 is
    refused on open, never met by a query."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._count = text.count("\n")  # as many as `split` gives items before the last newline

    @functools.cached_property
    def _items(self) -> list[str]:
        return self._text.split("\n")[:-1] if self._text else []

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self._items[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:  # equal to the list of the same lines, as a list would be
        if isinstance(other, Lines):
            return self._text == other._text
        return isinstance(other, list) and self._items == other

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, as a list: no hash


@dataclass
class Arrays:
    """What a snapshot holds, in memory (to write) or mapped (as read)."""

    docs: bytes | npt.NDArray[np.uint8]  # docs.jsonl (mapped when read)
    doc_off: npt.NDArray[np.int64]
    vec: npt.NDArray[np.float16]
    coarse: npt.NDArray[np.float32]
    dl: npt.NDArray[np.float32]
    terms: Sequence[str]
    post_off: npt.NDArray[np.int64]
    post_doc: npt.NDArray[np.int32]
    post_tf: npt.NDArray[np.float32]
    post_w: npt.NDArray[np.float32]
    topics: Sequence[str]
    topic: npt.NDArray[np.int32]
    sessions: Sequence[str]
    nb_key: npt.NDArray[np.int64]
    nb_row: npt.NDArray[np.int32]
    row_span: npt.NDArray[np.int64]
    bid_key: npt.NDArray[np.int64]
    bid_row: npt.NDArray[np.int32]
    terms_text: bytes = b""  # terms.txt as read (a term's id found without a dictionary: `_index`)

    @property
    def n(self) -> int:
        return len(self.doc_off) - 1

    def doc_json(self, row: int) -> dict[str, Any]:
        start, end = int(self.doc_off[row]), int(self.doc_off[row + 1])
        body: dict[str, Any] = json.loads(bytes(self.docs[start:end]))
        return body


def block_key(block_id: str) -> int:
    """A block id `b-<8 hex>` as the number the block-id table sorts (-1 for anything else)."""
    digits = block_id[2:]
    if len(block_id) != 10 or not block_id.startswith("b-") or digits.strip("0123456789abcdef"):
        return -1
    return int(digits, 16)


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
        bid_key=np.zeros(0, np.int64),
        bid_row=np.zeros(0, np.int32),
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
    def load(cls, path: Path, *, verify: bool = True) -> Snapshot:
        """Map a snapshot's files, each checked against the size and checksum its meta.json names when
        `verify` (once per load: O(snapshot) bytes read, never per query). Raises `Damaged` for anything
        else than a whole snapshot of this version and model, whatever is wrong with it: a symlink, a
        FIFO or a directory where a file should be, a short, emptied or rewritten file."""
        try:
            return cls._load(path, verify)
        except Damaged:
            raise
        except Exception as exc:  # any fault of a damaged cache file (numpy raises many kinds)
            raise Damaged(f"{path.name}: {type(exc).__name__}: {exc}") from exc

    @classmethod
    def _load(cls, path: Path, verify: bool) -> Snapshot:
        meta = json.loads(read_regular(path / "meta.json"))
        if not isinstance(meta, dict) or meta.get("version") != VERSION or meta.get("model") != MODEL:
            raise Damaged(f"{path.name}: a recall snapshot of another version or model")
        if meta.get("sum") != meta_sum(meta):
            raise Damaged(f"{path.name}: meta.json does not match its checksum")
        for name, kind in (("seq", int), ("txlog_start", int), ("txlog_end", int), ("docs", int)):
            if not isinstance(meta.get(name), kind) or isinstance(meta[name], bool) or meta[name] < 0:
                raise Damaged(f"{path.name}: meta.json's {name} is not a count")
        if not isinstance(meta.get("txlog_sha"), str) or not isinstance(meta.get("tx"), str | None):
            raise Damaged(f"{path.name}: meta.json's txlog line is not named")
        sums = meta.get("sums")
        if not isinstance(sums, dict) or sorted(sums) != sorted(FILES):
            raise Damaged(f"{path.name}: meta.json does not name each file's checksum")
        found = meta.get("written")
        written: dict[str, object] = found if isinstance(found, dict) else {}
        files: dict[str, tuple[int, int]] = {}  # name -> (fd, size)
        try:
            for name in FILES:
                fd = open_regular(path / name)
                size = os.fstat(fd).st_size
                files[name] = (fd, size)
                want = sums[name]
                checked = not verify or _as_written(fd, written.get(name))
                if size != want[0] or (not checked and file_crc(fd, size) != want[1]):
                    raise Damaged(f"{path.name}: {name} is not the file its snapshot wrote")
            return cls(path, meta, _map(path, meta, files))
        finally:
            for fd, _size in files.values():
                os.close(fd)


def _as_written(fd: int, stamp: object) -> bool:
    """Whether the file open at `fd` is the one its writer stamped: `stamp` is its [inode, mtime_ns]."""
    st = os.fstat(fd)
    return isinstance(stamp, list) and stamp == [st.st_ino, st.st_mtime_ns]


def _map(path: Path, meta: dict[str, Any], files: dict[str, tuple[int, int]]) -> Arrays:
    def array(name: str, ndim: int, tail: tuple[int, ...] = ()) -> Any:
        fd, size = files[name]
        return map_npy(fd, size, _DTYPES[name], ndim, tail)

    def lines(name: str, data: bytes | None = None) -> Lines:
        fd, size = files[name]
        return Lines((_pread_all(fd, size) if data is None else data).decode("utf-8"))

    terms_fd, terms_size = files["terms.txt"]
    terms_text = _pread_all(terms_fd, terms_size)

    fd, docs_size = files["docs.jsonl"]
    docs: bytes | npt.NDArray[np.uint8] = b""
    if docs_size:
        with os.fdopen(os.dup(fd), "rb") as f:
            docs = np.memmap(f, dtype=np.uint8, mode="r", shape=(docs_size,))
    arrays = Arrays(
        docs=docs,
        doc_off=array("docs.off.npy", 1),
        vec=array("vec.npy", 2, (256,)),
        # Mapped, as a plain array: the first pass reads every row once per query either way, and a
        # copy would read the whole file before the first query (25 MB at 100,000 blocks).
        coarse=np.asarray(array("coarse.npy", 2, (64,))),
        dl=np.asarray(array("dl.npy", 1)),  # mapped too: a query reads the lengths of its postings' rows
        terms=lines("terms.txt", terms_text),
        post_off=array("post_off.npy", 1),
        post_doc=array("post_doc.npy", 1),
        post_tf=array("post_tf.npy", 1),
        post_w=array("post_w.npy", 1),
        topics=lines("topics.txt"),
        topic=np.asarray(array("topic.npy", 1)),
        sessions=lines("sessions.txt"),
        nb_key=array("nb_key.npy", 1),
        nb_row=array("nb_row.npy", 1),
        row_span=np.asarray(array("row_span.npy", 2, (3,))),
        bid_key=array("bid_key.npy", 1),
        bid_row=array("bid_row.npy", 1),
        terms_text=terms_text,
    )
    n, postings = int(meta["docs"]), len(arrays.post_doc)
    agree = (
        arrays.n == n
        and len(arrays.vec) == len(arrays.coarse) == len(arrays.dl) == n
        and len(arrays.topic) == len(arrays.row_span) == n
        and len(arrays.post_off) == len(arrays.terms) + 1
        and len(arrays.post_tf) == len(arrays.post_w) == postings
        and len(arrays.nb_key) == len(arrays.nb_row)
        and len(arrays.bid_key) == len(arrays.bid_row) == n
        and int(arrays.doc_off[0]) == 0
        and int(arrays.doc_off[-1]) == docs_size
        and int(arrays.post_off[0]) == 0
        and int(arrays.post_off[-1]) == postings
    )
    if not agree:
        raise Damaged(f"{path.name}: recall snapshot files disagree with its meta.json")
    return arrays


def list_snapshots(root: Path) -> list[tuple[int, Path]]:
    """(seq, path) of the complete snapshots under `root`, newest first."""
    found: list[tuple[int, Path]] = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.scandir(root):
            name = entry.name
            digits = name[len(_PREFIX) :]
            if (
                name.startswith(_PREFIX)
                and digits.isdigit()
                and entry.is_dir(follow_symlinks=False)
                and (Path(entry.path) / "meta.json").exists()
            ):
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
        "bid_key.npy": arrays.bid_key,
        "bid_row.npy": arrays.bid_row,
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
        _rmtree(stale)
    temp = root / f".{final.name}.{os.getpid()}.tmp"
    temp.mkdir()
    return temp, final


def finish_snapshot(temp: Path, final: Path, meta: dict[str, Any], docs: int, *, fsync: bool) -> Path:
    """Complete the snapshot written in `temp` (an empty delta, meta.json last, every file fsynced when
    `fsync`) and rename it to `final`. Returns `final`."""
    (temp / "delta.jsonl").write_bytes(b"")
    write_meta(temp, meta, docs)
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
    if final.exists() or final.is_symlink():  # the same seq written before (a rebuild): replace it whole
        remove_path(final)
    os.replace(temp, final)
    if fsync:
        fsync_dir(final.parent)
    return final


def write_meta(temp: Path, meta: dict[str, Any], docs: int) -> None:
    """meta.json of the snapshot whose other files are written in `temp`: `meta`, the document count,
    each file's size and CRC-32 (read back: the page cache), each file's inode and the modification
    time it is stamped with (see the module's doc), and the CRC-32 of all that."""
    sums: dict[str, list[int]] = {}
    written: dict[str, list[int]] = {}
    # Whole seconds, two before now: no later write can give a file this time (on a filesystem that
    # keeps times to the second or two, too).
    stamp = (time.time_ns() // 1_000_000_000 - 2) * 1_000_000_000
    for name in FILES:
        fd = open_regular(temp / name)
        try:
            size = os.fstat(fd).st_size
            sums[name] = [size, file_crc(fd, size)]
            os.utime(temp / name, ns=(stamp, stamp), follow_symlinks=False)  # a file this writer made
            st = os.fstat(fd)
            written[name] = [st.st_ino, st.st_mtime_ns]
        finally:
            os.close(fd)
    body = {key: value for key, value in meta.items() if key not in ("sum", "sums", "written")}
    body |= {"docs": docs, "sums": sums, "written": written}
    body["sum"] = meta_sum(body)
    (temp / "meta.json").write_text(json.dumps(body), encoding="utf-8")


def remove_path(path: Path) -> None:
    """Remove a snapshot directory, or whatever else damage left at its name (never what a symlink names)."""
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    else:
        _rmtree(path)


def _rmtree(path: Path) -> None:
    import shutil  # here: a reader removes nothing, and shutil loads bz2 and lzma (3 ms of a fresh query)

    shutil.rmtree(path, ignore_errors=True)


def write_lines(path: Path, items: Iterable[str]) -> None:
    """One item a line (UTF-8), written a batch of lines at a time."""
    it = iter(items)
    with path.open("wb") as f:
        while batch := list(itertools.islice(it, _LINES)):
            f.write("".join(f"{item}\n" for item in batch).encode("utf-8"))


def remove_old_snapshots(root: Path, keep: int = 2) -> None:
    """Keep the newest `keep` snapshots (a reader may still be opening the one before the newest)."""
    for _seq, path in list_snapshots(root)[keep:]:
        remove_path(path)


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
    fd = open_regular(path)
    try:
        header = _header(fd)
    finally:
        os.close(fd)
    return None if header is None or header[3] else header[:3]
