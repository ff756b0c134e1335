"""The actor runtime end to end through `dagmem.Runtime` (DESIGN §5, §7), on asyncio and trio."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import dagmem
from dagmem import HEAD, FileSessionStore, InvalidInput, MemorySessionStore, Runtime
from dagmem.actors import RuntimeConfig, SessionCrashed
from dagmem.memory import faults
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import token_encoding
from dagmem.memory.store import FakeClock
from dagmem.memory.write import BatchInput, Edits, ExtractiveDistiller, TopicReader
from dagmem.sim import OracleReport, check_home
from dagmem.tests._loop_guard import blocking_calls

pytestmark = pytest.mark.anyio


def oracle(store: dagmem.SessionStore, home: Path, *, drained: bool = True) -> OracleReport:
    workspace_id = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    return check_home(store, home / "memory", workspace_id, drained=drained)


def consumed(home: Path) -> list[str]:
    import json

    path = home / "memory" / ".dagmem" / "txlog.jsonl"
    return (
        [s for line in path.read_text().splitlines() for s in json.loads(line)["consumed"]]
        if path.exists()
        else []
    )


def text(i: int) -> str:
    return f"turn {i}: we talked about trams, tiles and the river in Lisbon, number {i}"


# -- the basics ------------------------------------------------------------------------------------------


async def test_append_fork_and_flush_write_every_branch_once(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path, token_threshold=120) as rt:
        ids = [await rt.append("s", "user" if i % 2 == 0 else "assistant", text(i)) for i in range(12)]
        fork = await rt.append("s", "user", "a retry of the fourth question about tiles", predecessor=ids[3])
        await rt.append("s", "assistant", "the tiles are called azulejos", predecessor=fork)
        await rt.flush()
        assert rt.status().pending_turns > 0  # below the threshold: owed, not due
        await rt.flush(force=True)
        status = rt.status()
        assert status.pending_turns == 0
        assert status.last_outcome == "success"
    report = oracle(FileSessionStore(tmp_path), tmp_path)
    assert report.violations == []
    assert report.consumed == 14


async def test_a_fresh_process_reads_the_token_table_off_the_event_loop(tmp_path: Path) -> None:
    """The sessions count each turn's tokens on the loop; the first count in a process needs cl100k's
    table, a file: the runtime reads it in a worker thread as it starts (the suite's guard only sees it
    in the test that happens to count first in its process: this one makes it so)."""
    token_encoding.cache_clear()
    with blocking_calls() as calls:
        async with Runtime.open(tmp_path) as rt:
            await rt.append("s", "user", "hello there")
    assert calls == []


async def test_head_semantics_through_the_runtime(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path) as rt:
        a = await rt.append("s", "user", "hello")
        b = await rt.append("s", "assistant", "hi", predecessor=HEAD)
        fork = await rt.append("s", "assistant", "hey", predecessor=a)
        retried = await rt.append("s", "user", "and then?")  # the fork moved the head: it goes on there
        root = await rt.append("s", "user", "new thread", predecessor=None)
        await rt.set_head("s", retried)
        after = await rt.append("s", "user", "continue")
    store = FileSessionStore(tmp_path)
    snapshot = store.load("s")
    assert snapshot.nodes[b].predecessor == a
    assert snapshot.nodes[retried].predecessor == fork
    assert snapshot.nodes[root].predecessor is None
    assert snapshot.nodes[after].predecessor == retried
    assert snapshot.meta.head == after


@pytest.mark.parametrize("bad", ["../x", "", "a" * 65, "a\x00b", "a/b"])
async def test_bad_ids_raise_invalid_input_and_write_nothing(tmp_path: Path, bad: str) -> None:
    async with Runtime.open(tmp_path) as rt:
        with pytest.raises(InvalidInput):
            await rt.append(bad, "user", "hello")
        with pytest.raises(InvalidInput):
            await rt.append("s", "user", "hello", node_id=bad)
        assert rt.live_sessions() == []
    assert not (tmp_path / "sessions").exists() or list((tmp_path / "sessions").iterdir()) == []


async def test_bad_input_inside_a_session_is_refused_and_the_session_carries_on(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path) as rt:
        first = await rt.append("s", "user", "hello")
        with pytest.raises(InvalidInput, match="role"):
            await rt.append("s", "robot", "beep")
        with pytest.raises(InvalidInput, match="no node 'ghost'"):
            await rt.append("s", "user", "x", predecessor="ghost")
        with pytest.raises(InvalidInput, match="already has"):
            await rt.append("s", "user", "x", node_id=first)
        second = await rt.append("s", "assistant", "still here")
    snapshot = FileSessionStore(tmp_path).load("s")
    assert list(snapshot.nodes) == [first, second]


async def test_end_session_writes_every_branch_head_first(tmp_path: Path) -> None:
    offered: list[list[str]] = []

    class Recording(ExtractiveDistiller):
        def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
            offered.append([r.node_id for r in batch.records])
            return super().distill(batch, topics)

    async with Runtime.open(tmp_path, distiller=Recording()) as rt:
        trunk = [await rt.append("s", "user" if i % 2 == 0 else "assistant", text(i)) for i in range(6)]
        # A sub-agent's side branch: the head stays at the end of the trunk.
        side = await rt.append("s", "user", "a side question", predecessor=trunk[1], spawned=True)
        await rt.end_session("s")
        assert rt.status().pending_turns == 0
        assert rt.live_sessions() == []  # an ended session that owes nothing retires
    assert offered == [trunk, [side]]
    assert oracle(FileSessionStore(tmp_path), tmp_path).violations == []


# -- time: idle and abandoned branches (virtual clock, in-memory sessions, real workspace files) ------------


@pytest.mark.virtual_time
async def test_an_idle_session_is_boundary_written_in_virtual_time(tmp_path: Path) -> None:
    clock = FakeClock(follows_loop=True)
    store = MemorySessionStore(clock=clock)
    wall = time.monotonic()
    async with Runtime.open(tmp_path, idle_after=1800.0, store=store, epoch=clock) as rt:
        for i in range(4):
            await rt.append("s", "user" if i % 2 == 0 else "assistant", text(i))
        await anyio.sleep(1799)
        assert consumed(tmp_path) == []  # not idle yet
        await anyio.sleep(2)
        await rt.flush()
        assert len(consumed(tmp_path)) == 4
        assert rt.live_sessions() == []
    assert time.monotonic() - wall < 20  # half an hour of silence cost no real half hour
    assert oracle(store, tmp_path).violations == []


@pytest.mark.virtual_time
async def test_an_abandoned_branch_is_force_written_after_abandon_after(tmp_path: Path) -> None:
    clock = FakeClock(follows_loop=True)
    store = MemorySessionStore(clock=clock)
    async with Runtime.open(tmp_path, store=store, abandon_after=60.0, epoch=clock) as rt:
        ids = [await rt.append("s", "user" if i % 2 == 0 else "assistant", text(i)) for i in range(6)]
        await rt.set_head("s", ids[1])  # the user goes back and asks again
        await rt.append("s", "user", "asked differently")
        await anyio.sleep(59)
        assert consumed(tmp_path) == []
        await anyio.sleep(2)
        await rt.flush()
        # The abandoned branch (root -> ids[5]) was written; the new branch's own turn is still owed.
        assert sorted(consumed(tmp_path)) == sorted(f"s/{i}" for i in ids)
        assert rt.status().pending_turns == 1


@pytest.mark.virtual_time
async def test_a_branch_the_head_returns_to_is_not_force_written(tmp_path: Path) -> None:
    clock = FakeClock(follows_loop=True)
    store = MemorySessionStore(clock=clock)
    async with Runtime.open(tmp_path, store=store, abandon_after=60.0, epoch=clock) as rt:
        ids = [await rt.append("s", "user" if i % 2 == 0 else "assistant", text(i)) for i in range(6)]
        await rt.set_head("s", ids[1])
        await anyio.sleep(30)
        await rt.set_head("s", ids[5])  # back to the original branch
        await anyio.sleep(120)
        await rt.flush()
        assert consumed(tmp_path) == []


# -- crashes and supervision ---------------------------------------------------------------------------


async def test_a_crashed_session_actor_is_restarted_with_its_state_rebuilt(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path, token_threshold=10_000) as rt:
        ids = [await rt.append("s", "user" if i % 2 == 0 else "assistant", text(i)) for i in range(4)]
        with faults.armed(faults.crash_once("session:append")):
            with pytest.raises(SessionCrashed):
                await rt.append("s", "user", "this one crashes the actor")
        # The restarted actor rebuilt its view from disk: the head and the branches are intact.
        after = await rt.append("s", "assistant", "after the restart")
        await rt.flush(force=True)
        assert rt.status().pending_turns == 0
    snapshot = FileSessionStore(tmp_path).load("s")
    assert snapshot.nodes[after].predecessor == ids[-1]
    assert oracle(FileSessionStore(tmp_path), tmp_path).violations == []


@pytest.mark.parametrize("site", ["writer:batch", "txlog:write", "install:rename", "write:mark"])
async def test_a_crash_mid_batch_leaves_it_owed_and_it_is_written_once(tmp_path: Path, site: str) -> None:
    async with Runtime.open(tmp_path) as rt:
        for i in range(6):
            await rt.append("s", "user" if i % 2 == 0 else "assistant", text(i))
        with faults.armed(faults.crash_once(site)):
            await rt.flush(force=True)
        await rt.flush(force=True)
        assert rt.status().pending_turns == 0
    lines = consumed(tmp_path)
    assert len(lines) == len(set(lines)) == 6
    assert oracle(FileSessionStore(tmp_path), tmp_path).violations == []


@pytest.mark.virtual_time
async def test_a_crash_past_the_intensity_limit_surfaces_as_runtime_crashed(tmp_path: Path) -> None:
    clock = FakeClock(follows_loop=True)
    store = MemorySessionStore(clock=clock)
    config = RuntimeConfig(root_intensity=2, root_period=60.0)

    def always(site: str) -> None:
        if site == "writer:batch":
            raise faults.InjectedCrash(site)

    seen: list[BaseException] = []

    async def until_it_gives_up() -> None:
        async with Runtime.open(tmp_path, store=store, config=config, epoch=clock) as rt:
            await rt.append("s", "user", "hello there")
            with faults.armed(always), anyio.fail_after(3600):
                while True:  # once the root gives up, every call fails fast: no silent stall
                    try:
                        await rt.flush(force=True)
                    except dagmem.RuntimeCrashed as exc:
                        seen.append(exc)
                        raise
                    await anyio.sleep(1)

    with pytest.raises(dagmem.RuntimeCrashed, match="root"):
        await until_it_gives_up()
    assert seen, "the pending call saw the crash"


# -- load: many sessions, backpressure ---------------------------------------------------------------------


async def test_two_hundred_sessions_with_forks_and_head_moves(tmp_path: Path) -> None:
    rng = random.Random(7)

    async def session(rt: Runtime, n: int) -> None:
        sid = f"s{n}"
        ids: list[str] = []
        for i in range(rng.randint(4, 10)):
            choice = rng.random()
            if ids and choice < 0.15:
                node = await rt.append(sid, "user", f"retry {i} {text(i)}", predecessor=rng.choice(ids))
            else:
                node = await rt.append(sid, "user" if i % 2 == 0 else "assistant", text(i))
            ids.append(node)
            if choice > 0.9:
                await rt.set_head(sid, rng.choice(ids))

    store = FileSessionStore(tmp_path, fsync=False)  # a concurrency test: durability is tested elsewhere
    config = RuntimeConfig(token_threshold=100, fsync=False)
    async with Runtime.open(tmp_path, config=config, store=store) as rt:
        async with anyio.create_task_group() as tg:
            for n in range(200):
                tg.start_soon(session, rt, n)
        await rt.flush(force=True)
        assert rt.status().pending_turns == 0
    report = oracle(FileSessionStore(tmp_path), tmp_path)
    assert report.violations == []
    assert report.consumed == report.records > 800


class GatedDistiller(ExtractiveDistiller):
    """Holds the writer inside its first batch (in the writer's worker thread) until the gate opens."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        assert self.gate.wait(timeout=60), "the test never opened the gate"
        return super().distill(batch, topics)


async def test_a_flood_with_the_writer_stuck_waits_on_bounded_mailboxes_and_drops_nothing(
    tmp_path: Path,
) -> None:
    """DESIGN §5: mailboxes are bounded; a flood slows its callers, never queues without bound, never drops
    a turn. Six callers per session flood a mailbox of two while the writer is stuck in its first batch:
    every append returns, the callers beyond the room wait, and once the writer moves all is written."""
    sessions, callers, turns = 8, 6, 10
    config = RuntimeConfig(session_mailbox=2, writer_mailbox=1, token_threshold=200, fsync=False)
    gate = threading.Event()
    runtime: list[Runtime] = []
    queued = {"session": 0, "writer": 0}  # the most messages seen waiting in a mailbox
    held_back = 0  # the most callers of one session seen waiting for room (neither queued nor in hand)
    in_flight = {f"f{n}": 0 for n in range(sessions)}  # appends called and not yet returned
    session_full, writer_full = anyio.Event(), anyio.Event()

    def trace(kind: str, fields: dict[str, Any]) -> None:
        # Called by the actors themselves: the queues are read from the actors' mailboxes, no polling.
        nonlocal held_back
        rt = runtime[0]
        if kind == "turn":  # the session actor has one append in hand
            sid = fields["session"]
            waiting = len(rt._sessions[sid].mailbox)
            queued["session"] = max(queued["session"], waiting)
            held_back = max(held_back, in_flight[sid] - 1 - waiting)
            if waiting >= config.session_mailbox:
                session_full.set()
        elif kind == "batch":  # a session hands a batch to the writer
            waiting = len(rt._ctx.writer)
            queued["writer"] = max(queued["writer"], waiting)
            if waiting >= config.writer_mailbox:
                writer_full.set()

    async def flood(rt: Runtime, sid: str) -> None:
        for i in range(turns):
            in_flight[sid] += 1
            await rt.append(sid, "user" if i % 2 == 0 else "assistant", text(i))
            in_flight[sid] -= 1

    store = FileSessionStore(tmp_path, fsync=False)
    try:
        async with Runtime.open(
            tmp_path, GatedDistiller(gate), config=config, store=store, trace=trace
        ) as rt:
            runtime.append(rt)
            with anyio.fail_after(60):  # every append returns while the writer is stuck
                async with anyio.create_task_group() as tg:
                    for sid in in_flight:
                        for _ in range(callers):
                            tg.start_soon(flood, rt, sid)
                await writer_full.wait()
                await session_full.wait()
            assert consumed(tmp_path) == []  # the writer was stuck all along
            gate.set()
            with anyio.fail_after(60):
                await rt.flush(force=True)
    finally:
        gate.set()
    assert queued == {"session": config.session_mailbox, "writer": config.writer_mailbox}
    assert held_back > 0  # the callers beyond the mailbox's room waited: the flood was slowed, not queued
    on_disk = FileSessionStore(tmp_path)
    assert sum(len(on_disk.load(sid).nodes) for sid in in_flight) == sessions * callers * turns
    report = oracle(on_disk, tmp_path)
    assert report.violations == []
    assert report.records == report.consumed == sessions * callers * turns


# -- the adapter protocol ---------------------------------------------------------------------------------


async def test_a_host_that_writes_its_own_node_files_notifies_turns(tmp_path: Path) -> None:
    host = FileSessionStore(tmp_path)  # the host's own writer of the documented format
    async with Runtime.open(tmp_path) as rt:
        first = host.append("h", "user", "question written by the host")
        await rt.notify_turn("h", first)
        second = host.append("h", "assistant", "answer written by the host")
        await rt.notify_turn("h", second)
        await rt.notify_head("h", second.id)
        await rt.end_session("h")
    assert sorted(consumed(tmp_path)) == ["h/" + first.id, "h/" + second.id]
    assert oracle(FileSessionStore(tmp_path), tmp_path).violations == []


async def test_recall_refuses_a_non_string_query(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path) as rt:
        with pytest.raises(InvalidInput):
            await rt.recall(42)  # type: ignore[arg-type]
