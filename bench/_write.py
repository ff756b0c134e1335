"""`dagmem bench write`: the cost of one write as the workspace and the session archive grow.

One write is what the runtime does when a batch is due: `write_batch` (archive → distil → install one
transaction) and then `mark_nodes` on a real `FileSessionStore`, with fsync on (the default). The batch is
8 records (4 user/assistant exchanges, 150-400 characters each, seeded text), with fresh node ids each time,
so every write is a real one (a new archive append, a new txlog line, 8 node files rewritten).

Three homes, measured side by side in one run (the order rotated every repetition, so noise hits all alike),
each written the same sequence of batches (same texts, same node ids):

- `small`: 10 topic files; each write appends to a session whose archive holds 10 turns.
- `large_workspace`: 10,000 topic files; the same 10-turn sessions.
- `long_archive`: 10 topic files; every write appends to one session whose archive holds 10,000 turns.

Goal (a) is `large_workspace / small` and goal (b) `long_archive / small`, on the median of one write,
each ≤ 1.5.

How the fixtures are built (with fsync off, then reopened with fsync on before anything is measured):

- The 10 shared topic files come from one real `write_batch` of a `seed` session (10 exchanges, each about
  one of 10 made-up topic words). Every measured exchange is about one of these words, so every measured
  write edits shared topic files of the same sizes in every home, and the topic count never changes.
- `large_workspace`'s other 9,990 topic files come from real `write_batch` calls: sessions of 256 records,
  16 records (8 exchanges) per call, each exchange about a distinct made-up word, so each call creates 8
  topic files (the extractive distiller files an exchange under the name it keeps saying). Their evidence is
  archived and their txlog lines are real; their nodes are not kept in `sessions/` (the store is per
  session: another session's node files cannot change this write's cost).
- A measured session's earlier turns (10, or 10,000 for `long_archive`) are appended to the store, archived
  (`Workspace.archive`, 200 records per append, as a 16,000-token batch would be) and consumed by txlog
  lines with `"migrated": true` and `"files": {}` (as `dagmem migrate` adopts history), then marked. So
  the archive and the index grow, and the topic files stay the same as in `small`.
- `small` and `large_workspace` write each batch to a fresh 10-turn session (a session per repetition), so
  every measured write appends to an archive of exactly 10 turns; `long_archive` appends every batch to its
  one long session (10,000 turns at the first write).

Before each warm write (untimed): the batch's 8 nodes are appended to the store, and the session's last
consumed records are offered again (a no-op redo), so the session's archive is open in the workspace, as in
a long-running writer. A cold write closes the `Workspace`, opens a new one (a new process: recovery, index
sync, SQLite open) and writes with an empty archive cache; the first touch of the session in a fresh
`FileSessionStore` (it lists the session's node files once per process) is timed separately. Separate
repetitions run under cProfile to split one write into its steps. The scratch directory is a fresh temporary
directory (honours `TMPDIR`), removed afterwards; `--home` is ignored.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import random
import re
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..memory.audit import check_home
from ..memory.format import TOPIC_INDEX, ArchiveRecord, HomePaths, Node, WorkspacePaths, is_topic_path
from ..memory.store import FakeClock, FileSessionStore
from ..memory.workspace import Workspace
from ..memory.write import TOPIC_FILE_LIMIT, ExtractiveDistiller, mark_nodes, records_of, write_batch
from ..memory.writing import open_for_writing
from . import _kit as kit

__all__ = ["main", "run"]

GOAL_RATIO = 1.5
SMALL = 10
LARGE = 10_000
QUICK_LARGE = 1_000
REPS = 60
QUICK_REPS = 20
COLD_REPS = 10
QUICK_COLD_REPS = 5
PROFILE_REPS = 5
QUICK_PROFILE_REPS = 3
WARMUP = 2
SEED = 20_240_611
BATCH_EXCHANGES = 4  # 8 records per measured write
FIXTURE_EXCHANGES = 8  # 16 records, 8 new topic files per fixture transaction
FIXTURE_SESSION_RECORDS = 256
PREFIX_CHUNK = 200
SETUPS = ("small", "large_workspace", "long_archive")
LONG_SESSION = "long"
SEED_SESSION = "seed"
EPOCH = 1_750_000_000.0

# (step, file under memory/, qualified name): cProfile's cumulative time of these functions per write.
_WRITE_STEPS = (
    ("archive the evidence", "workspace/_workspace.py", "Workspace.archive"),
    ("consumed check (index)", "workspace/_workspace.py", "Workspace.consumed"),
    ("distil", "write/_distill.py", "ExtractiveDistiller.distill"),
    ("take the workspace lock", "workspace/_workspace.py", "Workspace.lock"),
    ("recover under the lock", "workspace/_workspace.py", "Workspace.recover"),
    ("validate the topics", "write/_core.py", "_validate"),
    ("install: stage, txlog line, move", "durable/_transaction.py", "Installer.commit"),
    ("index: record the tx", "workspace/_index.py", "Index.add_tx"),
    ("mark the 8 nodes", "write/_core.py", "mark_nodes"),
)
_OPEN_STEPS = (
    ("SQLite index open", "workspace/_index.py", "Index.__init__"),
    ("recover + index sync", "workspace/_workspace.py", "Workspace.recover"),
    ("workspace id", "durable/_wsid.py", "ensure_workspace_id"),
)
_ENTRY_POINTS = frozenset({"write_batch", "_write", "mark_nodes", "Workspace.__init__"})


# -- text ----------------------------------------------------------------------------------------------


def _exchange(rng: random.Random, topic: str) -> list[tuple[str, str]]:
    """A user turn and the assistant's answer, both about `topic`, written as a name ("Bavoku": the
    extractive distiller files an exchange under the name it keeps saying): the user says it three times
    and the assistant twice, which no filler word can match, so the exchange is filed in `topics/<topic>.md`.
    The assistant asks nothing back (its "?" become "."): the next exchange is a block of its own."""
    name = topic[:1].upper() + topic[1:]
    return [
        ("user", kit.topic_text(rng, name, 3, numbers=True)),
        ("assistant", kit.topic_text(rng, name, 2, numbers=True).replace("?", ".")),
    ]


@dataclass(frozen=True)
class _Batch:
    """One measured write: (node id, role, text) for each record, and the topic files it must touch."""

    items: tuple[tuple[str, str, str], ...]
    topics: frozenset[str]


def _batches(count: int, common: Sequence[str], rng: random.Random) -> list[_Batch]:
    batches: list[_Batch] = []
    for rep in range(count):
        items: list[tuple[str, str, str]] = []
        topics: set[str] = set()
        for j in range(BATCH_EXCHANGES):
            topic = common[(rep * BATCH_EXCHANGES + j) % len(common)]
            topics.add(f"topics/{topic}.md")
            for role, text in _exchange(rng, topic):
                items.append((f"b{rep:04d}-{len(items) + 1}", role, text))
        batches.append(_Batch(tuple(items), frozenset(topics)))
    return batches


# -- statistics ----------------------------------------------------------------------------------------


def _summary(values: Sequence[float]) -> dict[str, Any]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "median": round(statistics.median(ordered), 3),
        "p90": round(kit.quantile(ordered, 0.9), 3),
        "mean": round(statistics.fmean(ordered), 3),
        "min": round(ordered[0], 3),
        "max": round(ordered[-1], 3),
    }


class _Profile:
    """cProfile over some writes; per-write cumulative and self times by (file, qualified name)."""

    def __init__(self) -> None:
        self.profiler = cProfile.Profile()
        self.writes = 0
        self.wall = 0.0

    @contextmanager
    def measure(self) -> Iterator[None]:
        start = time.perf_counter()
        self.profiler.enable()
        try:
            yield
        finally:
            self.profiler.disable()
            self.wall += time.perf_counter() - start
            self.writes += 1

    def functions(self) -> dict[str, tuple[float, float]]:
        """`dir/file:qualname` -> (cumulative ms, self ms) per write, for the package's own functions."""
        if not self.writes:
            return {}
        functions = kit.profile_functions(self.profiler, self.writes)
        return {
            key: times for key, times in functions.items() if key.startswith(("memory/", "sim/", "bench/"))
        }

    def steps(self, steps: Sequence[tuple[str, str, str]]) -> dict[str, float]:
        functions = self.functions()
        out: dict[str, float] = {}
        for name, file, qualname in steps:
            out[name] = round(functions.get(f"memory/{file}:{qualname}", (0.0, 0.0))[0], 3)
        total = self.wall * 1e3 / max(1, self.writes)
        out["other"] = round(max(0.0, total - sum(out.values())), 3)
        out["total (profiled)"] = round(total, 3)
        return out


# -- the homes -----------------------------------------------------------------------------------------


@dataclass
class _Setup:
    name: str
    home: Path
    topics: int  # topic files before the first measured write
    archive_turns: int  # turns in a measured session's archive before its first measured write
    workspace_id: str
    clock: FakeClock = field(default_factory=lambda: FakeClock(EPOCH))
    build_seconds: float = 0.0
    samples: dict[str, list[float]] = field(default_factory=dict)
    profiles: dict[str, _Profile] = field(default_factory=dict)
    last: dict[str, list[ArchiveRecord]] = field(default_factory=dict)  # session -> consumed records
    turns_seen: list[int] = field(default_factory=list)  # archive turns before each measured write
    workspace: Workspace | None = None
    store: FileSessionStore | None = None

    @property
    def memory(self) -> Path:
        return HomePaths(self.home).memory

    def session(self, rep: int) -> str:
        return LONG_SESSION if self.name == "long_archive" else f"w{rep:04d}"

    def open(self, *, fsync: bool) -> None:
        # Opened for writing: a write indexes its blocks for recall, as the runtime's does.
        self.workspace = open_for_writing(
            self.home, fsync=fsync, clock=self.clock, workspace_id=self.workspace_id
        )
        self.store = FileSessionStore(self.home, fsync=fsync, clock=self.clock)

    def close(self) -> None:
        if self.workspace is not None:
            self.workspace.close()
        self.workspace = None
        self.store = None

    def add(self, key: str, value: float) -> None:
        self.samples.setdefault(key, []).append(value)

    def profile(self, key: str) -> _Profile:
        return self.profiles.setdefault(key, _Profile())


def _append(store: FileSessionStore, sid: str, items: Sequence[tuple[str | None, str, str]]) -> list[Node]:
    return [store.append(sid, role, text, node_id=node_id) for node_id, role, text in items]


def _consume_migrated(workspace: Workspace, sid: str, records: Sequence[ArchiveRecord]) -> None:
    """Archive these records and consume them with one `migrated` txlog line (no topic file changes), as
    `write_batch` installs a transaction (write.py, step 2b)."""
    workspace.archive(sid, records)
    with workspace.lock():
        workspace.install(sid, [r.source_id for r in records], {}, migrated=True)


def _build_prefix(setup: _Setup, sid: str, turns: int, words: Sequence[str], rng: random.Random) -> None:
    """`turns` earlier turns of a measured session: in the store, archived, consumed, marked."""
    assert setup.workspace is not None
    assert setup.store is not None
    items: list[tuple[str | None, str, str]] = []
    while len(items) < turns:
        for role, text in _exchange(rng, rng.choice(words)):
            items.append((f"p{len(items) + 1}", role, text))
    nodes = _append(setup.store, sid, items[:turns])
    for start in range(0, len(nodes), PREFIX_CHUNK):
        chunk = nodes[start : start + PREFIX_CHUNK]
        _consume_migrated(setup.workspace, sid, records_of(sid, chunk))
        mark_nodes(setup.store, sid, [n.id for n in chunk], setup.workspace_id)
    setup.last[sid] = records_of(sid, nodes[-2:])
    setup.store.forget(sid)


def _build_topics(setup: _Setup, words: Sequence[str], rng: random.Random, say: kit.Progress) -> None:
    """One topic file per word, by real `write_batch` calls (8 exchanges, 8 new topic files each)."""
    assert setup.workspace is not None
    distiller = ExtractiveDistiller()
    per_session = FIXTURE_SESSION_RECORDS // (2 * FIXTURE_EXCHANGES)
    started = time.perf_counter()
    for number, start in enumerate(range(0, len(words), FIXTURE_EXCHANGES)):
        sid = f"fx{number // per_session:04d}"
        base = (number % per_session) * 2 * FIXTURE_EXCHANGES
        records: list[ArchiveRecord] = []
        for word in words[start : start + FIXTURE_EXCHANGES]:
            for role, text in _exchange(rng, word):
                seq = base + len(records) + 1
                records.append(ArchiveRecord(sid, f"n{seq}", role, seq, setup.clock(), text))
        outcome = write_batch(setup.workspace, sid, records, distiller)
        expected = {f"topics/{w}.md" for w in words[start : start + FIXTURE_EXCHANGES]}
        if set(outcome.files) - {TOPIC_INDEX} != expected:  # and the topic index, rewritten with them
            raise RuntimeError(f"fixture batch {number} touched {sorted(outcome.files)[:3]}...")
        done = start + FIXTURE_EXCHANGES
        if number % 250 == 249:
            rate = (time.perf_counter() - started) / done * 1e3
            say(
                f"{setup.name}: {min(done, len(words)):,}/{len(words):,} extra topic files ({rate:.2f} ms each)"
            )


def _build(
    setup: _Setup,
    *,
    common: Sequence[str],
    extra: Sequence[str],
    sessions: int,
    rng: random.Random,
    say: kit.Progress,
) -> None:
    started = time.perf_counter()
    setup.open(fsync=False)
    assert setup.workspace is not None
    assert setup.store is not None
    # The shared topic files: one real write of the seed session, one exchange per shared word.
    items = [
        (f"s{2 * i + k + 1}", role, text)
        for i, word in enumerate(common)
        for k, (role, text) in enumerate(_exchange(rng, word))
    ]
    nodes = _append(setup.store, SEED_SESSION, items)
    outcome = write_batch(
        setup.workspace, SEED_SESSION, records_of(SEED_SESSION, nodes), ExtractiveDistiller()
    )
    mark_nodes(setup.store, SEED_SESSION, outcome.node_ids, setup.workspace_id)
    setup.store.forget(SEED_SESSION)
    if extra:
        _build_topics(setup, extra, rng, say)
    if setup.name == "long_archive":
        say(f"{setup.name}: {setup.archive_turns:,} earlier turns of session {LONG_SESSION!r}")
        _build_prefix(setup, LONG_SESSION, setup.archive_turns, common, rng)
    else:
        for rep in range(sessions):
            _build_prefix(setup, setup.session(rep), setup.archive_turns, common, rng)
    setup.close()
    gc.collect()
    setup.open(fsync=True)  # everything measured runs with fsync on
    setup.build_seconds = time.perf_counter() - started
    found = _count_topics(setup.memory)
    if found != setup.topics:
        raise RuntimeError(f"{setup.name}: built {found} topic files, not {setup.topics}")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _base(relpath: str) -> str:
    """`topics/x.md` for any part `topics/x--N.md` of it (a topic file rolls over into parts when full)."""
    return re.sub(r"--[0-9]+\.md$", ".md", relpath)


def _open_part(memory: Path, relpath: str) -> str:
    """The part of the topic `relpath` that a write appends to: the first that is missing or not full."""
    part, path = 1, relpath
    while _size(memory / path) >= TOPIC_FILE_LIMIT:
        part += 1
        path = relpath.replace(".md", f"--{part}.md")
    return path


def _count_topics(memory: Path) -> int:
    return sum(1 for path in WorkspacePaths(memory).topics.iterdir() if is_topic_path(f"topics/{path.name}"))


def _txlog_lines(memory: Path) -> int:
    with WorkspacePaths(memory).txlog.open("rb") as f:
        return sum(1 for _ in f)


def _facts(setup: _Setup) -> dict[str, Any]:
    memory = setup.memory
    paths = WorkspacePaths(memory)
    sources = list(paths.sources.glob("*.md"))
    return {
        "topic_files": _count_topics(memory),
        "txlog_lines": _txlog_lines(memory),
        "session_archives": len(sources),
        "archive_bytes": sum(p.stat().st_size for p in sources),
        "topic_bytes": sum(p.stat().st_size for p in paths.topics.glob("*.md")),
        "index_bytes": sum(p.stat().st_size for p in paths.state.glob(paths.index.name + "*")),
    }


# -- one measured write --------------------------------------------------------------------------------


def _write(setup: _Setup, rep: int, batch: _Batch, *, kind: str, record: bool, profile: bool) -> None:
    """One write of `batch` into this setup: `kind` is "warm" or "cold"."""
    assert setup.workspace is not None
    assert setup.store is not None
    sid = setup.session(rep)
    distiller = ExtractiveDistiller()
    nodes = _append(setup.store, sid, batch.items)  # the turns themselves (not part of the write)
    records = records_of(sid, nodes)
    setup.turns_seen.append(nodes[0].seq - 1)
    touched = sum(_size(setup.memory / _open_part(setup.memory, relpath)) for relpath in batch.topics)
    store = setup.store
    if kind == "cold":
        setup.workspace.close()
        start = time.perf_counter()
        if profile:
            with setup.profile("cold_open").measure():
                workspace = open_for_writing(setup.home, clock=setup.clock)
        else:
            workspace = open_for_writing(setup.home, clock=setup.clock)
        opened = time.perf_counter() - start
        setup.workspace = workspace
        # A new process's store: its first touch of the session lists the node files (timed on its own).
        store = FileSessionStore(setup.home, clock=setup.clock)
        start = time.perf_counter()
        store.head(sid)
        store_open = time.perf_counter() - start
        setup.store = store
    else:
        workspace = setup.workspace
        redo = write_batch(workspace, sid, setup.last[sid], distiller)  # a no-op: already consumed
        if redo.tx is not None:
            raise RuntimeError(f"{setup.name}: the warm-up redo committed {redo.tx}")
    start = time.perf_counter()
    if profile:
        with setup.profile(f"{kind}_write").measure():
            outcome = write_batch(workspace, sid, records, distiller)
            mark_nodes(store, sid, outcome.node_ids, workspace.workspace_id)
        written = marked = time.perf_counter()
    else:
        outcome = write_batch(workspace, sid, records, distiller)
        written = time.perf_counter()
        mark_nodes(store, sid, outcome.node_ids, workspace.workspace_id)
        marked = time.perf_counter()
    if (
        outcome.tx is None
        or {_base(relpath) for relpath in outcome.files if relpath != TOPIC_INDEX} != batch.topics
    ):
        raise RuntimeError(f"{setup.name}: rep {rep} wrote {outcome.tx} {sorted(outcome.files)}")
    setup.last[sid] = records[-2:]
    if not record:
        return
    setup.add(f"{kind}.write_batch", (written - start) * 1e3)
    setup.add(f"{kind}.mark", (marked - written) * 1e3)
    setup.add(f"{kind}.total", (marked - start) * 1e3)
    setup.add(f"{kind}.touched_kib", touched / 1024)
    if kind == "cold":
        setup.add("cold.open", opened * 1e3)
        setup.add("cold.open_and_write", (opened + marked - start) * 1e3)
        setup.add("cold.store_first_touch", store_open * 1e3)


# -- the run -------------------------------------------------------------------------------------------


def _schedule(reps: int, cold_reps: int, profile_reps: int) -> list[tuple[str, bool, bool]]:
    """(kind, recorded, profiled) per repetition: the warm-up first, then warm, cold and profiled writes
    spread evenly through the run, so that each kind sees the shared topic files at every size."""
    kinds = [
        (("warm", True, False), reps),
        (("cold", True, False), cold_reps),
        (("warm", False, True), profile_reps),
        (("cold", False, True), profile_reps),
    ]
    spread = sorted(
        ((i + 0.5) / count, order, kind) for order, (kind, count) in enumerate(kinds) for i in range(count)
    )
    return [("warm", False, False)] * WARMUP + [kind for _position, _order, kind in spread]


def run(
    small: int = SMALL,
    large: int = LARGE,
    reps: int = REPS,
    cold_reps: int = COLD_REPS,
    profile_reps: int = PROFILE_REPS,
    *,
    check: bool = True,
    scratch: Path | None = None,
    progress: kit.Progress | None = None,
) -> dict[str, Any]:
    """Run the benchmark and return every figure as one JSON-ready dict.

    `small` and `large` are the topic-file counts of (a) and the archive turns of (b). `reps` warm writes,
    `cold_reps` cold writes and `profile_reps` of each under cProfile, per setup. `check` runs the
    independent oracle over every home at the end (not timed)."""
    if not 1 <= small < large or min(reps, cold_reps) < 1 or profile_reps < 0:
        raise ValueError(f"need 1 <= small < large and reps >= 1: {small=} {large=} {reps=} {cold_reps=}")
    say = progress or (lambda _message: None)
    wall = time.perf_counter()
    rng = random.Random(SEED)
    words = kit.topic_words(large, rng)
    common, extra = words[:small], words[small:large]
    schedule = _schedule(reps, cold_reps, profile_reps)
    total_reps = len(schedule)
    batches = _batches(total_reps, common, random.Random(SEED + 1))

    with kit.scratch("write", scratch) as root:
        setups = [
            _Setup("small", root / "small", small, small, "w-" + "0" * 15 + "1"),
            _Setup("large_workspace", root / "large_workspace", large, small, "w-" + "0" * 15 + "2"),
            _Setup("long_archive", root / "long_archive", small, large, "w-" + "0" * 15 + "3"),
        ]
        for setup in setups:
            say(f"building {setup.name} ({setup.topics:,} topic files, {setup.archive_turns:,}-turn archive)")
            # Every home gets the same seed and session texts; only large_workspace gets the extra topics.
            _build(
                setup,
                common=common,
                extra=extra if setup.name == "large_workspace" else (),
                sessions=total_reps,
                rng=random.Random(SEED + 2),
                say=say,
            )
            say(f"{setup.name}: built in {setup.build_seconds:.1f} s")
        before = {setup.name: _facts(setup) for setup in setups}

        say(
            f"measuring: {WARMUP} warm-up, {reps} warm, {cold_reps} cold and {profile_reps} + {profile_reps} "
            "profiled writes per setup, spread through the run; setup order shuffled every repetition"
        )
        order_rng = random.Random(SEED + 3)
        measuring = time.perf_counter()
        for rep, (kind, record, profile) in enumerate(schedule):
            order = list(setups)
            order_rng.shuffle(order)
            for setup in order:
                _write(setup, rep, batches[rep], kind=kind, record=record, profile=profile)
            if rep % 20 == 19:
                say(f"repetition {rep + 1}/{total_reps}")
        measuring_s = time.perf_counter() - measuring
        after = {setup.name: _facts(setup) for setup in setups}

        oracle: dict[str, Any] = {}
        if check:
            say("checking every home with the independent oracle")
            for setup in setups:
                setup.close()
                sessions = [SEED_SESSION, *sorted({setup.session(r) for r in range(total_reps)})]
                report = check_home(
                    FileSessionStore(setup.home),
                    setup.memory,
                    setup.workspace_id,
                    drained=True,
                    sessions=sessions,
                )
                oracle[setup.name] = {
                    "ok": report.ok,
                    "violations": len(report.violations),
                    "first": [str(v) for v in report.violations[:3]],
                    "consumed": report.consumed,
                    "archived": report.archived,
                    "cited": report.cited,
                    "marked": report.marked,
                }
        for setup in setups:
            setup.close()

    return _result(
        setups,
        before=before,
        after=after,
        oracle=oracle,
        sizes=(small, large),
        reps=(reps, cold_reps, profile_reps),
        batches=batches,
        measuring_s=measuring_s,
        wall_s=time.perf_counter() - wall,
    )


def _result(
    setups: list[_Setup],
    *,
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    oracle: dict[str, Any],
    sizes: tuple[int, int],
    reps: tuple[int, int, int],
    batches: list[_Batch],
    measuring_s: float,
    wall_s: float,
) -> dict[str, Any]:
    small, large = sizes
    lengths = [len(text) for batch in batches for _id, _role, text in batch.items]
    result: dict[str, Any] = {
        "benchmark": "write",
        "seed": SEED,
        "small": small,
        "large": large,
        "goal_ratio": GOAL_RATIO,
        "fsync": True,
        "batch": {
            "records": 2 * BATCH_EXCHANGES,
            "exchanges": BATCH_EXCHANGES,
            "chars_min": min(lengths),
            "chars_median": statistics.median(lengths),
            "chars_max": max(lengths),
            "topic_files_touched": BATCH_EXCHANGES,
        },
        "reps": {"warmup": WARMUP, "warm": reps[0], "cold": reps[1], "profiled": reps[2]},
        "fixture": {
            "shared_topics": "one real write_batch of a seed session, one exchange per shared topic word",
            "extra_topics": (
                f"real write_batch calls of {2 * FIXTURE_EXCHANGES} records ({FIXTURE_EXCHANGES} new topic "
                f"files each), sessions of {FIXTURE_SESSION_RECORDS} records; nodes not kept in sessions/"
            ),
            "earlier_turns": (
                f"appended to the store, archived {PREFIX_CHUNK} per append, consumed by migrated txlog "
                "lines (files {}), marked"
            ),
            "built_with_fsync": False,
        },
        "setups": {},
    }
    for setup in setups:
        samples = setup.samples
        entry: dict[str, Any] = {
            "topic_files": setup.topics,
            "archive_turns": setup.archive_turns,
            "archive_turns_at_writes": [min(setup.turns_seen), max(setup.turns_seen)],
            "build_seconds": round(setup.build_seconds, 1),
            "before": before[setup.name],
            "after": after[setup.name],
            "warm": {key: _summary(samples[f"warm.{key}"]) for key in ("total", "write_batch", "mark")},
            "cold": {
                key: _summary(samples[f"cold.{key}"])
                for key in ("open", "write_batch", "mark", "open_and_write", "store_first_touch")
            },
            "warm_ms_each": [round(v, 3) for v in samples["warm.total"]],
            "drift": _drift(samples["warm.total"], samples["warm.touched_kib"]),
        }
        if setup.profiles:
            entry["steps"] = {
                "warm": setup.profile("warm_write").steps(_WRITE_STEPS),
                "cold_open": setup.profile("cold_open").steps(_OPEN_STEPS),
                "cold_write": setup.profile("cold_write").steps(_WRITE_STEPS),
            }
        result["setups"][setup.name] = entry

    base = result["setups"]["small"]
    ratios: dict[str, Any] = {}
    for key, other in (("a_workspace", "large_workspace"), ("b_archive", "long_archive")):
        s = result["setups"][other]
        ratios[key] = {
            "compared": [other, "small"],
            "warm_median": kit.ratio(s["warm"]["total"]["median"], base["warm"]["total"]["median"]),
            "warm_p90": kit.ratio(s["warm"]["total"]["p90"], base["warm"]["total"]["p90"]),
            "warm_paired_median": round(
                statistics.median(
                    a / b for a, b in zip(s["warm_ms_each"], base["warm_ms_each"], strict=True) if b > 0
                ),
                3,
            ),
            "warm_write_batch_median": kit.ratio(
                s["warm"]["write_batch"]["median"], base["warm"]["write_batch"]["median"]
            ),
            "warm_mark_median": kit.ratio(s["warm"]["mark"]["median"], base["warm"]["mark"]["median"]),
            "cold_open_median": kit.ratio(s["cold"]["open"]["median"], base["cold"]["open"]["median"]),
            "cold_open_and_write_median": kit.ratio(
                s["cold"]["open_and_write"]["median"], base["cold"]["open_and_write"]["median"]
            ),
            "cold_store_first_touch_median": kit.ratio(
                s["cold"]["store_first_touch"]["median"], base["cold"]["store_first_touch"]["median"]
            ),
        }
        if "steps" in s:
            ratios[key]["growth"] = kit.growth(
                next(x for x in setups if x.name == other).profile("warm_write").functions(),
                next(x for x in setups if x.name == "small").profile("warm_write").functions(),
                top=6,
                digits=3,
            )
    result["ratios"] = ratios
    result["goals"] = {key: bool(r["warm_median"] <= GOAL_RATIO) for key, r in ratios.items()}
    result["goal_met"] = all(result["goals"].values())
    result["oracle"] = oracle
    result["measuring_seconds"] = round(measuring_s, 1)
    result["wall_seconds"] = round(wall_s, 1)
    return result


def _drift(ms: Sequence[float], kib: Sequence[float]) -> dict[str, Any]:
    """The first and the last fifth of the warm writes (in run order): median ms and median size of the
    topic files the write touched (they grow as the run adds blocks to them)."""
    n = max(1, len(ms) // 5)
    return {
        "first": {
            "ms": round(statistics.median(ms[:n]), 3),
            "touched_kib": round(statistics.median(kib[:n]), 1),
        },
        "last": {
            "ms": round(statistics.median(ms[-n:]), 3),
            "touched_kib": round(statistics.median(kib[-n:]), 1),
        },
        "writes_each": n,
    }


# -- output --------------------------------------------------------------------------------------------

_LABELS = {
    "small": "small",
    "large_workspace": "(a) large workspace",
    "long_archive": "(b) long archive",
}


def _ms(figures: dict[str, Any]) -> str:
    return f"{figures['median']:.2f} ({figures['p90']:.2f})"


def _print_report(r: dict[str, Any]) -> None:
    console = kit.report_console(130)
    small, large = r["small"], r["large"]
    b = r["batch"]
    console.print(
        f"dagmem bench write: one write = write_batch + mark_nodes of {b['records']} records "
        f"({b['exchanges']} exchanges, {b['chars_min']}-{b['chars_max']} chars, median "
        f"{b['chars_median']:g}) on a FileSessionStore, fsync on; {r['reps']['warm']} warm and "
        f"{r['reps']['cold']} cold writes per setup, setups interleaved"
    )

    setups = kit.table(
        "the setups (before the first measured write)",
        "setup",
        "topic files",
        "archive turns\nat each write",
        "txlog lines",
        "archives",
        "index",
        "built in",
    )
    for name, label in _LABELS.items():
        s = r["setups"][name]
        turns = s["archive_turns_at_writes"]
        setups.add_row(
            label,
            f"{s['before']['topic_files']:,}",
            f"{turns[0]:,}" if turns[0] == turns[1] else f"{turns[0]:,}-{turns[1]:,}",
            f"{s['before']['txlog_lines']:,}",
            f"{s['before']['session_archives']:,} ({s['before']['archive_bytes'] / 2**20:.1f} MiB)",
            f"{s['before']['index_bytes'] / 2**20:.1f} MiB",
            f"{s['build_seconds']:.1f} s",
        )
    console.print(setups)

    table = kit.table(
        "ms per write, median (p90)",
        "setup",
        "warm: write+mark",
        "write_batch",
        "mark",
        "cold: open ws",
        "cold: open+write+mark",
        "fresh store: 1st touch",
    )
    for name, label in _LABELS.items():
        s = r["setups"][name]
        table.add_row(
            label,
            _ms(s["warm"]["total"]),
            _ms(s["warm"]["write_batch"]),
            _ms(s["warm"]["mark"]),
            _ms(s["cold"]["open"]),
            _ms(s["cold"]["open_and_write"]),
            _ms(s["cold"]["store_first_touch"]),
        )
    for key, label in (("a_workspace", "ratio (a) / small"), ("b_archive", "ratio (b) / small")):
        q = r["ratios"][key]
        table.add_row(
            label,
            f"{q['warm_median']:.2f} ({q['warm_p90']:.2f})",
            f"{q['warm_write_batch_median']:.2f}",
            f"{q['warm_mark_median']:.2f}",
            f"{q['cold_open_median']:.2f}",
            f"{q['cold_open_and_write_median']:.2f}",
            f"{q['cold_store_first_touch_median']:.2f}",
        )
    console.print(table)

    if all("steps" in r["setups"][name] for name in _LABELS):
        steps = kit.table(
            "where one write goes: ms per write under cProfile (separate repetitions; the profiler "
            "inflates Python-heavy steps several-fold: compare across columns, not with the table above)",
            "step",
            *_LABELS.values(),
            "(a)/small",
            "(b)/small",
        )
        for kind, title in (("warm", "warm write"), ("cold_open", "cold: open the workspace")):
            for step in r["setups"]["small"]["steps"][kind]:
                values = [r["setups"][name]["steps"][kind][step] for name in _LABELS]
                ratio = [f"{v / values[0]:.2f}" if values[0] >= 0.05 else "-" for v in values[1:]]
                steps.add_row(f"{title}: {step}", *(f"{v:.2f}" for v in values), *ratio)
        console.print(steps)

    console.print(
        f"fixtures: shared topic files by {r['fixture']['shared_topics']}; (a)'s other "
        f"{large - small:,} topic files by {r['fixture']['extra_topics']}; a session's earlier turns "
        f"{r['fixture']['earlier_turns']}. Built with fsync off, reopened with fsync on before measuring."
    )
    for key, what in (
        ("a_workspace", f"{large:,} vs {small:,} topic files"),
        ("b_archive", f"appending to a {large:,}-turn vs a {small:,}-turn archive"),
    ):
        q = r["ratios"][key]
        met = r["goals"][key]
        console.print(
            f"GOAL ({key[0]}) {'MET' if met else 'MISSED'}: one write, {what}: median ratio "
            f"{q['warm_median']:.2f} ({'≤' if met else '>'} {r['goal_ratio']:g}); p90 ratio "
            f"{q['warm_p90']:.2f}; median of the per-repetition ratios {q['warm_paired_median']:.2f}; "
            f"cold (new Workspace + write) {q['cold_open_and_write_median']:.2f}."
        )
        if not met and "growth" in q:
            kit.print_growth(
                console, "largest growth in self time per write (cProfile), small → large:", q["growth"]
            )
    drift = r["setups"]["small"]["drift"]
    console.print(
        f"drift, the same in every setup: a write costs O(size of the topic files it touches). In small, the "
        f"first {drift['writes_each']} warm writes took {drift['first']['ms']:.1f} ms (median) with "
        f"{drift['first']['touched_kib']:.1f} KiB of touched topic files, the last {drift['writes_each']} "
        f"{drift['last']['ms']:.1f} ms with {drift['last']['touched_kib']:.1f} KiB (the run adds 4 blocks to "
        f"the {small} shared files per repetition)."
    )
    touch = {name: r["setups"][name]["cold"]["store_first_touch"]["median"] for name in _LABELS}
    console.print(
        f"cold: a new Workspace costs {r['setups']['small']['cold']['open']['median']:.2f} / "
        f"{r['setups']['large_workspace']['cold']['open']['median']:.2f} / "
        f"{r['setups']['long_archive']['cold']['open']['median']:.2f} ms (small / (a) / (b)). Not part of "
        f"the write: a fresh FileSessionStore's first touch of the session (it lists the node files once per "
        f"process) costs {touch['small']:.2f} ms at {small:,} turns and {touch['long_archive']:.2f} ms at "
        f"{large:,}."
    )
    if r["oracle"]:
        verdicts = ", ".join(
            f"{_LABELS[name]}: {'ok' if o['ok'] else str(o['violations']) + ' violations'}"
            for name, o in r["oracle"].items()
        )
        console.print(f"oracle over every home after the run: {verdicts}")
    console.print(f"wall time: {r['wall_seconds']} s (measuring {r['measuring_seconds']} s)")


def main(args: argparse.Namespace) -> int:
    """`dagmem bench write [--quick] [--json]`: report only; the exit status is 0 whatever the figures."""
    return kit.cli(
        args,
        lambda quick, progress: run(
            SMALL,
            QUICK_LARGE if quick else LARGE,
            QUICK_REPS if quick else REPS,
            QUICK_COLD_REPS if quick else COLD_REPS,
            QUICK_PROFILE_REPS if quick else PROFILE_REPS,
            progress=progress,
        ),
        _print_report,
    )
