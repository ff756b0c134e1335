"""Which branch is current, the API part: every append moves the head (an edited prompt or a retry goes on
from its new branch, and the branch it leaves is abandoned); `spawned=True` adds a side branch that leaves
the head where it was; `spawned_from` names where a session was spawned from."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from dagmem import FileSessionStore, InvalidInput, MemorySessionStore, Runtime, SessionStore
from dagmem.memory.format import SessionMeta
from dagmem.memory.store import FakeClock

pytestmark = pytest.mark.anyio


def transactions(home: Path) -> list[list[str]]:
    """The source ids each committed transaction consumed, in order."""
    path = home / "memory" / ".dagmem" / "txlog.jsonl"
    if not path.exists():
        return []
    return [list(json.loads(line)["consumed"]) for line in path.read_text().splitlines()]


def consumed(home: Path) -> set[str]:
    return {source for tx in transactions(home) for source in tx}


async def trip(rt: Runtime) -> dict[str, str]:
    """A city break: asked for Lisbon, answered, then the user went back and asked for Kyoto instead."""
    ids = {"ask": await rt.append("s", "user", "Plan me a city break in October.")}
    ids["b"] = await rt.append("s", "assistant", "Happy to. Which city would you like?")
    ids["lisbon"] = await rt.append("s", "user", "Lisbon, please.")
    ids["lisbon_reply"] = await rt.append("s", "assistant", "Lisbon in October is mild and sunny.")
    ids["kyoto"] = await rt.append("s", "user", "Kyoto, please.", predecessor=ids["b"])
    ids["kyoto_reply"] = await rt.append("s", "assistant", "Kyoto in October has the first autumn leaves.")
    return ids


@pytest.mark.virtual_time
async def test_an_edited_prompt_goes_on_from_its_new_branch_and_the_old_one_is_written(
    tmp_path: Path,
) -> None:
    clock = FakeClock(follows_loop=True)
    store = MemorySessionStore(clock=clock)
    async with Runtime.open(tmp_path, store=store, abandon_after=60.0, epoch=clock) as rt:
        ids = await trip(rt)
        nodes = store.load("s").nodes
        # The reply lands under "Kyoto, please.", not under the old branch's last turn.
        assert nodes[ids["kyoto_reply"]].predecessor == ids["kyoto"]
        assert store.head("s") == ids["kyoto_reply"]
        await anyio.sleep(59)
        await rt.flush()
        assert consumed(tmp_path) == set()
        await anyio.sleep(2)
        await rt.flush()
        # The branch the edit left (to "Lisbon in October") was force-written; Kyoto's turns are owed.
        old = ("ask", "b", "lisbon", "lisbon_reply")
        assert consumed(tmp_path) == {f"s/{ids[name]}" for name in old}
        assert rt.status().pending_turns == 2
        await rt.end_session("s")
    # Never one batch of "Lisbon, please." with "Kyoto in October...".
    for tx in transactions(tmp_path):
        assert not {f"s/{ids['lisbon']}", f"s/{ids['kyoto_reply']}"} <= set(tx)
    assert consumed(tmp_path) == {f"s/{node}" for node in ids.values()}


@pytest.mark.virtual_time
async def test_a_spawned_side_branch_leaves_the_head_and_is_not_abandoned(tmp_path: Path) -> None:
    clock = FakeClock(follows_loop=True)
    store = MemorySessionStore(clock=clock)
    async with Runtime.open(tmp_path, store=store, abandon_after=60.0, epoch=clock) as rt:
        ask = await rt.append("s", "user", "Review the repository and list its modules.")
        task = await rt.append("s", "user", "Sub-agent: list the modules.", predecessor=ask, spawned=True)
        found = await rt.append("s", "assistant", "There are three modules.", predecessor=task, spawned=True)
        assert store.head("s") == ask
        answer = await rt.append("s", "assistant", "The repository has three modules.")
        nodes = store.load("s").nodes
        assert nodes[answer].predecessor == ask  # the main conversation goes on from the head
        assert nodes[task].metadata["spawned"] is True
        assert nodes[found].metadata["spawned"] is True
        assert "spawned" not in nodes[answer].metadata
        # Neither branch was left by a head move: nothing is force-written after abandon_after.
        await anyio.sleep(600)
        await rt.flush()
        assert consumed(tmp_path) == set()
        # The side branch is a tip like any: written at the session's boundary.
        await rt.end_session("s")
    assert consumed(tmp_path) == {f"s/{n}" for n in (ask, task, found, answer)}


async def test_a_spawned_branch_is_written_when_it_reaches_the_threshold(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path, token_threshold=40) as rt:
        ask = await rt.append("s", "user", "Review the repository.")
        side: list[str] = []
        for i in range(4):
            text = f"the sub-agent read module {i}, which parses the session files and their metadata"
            side.append(
                await rt.append("s", "assistant", text, predecessor=side[-1] if side else ask, spawned=True)
            )
        await rt.flush()
        assert FileSessionStore(tmp_path).head("s") == ask
        written = consumed(tmp_path)
        assert f"s/{ask}" in written  # the per-turn rule, as on any tip
        assert f"s/{side[0]}" in written


@pytest.fixture(params=["file", "memory"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    return FileSessionStore(tmp_path) if request.param == "file" else MemorySessionStore()


def test_spawned_from_is_kept_in_meta_and_checked(any_store: SessionStore) -> None:
    store = any_store
    store.append("child", "user", "Sub-agent: list the modules.", spawned_from="parent/n3")
    assert store.meta("child").spawned_from == "parent/n3"
    snapshot = store.load("child")
    assert snapshot.spawned_from == "parent/n3"
    assert json.loads(snapshot.meta.to_json())["spawned_from"] == "parent/n3"
    store.append("child", "assistant", "three modules", spawned_from="parent/n3")  # the same: fine
    with pytest.raises(InvalidInput, match="first append"):
        store.append("child", "assistant", "x", spawned_from="parent/n4")
    store.append("plain-later", "user", "x")
    with pytest.raises(InvalidInput, match="first append"):
        store.append("plain-later", "user", "y", spawned_from="p/n1")
    assert len(store.load("child").nodes) == 2
    assert [n.content for n in store.load("plain-later").nodes.values()] == ["x"]
    assert store.meta("plain-later").spawned_from is None


@pytest.mark.parametrize("bad", ["parent", "parent/", "/n3", "a/b/c", "../x/n1", "p/n 1", 5])
def test_a_malformed_spawned_from_is_refused_and_nothing_is_written(
    any_store: SessionStore, bad: object
) -> None:
    with pytest.raises(InvalidInput, match="spawned_from"):
        any_store.append("child", "user", "hello", spawned_from=bad)  # type: ignore[arg-type]
    assert not any_store.has_session("child")


def test_meta_without_spawned_from_stays_valid_and_is_written_without_it() -> None:
    old = b'{"id": "s", "head": null, "created_at": 1.0, "updated_at": 2.0, "branches": {}, "merged": []}'
    meta = SessionMeta.from_json(old)
    assert meta.spawned_from is None
    assert "spawned_from" not in json.loads(meta.to_json())
    with pytest.raises(ValueError, match="spawned_from"):
        SessionMeta.from_json(old.replace(b'"merged": []', b'"merged": [], "spawned_from": "nope"'))


async def test_the_runtime_takes_spawned_from_and_refuses_it_later(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path) as rt:
        await rt.append("child", "user", "Sub-agent: read the README.", spawned_from="main/n2")
        with pytest.raises(InvalidInput, match="spawned_from"):
            await rt.append("child", "assistant", "done", spawned_from="main/n9")
        with pytest.raises(InvalidInput, match="spawned_from"):
            await rt.append("other", "user", "x", spawned_from="no-slash")
        with pytest.raises(InvalidInput, match="spawned"):
            await rt.append("child", "user", "x", spawned="yes")  # type: ignore[arg-type]
        await rt.append("child", "assistant", "The README explains the setup.")
    assert FileSessionStore(tmp_path).load("child").spawned_from == "main/n2"
    assert not FileSessionStore(tmp_path).has_session("other")


def test_spawned_is_dagmem_s_key_and_a_retried_append_must_match_it(any_store: SessionStore) -> None:
    store = any_store
    store.append("s", "user", "hello", node_id="a")
    with pytest.raises(InvalidInput, match="dagmem's own"):
        store.append("s", "user", "x", metadata={"spawned": True})
    store.append("s", "user", "task", predecessor="a", node_id="t", spawned=True)
    assert store.append("s", "user", "task", predecessor="a", node_id="t", spawned=True).id == "t"
    with pytest.raises(InvalidInput, match="spawned"):
        store.append("s", "user", "task", predecessor="a", node_id="t")
    assert store.head("s") == "a"
