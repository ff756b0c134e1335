"""`dagmem bench store`: per-append cost and loose git bytes per turn, early and late in one long session.

Three subjects, measured side by side in one run over the same turns (same text, same node and meta bytes):

- `sharded`: `FileSessionStore(git=True)`, every turn appended through the store (one git commit per turn,
  node files at `history/<shard>/...`, 256 per shard).
- `nogit`: `FileSessionStore(git=False)`, the store alone (durable writes, no git).
- `flat`: the control. The same node and `meta.json` bytes, written by the same file backend and committed
  by the same `SessionGit` (same config, `core.fsync=added`), but every node file in one `history/`
  directory, as the peer system does. Its history between the two windows is built in a few large commits
  (the loose bytes a commit adds depend only on the trees it writes, not on how earlier history was made);
  its first turns and both windows are committed one per turn.

The windows are 40 turns, the early one around turn 100 (81-120); the late one sits at the same place in
its 256-turn shard (turns 4,945-4,984 of 5,000: the shard's tree, rewritten whole by each commit, has as
many entries in both). Inside each window the subjects take turns (order rotated per turn). Each append is
timed whole, and its git commit alone (the backend's `commit` call, timed around it): the commit's figure
is that time's median, not a difference of two noisy medians. Loose bytes are the sizes of the new
files under `.git/objects/??/` after each append; `gc.auto` is 0 in every repository, so no object is ever
packed during the run (the output reports the pack count as evidence). Each new object is classified
(node blob, meta.json blob, shard tree, history/ tree, root tree, commit) against `git rev-parse` of the
new commit. The scratch directory is a fresh temporary directory (honours `TMPDIR`), removed afterwards;
`--home` is ignored.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..memory.format import SHARD_SIZE, Node, Role, SessionMeta, node_filename
from ..memory.store import FakeClock, FileSessionStore, SessionGit
from ..memory.store import FileBackend as _FileBackend
from ..memory.store import git_env as _env
from . import _kit as kit

__all__ = ["main", "run"]

SESSION = "bench"
GOAL_RATIO = 2.0
EARLY_TURN = 100
WINDOW = 40  # turns per window: medians of 40 keep their ratio on a shared, noisy machine
TURNS = 5_000
QUICK_TURNS = 1_000
BULK_CHUNK = 1_000
SEED = 20_240_601
EPOCH = 1_700_000_000.0  # the clock of both layouts: they write the same bytes
COMPONENTS = ("node blob", "meta.json blob", "shard tree", "history/ tree", "root tree", "commit", "other")


def _turn_text(rng: random.Random) -> str:
    """A deterministic chat turn of about 100-400 characters of varied words, numbers and punctuation."""
    target = rng.randint(100, 400)
    sentences: list[str] = []
    length = 0
    while length < target:
        words = [rng.choice(kit.WORDS) for _ in range(rng.randint(4, 16))]
        if rng.random() < 0.35:
            words.insert(rng.randrange(len(words)), str(rng.randint(2, 99_999)))
        sentence = " ".join(words)
        sentence = sentence[0].upper() + sentence[1:] + rng.choice(".....?!")
        sentences.append(sentence)
        length += len(sentence) + 1
    text = " ".join(sentences)
    if len(text) > target:
        text = text[: target + 1].rsplit(" ", 1)[0].rstrip(",")  # cut at a word boundary
    return text if text.endswith((".", "?", "!")) else text + "."


def _role(turn: int) -> Role:
    return Role.USER if turn % 2 == 1 else Role.ASSISTANT


# -- git inspection ------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, env=_env(), check=True, text=True
    )
    return result.stdout.strip()


def _git_version() -> str:
    result = subprocess.run(["git", "--version"], capture_output=True, env=_env(), check=True, text=True)
    return result.stdout.strip().removeprefix("git version ")


def _loose_names(repo: Path) -> set[str]:
    """Hashes of every loose object (files `.git/objects/??/<38 hex>`)."""
    names: set[str] = set()
    objects = repo / ".git" / "objects"
    with os.scandir(objects) as fan:
        for directory in fan:
            if len(directory.name) != 2 or not directory.is_dir():
                continue
            with os.scandir(directory.path) as entries:
                names.update(directory.name + e.name for e in entries if len(e.name) == 38)
    return names


def _loose_size(repo: Path, name: str) -> int:
    return (repo / ".git" / "objects" / name[:2] / name[2:]).stat().st_size


def _repo_facts(repo: Path) -> dict[str, Any]:
    names = _loose_names(repo)
    pack = repo / ".git" / "objects" / "pack"
    return {
        "loose_objects": len(names),
        "loose_bytes": sum(_loose_size(repo, name) for name in names),
        "packs": len(list(pack.glob("*.pack"))) if pack.is_dir() else 0,
        "gc_auto": _git(repo, "config", "--get", "gc.auto"),
        "core_fsync": _git(repo, "config", "--get", "core.fsync"),
        "commits": int(_git(repo, "rev-list", "--count", "HEAD")),
    }


# -- measurement records -------------------------------------------------------------------------------


@dataclass
class _Window:
    turns: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    commit_ms: list[float] = field(default_factory=list)  # the git commit alone, timed around the call
    loose: list[int] = field(default_factory=list)
    components: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COMPONENTS, 0))
    shapes: list[dict[str, int]] = field(default_factory=list)

    def summary(self, git: bool) -> dict[str, Any]:
        ordered = sorted(self.ms)
        out: dict[str, Any] = {
            "turns": [self.turns[0], self.turns[-1]],
            "ms_median": round(statistics.median(self.ms), 3),
            "ms_p90": round(kit.quantile(ordered, 0.9), 3),
            "ms_mean": round(statistics.fmean(self.ms), 3),
        }
        if git:
            n = len(self.loose)
            out |= {
                "commit_ms_median": round(statistics.median(self.commit_ms), 3),
                "commit_ms_p90": round(kit.quantile(sorted(self.commit_ms), 0.9), 3),
                "commit_ms_mean": round(statistics.fmean(self.commit_ms), 3),
                "bytes_per_turn": round(sum(self.loose) / n, 1),
                "bytes_per_turn_median": statistics.median(self.loose),
                "bytes_each": list(self.loose),
                "bytes_per_turn_by_component": {k: round(v / n, 1) for k, v in self.components.items()},
                # Entries in the directories this turn's commit rewrote, after each append of the window.
                "tree_shape": {key: [shape[key] for shape in self.shapes] for key in sorted(self.shapes[0])},
            }
        return out


class _Subject:
    """One repository (or plain store) being measured."""

    name: str
    git: bool
    repo: Path

    def __init__(self) -> None:
        self.windows: dict[str, _Window] = {}
        self._names: set[str] | None = None
        self.commit_ns = 0  # the last append's git commit

    def _timed_commit(
        self, commit: Callable[[str, list[str], str], None]
    ) -> Callable[[str, list[str], str], None]:
        def timed(sid: str, relpaths: list[str], message: str) -> None:
            start = time.perf_counter_ns()
            commit(sid, relpaths, message)
            self.commit_ns = time.perf_counter_ns() - start

        return timed

    def append(self, turn: int, text: str) -> str:
        """Append one turn; return the node's relpath."""
        raise NotImplementedError

    def measure(self, point: str, turn: int, text: str) -> None:
        window = self.windows.setdefault(point, _Window())
        if self.git and self._names is None:
            self._names = _loose_names(self.repo)
        start = time.perf_counter_ns()
        relpath = self.append(turn, text)
        window.ms.append((time.perf_counter_ns() - start) / 1e6)
        window.turns.append(turn)
        if not self.git:
            return
        window.commit_ms.append(self.commit_ns / 1e6)
        assert self._names is not None
        after = _loose_names(self.repo)
        new = after - self._names
        self._names = after
        sizes = {name: _loose_size(self.repo, name) for name in new}
        window.loose.append(sum(sizes.values()))
        kinds = self._classify(relpath)
        for name, size in sizes.items():
            window.components[kinds.get(name, "other")] += size
        window.shapes.append(self._shape(relpath))

    def forget_scan(self) -> None:
        self._names = None

    def _classify(self, relpath: str) -> dict[str, str]:
        parts = relpath.split("/")
        revs = {
            "commit": "HEAD",
            "root tree": "HEAD^{tree}",
            "history/ tree": "HEAD:history",
            "meta.json blob": "HEAD:meta.json",
            "node blob": f"HEAD:{relpath}",
        }
        if len(parts) == 3:
            revs["shard tree"] = f"HEAD:{parts[0]}/{parts[1]}"
        hashes = _git(self.repo, "rev-parse", *revs.values()).split()
        # A hash can name two things only if two objects are byte-identical; the first kind wins.
        kinds: dict[str, str] = {}
        for kind, sha in zip(revs, hashes, strict=True):
            kinds.setdefault(sha, kind)
        return kinds

    def _shape(self, relpath: str) -> dict[str, int]:
        parts = relpath.split("/")
        history = self.repo / "history"
        shape = {"entries_in_history_dir": len(os.listdir(history))}
        if len(parts) == 3:
            shape["entries_in_current_shard"] = len(os.listdir(history / parts[1]))
        return shape


class _StoreSubject(_Subject):
    def __init__(self, name: str, home: Path, *, git: bool) -> None:
        super().__init__()
        self.name = name
        self.git = git
        self.store = FileSessionStore(home, git=git, clock=FakeClock(EPOCH))
        self.repo = self.store.path(SESSION)
        backend = self.store._backend
        assert isinstance(backend, _FileBackend)
        backend.commit = self._timed_commit(backend.commit)  # type: ignore[method-assign,assignment]

    def append(self, turn: int, text: str) -> str:
        node = self.store.append(SESSION, _role(turn), text, node_id=f"n{turn}")
        assert node.seq == turn
        return node.relpath


class _FlatSubject(_Subject):
    """The control: the store's own node and meta bytes, its file backend and its git, in one flat dir."""

    def __init__(self, home: Path) -> None:
        super().__init__()
        self.name = "flat"
        self.git = True
        self.clock = FakeClock(EPOCH)
        self.backend = _FileBackend(home, git=True, fsync=True)
        self.bulk_backend = _FileBackend(home, git=False, fsync=False)
        self.repo = self.backend.path(SESSION)
        self.meta = SessionMeta(id=SESSION, created_at=self.clock(), updated_at=0.0)
        self.meta.updated_at = self.meta.created_at
        self.bulk_commits = 0
        self.timed_commit = self._timed_commit(self.backend.commit)

    def _files(self, turn: int, text: str) -> tuple[str, bytes, bytes]:
        now = self.clock()
        node = Node(
            id=f"n{turn}",
            seq=turn,
            role=_role(turn),
            content=text,
            predecessor=None if turn == 1 else f"n{turn - 1}",
            created_at=now,
        )
        self.meta = self.meta.model_copy(update={"head": node.id, "updated_at": now})
        relpath = f"history/{node_filename(node.seq, node.role, node.id)}"
        return relpath, node.to_json(), self.meta.to_json()

    def append(self, turn: int, text: str) -> str:
        # The same steps as SessionStore.append: node file, meta.json, one commit naming both.
        relpath, node_bytes, meta_bytes = self._files(turn, text)
        self.backend.write(SESSION, [(relpath, node_bytes)], "node")
        self.backend.write(SESSION, [("meta.json", meta_bytes)], "meta")
        self.timed_commit(SESSION, [relpath, "meta.json"], f"turn {turn}: {_role(turn)} n{turn}")
        return relpath

    def bulk(self, turns: range, texts: list[str]) -> None:
        """Write these turns without fsync and commit them `BULK_CHUNK` files at a time."""
        git = SessionGit(self.repo)
        for start in range(turns.start, turns.stop, BULK_CHUNK):
            chunk = range(start, min(start + BULK_CHUNK, turns.stop))
            items: list[tuple[str, bytes]] = []
            meta_bytes = b""
            for turn in chunk:
                relpath, node_bytes, meta_bytes = self._files(turn, texts[turn])
                items.append((relpath, node_bytes))
            self.bulk_backend.write(SESSION, [*items, ("meta.json", meta_bytes)], "bulk")
            git.commit([p for p, _ in items] + ["meta.json"], f"turns {chunk.start}-{chunk.stop - 1}")
            self.bulk_commits += 1
        self.forget_scan()


# -- the run -------------------------------------------------------------------------------------------


def run(
    turns: int = TURNS,
    window: int = WINDOW,
    early: int = EARLY_TURN,
    *,
    scratch: Path | None = None,
    progress: kit.Progress | None = None,
) -> dict[str, Any]:
    """Run the benchmark and return every figure as one JSON-ready dict.

    The early window is centred on turn `early`, the late window ends at the last turn."""
    early_turns = range(early - (window - 1) // 2, early - (window - 1) // 2 + window)
    # A shard's tree grows by one entry a turn and starts again at each shard: compare like with like, the
    # late window at the same place in its shard as the early one (the last such place), when there is one.
    cycles = (turns - early_turns.stop + 1) // SHARD_SIZE
    late_end = early_turns.stop - 1 + cycles * SHARD_SIZE if cycles else turns
    late_turns = range(late_end - window + 1, late_end + 1)
    turns = late_end
    if window < 1 or early_turns.start < 2 or early_turns.stop > late_turns.start:
        raise ValueError(f"windows overlap or start too early: turns={turns} window={window} early={early}")
    say = progress or (lambda _message: None)
    rng = random.Random(SEED)
    texts = [""] + [_turn_text(rng) for _ in range(turns)]  # texts[turn], turns count from 1
    wall = time.perf_counter()

    with kit.scratch("store", scratch) as root:
        sharded = _StoreSubject("sharded", root / "sharded", git=True)
        nogit = _StoreSubject("nogit", root / "nogit", git=False)
        flat = _FlatSubject(root / "flat")
        subjects: list[_Subject] = [sharded, nogit, flat]

        def measured(point: str, span: range) -> None:
            for turn in span:
                k = turn % len(subjects)
                for subject in subjects[k:] + subjects[:k]:
                    subject.measure(point, turn, texts[turn])

        # Turns before the early window: every subject, one append (one commit) per turn.
        for turn in range(1, early_turns.start):
            for subject in subjects:
                subject.append(turn, texts[turn])
            if turn == 1:
                for repo in (sharded.repo, flat.repo):
                    _git(repo, "config", "gc.auto", "0")  # SessionGit sets it too; make sure
        say(f"turn {early_turns.start - 1}: measuring turns {early_turns.start}-{early_turns.stop - 1}")
        measured("early", early_turns)

        # Between the windows: the store per turn (sharded with git, and without); flat in bulk.
        between = range(early_turns.stop, late_turns.start)
        started = time.perf_counter()
        for turn in between:
            sharded.append(turn, texts[turn])
            nogit.append(turn, texts[turn])
            if turn % 500 == 0:
                rate = (time.perf_counter() - started) / (turn - between.start + 1) * 1e3
                say(f"turn {turn}/{turns} (sharded with git + no git: {rate:.1f} ms per turn)")
        sharded_between_s = time.perf_counter() - started
        sharded.forget_scan()
        started = time.perf_counter()
        flat.bulk(between, texts)
        flat_bulk_s = time.perf_counter() - started
        say(f"flat control: turns {between.start}-{between.stop - 1} built in {flat.bulk_commits} commits")
        say(f"measuring turns {late_turns.start}-{late_turns.stop - 1}")
        measured("late", late_turns)

        repos = {s.name: _repo_facts(s.repo) for s in (sharded, flat)}

    result: dict[str, Any] = {
        "benchmark": "store",
        "turns": turns,
        "window": window,
        "early_turn": early,
        "seed": SEED,
        "shard_size": SHARD_SIZE,
        "git_version": _git_version(),
        "goal_ratio": GOAL_RATIO,
    }
    for subject in subjects:
        e = subject.windows["early"].summary(subject.git)
        late = subject.windows["late"].summary(subject.git)
        entry: dict[str, Any] = {"early": e, "late": late, "ratio_ms_median": _ratio(late, e, "ms_median")}
        if subject.git:
            entry["ratio_bytes_per_turn"] = _ratio(late, e, "bytes_per_turn")
            entry["repository_at_end"] = repos[subject.name]
        result[subject.name] = entry
    result["flat"]["history_build"] = {
        "per_turn_commits": [1, early_turns.stop - 1],
        "bulk_turns": [between.start, between.stop - 1],
        "bulk_commits": flat.bulk_commits,
        "bulk_seconds": round(flat_bulk_s, 2),
        "per_turn_window": [late_turns.start, late_turns.stop - 1],
    }
    result["sharded"]["between_windows_seconds"] = round(sharded_between_s, 2)
    result["sharded"]["full_shard_estimate"] = _full_shard_estimate(result["sharded"])
    sharded_bytes = result["sharded"]["late"]["bytes_per_turn"] / result["sharded"]["early"]["bytes_per_turn"]
    result["goal_met"] = sharded_bytes <= GOAL_RATIO  # unrounded
    result["wall_seconds"] = round(time.perf_counter() - wall, 1)
    return result


def _full_shard_estimate(sharded: dict[str, Any]) -> dict[str, Any]:
    """The shard tree is the one object that grows between shard boundaries: extrapolate the late window's
    shard-tree bytes per entry to a full shard (the worst turn of each 256-turn cycle)."""
    late = sharded["late"]
    entries = statistics.fmean(late["tree_shape"]["entries_in_current_shard"])
    shard_tree = late["bytes_per_turn_by_component"]["shard tree"]
    full = late["bytes_per_turn"] + shard_tree / entries * (SHARD_SIZE - entries)
    return {
        "late_mean_entries_in_shard": round(entries, 1),
        "bytes_per_turn": round(full),
        "ratio_to_early": round(full / sharded["early"]["bytes_per_turn"], 2),
        "method": "late window, with its shard-tree bytes scaled linearly to 256 entries (an estimate)",
    }


def _ratio(late: dict[str, Any], early: dict[str, Any], key: str) -> float:
    return round(float(late[key]) / float(early[key]), 2)


# -- output --------------------------------------------------------------------------------------------


def _print_report(r: dict[str, Any]) -> None:
    console = kit.report_console(120)
    early_label = "turns {}-{}".format(*r["sharded"]["early"]["turns"])
    late_label = "turns {}-{}".format(*r["sharded"]["late"]["turns"])
    console.print(
        f"dagmem bench store: one session of {r['turns']:,} turns, windows of {r['window']} around turn "
        f"{r['early_turn']} and at the end; git {r['git_version']}"
    )

    table = kit.table(
        "per append, side by side", "subject", "figure", early_label, late_label, "late / early", left=2
    )
    names = {
        "sharded": "dagmem store + git (sharded)",
        "nogit": "dagmem store, no git",
        "flat": "control: flat history/ + git",
    }
    for key, label in names.items():
        s = r[key]
        if "ratio_bytes_per_turn" in s:
            table.add_row(
                label,
                "loose git bytes / turn",
                f"{s['early']['bytes_per_turn']:,.0f}",
                f"{s['late']['bytes_per_turn']:,.0f}",
                f"{s['ratio_bytes_per_turn']:.2f}",
            )
        if "commit_ms_median" in s["early"]:
            e, late = s["early"], s["late"]
            table.add_row(
                "",
                "ms / git commit, median (p90)",
                f"{e['commit_ms_median']:.2f} ({e['commit_ms_p90']:.2f})",
                f"{late['commit_ms_median']:.2f} ({late['commit_ms_p90']:.2f})",
                f"{late['commit_ms_median'] / e['commit_ms_median']:.2f}",
            )
        table.add_row(
            label if "ratio_bytes_per_turn" not in s else "",
            "ms / append, median (p90)",
            f"{s['early']['ms_median']:.2f} ({s['early']['ms_p90']:.2f})",
            f"{s['late']['ms_median']:.2f} ({s['late']['ms_p90']:.2f})",
            f"{s['ratio_ms_median']:.2f}",
        )
    console.print(table)

    parts = kit.table(
        "where the loose bytes of one turn go (mean bytes per turn)",
        "object",
        *(f"{key}\n{label}" for key in ("sharded", "flat") for label in (early_label, late_label)),
    )
    for component in COMPONENTS:
        row = [component]
        for key in ("sharded", "flat"):
            for point in ("early", "late"):
                row.append(f"{r[key][point]['bytes_per_turn_by_component'][component]:,.0f}")
        parts.add_row(*row)
    shape_row = ["entries: shard / history/ (last turn)"]
    for key in ("sharded", "flat"):
        for point in ("early", "late"):
            shape = r[key][point]["tree_shape"]
            shard = shape.get("entries_in_current_shard", ["-"])[-1]
            shape_row.append(f"{shard} / {shape['entries_in_history_dir'][-1]}")
    parts.add_row(*shape_row)
    console.print(parts)

    build = r["flat"]["history_build"]
    console.print(
        f"control: turns {build['per_turn_commits'][0]}-{build['per_turn_commits'][1]} and "
        f"{build['per_turn_window'][0]}-{build['per_turn_window'][1]} committed one per turn; turns "
        f"{build['bulk_turns'][0]}-{build['bulk_turns'][1]} written without fsync and committed in "
        f"{build['bulk_commits']} bulk commit(s) of up to {BULK_CHUNK:,} files ({build['bulk_seconds']} s) "
        "to reach the late window faster."
    )
    sharded_end = r["sharded"]["repository_at_end"]
    console.print(
        f"dagmem store + git: every turn appended through the store ({sharded_end['commits']:,} commits; "
        f"{sharded_end['loose_objects']:,} loose objects, {sharded_end['loose_bytes'] / 2**20:.1f} MiB, "
        f"{sharded_end['packs']} packs, gc.auto={sharded_end['gc_auto']}, "
        f"core.fsync={sharded_end['core_fsync']})."
    )
    ratio = r["sharded"]["ratio_bytes_per_turn"]
    verdict = "MET" if r["goal_met"] else "MISSED"
    console.print(
        f"GOAL {verdict}: sharded loose git bytes per turn, turn {r['turns']:,} / turn {r['early_turn']} = "
        f"{ratio:.2f} ({'≤' if r['goal_met'] else '>'} {r['goal_ratio']:g}); flat control: "
        f"{r['flat']['ratio_bytes_per_turn']:.2f}."
    )
    estimate = r["sharded"]["full_shard_estimate"]
    console.print(
        f"note: the sharded cost is a sawtooth over each {r['shard_size']}-turn shard (the shard tree is "
        f"rewritten whole each turn); the late window's shard held {estimate['late_mean_entries_in_shard']:g} "
        f"entries on average. Estimated at a full shard: {estimate['bytes_per_turn']:,} bytes/turn, "
        f"ratio {estimate['ratio_to_early']:.2f} to the early window."
    )
    console.print(f"wall time: {r['wall_seconds']} s")


def main(args: argparse.Namespace) -> int:
    """`dagmem bench store [--quick] [--json]`: report only; the exit status is 0 whatever the figures."""
    return kit.cli(
        args,
        lambda quick, progress: run(QUICK_TURNS if quick else TURNS, WINDOW, EARLY_TURN, progress=progress),
        _print_report,
    )
