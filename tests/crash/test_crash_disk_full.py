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
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from random import Random

import anyio
import pytest

from dagmem import DagmemError, FileSessionStore, Runtime, RuntimeConfig
from dagmem.memory.format import scan_archive
from dagmem.memory.writing import write_home
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


WORDS = ["alpha", "bravo", "delta", "gamma", "kilo", "lima", "oscar", "tango"]
SESSIONS = ["a", "b"]


class Host:
    """Appends turns through the runtime and remembers which returned and which raised."""

    def __init__(self, rt: Runtime, rng: Random) -> None:
        self.rt = rt
        self.rng = rng
        self.count = 0
        self.returned: set[str] = set()
        self.raised: set[str] = set()

    async def append(self) -> None:
        self.count += 1
        sid = self.rng.choice(SESSIONS)
        text = f"turn {self.count} in {sid}: " + " ".join(self.rng.choice(WORDS) for _ in range(8))
        try:
            await self.rt.append(sid, self.rng.choice(["user", "assistant"]), text)
        except (DagmemError, OSError):
            self.raised.add(text)
        else:
            self.returned.add(text)


def index_claims(home: Path) -> list[str]:
    """Where the index cache claims more (or other) than the archives hold: for each archive it lists,
    its ids must be exactly the frames of the file up to the length it records."""
    memory = home / "memory"
    db = sqlite3.connect(f"file:{memory / '.dagmem' / 'index.sqlite3'}?mode=ro", uri=True)
    try:
        rows = list(db.execute("SELECT session, valid_end FROM archive_files"))
        claimed = {
            session: {
                str(r[0]) for r in db.execute("SELECT source_id FROM archived WHERE session = ?", (session,))
            }
            for session, _ in rows
        }
    finally:
        db.close()
    wrong = []
    for session, valid_end in rows:
        scan = scan_archive((memory / "sources" / f"{session}.md").read_bytes(), session)
        held = {frame.source_id for frame in scan.frames if frame.end <= valid_end}
        if valid_end > scan.valid_end or claimed[session] != held:
            missing = sorted(held - claimed[session])[:3]
            wrong.append(
                f"{session}: the index claims {valid_end} bytes (the file {scan.valid_end}), lacks {missing}"
            )
    return wrong


def check(home: Path, host: Host, what: str) -> None:
    """The home from its files: nothing owed (`verify --strict`), every archive whole with each frame its
    record's rendering and no id twice, every returned append there once, no append that raised; and the
    index cache claims nothing the files do not hold."""
    assert index_claims(home) == [], what
    problems = verify_home(home)
    assert problems == [], f"{what}: {problems[:10]}"
    store = FileSessionStore(home)
    contents = [
        n.content for sid in SESSIONS if store.has_session(sid) for n in store.load(sid).nodes.values()
    ]
    assert len(contents) == len(set(contents)), f"{what}: a turn is in a session twice"
    assert host.returned <= set(contents), f"{what}: a returned append is missing"
    written = host.raised & set(contents)
    assert not written, f"{what}: appends that raised were written: {sorted(written)[:3]}"


async def fill_cycles(mnt: Path, name: str, rng: Random, cycles: int) -> None:
    """One home, `cycles` times: the disk filled to a few free pages while the runtime appends (writes
    falling due and failing, a forced flush waiting it out), freed, flushed, checked from the files."""
    home = mnt / name
    filler = mnt / "filler"
    config = RuntimeConfig(token_threshold=THRESHOLD, idle_after=NEVER_IDLE, abandon_after=NEVER_IDLE)
    # offload=False: the file I/O runs inline, so the virtual clock only moves when everything waits.
    async with Runtime.open(home, config=config, offload=False) as rt:
        host = Host(rt, rng)
        for cycle in range(cycles):
            what = f"{name}, cycle {cycle} (seed {SEED})"
            async with anyio.create_task_group() as tg:
                for _ in range(rng.randrange(1, 4)):
                    await host.append()
                fill(filler, rng.randrange(8) * 4096 + rng.randrange(4096))
                try:
                    for _ in range(rng.randrange(4, 12)):
                        await host.append()
                        await anyio.sleep(rng.uniform(0.0, 2.0))  # writes fall due and fail, retries back off
                        if rng.random() < 0.15:
                            tg.start_soon(rt.flush, True)  # waits out the full disk
                finally:
                    filler.unlink()
                with anyio.fail_after(3600):
                    await rt.flush(force=True)
            status = rt.status()
            assert status.pending_turns == 0, f"{what}: {status}"
            assert status.last_failure is None or status.last_failure.retryable, f"{what}: {status}"
            check(home, host, what)
    results = write_home(home, force=True, threshold=THRESHOLD)
    bad = [r.as_json() for r in results if r.outcome != "nothing-due"]
    assert bad == [], f"{name}: the runtime's flush left {bad}"
    check(home, host, name)
    shutil.rmtree(home)


SEED = int(os.environ.get("DAGMEM_DISK_SEED", "28"))


@pytest.mark.virtual_time
async def test_a_full_disk_at_many_levels_leaves_a_whole_home(tmpfs: Path) -> None:
    rng = Random(SEED)
    for n in range(3):
        await fill_cycles(tmpfs, f"home-{n}", rng, cycles=10)
