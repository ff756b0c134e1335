"""`dagmem sim` (DESIGN §6): deterministic virtual-time runs through the real actors, fault injection,
the independent oracle, git growth and the report; and the bugs the simulator found, pinned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dagmem import FileSessionStore, MemorySessionStore, Runtime
from dagmem.actors import RuntimeConfig
from dagmem.cli import main as cli_main
from dagmem.cli._sim import _Progress
from dagmem.memory import faults
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import MARKER_KEY
from dagmem.memory.policy import DagView, SessionPlanner
from dagmem.memory.store import FakeClock
from dagmem.memory.writing import write_home
from dagmem.sim import EPOCH, OracleReport, SimConfig, check_home, measure, plan_session, run, run_virtual
from dagmem.sim import _report as report
from dagmem.sim._gitgrowth import commits as count_commits

REQUIRED = {
    "seed",
    "sessions",
    "turns",
    "records",
    "violations",
    "trace_sha256",
    "wall_s",
    "turns_per_s",
    "peak_rss_bytes",
    "faults_injected",
    "git",
}


def sim_subprocess(out: Path, *args: str, hashseed: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    result = subprocess.run(
        [sys.executable, "-m", "dagmem", "sim", "--json", "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report: dict[str, Any] = json.loads(result.stdout)
    return report


# -- determinism ---------------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_trace_in_two_processes(tmp_path: Path) -> None:
    args = ("--seed", "11", "--sessions", "20", "--faults", "0.03", "--git-sample", "0")
    first = sim_subprocess(tmp_path / "a", *args, hashseed="1")
    second = sim_subprocess(tmp_path / "b", *args, hashseed="2")
    assert first["trace_sha256"] == second["trace_sha256"]
    assert first["faults_injected"] == second["faults_injected"]
    assert first["faults_injected"]["total"] > 0
    assert first["violations"] == second["violations"] == []
    assert set(first) >= REQUIRED
    assert first["turns"] > 0
    assert first["records"] > 0
    assert first["git"]["node_files"]["node_files_written"] == first["turns"]
    assert (tmp_path / "a" / "report.json").exists()
    assert (tmp_path / "a" / "report.png").exists()
    other = run(SimConfig(seed=12, sessions=20, faults=0.03, git_sample=0))
    assert other.trace_sha256 != first["trace_sha256"]


def test_the_trace_is_the_same_in_memory_and_on_disk(tmp_path: Path) -> None:
    memory = run(SimConfig(seed=5, sessions=15, faults=0.03, git_sample=0))
    assert cli_main(["sim", "--seed", "5", "--sessions", "15", "--faults", "0.03", "--real-fs", "--fsync",
                     "--git-sample", "0", "--json", "--out", str(tmp_path)]) == 0  # fmt: skip
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["trace_sha256"] == memory.trace_sha256
    # The home is left for inspection, and an oracle of its own (a fresh store) finds it drained and clean.
    home = tmp_path / "home"
    oracle = check_home(
        FileSessionStore(home),
        home / "memory",
        read_workspace_id(home / "memory" / ".dagmem" / "workspace-id"),
        drained=True,
    )
    assert oracle.violations == []
    assert oracle.records == oracle.consumed == report["records"] > 0


def test_a_workload_is_pure_and_its_sessions_independent() -> None:
    assert plan_session(3, 17) == plan_session(3, 17)
    assert plan_session(3, 17) != plan_session(4, 17)
    # No two sessions share an instant (trio would break the tie by object identity).
    times: dict[float, int] = {}
    for index in range(300):
        for step in plan_session(3, index).steps:
            assert times.setdefault(step.at, index) == index
    ops = {step.op for index in range(300) for step in plan_session(3, index).steps}
    assert ops == {"append", "head", "rewind", "end"}


# -- small runs ----------------------------------------------------------------------------------------


def test_a_small_run_without_faults_is_clean() -> None:
    result = run(SimConfig(seed=2, sessions=20, git_sample=0))
    assert result.violations == []
    assert result.faults_injected == {}
    assert result.oracle.records == result.oracle.consumed == result.oracle.cited > 0
    assert result.appends == result.events["turn"]
    assert result.events["write"] == result.events["written"] == result.writes["ok"]
    assert {"idle", "retire", "rewind", "head"} <= set(result.events)


def test_a_small_run_with_faults_is_clean() -> None:
    result = run(SimConfig(seed=3, sessions=30, faults=0.03, git_sample=0))
    assert result.violations == []
    kinds = {"actor-crash", "writer-crash", "torn-write", "lock-contention", "permanent-failure"}
    assert kinds <= set(result.faults_injected)
    assert result.supervision["crashed"] > 0
    assert "escalated" not in result.supervision
    assert result.oracle.owed == []
    assert result.oracle.consumed >= result.oracle.records > 0  # a record rewound once written is no record
    assert result.writes["CONCURRENT_UPDATE"] > 0
    assert result.writes["ok"] > 0


def test_a_run_whose_supervision_gives_up_fails_clearly() -> None:
    result = run(SimConfig(seed=3, sessions=30, faults=0.1, git_sample=0, intensity=0))
    assert result.runtime_crashed is not None
    assert [v.kind for v in result.violations] == ["runtime-crashed"]
    assert result.supervision["escalated"] > 0


def test_locomo_content_is_read_at_run_time(tmp_path: Path, locomo: Path) -> None:
    texts = {
        turn["text"].strip()
        for sample in json.loads(locomo.read_text())
        for key, turns in sample["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
        for turn in turns
    }
    result = run(SimConfig(seed=4, sessions=15, content=locomo, git_sample=0, real_fs=True, home=tmp_path))
    assert result.violations == []
    store = FileSessionStore(tmp_path)
    contents = [n.content for sid in store.session_ids() for n in store.load(sid).nodes.values()]
    assert sum(c in texts for c in contents) > len(contents) // 2


def test_git_growth_replays_a_session_into_real_git_and_reports_each_commit() -> None:
    result = run(SimConfig(seed=6, sessions=20, git_sample=1))
    ((session, ops),) = result.git_ops.items()
    assert sum(kind == "commit" and message.startswith("turn ") for kind, _, message in ops) == (
        result.file_counts[session].appended
    )
    # Replay its first 80 commits (a prefix of the writes and commits is a history of its own).
    commits = [i for i, (kind, _, _) in enumerate(ops) if kind == "commit"]
    prefix = {session: ops[: commits[79] + 1]}
    steps: list[int] = []  # the replay's progress: per commit, out of a total known up front
    (growth,) = measure(prefix, progress=steps.append)
    assert growth.commits == 80
    assert sum(steps) == len(steps) == count_commits(prefix) == 80
    assert growth.turns > 0
    assert growth.loose_bytes > 0
    assert growth.packed
    assert growth.packed[-1][0] == growth.turns
    assert len(growth.per_turn) == growth.turns


def test_the_git_replay_has_a_progress_bar_of_its_own() -> None:
    progress = _Progress(sessions=3, enabled=False)
    for done in (1, 2, 3):
        progress.session_done(done, 3, virtual_s=60.0 * done)
    progress.git_replay(sessions=2, commits=10)
    (sessions_bar, git_bar) = progress.progress.tasks
    assert sessions_bar.finished
    assert git_bar.description.startswith("git replay")
    assert git_bar.total == 10
    assert not git_bar.finished
    for _ in range(10):
        progress.git_commits(1)
    assert git_bar.finished


def test_the_summary_says_what_records_and_consumed_count(capsys: pytest.CaptureFixture[str]) -> None:
    """`records` are the record nodes there are now; the txlog also holds records rewound after their write,
    so after a clean drain consumed = records + consumed-then-rewound, and the table says so."""
    result = run(SimConfig(seed=7, sessions=20, git_sample=0))
    oracle = result.oracle
    assert result.violations == []
    assert oracle.consumed_rewound > 0
    assert oracle.consumed == oracle.records + oracle.consumed_rewound
    summary = report.build(result, [], wall_s=1.0, git_s=0.0, replay="dagmem sim", paths={})
    assert summary["oracle"]["consumed_rewound"] == oracle.consumed_rewound
    report.print_summary(summary)
    table = capsys.readouterr().out
    assert f"{result.events['turn']:,} / {oracle.records:,}" in table
    assert "records now (not rewound)" in table
    assert (
        f"{oracle.consumed:,} (incl. {oracle.consumed_rewound:,} rewound since) / {oracle.cited:,}" in table
    )


@pytest.mark.parametrize("output", ["table", "json"])
def test_sim_without_matplotlib_saves_the_run_and_says_how_to_get_the_plot(
    tmp_path: Path, output: str
) -> None:
    """matplotlib is the optional extra `sim`: a plain install runs, saves and prints everything but the plot."""
    (tmp_path / "report.png").write_bytes(b"an earlier run's plot")
    no_matplotlib = (
        "import sys; sys.modules['matplotlib'] = None; from dagmem.cli import main; sys.exit(main())"
    )
    args = ["sim", "--sessions", "5", "--git-sample", "0", "--out", str(tmp_path)]
    result = subprocess.run(
        [sys.executable, "-c", no_matplotlib, *args, *(["--json"] if output == "json" else [])],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == report.NO_PLOT
    assert "pip install 'dagmem[sim]'" in report.NO_PLOT
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["ok"]
    assert saved["sessions"] == 5
    assert saved["plot_path"] is None
    assert not (tmp_path / "report.png").exists()
    if output == "json":
        assert json.loads(result.stdout)["trace_sha256"] == saved["trace_sha256"]
    else:
        assert "oracle violations" in result.stdout
        assert saved["trace_sha256"] in result.stdout
        assert "plot:" not in result.stdout


# -- the oracle catches broken homes -------------------------------------------------------------------


def text(i: int) -> str:
    return f"turn {i}: we talked about trams, tiles and the river in Lisbon, number {i}"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A clean, drained home: a trunk and a fork, written in several batches by the real write pass."""
    store = FileSessionStore(tmp_path, fsync=False)
    ids = [store.append("s", "user" if i % 2 == 0 else "assistant", text(i)).id for i in range(8)]
    store.append("s", "user", "a retry of the question about tiles", predecessor=ids[3])
    results = write_home(tmp_path, force=True, threshold=40)
    assert [r.outcome for r in results] == ["written"]
    assert oracle(tmp_path).violations == []
    return tmp_path


def oracle(home: Path, *, drained: bool = True) -> OracleReport:
    wsid = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    return check_home(FileSessionStore(home), home / "memory", wsid, drained=drained)


def kinds(report: OracleReport) -> set[tuple[str, str]]:
    return {(v.kind, v.subject) for v in report.violations}


def edit_node(home: Path, node_id: str, update: Any) -> None:
    (path,) = (home / "sessions" / "s" / "history").glob(f"*/*-{node_id}.json")
    node = json.loads(path.read_text())
    update(node["metadata"])
    path.write_text(json.dumps(node, indent=1))


def txlog_lines(home: Path) -> list[dict[str, Any]]:
    path = home / "memory" / ".dagmem" / "txlog.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def append_txlog(home: Path, consumed: list[str]) -> None:
    seq = len(txlog_lines(home)) + 1
    line = {"tx": f"{seq:08d}-deadbeef", "seq": seq, "at": EPOCH, "session": "s", "consumed": consumed,
            "files": {}, "migrated": False}  # fmt: skip
    with (home / "memory" / ".dagmem" / "txlog.jsonl").open("a") as f:
        f.write(json.dumps(line) + "\n")


def test_the_oracle_catches_a_lost_marker(home: Path) -> None:
    edit_node(home, "n2", lambda metadata: metadata.pop(MARKER_KEY))
    assert ("stranded", "s/n2") in kinds(oracle(home))


def test_the_oracle_catches_a_double_write(home: Path) -> None:
    first = txlog_lines(home)[0]["consumed"]
    append_txlog(home, first)
    found = kinds(oracle(home))
    assert {("consumed-twice", source) for source in first} <= found


def test_the_oracle_catches_a_marker_without_install(home: Path) -> None:
    FileSessionStore(home).append("s", "user", "said after the write")
    assert ("owed-after-drain", "s/n10") in kinds(oracle(home))
    wsid = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    edit_node(home, "n10", lambda metadata: metadata.update({MARKER_KEY: wsid}))
    found = kinds(oracle(home, drained=False))
    assert ("marker-without-consumption", "s/n10") in found


def test_the_oracle_catches_consumed_but_not_archived_nor_cited(home: Path) -> None:
    FileSessionStore(home).append("s", "user", "consumed by a forged txlog line")
    append_txlog(home, ["s/n10"])
    found = kinds(oracle(home))
    assert {("consumed-not-archived", "s/n10"), ("consumed-not-cited", "s/n10")} <= found


def test_the_oracle_catches_consumed_but_not_cited(home: Path) -> None:
    topics = sorted(t for t in (home / "memory" / "topics").glob("*.md") if t.name != "index.md")
    cited = {
        line.split("#src-")[1].split(")")[0] for path in topics for line in path.read_text().splitlines()
        if "#src-" in line
    }  # fmt: skip
    victim = topics[0]
    victim.unlink()  # its blocks are gone: the records only it cited are now cited by nobody
    left = {
        line.split("#src-")[1].split(")")[0] for path in topics[1:] for line in path.read_text().splitlines()
        if "#src-" in line
    }  # fmt: skip
    assert cited - left
    assert any(kind == "consumed-not-cited" for kind, _ in kinds(oracle(home)))


def test_the_oracle_catches_a_record_archived_twice(home: Path) -> None:
    archive = home / "memory" / "sources" / "s.md"
    data = archive.read_bytes()
    last = data.rindex(b'<a id="src-')
    archive.write_bytes(data + data[last:])
    assert any(kind == "archived-twice" for kind, _ in kinds(oracle(home)))


def test_the_oracle_catches_consumed_records_whose_evidence_is_gone(home: Path) -> None:
    archive = home / "memory" / "sources" / "s.md"
    data = archive.read_bytes()
    archive.write_bytes(data[: data.rindex(b'<a id="src-')])
    found = {kind for kind, _ in kinds(oracle(home))}
    assert {"consumed-not-archived", "dangling-citation"} <= found


# -- bugs the simulator found --------------------------------------------------------------------------


def test_a_failed_forced_batch_does_not_leave_a_deadline_in_the_past() -> None:
    """Seed 1, 20 sessions, --faults 0.02: a writer crash on the forced batch of an abandoned branch left
    the abandonment deadline (already past) as the timer's next deadline, so the timer fired at once,
    forever, and virtual time never moved again."""
    view = DagView("s")
    for i, parent in enumerate([None, "a0", "a1"]):
        view.add(f"a{i}", parent, tokens=10)
    view.add("b", "a1", tokens=10)
    planner = SessionPlanner(view, "a2", threshold=1000, abandon_after=60.0)
    planner.on_head("b", now=0.0)  # a2's branch is abandoned; it is force-written at t=60
    batch = planner.next_batch(60.0)
    assert batch is not None
    assert batch.forced
    planner.on_failed(batch, retryable=True, now=60.0)
    assert planner.next_deadline() == 60.5  # the retry, not the past abandonment
    assert planner.next_batch(60.1) is None
    assert planner.next_batch(60.5) == batch
    assert planner.next_deadline() is None  # in flight: its answer is the next event
    planner.on_failed(batch, retryable=False, now=61.0)
    assert planner.parked
    assert planner.next_deadline() is None


def test_a_retry_with_nothing_left_to_retry_leaves_no_deadline_in_the_past() -> None:
    """Seed 1, 300 sessions, --faults 0.05: a forced batch failed, then the head came back to its branch
    (forgiving the abandonment) before the retry time. At the retry time nothing was due, yet the retry
    time stayed the next deadline: the timer fired at once, forever, at one virtual instant."""
    view = DagView("s")
    for i, parent in enumerate([None, "a0", "a1"]):
        view.add(f"a{i}", parent, tokens=10)
    view.add("b", "a1", tokens=10)
    planner = SessionPlanner(view, "a2", threshold=1000, abandon_after=60.0)
    planner.on_head("b", now=0.0)
    batch = planner.next_batch(60.0)
    assert batch is not None
    planner.on_failed(batch, retryable=True, now=60.0)
    planner.on_head("a2", now=60.2)  # back to the branch: forgiven; b's branch is abandoned now
    assert planner.next_batch(60.5) is None
    assert planner.next_deadline() == 120.2


def test_end_session_survives_a_session_actor_crash_in_the_middle(tmp_path: Path) -> None:
    """A crash of the session actor as it marked a boundary batch made `end_session` return at once,
    while the session still owed records: the restarted actor had forgotten the boundary."""

    epoch = FakeClock(EPOCH, follows_loop=True)

    async def main() -> None:
        store = MemorySessionStore(clock=epoch)
        config = RuntimeConfig(token_threshold=100_000, fsync=False)
        async with Runtime.open(tmp_path, store=store, config=config, epoch=epoch, offload=False) as rt:
            ids = [await rt.append("s", "user" if i % 2 == 0 else "assistant", text(i)) for i in range(6)]
            await rt.append("s", "user", "a side branch", predecessor=ids[2])
            with faults.armed(faults.crash_once("write:mark")):
                await rt.end_session("s")
            assert rt.status().pending_turns == 0
            wsid = rt.workspace_id
            report = check_home(store, tmp_path / "memory", wsid, drained=True)
            assert report.violations == []
            assert report.marked == report.records == 7

    run_virtual(main, 1)


# -- bigger runs ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_default_run_is_clean(tmp_path: Path) -> None:
    assert cli_main(["sim", "--json", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["violations"] == []
    assert report["sessions"] == 2_000


@pytest.mark.slow
def test_a_faulty_run_of_500_sessions_is_clean() -> None:
    result = run(SimConfig(seed=9, sessions=500, faults=0.05, git_sample=0))
    assert result.violations == []
