"""A real home under load, for tests that kill it (issue 6); reusable by the runtime and the simulator.

    python -m dagmem.sim.crashload HOME SEED [--role workload|writer|runtime|appender] [--steps N] [--sessions K] [--threshold T]

runs one process on the home at HOME until it is killed (or for N steps). The `workload` role is a host: a
seeded loop that appends turns to several sessions of a `FileSessionStore` (trunks, forks in the middle,
head moves, some tool turns) and runs write passes (`write_home`) with a small batch size, now and then
forced. The `writer` role is a second process that only runs write passes in a loop: it contends with the
first for the workspace lock and finishes what a killed one left. The `runtime` role is an embedding host:
the same seeded steps through `dagmem.Runtime` (session actors, the writer in a worker thread, timers).
The `appender` role is one of several hosts appending to one shared session at once (issue 17): each
logs the appends that returned to `HOME.appended.<pid>`, so a test can check them against the files.
Each prints `ready` once it has started.

    python -m dagmem.sim.crashload --serve

is a fork server for tests that kill hundreds of processes: it imports everything once, prints `ready`, then
reads commands on stdin: `fork HOME SEED ROLE STEPS` forks a worker running that load (with `-1` steps: until
killed) and prints its pid; `wait PID` reaps it and prints `killed SIGNAL` or `exited CODE`; `quit` stops.
A worker is a real process: a SIGKILL kills it mid-step, the kernel drops its locks, its temp files stay.

`verify_home` checks a home after a death and a recovery, from the files alone: the oracle (`drained`), no
leftover temp file or stage, every archive complete and each of its frames exactly the rendering of its
record, and every topic file exactly the version its last txlog line installed (never a mix).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..memory.audit import check_home
from ..memory.durable import TxLog, ensure_workspace_id, is_temp_name, read_workspace_id, sha256_hex
from ..memory.format import (
    CORE_FILE,
    HEAD,
    HeadType,
    HomePaths,
    WorkspacePaths,
    count_tokens,
    render_frame,
    scan_archive,
)
from ..memory.store import FileSessionStore
from ..memory.write import SessionResult, records_of
from ..memory.writing import write_home

__all__ = [
    "SHARED_SESSION",
    "LoadConfig",
    "Workload",
    "appended_logs",
    "find_leftovers",
    "main",
    "run",
    "serve",
    "verify_home",
]

# Exit status of a process whose write pass reported what no crash may cause: an invalid session, a
# permanent failure.
EXIT_BAD_OUTCOME = 3
NEVER_IDLE = 1e12  # write passes apply the per-turn rule only, unless forced

_SUBJECTS = (
    "lisbon",
    "garden",
    "violin",
    "python",
    "recipes",
    "core",
    "sailing",
    "budget",
    "moving",
    "chess",
    "tea",
    "bikes",
)


@dataclass(frozen=True)
class LoadConfig:
    sessions: int = 4
    threshold: int = 60  # tokens per batch: a turn is 12 to 20, so a batch every few turns
    write_rate: float = 0.15  # steps that run a write pass
    force_rate: float = 0.3  # write passes that are forced (the boundary rule: nothing stays owed)
    head_rate: float = 0.05  # steps that move a session's head to some node
    fork_rate: float = 0.15  # appends after a random node instead of the head
    tool_rate: float = 0.08  # appends that are tool turns (not records)


class Workload:
    """The host's side: appends and head moves on a real store, and write passes, all from one seed."""

    def __init__(self, home: Path, seed: int, config: LoadConfig = LoadConfig()) -> None:
        self.home = home
        self.rng = random.Random(seed)
        self.config = config
        self.store = FileSessionStore(home)
        self._ids: dict[str, list[str]] = {}
        self._roles: dict[str, dict[str, str]] = {}

    def _session(self, sid: str) -> list[str]:
        """The node ids of a session (read from disk once: an earlier, killed process may have added some)."""
        if sid not in self._ids:
            roles: dict[str, str] = {}
            if self.store.has_session(sid):
                snapshot = self.store.load(sid)
                roles = {node_id: str(node.role) for node_id, node in snapshot.nodes.items()}
            self._roles[sid] = roles
            self._ids[sid] = sorted(roles)
        return self._ids[sid]

    def plan(self) -> tuple[str, str, str | None, str]:
        """The next step, decided from the seed: ("write", "", None, "force"|""), ("head", sid, node, ""),
        or ("append", sid, parent, role)."""
        rng, config = self.rng, self.config
        if rng.random() < config.write_rate:
            return "write", "", None, "force" if rng.random() < config.force_rate else ""
        sid = f"s{rng.randrange(config.sessions)}"
        ids = self._session(sid)
        if ids and rng.random() < config.head_rate:
            return "head", sid, rng.choice(ids), ""
        parent = self.store.head(sid) if ids else None
        if ids and rng.random() < config.fork_rate:
            parent = rng.choice(ids)
        roles = self._roles[sid]
        if rng.random() < config.tool_rate:
            role = "tool"
        else:
            role = "assistant" if parent is not None and roles.get(parent) == "user" else "user"
        return "append", sid, parent, role

    def appended(self, sid: str, node_id: str, role: str) -> None:
        self._ids[sid].append(node_id)
        self._roles[sid][node_id] = role

    def step(self) -> str:
        kind, sid, node, detail = self.plan()
        if kind == "write":
            self.write(force=detail == "force")
        elif kind == "head":
            assert node is not None
            self.store.set_head(sid, node)
        else:
            appended = self.store.append(sid, detail, self.text(detail), predecessor=node)
            self.appended(sid, appended.id, detail)
        return kind

    def text(self, role: str) -> str:
        subject = self.rng.choice(_SUBJECTS)
        n = self.rng.randrange(1000)
        if role == "user":
            return f"Tell me about {subject}: what matters most about {subject}, case {n}?"
        if role == "tool":
            return f"lookup({subject!r}) -> {n} results"
        return f"On {subject}: the short answer for case {n} is that {subject} rewards patience."

    def write(self, *, force: bool) -> list[SessionResult]:
        results = write_home(self.home, force=force, threshold=self.config.threshold, idle_after=NEVER_IDLE)
        _check_results(results)
        return results


def _check_results(results: Iterable[SessionResult]) -> None:
    """No crash may make a session invalid or a write fail for good; retryable failures (a busy lock)
    are expected while another process writes."""
    for result in results:
        if result.outcome == "invalid" or (result.outcome == "failed" and not result.retryable):
            print(f"crashload: session {result.session}: {result.as_json()}", file=sys.stderr, flush=True)
            raise SystemExit(EXIT_BAD_OUTCOME)


def writer_loop(home: Path, seed: int, steps: int | None, config: LoadConfig = LoadConfig()) -> None:
    """The contending process: write passes in a loop, forced now and then, with short pauses."""
    rng = random.Random(seed)
    done = 0
    while steps is None or done < steps:
        _check_results(
            write_home(home, force=rng.random() < 0.5, threshold=config.threshold, idle_after=NEVER_IDLE)
        )
        time.sleep(rng.uniform(0.0, 0.01))
        done += 1


def runtime_loop(home: Path, seed: int, steps: int | None, config: LoadConfig = LoadConfig()) -> None:
    """The embedding host: the same seeded steps through `dagmem.Runtime` (actors, writer thread, timers;
    an abandoned branch is force-written after 50 ms), its write steps being `flush()`es."""
    import anyio

    from ..actors import Runtime

    async def main() -> None:
        workload = Workload(home, seed, config)  # decides; the runtime does the writing
        async with Runtime.open(
            home, token_threshold=config.threshold, idle_after=NEVER_IDLE, abandon_after=0.05
        ) as rt:
            done = 0
            while steps is None or done < steps:
                kind, sid, node, detail = workload.plan()
                if kind == "write":
                    await rt.flush(force=detail == "force")
                elif kind == "head":
                    assert node is not None
                    await rt.set_head(sid, node)
                    workload.store.forget(sid)  # the runtime's store moved it: re-read on next use
                else:
                    node_id = await rt.append(sid, detail, workload.text(detail), predecessor=node)
                    workload.appended(sid, node_id, detail)
                    workload.store.forget(sid)
                done += 1
            status = rt.status()
            if status.last_failure is not None and not status.last_failure.retryable:
                print(f"crashload: runtime failure {status.last_failure}", file=sys.stderr, flush=True)
                raise SystemExit(EXIT_BAD_OUTCOME)

    anyio.run(main)


SHARED_SESSION = "shared"


def appended_logs(home: Path) -> list[Path]:
    """The logs of the `appender` processes that ran on `home`."""
    return sorted(home.parent.glob(f"{home.name}.appended.*"))


def appender_loop(home: Path, seed: int, steps: int | None, config: LoadConfig = LoadConfig()) -> None:
    """A host appending to the session that other processes append to at the same moment: after the head
    (which another may have moved), sometimes a fork at one of its own nodes, now and then a head move or
    a write pass of that session. After each append returns, `<node id> <seq>` is logged (one write of a
    whole line, unbuffered), so the log lists appends that returned, and only those."""
    rng = random.Random(seed)
    store = FileSessionStore(home)
    log = os.open(f"{home}.appended.{os.getpid()}", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    mine: list[str] = []
    done = 0
    while steps is None or done < steps:
        done += 1
        draw = rng.random()
        if draw < config.head_rate and mine:
            store.set_head(SHARED_SESSION, rng.choice(mine))
            continue
        if draw < config.head_rate + config.write_rate / 3:
            _check_results(
                write_home(
                    home,
                    sessions=[SHARED_SESSION],
                    force=rng.random() < config.force_rate,
                    threshold=config.threshold,
                    idle_after=NEVER_IDLE,
                )
            )
            continue
        parent: str | HeadType | None = HEAD
        if mine and rng.random() < config.fork_rate:
            parent = rng.choice(mine)
        role = "tool" if rng.random() < config.tool_rate else rng.choice(("user", "assistant"))
        subject = rng.choice(_SUBJECTS)
        node = store.append(
            SHARED_SESSION, role, f"{role} on {subject}, case {rng.randrange(1000)}", predecessor=parent
        )
        os.write(log, f"{node.id} {node.seq}\n".encode())
        mine.append(node.id)


def run(home: Path, seed: int, role: str, steps: int | None, config: LoadConfig = LoadConfig()) -> None:
    """One process's load on `home`: `workload`, `writer`, `runtime` or `appender`, for `steps` steps or
    forever."""
    home.mkdir(parents=True, exist_ok=True)
    if role == "writer":
        writer_loop(home, seed, steps, config)
        return
    if role == "appender":
        appender_loop(home, seed, steps, config)
        return
    if role == "runtime":
        runtime_loop(home, seed, steps, config)
        return
    if role != "workload":
        raise ValueError(f"unknown role {role!r}")
    workload = Workload(home, seed, config)
    done = 0
    while steps is None or done < steps:
        workload.step()
        done += 1


# -- the fork server ---------------------------------------------------------------------------------------


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed {os.WTERMSIG(status)}"
    return f"exited {os.waitstatus_to_exitcode(status)}"


def _worker(home: Path, seed: int, role: str, steps: int | None) -> None:
    """In the forked child: run the load, then leave without the parent's exit handlers."""
    code = 0
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)  # stdout is the server's reply channel
        run(home, seed, role, steps)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        sys.stderr.flush()
        os._exit(code)


def serve(commands: TextIO, replies: TextIO) -> None:
    """The fork server's loop (see the module docstring)."""
    count_tokens("warm the tokenizer up before forking")
    print("ready", file=replies, flush=True)
    for line in commands:
        words = line.split()
        if not words:
            continue
        if words[0] == "fork" and len(words) == 5:
            home, seed, role, steps = Path(words[1]), int(words[2]), words[3], int(words[4])
            pid = os.fork()
            if pid == 0:
                _worker(home, seed, role, None if steps < 0 else steps)
            print(pid, file=replies, flush=True)
        elif words[0] == "wait" and len(words) == 2:
            _pid, status = os.waitpid(int(words[1]), 0)
            print(_describe(status), file=replies, flush=True)
        elif words[0] == "quit":
            return
        else:
            print(f"error: unknown command {line.strip()!r}", file=replies, flush=True)


# -- checking a home after a death --------------------------------------------------------------------------


def find_leftovers(home: Path) -> list[str]:
    """Temp files anywhere under the home, and stages under `memory/.dagmem/stage/`."""
    found = [p.relative_to(home).as_posix() for p in home.rglob("*") if is_temp_name(p.name)]
    stage = HomePaths(home).workspace.stage_root
    if stage.is_dir():
        found.extend(p.relative_to(home).as_posix() for p in stage.iterdir())
    return sorted(found)


def _installed_problems(memory: Path) -> list[str]:
    """Every topic file (and `core.md`) is exactly the version its last txlog line installed."""
    paths = WorkspacePaths(memory)
    expected: dict[str, str | None] = {}
    for _end, record in TxLog(paths.txlog).read_from(0):
        expected.update(record.files)
    present = {p.relative_to(memory).as_posix() for p in paths.topics.rglob("*") if p.is_file()}
    if paths.core.exists():
        present.add(CORE_FILE)
    problems = []
    for path in sorted(present | set(expected)):
        digest = expected.get(path)
        actual = sha256_hex((memory / path).read_bytes()) if path in present else None
        if actual != digest:
            problems.append(f"{path}: sha256 {actual} but its last transaction installed {digest}")
    return problems


def _archive_problems(home: Path) -> list[str]:
    """Every archive is complete, and each frame is exactly the rendering of the record it names."""
    store = FileSessionStore(home)
    problems = []
    for path in sorted(HomePaths(home).workspace.sources.glob("*.md")):
        sid = path.stem
        data = path.read_bytes()
        scan = scan_archive(data, sid)
        if scan.status != "complete":
            problems.append(f"{path.name}: {scan.status} at byte {scan.damage_offset}: {scan.reason}")
        nodes = store.load(sid).nodes if store.has_session(sid) else {}
        for frame in scan.frames:
            node = nodes.get(frame.node_id)
            if node is None:
                problems.append(f"{path.name}: frame of a node that does not exist: {frame.source_id}")
            elif data[frame.offset : frame.end] != render_frame(records_of(sid, [node])[0]):
                problems.append(f"{path.name}: frame {frame.source_id} is not its record's rendering")
    return problems


def verify_home(home: Path, *, drained: bool = True) -> list[str]:
    """What is wrong with a home, from its files alone (an empty list: nothing)."""
    paths = HomePaths(home).workspace
    memory = paths.root
    problems = [f"leftover: {path}" for path in find_leftovers(home)]
    workspace_id = read_workspace_id(paths.workspace_id)
    report = check_home(FileSessionStore(home), memory, workspace_id, drained=drained)
    problems.extend(f"oracle: {violation}" for violation in report.violations)
    problems.extend(_archive_problems(home))
    problems.extend(_installed_problems(memory))
    return problems


# -- the command line ----------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dagmem.sim.crashload", description=__doc__.split("\n")[0]
    )
    parser.add_argument("home", nargs="?", type=Path, help="the dagmem home to load")
    parser.add_argument("seed", nargs="?", type=int, help="the seed of every choice")
    parser.add_argument("--role", choices=["workload", "writer", "runtime", "appender"], default="workload")
    parser.add_argument("--steps", type=int, default=None, help="stop after N steps (default: until killed)")
    parser.add_argument("--sessions", type=int, default=LoadConfig.sessions)
    parser.add_argument("--threshold", type=int, default=LoadConfig.threshold)
    parser.add_argument("--serve", action="store_true", help="run the fork server on stdin/stdout")
    args = parser.parse_args(argv)
    if args.serve:
        serve(sys.stdin, sys.stdout)
        return 0
    if args.home is None or args.seed is None:
        parser.error("HOME and SEED are required (or --serve)")
    count_tokens("warm the tokenizer up")
    print("ready", flush=True)
    run(
        args.home,
        args.seed,
        args.role,
        args.steps,
        LoadConfig(sessions=args.sessions, threshold=args.threshold),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())


def create_workspace_id(path: str, barrier: Any, queue: Any) -> None:
    """A process of the concurrent-first-use test (it must be importable by spawned children, which
    cannot import a test module): wait for the others, then create the workspace id."""
    barrier.wait(timeout=60)
    queue.put(ensure_workspace_id(Path(path)))
