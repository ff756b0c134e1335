"""The recall cache under damage: every file of a compacted snapshot and its delta log emptied, cut short,
overwritten with random bytes or with random values under a valid header, replaced by a FIFO or by a
symlink (to a FIFO: following it would hang). A reader answers what a rebuild from the files answers,
writes nothing, never hangs; the next write heals the cache."""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagmem import FileSessionStore, Hit
from dagmem.memory.recall import RecallIndex, RecallQuery, compact, recall_root, search
from dagmem.memory.recall._delta import encode
from dagmem.memory.writing import write_home

QUERIES = ("when does the ferry leave", "tomato seedlings in the greenhouse", "bicycle repair chain")
TOPICS = (
    "the ferry to the island leaves at {h} from pier {i}",
    "tomato seedlings number {i} went into the greenhouse at {h}",
    "the bicycle chain {i} was repaired at {h} with a new link",
    "the lighthouse keeper {i} lit the lantern at {h}",
)
FILES = (
    "meta.json",
    "delta.jsonl",
    "docs.jsonl",
    "docs.off.npy",
    "vec.npy",
    "coarse.npy",
    "dl.npy",
    "terms.txt",
    "post_off.npy",
    "post_doc.npy",
    "post_tf.npy",
    "post_w.npy",
    "topic.npy",
    "topics.txt",
    "nb_key.npy",
    "nb_row.npy",
    "sessions.txt",
    "row_span.npy",
    "bid_key.npy",
    "bid_row.npy",
)


def _say(home: Path, session: str, count: int, start: int) -> None:
    store = FileSessionStore(home, fsync=False)
    for i in range(start, start + count):
        store.append(session, "user", TOPICS[i % len(TOPICS)].format(i=i, h=f"{7 + i % 12}:{i % 60:02d}"))
    write_home(home, force=True)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home whose newest recall snapshot is a compaction, with a delta of two installs after it."""
    home = tmp_path_factory.mktemp("template") / "home"
    _say(home, "a", 12, 0)
    _say(home, "b", 12, 12)
    compact(home / "memory", fsync=False)
    _say(home, "c", 6, 24)
    _say(home, "a", 6, 30)
    newest = _newest(home / "memory")
    assert len((newest / "delta.jsonl").read_bytes().splitlines()) == 2
    return home


def _newest(memory: Path) -> Path:
    return max(p for p in recall_root(memory).iterdir() if p.name.startswith("snap-"))


def _rebuilt(memory: Path, where: Path) -> list[list[Hit]]:
    """What a rebuild from the files answers: the same workspace without its recall cache."""
    copy = where / "memory"
    shutil.copytree(memory, copy, ignore=shutil.ignore_patterns("recall"), symlinks=True)
    index = RecallIndex.open(copy)
    assert index.snapshot.path is None
    return [search(index, RecallQuery(q, k=k)) for q in QUERIES for k in (3, 10)]


def _answers(memory: Path) -> list[list[Hit]]:
    index = RecallIndex.open(memory)
    return [search(index, RecallQuery(q, k=k)) for q in QUERIES for k in (3, 10)]


def _bounded(fn: Callable[[], Any]) -> Any:
    """`fn()`, failing (not hanging) if it blocks: a FIFO opened for reading waits for a writer forever."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive(), "recall hung on the damaged cache"
    assert out, "recall raised"
    return out[0]


def _tree(root: Path) -> dict[str, tuple[int, int, int]]:
    out: dict[str, tuple[int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            out[path.relative_to(root).as_posix()] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def _npy_header_size(data: bytes) -> int:
    assert data[:6] == b"\x93NUMPY"
    if data[6] == 1:
        return 10 + int.from_bytes(data[8:10], "little")
    return 12 + int.from_bytes(data[8:12], "little")


def _damage(path: Path, kind: str, rng: random.Random, scratch: Path) -> None:
    data = path.read_bytes()
    if kind == "emptied":
        path.write_bytes(b"")
    elif kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "random-bytes":
        path.write_bytes(rng.randbytes(max(len(data), 64)))
    elif kind == "random-values":  # valid structure, wrong content
        if path.suffix == ".npy":
            head = _npy_header_size(data)
            body = bytearray(data[head:])
            for i in range(0, len(body), 4):  # a word in four: large, out-of-range, or NaN garbage
                body[i : i + 4] = rng.randbytes(4)[: len(body) - i]
            path.write_bytes(data[:head] + bytes(body))
        elif path.name == "meta.json":
            path.write_text("[]")
        elif path.name == "delta.jsonl":  # a line that parses and checks, with `seq` null
            lines = data.splitlines(keepends=True)
            record = json.loads(lines[-1])
            record.pop("c", None)
            record["seq"] = None
            path.write_bytes(b"".join(lines[:-1]) + encode(record))
        else:  # text: letters changed in place, the lines and the size kept
            text = bytearray(data)
            for i in rng.sample(range(len(text)), k=max(1, len(text) // 8)):
                if text[i] not in b'\n"{}[]:,':
                    text[i] = rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789")
            path.write_bytes(bytes(text))
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif kind == "symlink":
        fifo = scratch / f"elsewhere-{path.name}"
        os.mkfifo(fifo)
        path.unlink()
        path.symlink_to(fifo)
    else:
        raise AssertionError(kind)


KINDS = ("emptied", "truncated", "random-bytes", "random-values", "fifo", "symlink")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", FILES)
def test_a_damaged_recall_cache_answers_as_the_files_do_and_the_next_write_heals_it(
    template: Path, tmp_path: Path, name: str, kind: str
) -> None:
    home = tmp_path / "home"
    shutil.copytree(template, home, symlinks=True)
    memory = home / "memory"
    rng = random.Random(f"{name}/{kind}")
    _damage(_newest(memory) / name, kind, rng, tmp_path)
    expected = _rebuilt(memory, tmp_path / "rebuilt")
    before = _tree(recall_root(memory))
    # A reader (read-only, no lock): the hits of a rebuild from the files, and nothing written.
    assert _bounded(lambda: _answers(memory)) == expected
    assert _tree(recall_root(memory)) == before
    # The next write succeeds and heals the cache: a reader uses a sound snapshot again.
    _bounded(lambda: _say(home, "d", 2, 40))
    for path in recall_root(memory).rglob("*"):
        mode = path.lstat().st_mode
        assert stat.S_ISDIR(mode) or stat.S_ISREG(mode), path
    index = _bounded(lambda: RecallIndex.open(memory))
    assert index.snapshot.path is not None
    assert not index.delta_broken
    assert index.replay_record() is None  # nothing left for a reader to read from the files
    assert _bounded(lambda: _answers(memory)) == _rebuilt(memory, tmp_path / "rebuilt-after")


def test_a_fifo_in_the_cache_does_not_hang_the_command_line(template: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(template, home, symlinks=True)
    vec = _newest(home / "memory") / "vec.npy"
    vec.unlink()
    os.mkfifo(vec)
    done = subprocess.run(
        [sys.executable, "-m", "dagmem", "recall", QUERIES[0], "--json", "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    hits = json.loads(done.stdout)
    assert hits
    assert "ferry" in json.dumps(hits)
