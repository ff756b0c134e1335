"""Crash injection, in process (issue 6): whatever instant the writer dies, no turn is lost, no memory is
half-installed, nothing is written twice.

Every durable step of the product passes a named fault site (`faults.hit`). For each scenario a home is
prepared once; every run copies it, arms a hook that dies at the N-th fault site, and runs the write pass
(`write_home`, the `dagmem write` pass). A death is an `InjectedCrash` (or a `Tear`, which first lands part
of the write in progress); then every object is dropped and fresh ones are built from the directory, as a
new process would. N goes 1, 2, 3, ... until a run completes without dying, so every fault site of the pass
is a crash point. After each crash, before the redo:

- every topic file is one of the versions a clean run ever had (never a torn or foreign file), and once the
  workspace is reopened (which recovers), the topics as a set are exactly the state after the transactions
  the txlog holds, which are a prefix of the clean run's: old or new, never a mix;
- no temp file or stage is left after recovery (the session store sweeps its own on first open);
- the oracle finds nothing wrong: no marker without its txlog line, nothing consumed twice, nothing stranded,
  every consumed record archived and cited; each archive's valid prefix is a prefix of the clean one.

Then the redo (fresh objects, no faults) must end byte-identical to the clean run: archives, topics,
`core.md`, node files with their markers, and the txlog except its `at` field; and the oracle, with
`drained=True`, finds every record consumed exactly once.

The simulated death happens in this process, so the temp files it leaves carry this process's pid: the
fresh objects are built under `restarted()`, which makes `durable.pid_alive` see this pid as dead, as a new
process would see the dead writer's. `tests/crash/test_crash_kill.py` does the same with real processes and
SIGKILL.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from dagmem import FileSessionStore
from dagmem.memory import faults
from dagmem.memory.durable import _atomic as durable
from dagmem.memory.durable import is_temp_name, load_status
from dagmem.memory.format import Topic, inert, make_block, parse_node, parse_topic, render_topic, scan_archive
from dagmem.memory.outcomes import ReasonCode
from dagmem.memory.store import FakeClock
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import (
    BatchInput,
    Edits,
    ExtractiveDistiller,
    SessionResult,
    TopicReader,
    mark_nodes,
    write_session,
)
from dagmem.memory.writing import write_home
from dagmem.sim import check_home
from dagmem.sim._crashload import find_leftovers

WSID = "w-0123456789abcdef"
THRESHOLD = 60  # tokens: two exchanges (four turns) per batch
# Files that legitimately differ between two runs of the same pass: the writer's status (times), the SQLite
# cache, and the txlog (compared line by line without its `at`).
VOLATILE = frozenset(
    {
        ".dagmem/status.json",
        ".dagmem/index.sqlite3",
        ".dagmem/index.sqlite3-wal",
        ".dagmem/index.sqlite3-shm",
        ".dagmem/shapes.sqlite3",
        ".dagmem/shapes.sqlite3-wal",
        ".dagmem/shapes.sqlite3-shm",
        ".dagmem/txlog.jsonl",
    }
)

# Crash points exercised, per scenario, for the summary printed at the end of each test.
EXERCISED: Counter[str] = Counter()


# -- building homes ---------------------------------------------------------------------------------------


def exchange(subject: str, k: int) -> tuple[str, str]:
    """A user turn and its answer, both about `subject` (the extractive distiller files them under it)."""
    return (
        f"Tell me about the {subject}, the {subject} matters to me ({k}).",
        f"About the {subject}: here is what I know of {subject}, item {k}.",
    )


def say(store: FileSessionStore, sid: str, subjects: list[str], prefix: str, after: str | None) -> list[str]:
    """Append one exchange per subject after `after` (None: a new root); returns the node ids."""
    ids: list[str] = []
    for k, subject in enumerate(subjects, 1):
        for role, text in zip(("user", "assistant"), exchange(subject, k), strict=True):
            node = store.append(sid, role, text, node_id=f"{prefix}{len(ids) + 1}", predecessor=after)
            after = node.id
            ids.append(node.id)
    return ids


class WithCore:
    """The extractive distiller plus an explicit core path, which it does not have (a salient word never
    names `topics/core.md`): the turns about `core` become one block of the master, so the scenarios
    install `core.md` too."""

    name = "extractive+core"
    _CORE = re.compile(r"\bcore\b")

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        core = [r for r in batch.records if self._CORE.search(r.content)]
        rest = tuple(r for r in batch.records if r not in core)
        edits = (
            dict(ExtractiveDistiller().distill(BatchInput(batch.session_id, rest), topics)) if rest else {}
        )
        if core:
            path = "topics/core.md"
            current = topics.read(path)
            topic = parse_topic(current, path) if current is not None else Topic("Core", ())
            taken = {b.id for b in topic.blocks} | {c.id for b in topic.blocks for c in b.citations}
            date = datetime.fromtimestamp(core[-1].created_at, UTC).strftime("%Y-%m-%d")
            sources = [(f"{r.role} {r.source_id}", r.source_id) for r in core]
            block = make_block(path, " ".join(inert(r.content) for r in core), [(date, sources)], taken)
            edits[path] = render_topic(Topic(topic.title, (*topic.blocks, block)))
        return edits


def write_pass(home: Path) -> list[SessionResult]:
    """The pass under test: `dagmem write --force` with a small batch size."""
    results = write_home(home, force=True, threshold=THRESHOLD, distiller=WithCore())
    assert all(r.outcome in ("written", "nothing-due") for r in results), results
    return results


def new_home(root: Path) -> FileSessionStore:
    store = FileSessionStore(root, clock=FakeClock())
    Workspace(root / "memory", workspace_id=WSID).close()
    return store


def build_first_write(root: Path) -> None:
    """A home whose topics already hold an earlier session; session `s` (four exchanges, two batches, one
    about `core`, so `core.md` is rendered too) has never been written."""
    store = new_home(root)
    say(store, "base", ["lisbon", "garden"], "z", None)
    write_pass(root)
    say(store, "s", ["lisbon", "core", "violin", "garden"], "m", None)


def build_shared_prefix(root: Path) -> None:
    """Session `s`: a trunk of four exchanges (the head) and a branch forked after the first exchange;
    nothing written. The head branch goes first, then the fork's own turns: the prefix is written once."""
    store = new_home(root)
    trunk = say(store, "s", ["lisbon", "core", "violin", "garden"], "m", None)
    say(store, "s", ["python", "lisbon"], "b", trunk[1])
    store.set_head("s", trunk[-1])  # the fork's appends moved the head to it: the trunk is the head again
    assert store.head("s") == trunk[-1]


def build_cross_session(root: Path) -> None:
    """Three sessions waiting in the writer's queue, each batch editing topics the one before created."""
    store = new_home(root)
    say(store, "s1", ["lisbon", "core"], "a", None)
    say(store, "s2", ["core", "garden"], "b", None)
    say(store, "s3", ["garden", "lisbon"], "c", None)


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "first-write": build_first_write,
    "shared-prefix": build_shared_prefix,
    "cross-session": build_cross_session,
}


# -- reading homes ----------------------------------------------------------------------------------------


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree(root: Path) -> dict[str, bytes]:
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def memory_files(home: Path) -> dict[str, bytes]:
    # The recall index is a cache too (tests/memory/recall/test_recall.py checks it against the files after crashes).
    return {
        k: v
        for k, v in tree(home / "memory").items()
        if k not in VOLATILE and not k.startswith(".dagmem/recall/")
    }


def txlog_lines(home: Path) -> list[dict[str, Any]]:
    """The committed lines (complete ones), without `at`."""
    path = home / "memory" / ".dagmem" / "txlog.jsonl"
    data = path.read_bytes() if path.exists() else b""
    lines = data.split(b"\n")[:-1]  # a partial last line is not committed
    return [{k: v for k, v in json.loads(line).items() if k != "at"} for line in lines]


def topic_state(home: Path) -> dict[str, str]:
    """What a reader of memory sees: each topic file and `core.md` -> sha256."""
    memory = home / "memory"
    state = {
        p.relative_to(memory).as_posix(): sha(p.read_bytes())
        for p in sorted((memory / "topics").rglob("*"))
        if p.is_file()
    }
    if (memory / "core.md").exists():
        state["core.md"] = sha((memory / "core.md").read_bytes())
    return state


def archives(home: Path) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in sorted((home / "memory" / "sources").glob("*.md"))}


@contextmanager
def restarted() -> Iterator[None]:
    """Run as a new process would after this one 'died': the dead writer's pid (ours) counts as dead."""
    real = durable.pid_alive
    me = os.getpid()
    with mock.patch.object(durable, "pid_alive", lambda pid: pid != me and real(pid)):
        yield


def open_fresh(home: Path) -> FileSessionStore:
    """What a new process does first: open the workspace (recovery) and load every session (the store
    sweeps the temp files of dead writers); returns the store."""
    with restarted():
        Workspace(home / "memory").close()
        store = FileSessionStore(home)
        for sid in store.session_ids():
            store.load(sid)
    return store


# -- the clean reference ----------------------------------------------------------------------------------


@dataclass
class Reference:
    memory: dict[str, bytes]
    sessions: dict[str, bytes]
    txlog: list[dict[str, Any]]
    states: list[dict[str, str]]  # what readers see after 0, 1, 2, ... transactions of the pass
    sites: list[str]  # the fault sites of a clean pass, in order
    versions: dict[str, set[str | None]] = field(default_factory=dict)  # every version a file ever had

    @property
    def base(self) -> int:
        """Txlog lines before the pass."""
        return len(self.txlog) - len(self.states) + 1

    def __post_init__(self) -> None:
        for state in self.states:
            for path in {p for s in self.states for p in s}:
                self.versions.setdefault(path, set()).add(state.get(path))


def clean_run(template: Path, scratch: Path, action: Callable[[Path], object]) -> Reference:
    run = scratch / "clean"
    shutil.copytree(template, run)
    before = topic_state(run)
    sites: list[str] = []
    with restarted(), faults.armed(sites.append):
        action(run)
    txlog = txlog_lines(run)
    states = [before]
    for line in txlog[len(txlog_lines(template)) :]:  # the pass's own transactions
        state = dict(states[-1])
        for path, digest in line["files"].items():
            if digest is None:
                state.pop(path, None)
            else:
                state[path] = digest
        states.append(state)
    assert states[-1] == topic_state(run)
    ref = Reference(memory_files(run), tree(run / "sessions"), txlog, states, sites)
    check_final(run, ref)
    shutil.rmtree(run)
    return ref


def check_final(home: Path, ref: Reference) -> None:
    """The home is exactly what a clean run leaves, and the oracle agrees that nothing is owed."""
    assert find_leftovers(home) == []
    memory = memory_files(home)
    assert sorted(memory) == sorted(ref.memory)
    assert [k for k in memory if memory[k] != ref.memory[k]] == [], "files differ from the clean run"
    assert txlog_lines(home) == ref.txlog
    sessions = tree(home / "sessions")
    assert sorted(sessions) == sorted(ref.sessions)
    assert [k for k in sessions if sessions[k] != ref.sessions[k]] == [], "node files differ"
    report = check_home(FileSessionStore(home), home / "memory", WSID, drained=True)
    assert report.violations == []
    assert report.owed == []


def check_crashed(home: Path, ref: Reference) -> None:
    """The invariants that hold at any instant after a death, before the redo."""
    # Per file, before anything recovers: each topic is some version a clean run had (or absent).
    seen = topic_state(home)
    for path in set(seen) | set(ref.versions):
        assert seen.get(path) in ref.versions.get(path, {None}), f"{path}: a version no clean run had"
    store = open_fresh(home)
    # As a set, once the workspace recovered: the state after exactly the committed transactions.
    lines = txlog_lines(home)
    assert lines == ref.txlog[: len(lines)], "the txlog is not a prefix of the clean run's"
    assert topic_state(home) == ref.states[len(lines) - ref.base]
    assert find_leftovers(home) == []
    for sid, data in archives(home).items():
        valid = scan_archive(data, sid).valid_end
        assert data[:valid] == ref.memory[f"sources/{sid}.md"][:valid]
    report = check_home(store, home / "memory", WSID)
    assert report.violations == []


# -- the exhaustive loop ----------------------------------------------------------------------------------


class CrashAt:
    """Counts fault sites (those ending in `only`, if given); dies at the n-th. With `tear`, a death at a
    write lands `tear` bytes of it first (a slice bound: -1 is all but the last byte)."""

    def __init__(self, n: int, tear: int | None = None, only: str = "") -> None:
        self.n = n
        self.tear = tear
        self.only = only
        self.count = 0
        self.site: str | None = None

    def __call__(self, site: str) -> None:
        if not site.endswith(self.only):
            return
        self.count += 1
        if self.count == self.n:
            self.site = site
            if self.tear is not None and site.endswith(":write"):
                raise faults.Tear(site, self.tear)
            raise faults.InjectedCrash(site)


def crash(
    home: Path, action: Callable[[Path], object], n: int, tear: int | None = None, only: str = ""
) -> str | None:
    """Run `action` dying at the n-th fault site; the site it died at, or None if it completed."""
    hook = CrashAt(n, tear, only)
    try:
        with restarted(), faults.armed(hook):
            action(home)
    except faults.InjectedCrash:
        return hook.site
    assert hook.count == n - 1
    return None


def exhaust(
    template: Path,
    scratch: Path,
    ref: Reference,
    action: Callable[[Path], object],
    *,
    tear: int | None = None,
    only: str = "",
) -> Counter[str]:
    """Crash at fault site 1, 2, 3, ... until a run survives; check every crash, redo, check the end."""
    died: Counter[str] = Counter()
    n = 0
    while True:
        n += 1
        run = scratch / f"run-{n}"
        shutil.copytree(template, run)
        site = crash(run, action, n, tear, only)
        if site is None:  # survived: every fault site was a crash point
            check_final(run, ref)
            shutil.rmtree(run)
            break
        died[site] += 1
        try:
            check_crashed(run, ref)
            with restarted():
                write_pass(run)
            check_final(run, ref)
        except AssertionError as exc:
            raise AssertionError(f"crash at fault site {n} ({site}): {exc}") from exc
        shutil.rmtree(run)
    assert sum(died.values()) == n - 1
    return died


def report(name: str, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    EXERCISED[name] += count
    with capsys.disabled():
        print(f"\n[crash] {name}: {count} crash points", flush=True)


@pytest.fixture(scope="module", autouse=True)
def _total(request: pytest.FixtureRequest) -> Iterator[None]:
    """At the end of the module, the total of crash points exercised."""
    yield
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture is not None and EXERCISED:
        with capture.global_and_fixture_disabled():
            print(
                f"\n[crash] total: {sum(EXERCISED.values())} crash points in {len(EXERCISED)} loops",
                flush=True,
            )


def _scratch_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the runs live: tmpfs when there is one. The deaths simulated here are process deaths (the page
    cache survives them), so what fsync costs on a disk buys nothing; `test_crash_kill.py` uses the disk."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return Path(tempfile.mkdtemp(prefix="dagmem-crash-", dir=shm))
    return tmp_path_factory.mktemp("crash")


@pytest.fixture(scope="module")
def scratch_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = _scratch_root(tmp_path_factory)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def scratch(scratch_root: Path) -> Path:
    return Path(tempfile.mkdtemp(prefix="t-", dir=scratch_root))


@dataclass
class Suite:
    templates: dict[str, Path]  # each scenario's home, prepared once
    refs: dict[str, Reference]  # and what a clean pass over it leaves


@pytest.fixture(scope="module")
def suite(scratch_root: Path) -> Suite:
    templates = {}
    for name, build in SCENARIOS.items():
        templates[name] = scratch_root / "templates" / name
        build(templates[name])
    scratch = scratch_root / "references"
    scratch.mkdir()
    refs = {name: clean_run(path, scratch, write_pass) for name, path in templates.items()}
    for name, ref in refs.items():
        # The scenarios are not vacuous: at least two transactions, each touching at least two files.
        new = ref.txlog[ref.base :]
        assert len(new) >= 2, name
        assert all(len(line["files"]) >= 2 for line in new), name
    assert any("core.md" in line["files"] for line in refs["first-write"].txlog)
    return Suite(templates, refs)


# -- the four scenarios -----------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_crash_at_every_fault_site_then_redo(
    scenario: str,
    suite: Suite,
    scratch: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ref = suite.refs[scenario]
    died = exhaust(suite.templates[scenario], scratch, ref, write_pass)
    assert sum(died.values()) == len(ref.sites)
    # Every kind of durable step was a crash point.
    kinds = {site.partition(":")[0] for site in died}
    assert {"archive", "stage", "txlog", "install", "mark", "status", "lock"} <= kinds
    report(scenario, sum(died.values()), capsys)


@pytest.mark.parametrize("keep", [1, -1], ids=["first-byte", "all-but-last-byte"])
def test_torn_write_at_every_write_site_then_redo(
    keep: int, suite: Suite, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first-write scenario again, dying at each write (archive append, txlog append, the temp file of
    each stage, mark and status rewrite) with part of it landed: its first byte, or all but its last."""
    ref = suite.refs["first-write"]
    died = exhaust(suite.templates["first-write"], scratch, ref, write_pass, tear=keep, only=":write")
    assert sum(died.values()) == len([site for site in ref.sites if site.endswith(":write")])
    assert set(died) == {"archive:write", "stage:write", "txlog:write", "mark:write", "status:write"}
    report(
        f"first-write, torn writes ({'first byte' if keep == 1 else 'all but the last byte'})",
        sum(died.values()),
        capsys,
    )


# The deaths a redo is asked to survive: (site, occurrence, tear) of the first pass.
FIRST_DEATHS = [
    ("archive:write", 2, 30),  # a partial frame at the end of the archive
    ("txlog:write", 1, -1),  # a partial txlog line: the stage is uncommitted
    ("install:rename", 2, None),  # committed, one topic moved and not the others
    ("mark:rename", 2, None),  # committed and installed, part of the batch marked
]


@pytest.mark.parametrize("death", FIRST_DEATHS, ids=[f"{site}#{k}" for site, k, _ in FIRST_DEATHS])
def test_crash_during_recovery_and_redo(
    death: tuple[str, int, int | None],
    suite: Suite,
    scratch: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Redo after a crash: the first pass dies at `site`; then the redo (recovery included) dies at each
    of its own fault sites in turn, and a second redo must still end as the clean run."""
    site, occurrence, tear = death
    ref = suite.refs["first-write"]
    n = [i for i, s in enumerate(ref.sites, 1) if s == site][occurrence - 1]
    crashed = scratch / "crashed"
    shutil.copytree(suite.templates["first-write"], crashed)
    assert crash(crashed, write_pass, n, tear) == site
    died = exhaust(crashed, scratch, ref, write_pass)
    assert sum(died.values()) > 0
    report(f"redo after {site}#{occurrence}", sum(died.values()), capsys)


# -- the four deaths of the memory issue, by name --------------------------------------------------------


class DieAt:
    """Dies at the `occurrence`-th hit of `site` (with `tear`, a write first lands that many bytes)."""

    def __init__(self, site: str, occurrence: int = 1, tear: int | None = None) -> None:
        self.site = site
        self.occurrence = occurrence
        self.tear = tear
        self.seen = 0

    def __call__(self, site: str) -> None:
        if site != self.site:
            return
        self.seen += 1
        if self.seen == self.occurrence:
            if self.tear is not None:
                raise faults.Tear(site, self.tear)
            raise faults.InjectedCrash(site)


def die(home: Path, hook: Callable[[str], None], action: Callable[[Path], object] = write_pass) -> None:
    with pytest.raises(faults.InjectedCrash), restarted(), faults.armed(hook):
        action(home)


def redo(home: Path) -> None:
    with restarted():
        write_pass(home)


NAMED_DEATHS = {
    "after-archive": ("stage:write", 1),  # evidence archived, nothing staged
    "after-commit-point": ("install:rename", 1),  # the txlog line is fsynced, nothing installed
    "mid-rename": ("install:rename", 2),  # one file of the transaction moved, the others not
    "before-mark": ("mark:write", 1),  # installed, no node marked
}


@pytest.mark.parametrize("death", list(NAMED_DEATHS))
def test_crash_after_archive_after_commit_point_mid_rename_and_before_mark(
    death: str,
    suite: Suite,
    scratch: Path,
) -> None:
    """The memory issue's four deaths: reopen and write again -> nothing lost, nothing consumed twice,
    archive bytes identical, no half-installed topic ever readable."""
    ref = suite.refs["first-write"]
    home = scratch / "home"
    shutil.copytree(suite.templates["first-write"], home)
    die(home, DieAt(*NAMED_DEATHS[death]))
    committed = len(txlog_lines(home)) - ref.base
    assert committed == (0 if death == "after-archive" else 1)
    if death == "mid-rename":  # the death really is mid-rename: some files of the transaction moved
        line = ref.txlog[ref.base]
        moved = [p for p, digest in line["files"].items() if topic_state(home).get(p) == digest]
        assert 0 < len(moved) < len(line["files"])
    check_crashed(home, ref)  # per file, then as a set once reopened; no leftovers; the oracle
    assert topic_state(home) == ref.states[committed]
    redo(home)
    check_final(home, ref)  # nothing lost, nothing twice, archives and topics identical to a clean run


# -- torn writes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("occurrence", "keep"), [(1, 5), (1, 40), (2, 1), (2, 120), (2, -1)])
def test_torn_archive_frame_is_truncated_and_rewritten(
    occurrence: int,
    keep: int,
    suite: Suite,
    scratch: Path,
) -> None:
    """A death mid-append leaves a partial frame (or header) at the end of the archive: a torn tail. The
    next append truncates it, and the archive ends byte-identical to a clean run's."""
    ref = suite.refs["first-write"]
    home = scratch / "home"
    shutil.copytree(suite.templates["first-write"], home)
    die(home, DieAt("archive:write", occurrence, keep))
    data = archives(home)["s"]
    scan = scan_archive(data, "s")
    assert scan.status == "torn"
    assert scan.valid_end < len(data)
    clean = ref.memory["sources/s.md"]
    assert data[: scan.valid_end] == clean[: scan.valid_end]
    # The first batch's four frames are whole (second append); the dying append's frames are not all there.
    assert (len(scan.frames) == 0) if occurrence == 1 else (4 <= len(scan.frames) < 8)
    check_crashed(home, ref)
    redo(home)
    assert archives(home)["s"] == clean
    check_final(home, ref)


@pytest.mark.parametrize("keep", [1, 60, -1])
def test_torn_txlog_line_is_truncated_and_its_stage_discarded(keep: int, suite: Suite, scratch: Path) -> None:
    """A death mid-append of the txlog line leaves a partial line: not committed. Recovery truncates it
    and discards the stage; the batch is still owed and the redo commits it once."""
    ref = suite.refs["first-write"]
    home = scratch / "home"
    shutil.copytree(suite.templates["first-write"], home)
    txlog = home / "memory" / ".dagmem" / "txlog.jsonl"
    size = txlog.stat().st_size
    die(home, DieAt("txlog:write", 1, keep))
    assert txlog.stat().st_size > size
    assert not txlog.read_bytes().endswith(b"\n")
    assert len(list((home / "memory" / ".dagmem" / "stage").iterdir())) == 1
    check_crashed(home, ref)
    assert txlog.stat().st_size == size  # truncated back to the last committed line
    assert topic_state(home) == ref.states[0]
    redo(home)
    check_final(home, ref)


@pytest.mark.parametrize(("site", "occurrence"), [("mark:rename", k) for k in (1, 2, 3, 4)])
def test_death_between_node_file_renames_of_a_mark(
    site: str,
    occurrence: int,
    suite: Suite,
    scratch: Path,
) -> None:
    """Marking writes every new node file of the batch to a temp file and fsyncs them all before the first
    rename, then renames them one at a time: a death between two renames leaves the older nodes marked,
    the rest not, and the rest's complete new bytes in their temp files. No record is stranded; the temp
    files are swept; the redo marks the rest without distilling anything again."""
    ref = suite.refs["first-write"]
    home = scratch / "home"
    shutil.copytree(suite.templates["first-write"], home)
    die(home, DieAt(site, occurrence))
    temps = [p for p in (home / "sessions").rglob("*") if is_temp_name(p.name)]
    assert len(temps) == 4 - (occurrence - 1)
    for temp in temps:  # each a whole node file, marked, only not renamed yet
        node = parse_node(temp.read_bytes())[0]
        assert node is not None
        assert node.metadata
    nodes = FileSessionStore(home).load("s").nodes
    marked = [nid for nid in ("m1", "m2", "m3", "m4") if nodes[nid].metadata]
    assert marked == ["m1", "m2", "m3", "m4"][: occurrence - 1]
    check_crashed(home, ref)
    assert not any(t.exists() for t in temps)
    redo(home)
    check_final(home, ref)


@pytest.mark.parametrize(
    ("site", "keep", "temps"), [("mark:write", 1, 2), ("mark:write", -1, 2), ("mark:fsync", None, 4)]
)
def test_torn_node_file_temp_of_a_mark(
    site: str, keep: int | None, temps: int, suite: Suite, scratch: Path
) -> None:
    """A death while a mark's new node files are written (the second one torn) or fsynced leaves every node
    file as it was (none is renamed before all are durable) and the temp files so far, which the next
    process sweeps."""
    ref = suite.refs["first-write"]
    home = scratch / "home"
    shutil.copytree(suite.templates["first-write"], home)
    before = tree(home / "sessions")
    die(home, DieAt(site, 2, keep))
    after = tree(home / "sessions")
    changed = {k for k in after if before.get(k) != after[k]}
    assert len([k for k in changed if is_temp_name(k.rsplit("/", 1)[-1])]) == temps
    assert [k for k in changed if not is_temp_name(k.rsplit("/", 1)[-1])] == []  # no node file touched
    check_crashed(home, ref)
    redo(home)
    check_final(home, ref)


@pytest.mark.parametrize(("site", "keep"), [("node:write", 7), ("node:rename", None), ("meta:write", -1)])
def test_torn_append_leaves_a_loadable_session(site: str, keep: int | None, scratch: Path) -> None:
    """A death during an append (the node file, then `meta.json`) leaves the session loadable: the turn is
    there or not (the append never returned), the temp file is swept, and appending goes on."""
    home = scratch / "home"
    store = new_home(home)
    ids = say(store, "s", ["lisbon"], "m", None)
    with pytest.raises(faults.InjectedCrash), faults.armed(DieAt(site, 1, keep)):
        store.append("s", "user", "and the lisbon trams?", node_id="m3", predecessor=ids[-1])
    assert [p for p in (home / "sessions").rglob("*") if is_temp_name(p.name)]
    store = open_fresh(home)
    assert find_leftovers(home) == []
    snapshot = store.load("s")
    assert snapshot.problems == []
    assert ("m3" in snapshot.nodes) == (site == "meta:write")
    assert snapshot.meta.head == ids[-1]  # meta.json is the old one either way
    store.append("s", "user", "what about the lisbon food?", node_id="m4", predecessor=ids[-1])
    write_pass(home)
    assert check_home(FileSessionStore(home), home / "memory", WSID, drained=True).violations == []


# -- I/O errors: disk full, permission denied -------------------------------------------------------------


class FailAt:
    """Raises an OSError with `code` at the n-th fault site (one failure, as a write that hit a full disk)."""

    def __init__(self, n: int, code: int) -> None:
        self.n = n
        self.code = code
        self.count = 0
        self.site: str | None = None

    def __call__(self, site: str) -> None:
        self.count += 1
        if self.count == self.n:
            self.site = site
            raise OSError(self.code, os.strerror(self.code), site)


def build_one_batch(root: Path, *, earlier: bool) -> None:
    """Session `s` owes one batch (three exchanges, three topics and `core.md`); with `earlier`, an earlier
    batch of it is written, so its archive exists and the failing append goes to its end."""
    store = new_home(root)
    say(store, "base", ["lisbon", "garden"], "z", None)
    after = say(store, "s", ["python"], "p", None)[-1] if earlier else None
    write_pass(root)
    say(store, "s", ["lisbon", "core", "violin"], "m", after)


def one_batch_pass(
    home: Path, fault: Callable[[str], None] | None = None, *, attempts: int = 1
) -> SessionResult:
    """A fresh process writes session `s` (one batch) through the pass, `fault` armed around the write."""
    with restarted():
        store = FileSessionStore(home)
        workspace = Workspace(home / "memory")
    try:
        with faults.armed(fault or (lambda site: None)):
            return write_session(
                store,
                workspace,
                "s",
                boundary=True,
                distiller=WithCore(),
                threshold=10_000,
                attempts=attempts,
                retry_delay=0.0,
            )
    finally:
        workspace.close()


ERRORS = [
    (errno.ENOSPC, ReasonCode.DISK_FULL, True),
    (errno.EACCES, ReasonCode.PERMISSION_DENIED, False),
]


@pytest.mark.parametrize("earlier", [False, True], ids=["new-archive", "existing-archive"])
@pytest.mark.parametrize("error", ERRORS, ids=["ENOSPC", "EACCES"])
def test_io_error_at_every_fault_site_is_classified_and_leaves_the_workspace_as_it_was(
    error: tuple[int, ReasonCode, bool],
    earlier: bool,
    scratch: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ENOSPC / EACCES at each fault site of a batch's write: a classified failure (DISK_FULL retryable,
    PERMISSION_DENIED permanent). Before the commit point, the workspace is byte-identical to before (but
    for `status.json`, which records the failure, and the SQLite cache), no temp file is left, and the batch
    is still owed: no txlog line, no marker. One exception, by design (DESIGN §4): once the archive step
    completed, its evidence stays (unreferenced, exactly the bytes a clean run appends; another writer may
    already cite it), so a failed archive append leaves the archive as it was, a later failure leaves it as
    the clean run's. After the commit point, the transaction is committed: a failed move into place is
    rolled forward in the same call (the fault fires once), anything after it the next open finishes.
    Either way a later clean write ends as a clean run."""
    code, reason, retryable = error
    template = scratch / "template"
    build_one_batch(template, earlier=earlier)
    clean = scratch / "clean"
    shutil.copytree(template, clean)
    sites: list[str] = []
    assert one_batch_pass(clean, sites.append).outcome == "written"
    ref = Reference(memory_files(clean), tree(clean / "sessions"), txlog_lines(clean), [], sites)
    commit_point = sites.index("install:rename")  # sites before it are before the txlog line is durable
    archived = max(i for i, site in enumerate(sites, 1) if site.startswith("archive:"))
    before_memory, before_sessions = memory_files(template), tree(template / "sessions")
    evidence = {k: v for k, v in ref.memory.items() if k.startswith("sources/")}
    for n, site in enumerate(sites, 1):
        home = scratch / f"run-{n}"
        shutil.copytree(template, home)
        result = one_batch_pass(home, FailAt(n, code))
        try:
            # An error is not a death: the process that met it cleans up after itself. Only a committed
            # transaction's stage may wait (for the next open or write to finish it).
            left = find_leftovers(home)
            assert [p for p in left if "/.dagmem/stage/" not in f"/{p}"] == []
            assert left == [] or n > commit_point
            # The batch was written; only its report (status) or the recall cache's update failed (readers
            # replay what the cache lacks from the txlog: tests/memory/recall/test_recall.py), or a move of its committed
            # transaction, rolled forward in the same call.
            if site.startswith(("status:", "recall:")) or (site.startswith("install:") and n > commit_point):
                assert result.outcome == "written"
                assert [p for p in find_leftovers(home) if "/.dagmem/stage/" in f"/{p}"] == []
            else:
                assert (result.outcome, result.reason_code, result.retryable) == ("failed", reason, retryable)
                status = load_status(home / "memory" / ".dagmem" / "status.json")
                assert status.last_failure is not None
                assert status.last_failure.reason_code == reason
            if n <= commit_point:
                expected = before_memory if n <= archived else {**before_memory, **evidence}
                assert memory_files(home) == expected
                assert txlog_lines(home) == txlog_lines(template)
                assert tree(home / "sessions") == before_sessions  # no marker
                owed = check_home(FileSessionStore(home), home / "memory", WSID).owed
                assert len(owed) == 6  # the whole batch is still owed
            open_fresh(home)
            assert find_leftovers(home) == []
            assert check_home(FileSessionStore(home), home / "memory", WSID).violations == []
            assert one_batch_pass(home).outcome in ("written", "nothing-due")
            check_final(home, ref)
        except AssertionError as exc:
            raise AssertionError(f"{errno.errorcode[code]} at fault site {n} ({site}): {exc}") from exc
        shutil.rmtree(home)
    label = f"{errno.errorcode[code]}, {'existing' if earlier else 'new'} archive"
    report(f"I/O errors ({label})", len(sites), capsys)


def test_an_install_that_failed_after_the_commit_point_is_finished_before_any_marker(scratch: Path) -> None:
    """ENOSPC at the second and third renames of a committed transaction (its roll forward in the same
    call fails too): the retry in the same pass finds the records consumed, finishes the install (under
    the lock) and only then marks them."""
    home = scratch / "home"
    build_one_batch(home, earlier=False)
    renames = 0

    def renames_fail(site: str) -> None:
        nonlocal renames
        if site == "install:rename":
            renames += 1
            if renames in (2, 3):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), site)

    result = one_batch_pass(home, renames_fail, attempts=3)
    assert renames >= 3
    assert result.outcome == "written"
    status = load_status(home / "memory" / ".dagmem" / "status.json")  # read, not opened: no recovery
    assert status.last_failure is not None  # it did fail once
    assert status.last_failure.reason_code is ReasonCode.DISK_FULL
    # Without reopening: no stage waits, and every file of the transaction is the new version.
    assert find_leftovers(home) == []
    line = txlog_lines(home)[-1]
    for path, digest in line["files"].items():
        assert sha((home / "memory" / path).read_bytes()) == digest
    assert check_home(FileSessionStore(home), home / "memory", WSID, drained=True).violations == []


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS, errno.ENOSPC], ids=["EACCES", "EROFS", "ENOSPC"])
def test_a_committed_transaction_whose_move_fails_once_rolls_forward_in_the_same_pass(
    scratch: Path, code: int
) -> None:
    """Issue 28: a move into `topics/` that fails (read-only for a moment) after the txlog committed the
    transaction is no permanent failure waiting for the next open: one attempt, and the install is rolled
    forward in the same call; the batch is written and marked, no stage is left."""
    home = scratch / "home"
    build_one_batch(home, earlier=False)
    renames = 0

    def second_rename_fails(site: str) -> None:
        nonlocal renames
        if site == "install:rename":
            renames += 1
            if renames == 2:
                raise OSError(code, os.strerror(code), site)

    result = one_batch_pass(home, second_rename_fails, attempts=1)
    assert renames >= 2
    assert result.outcome == "written", result.as_json()
    status = load_status(home / "memory" / ".dagmem" / "status.json")  # read, not opened: no recovery
    assert status.last_failure is None
    assert find_leftovers(home) == []
    line = txlog_lines(home)[-1]
    for path, digest in line["files"].items():
        assert sha((home / "memory" / path).read_bytes()) == digest
    assert check_home(FileSessionStore(home), home / "memory", WSID, drained=True).violations == []


# -- temp files of dead writers ---------------------------------------------------------------------------


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not durable.pid_alive(child.pid)
    return child.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


def plant(directory: Path, pids: dict[str, int]) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    planted = {}
    for label, pid in pids.items():
        planted[label] = directory / f".{label}.json.{pid}-7.tmp"
        planted[label].write_bytes(b'{"partial')
    return planted


def test_sweep_temp_removes_only_the_temp_files_of_dead_writers(tmp_path: Path, live_pid: int) -> None:
    dead = dead_pid()
    planted = plant(tmp_path, {"dead": dead, "mine": os.getpid(), "live": live_pid})
    other = [tmp_path / ".no-pid.tmp", tmp_path / "data.json", tmp_path / ".editor.swp"]
    for path in other:
        path.write_bytes(b"x")
    directory = tmp_path / f".dir.{dead}-1.tmp"
    directory.mkdir()
    assert durable.sweep_temp(tmp_path) == [planted["dead"]]
    assert planted["mine"].exists()
    assert planted["live"].exists()
    assert all(path.exists() for path in other)
    assert directory.is_dir()  # only files are ever removed
    assert durable.sweep_temp(tmp_path / "missing") == []
    assert durable.temp_owner(planted["live"].name) == live_pid


def test_the_session_store_sweeps_dead_writers_temp_files_when_it_first_opens_a_session(
    tmp_path: Path, live_pid: int
) -> None:
    home = tmp_path / "home"
    store = new_home(home)
    say(store, "s", ["lisbon"], "m", None)
    say(store, "t", ["garden"], "m", None)
    dead = dead_pid()
    in_session = plant(home / "sessions" / "s", {"dead": dead, "live": live_pid})
    in_shard = plant(home / "sessions" / "s" / "history" / "0000", {"dead": dead, "live": live_pid})
    in_other = plant(home / "sessions" / "t" / "history" / "0000", {"dead": dead})
    fresh = FileSessionStore(home)
    assert fresh.load("s").problems == []  # load sweeps
    assert not in_session["dead"].exists()
    assert not in_shard["dead"].exists()
    assert in_session["live"].exists()  # another process may be mid-write
    assert in_shard["live"].exists()
    assert in_other["dead"].exists()  # only the session opened
    fresh.append("t", "user", "and the garden roses?")  # so does the first append (`_open`)
    assert not in_other["dead"].exists()


def test_workspace_recovery_never_removes_a_live_writers_temp_file(tmp_path: Path, live_pid: int) -> None:
    """Full recovery sweeps `.dagmem/` and the memory root, but a process that is alive may be between
    its write and its rename of `status.json` (it writes status outside the lock)."""
    memory = tmp_path / "memory"
    Workspace(memory, workspace_id=WSID).close()
    dead = dead_pid()
    state = plant(memory / ".dagmem", {"dead": dead, "live": live_pid})
    root = plant(memory, {"dead": dead, "live": live_pid})
    Workspace(memory).close()
    assert not state["dead"].exists()
    assert not root["dead"].exists()
    assert state["live"].exists()
    assert root["live"].exists()


# -- found by the kill tests --------------------------------------------------------------------------------


def test_a_lagging_archive_index_never_truncates_another_writers_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers archive the same session. A appends, and before it records that in the shared index,
    B appends and records its frame; then A records its (now older) state. The next writer resumes from
    that state: B's frame lies past the recorded valid end, its id is already known, so a scan of the tail
    alone takes it for a duplicate, calls it a torn tail and truncates evidence that B's transaction cites
    (found as consumed-not-archived by test_crash_kill's contention variant). Truncating is decided from
    the whole file."""
    from dagmem.memory.format import ArchiveRecord

    def record(node_id: str) -> ArchiveRecord:
        return ArchiveRecord("s", node_id, "user", int(node_id[1:]), 1_750_000_000.0, f"turn {node_id}")

    memory = tmp_path / "memory"
    a = Workspace(memory, workspace_id=WSID)
    b = Workspace(memory)
    a.archive("s", [record("n1")])
    late = a.index.set_archive

    def b_appends_first(*args: Any, **kwargs: Any) -> None:
        b.archive("s", [record("n2")])
        late(*args, **kwargs)

    monkeypatch.setattr(a.index, "set_archive", b_appends_first)
    a.archive("s", [record("n3")])
    c = Workspace(memory)
    c.archive("s", [record("n4")])
    scan = scan_archive((memory / "sources" / "s.md").read_bytes(), "s")
    assert scan.status == "complete"
    assert [frame.node_id for frame in scan.frames] == ["n1", "n3", "n2", "n4"]
    for workspace in (a, b, c):
        workspace.close()


def test_loading_a_session_while_another_process_appends_to_it_is_consistent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dagmem write` reads a session while its host appends (node file, then `meta.json`). A reader that
    listed the node files before the append and read `meta.json` after it saw a head that is not a node,
    and refused the session as INVALID_INPUT (found by test_crash_kill's contention variant). The reader
    reads `meta.json` first."""
    home = tmp_path / "home"
    host = new_home(home)
    ids = say(host, "s", ["lisbon"], "m", None)
    reader = FileSessionStore(home)
    backend: Any = reader._backend
    listed = backend.history

    def history_then_append(sid: str) -> list[str]:
        names: list[str] = listed(sid)
        host.append(sid, "user", "and the lisbon trams?", node_id="m3", predecessor=ids[-1])
        return names

    monkeypatch.setattr(backend, "history", history_then_append)
    snapshot = reader.load("s")
    assert snapshot.problems == []
    assert snapshot.meta.head == ids[-1]
    assert FileSessionStore(home).load("s").meta.head == "m3"


def test_marking_nodes_another_process_appended_after_this_one_indexed_the_session(tmp_path: Path) -> None:
    """`dagmem write` (no --force) reads a session's meta (which indexes its node files), then loads it and
    writes a batch that holds turns the host appended in between; marking them raised UnknownNode, a
    permanent INVALID_INPUT for a batch already committed (found by the contention soak). The store looks
    at the files again before calling a node unknown."""
    home = tmp_path / "home"
    host = new_home(home)
    ids = say(host, "s", ["lisbon"], "m", None)
    writer = FileSessionStore(home)
    writer.meta("s")  # indexes m1, m2
    later = say(host, "s", ["garden"], "g", ids[-1])
    assert [n.id for n in writer.read_nodes("s", later)] == later
    assert mark_nodes(writer, "s", later, WSID) == later
