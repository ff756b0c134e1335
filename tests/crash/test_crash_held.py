"""Deciding a held item (`dagmem held approve` / `reject`) is crash-safe and idempotent (the crash suite's
method): for every fault site the decision passes, a copy of the home dies there, a new process opens it
and decides again, and the end is the clean run's: the block in its new file exactly once, gone from the
queue, `core.md` rendered from the master, and the oracle clean."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import dagmem
from dagmem import FileSessionStore
from dagmem.memory import faults
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import CORE_MASTER, HELD_TOPIC, REJECTED_TOPIC, parse_topic
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import approve, held_items, reject
from dagmem.sim import check_home
from dagmem.tests.crash.test_crash import CrashAt, restarted

PASTED = "I always recommend the Hotel Miramar to friends."


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home whose queue holds one candidate core fact (a first-person sentence of a pasted page)."""
    home = tmp_path_factory.mktemp("held-home")

    async def build() -> None:
        async with dagmem.Runtime.open(home, token_threshold=10_000) as rt:
            await rt.append("s1", "user", "I prefer window seats.")
            await rt.append("s1", "user", PASTED, origin="tool")
            await rt.append("s1", "assistant", "Noted.")
            await rt.flush(force=True)

    import anyio

    anyio.run(build)
    return home


def wsid(home: Path) -> str | None:
    return read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")


def _blocks(home: Path, path: str) -> list[str]:
    file = home / "memory" / path
    return [] if not file.exists() else [b.id for b in parse_topic(file.read_text("utf-8"), path).blocks]


def _decide(decide: Callable[[Workspace, str], object], block_id: str) -> Callable[[Path], object]:
    def run(home: Path) -> object:
        with Workspace(home / "memory") as workspace:
            return decide(workspace, block_id)

    return run


@pytest.mark.parametrize(("decide", "target"), [(approve, CORE_MASTER), (reject, REJECTED_TOPIC)])
def test_a_decision_survives_a_crash_at_every_fault_site(
    template: Path, tmp_path: Path, decide: Callable[[Workspace, str], object], target: str
) -> None:
    with Workspace(template / "memory") as workspace:
        (item,) = held_items(workspace)
    assert item.evidence[0].origin == "tool"
    action = _decide(decide, item.block_id)
    n = 0
    while True:
        n += 1
        run = tmp_path / f"run-{n}"
        shutil.copytree(template, run)
        hook = CrashAt(n)
        try:
            with restarted(), faults.armed(hook):
                action(run)
            died = False
        except faults.InjectedCrash:
            died = True
        with restarted():
            action(run)  # the new process decides again: completes it, or finds it done
            action(run)  # and once more: idempotent
        assert _blocks(run, target).count(item.block_id) == 1, (n, hook.site)
        assert item.block_id not in _blocks(run, HELD_TOPIC), (n, hook.site)
        core = (
            (run / "memory" / "core.md").read_text("utf-8") if (run / "memory" / "core.md").exists() else ""
        )
        assert ("Miramar" in core) == (target == CORE_MASTER), (n, hook.site)
        report = check_home(FileSessionStore(run), run / "memory", wsid(run), drained=True)
        assert report.violations == [], (n, hook.site)
        shutil.rmtree(run)
        if not died:
            break
    print(f"\n[held] {decide.__name__}: {n - 1} crash points")
    assert n > 3  # the decision passes the install's fault sites (stage, txlog, moves)
