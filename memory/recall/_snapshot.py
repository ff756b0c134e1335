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
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..durable import fsync_dir
from ._embed import MODEL

__all__ = ["VERSION", "Arrays", "Snapshot", "list_snapshots", "remove_old_snapshots", "write_snapshot"]

VERSION: Final = 1
_PREFIX: Final = "snap-"


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
    """Write a snapshot under `root` (temp directory, files, meta.json last, rename). Returns its path.
    The caller holds the workspace lock (or owns the workspace, as a benchmark does)."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{_PREFIX}{int(meta['seq']):08d}"
    # Snapshots are written under the workspace lock: any temp directory here is a dead writer's.
    for stale in root.glob(f".{_PREFIX}*.tmp"):
        shutil.rmtree(stale, ignore_errors=True)
    temp = root / f".{final.name}.{os.getpid()}.tmp"
    temp.mkdir()
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
        (temp / name).write_text("".join(f"{item}\n" for item in items), encoding="utf-8")
    (temp / "sessions.txt").write_text("".join(f"{s}\n" for s in arrays.sessions), encoding="utf-8")
    (temp / "delta.jsonl").write_bytes(b"")
    (temp / "meta.json").write_text(json.dumps(meta | {"docs": arrays.n}), encoding="utf-8")
    if fsync:
        for child in temp.iterdir():
            fd = os.open(child, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(temp)
    if final.exists():  # the same seq written before (a rebuild): replace it whole
        shutil.rmtree(final, ignore_errors=True)
    os.replace(temp, final)
    if fsync:
        fsync_dir(root)
    return final


def remove_old_snapshots(root: Path, keep: int = 2) -> None:
    """Keep the newest `keep` snapshots (a reader may still be opening the one before the newest)."""
    for _seq, path in list_snapshots(root)[keep:]:
        shutil.rmtree(path, ignore_errors=True)
