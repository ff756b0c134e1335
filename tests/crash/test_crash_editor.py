"""The editor loop (issue 17): damage no crash makes, done to files after they were committed.

A home is written (its archive's last frame and its txlog's last line are consumed, cited and marked) and
owes more turns. Then, for every single-byte truncation of the archive's last record and of the txlog's
last line (every cut inside it, one byte at a time), and for every trailing-newline change to either (one
or two newlines added or removed, CRLF), a write (`write_home(..., force=True)`) runs. Whatever it does,
repair or refuse:

- no byte that holds a consumed source id is deleted: each file afterwards starts with the damaged bytes,
  or with the original ones (a repair put back what the editor took away);
- the write adds no violation the oracle did not already see in the damaged home, and never one of
  consumed twice, archived twice or the same claim filed twice;
- a write that completes leaves a home the oracle finds entirely sound, nothing owed;
- a refusal is permanent and names the damage: `ARCHIVE_CORRUPT` for the session, or `TxlogCorrupt`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dagmem import FileSessionStore, ReasonCode
from dagmem.memory.format import TxlogCorrupt, scan_archive
from dagmem.memory.store import FakeClock
from dagmem.memory.workspace import Workspace
from dagmem.memory.writing import write_home
from dagmem.sim import check_home

WSID = "w-0123456789abcdef"
THRESHOLD = 60
NEVER = frozenset({"consumed-twice", "archived-twice", "duplicate-claim"})


def say(store: FileSessionStore, subjects: list[str], prefix: str, after: str | None) -> str | None:
    for k, subject in enumerate(subjects, 1):
        for role, text in (
            ("user", f"Tell me about the {subject}, the {subject} matters to me ({prefix}{k})."),
            ("assistant", f"About the {subject}: here is what I know of {subject}, item {prefix}{k}."),
        ):
            after = store.append("s", role, text, node_id=f"{prefix}{k}{role[0]}", predecessor=after).id
    return after


def build(root: Path) -> None:
    store = FileSessionStore(root, clock=FakeClock())
    Workspace(root / "memory", workspace_id=WSID).close()
    head = say(store, ["lisbon", "garden", "violin", "python"], "m", None)
    assert [r.outcome for r in write_home(root, force=True, threshold=THRESHOLD)] == ["written"]
    say(store, ["tiles", "river"], "n", head)


def last_record(data: bytes) -> tuple[int, int]:
    frame = scan_archive(data, "s").frames[-1]
    assert frame.end == len(data)
    return frame.offset, frame.end


def last_line(data: bytes) -> tuple[int, int]:
    return data.rindex(b"\n", 0, len(data) - 1) + 1, len(data)


NEWLINES: dict[str, Callable[[bytes], bytes]] = {
    "one newline added": lambda d: d + b"\n",
    "two newlines added": lambda d: d + b"\n\n",
    "final newline removed": lambda d: d[:-1],
    "two final newlines removed": lambda d: d[:-2],
    "final newlines as CRLF": lambda d: d.rstrip(b"\n") + b"\r\n" * (len(d) - len(d.rstrip(b"\n"))),
}


def edits(data: bytes, span: Callable[[bytes], tuple[int, int]]) -> Iterator[tuple[str, bytes]]:
    """Every cut inside the last record (never deleting it whole: that is deleting, not truncating), and
    every trailing-newline change."""
    start, end = span(data)
    for cut in range(start + 1, end):
        yield f"cut at byte {cut}", data[:cut]
    for name, change in NEWLINES.items():
        yield name, change(data)


def kinds(home: Path, *, drained: bool = False) -> set[tuple[str, str]]:
    report = check_home(FileSessionStore(home), home / "memory", WSID, drained=drained)
    return {(v.kind, v.subject) for v in report.violations}


def run_case(template: Path, run: Path, relpath: str, damaged: bytes) -> str:
    """Damage `relpath`, write, check; returns what the write did: "repaired" or "refused"."""
    shutil.copytree(template, run)
    target = run / relpath
    original = target.read_bytes()
    target.write_bytes(damaged)
    archive, txlog = run / "memory" / "sources" / "s.md", run / "memory" / ".dagmem" / "txlog.jsonl"
    files = {path: path.read_bytes() for path in (archive, txlog)}
    before = kinds(run)
    outcome = "repaired"
    try:
        results = write_home(run, force=True, threshold=THRESHOLD)
    except TxlogCorrupt:
        results = None
    if results is None:
        assert relpath.endswith("txlog.jsonl"), "a damaged archive refused the whole workspace"
        outcome = "refused"
    else:
        (result,) = results
        if result.outcome == "failed":
            assert (result.reason_code, result.retryable) == (ReasonCode.ARCHIVE_CORRUPT, False), result
            outcome = "refused"
        else:
            assert result.outcome == "written", result
    for path, data in files.items():
        now = path.read_bytes()
        keeps = now.startswith(data) or (path == target and now.startswith(original))
        assert keeps, f"{path.name}: bytes deleted"
    after = kinds(run)
    assert not {kind for kind, _ in after} & NEVER, after
    assert after <= before, f"the write added {after - before}"
    if outcome == "repaired":
        assert kinds(run, drained=True) == set()
    else:
        assert files == {path: path.read_bytes() for path in files}, "a refused write changed a file"
    return outcome


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    shm = Path("/dev/shm")
    root = Path(tempfile.mkdtemp(prefix="dagmem-editor-", dir=shm if os.access(shm, os.W_OK) else None))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize(
    ("relpath", "span"),
    [("memory/sources/s.md", last_record), ("memory/.dagmem/txlog.jsonl", last_line)],
    ids=["archive-last-record", "txlog-last-line"],
)
def test_every_truncation_and_newline_change_of_the_last_record_then_a_write(
    relpath: str,
    span: Callable[[bytes], tuple[int, int]],
    scratch: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    template = scratch / f"template-{span.__name__}"
    build(template)
    done: Counter[str] = Counter()
    for n, (name, damaged) in enumerate(edits((template / relpath).read_bytes(), span)):
        run = scratch / f"run-{span.__name__}-{n}"
        try:
            done[run_case(template, run, relpath, damaged)] += 1
        except AssertionError as exc:
            raise AssertionError(f"{relpath}, {name}: {exc}") from exc
        shutil.rmtree(run)
    assert done["repaired"] >= 2  # the final newline removed, blank lines added
    assert done["refused"] > 0
    with capsys.disabled():
        print(
            f"\n[crash] editor, {relpath.rsplit('/', 1)[-1]} {span.__name__.replace('_', ' ')}: "
            f"{sum(done.values())} edits ({done['repaired']} repaired, {done['refused']} refused)",
            flush=True,
        )
