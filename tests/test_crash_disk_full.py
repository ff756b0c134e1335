"""A real full disk (issue 28): a small tmpfs is filled at many levels while the runtime appends and
writes, then freed; a flush afterwards must leave a home whose files are whole: every record archived
exactly once, each frame exactly its record's rendering, no duplicate id, nothing owed (`verify --strict`),
and an append that raised left nothing (a host that retries it gets it once).

The index is a cache: whatever a failed SQLite write lost, the files say, and the next pass goes by them.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from random import Random

import anyio
import pytest

from dagmem import DagmemError, FileSessionStore, Runtime, RuntimeConfig
from dagmem.memory.write import write_home
from dagmem.sim._crashload import NEVER_IDLE, verify_home

pytestmark = pytest.mark.anyio

SIZE_KB = 4096
THRESHOLD = 40  # tokens per batch: a write every few turns


@pytest.fixture(scope="module")
def tmpfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real small filesystem (tmpfs); skipped where mounting is not permitted."""
    mnt = tmp_path_factory.mktemp("tmpfs")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE_KB}k", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(path: Path, leave: int) -> None:
    """Fill the filesystem of `path` (a filler file) until it is full, then give back `leave` bytes."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        block = b"x" * 65536
        while True:
            try:
                os.write(fd, block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                if len(block) == 1:
                    break
                block = block[: len(block) // 2]
        os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
    finally:
        os.close(fd)


async def one_level(mnt: Path, level: int, leave: int, rng: Random) -> None:
    """One fill level: a home with memory written, the disk filled to `leave` free bytes while the runtime
    appends (writes falling due, forced flushes waiting), freed, flushed; then checked from its files."""
    home = mnt / f"home-{level}"
    filler = mnt / "filler"
    returned: dict[str, set[str]] = {}
    raised: dict[str, set[str]] = {}
    words = ["alpha", "bravo", "delta", "gamma", "kilo", "lima", "oscar", "tango"]
    count = 0
    config = RuntimeConfig(token_threshold=THRESHOLD, idle_after=NEVER_IDLE, abandon_after=NEVER_IDLE)
    sessions = ["a", "b"]
    # offload=False: the file I/O runs inline, so the virtual clock only moves when everything waits.
    async with Runtime.open(home, config=config, offload=False) as rt, anyio.create_task_group() as tg:

        async def append() -> None:
            nonlocal count
            count += 1
            sid = rng.choice(sessions)
            text = f"turn {level}.{count} " + " ".join(rng.choice(words) for _ in range(8))
            try:
                await rt.append(sid, rng.choice(["user", "assistant"]), text)
            except (DagmemError, OSError):
                raised.setdefault(sid, set()).add(text)
            else:
                returned.setdefault(sid, set()).add(text)

        for _ in range(6):
            await append()
        await rt.flush(force=True)
        fill(filler, leave)
        try:
            for _ in range(20):
                await append()
                await anyio.sleep(rng.uniform(0.0, 2.0))  # writes fall due and fail, retries back off
                if rng.random() < 0.15:
                    tg.start_soon(rt.flush, True)  # waits out the full disk
        finally:
            filler.unlink()
        for _ in range(2):
            await append()
        with anyio.fail_after(3600):
            await rt.flush(force=True)
        status = rt.status()
        assert status.pending_turns == 0, f"level {level} (leave {leave}): {status}"
        assert status.last_failure is None or status.last_failure.retryable, f"level {level}: {status}"
    results = write_home(home, force=True, threshold=THRESHOLD)
    bad = [r.as_json() for r in results if r.outcome != "nothing-due"]
    assert bad == [], f"level {level} (leave {leave}): the runtime's flush left {bad}"
    problems = verify_home(home)  # `verify --strict`, every archive whole and each frame its record
    assert problems == [], f"level {level} (leave {leave}): {problems[:10]}"
    store = FileSessionStore(home)
    for sid in sessions:
        contents = [n.content for n in store.load(sid).nodes.values()] if store.has_session(sid) else []
        assert len(contents) == len(set(contents)), f"level {level}: a turn is in the session twice"
        assert returned.get(sid, set()) <= set(contents), f"level {level}: a returned append is missing"
        written = raised.get(sid, set()) & set(contents)
        assert not written, f"level {level} (leave {leave}): appends that raised were written: {written}"
    shutil.rmtree(home)


LEVELS = [0, 256, 512, 1024, 2048, 3000, 4096, 6000, 8192, 10000, 12288, 16384, 20000, 24576, 32768, 49152]


@pytest.mark.virtual_time
async def test_a_full_disk_at_many_levels_leaves_a_whole_home(tmpfs: Path) -> None:
    rng = Random(28)
    for level, leave in enumerate(LEVELS):
        await one_level(tmpfs, level, leave, rng)
