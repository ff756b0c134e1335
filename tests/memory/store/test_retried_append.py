"""A retried append is a no-op, and one home has one live runtime (DESIGN §11: Ray retries a task at least
once; the workspace is served by one writer).

An append with a caller-given node id that already exists returns the existing node and writes nothing when
role, content, metadata and predecessor match (`HEAD` matches any: it has moved on since); anything else
differs is `InvalidInput`. A second `Runtime.open` on a served home fails at once with `HomeBusy`, from
this process or another; the kernel frees the lock when the serving process dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from dagmem import HEAD, FileSessionStore, HomeBusy, InvalidInput, Runtime, SessionStore
from dagmem.memory.durable import read_workspace_id
from dagmem.sim import check_home


def files_of(store: SessionStore, sid: str) -> dict[str, bytes]:
    snapshot = store.load(sid)
    return {node.id: node.to_json() for node in snapshot.nodes.values()} | {"meta": snapshot.meta.to_json()}


def test_the_same_append_again_returns_the_node_and_writes_nothing(store: SessionStore) -> None:
    first = store.append("s", "user", "hello", node_id="u1", metadata={"k": 1})
    reply = store.append("s", "assistant", "hi", node_id="a1")
    before = files_of(store, "s")
    again = store.append("s", "user", "hello", node_id="u1", predecessor=None, metadata={"k": 1})
    assert again == first
    assert store.append("s", "assistant", "hi", node_id="a1", predecessor=HEAD) == reply
    assert store.append("s", "assistant", "hi", node_id="a1", predecessor="u1") == reply
    assert files_of(store, "s") == before
    assert store.head("s") == "a1"


@pytest.mark.parametrize(
    "case",
    [
        ("assistant", "hi", HEAD, None, "content"),
        ("user", "hello", HEAD, None, "role"),
        ("assistant", "hello", None, None, "predecessor"),
        ("assistant", "hello", HEAD, {"k": 2}, "metadata"),
    ],
)
def test_the_same_id_with_another_turn_is_refused_and_writes_nothing(
    store: SessionStore, case: tuple[str, str, object, object, str]
) -> None:
    role, content, predecessor, metadata, named = case
    store.append("s", "user", "hello", node_id="u1")
    store.append("s", "assistant", "hello", node_id="a1")
    before = files_of(store, "s")
    with pytest.raises(InvalidInput, match=f"already has a node 'a1' with another {named}"):
        store.append("s", role, content, node_id="a1", predecessor=predecessor, metadata=metadata)  # type: ignore[arg-type]
    assert files_of(store, "s") == before


def test_a_marked_node_still_matches_its_retried_append(store: SessionStore) -> None:
    node = store.append("s", "user", "hello", node_id="u1")
    store.update_node_metadata(
        "s", ["u1"], lambda _id, old: {**old, "memory_written_dagmem": "w-" + "0" * 16}
    )
    again = store.append("s", "user", "hello", node_id="u1")
    assert again.id == node.id
    assert again.metadata["memory_written_dagmem"] == "w-" + "0" * 16


pytestmark = pytest.mark.anyio


async def test_a_retried_append_through_the_runtime_counts_once(tmp_path: Path) -> None:
    """The session actor must not count the node twice: it is written and consumed once."""
    async with Runtime.open(tmp_path) as rt:
        ids = [await rt.append("s", "user", f"turn {i}", node_id=f"t{i}") for i in range(3)]
        assert await rt.append("s", "user", "turn 1", node_id="t1", predecessor="t0") == "t1"
        assert await rt.append("s", "user", "turn 2", node_id="t2") == "t2"
        assert rt.status().pending_turns == 3
        with pytest.raises(InvalidInput, match="another content"):
            await rt.append("s", "user", "not turn 2", node_id="t2")
        await rt.flush(force=True)
        assert rt.status().pending_turns == 0
    store = FileSessionStore(tmp_path)
    assert sorted(store.load("s").nodes) == ids
    workspace_id = read_workspace_id(tmp_path / "memory" / ".dagmem" / "workspace-id")
    assert workspace_id is not None
    report = check_home(store, tmp_path / "memory", workspace_id, drained=True)
    assert report.violations == []


async def test_a_second_runtime_on_a_served_home_fails_at_once(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path) as rt:
        await rt.append("s", "user", "hello")
        with anyio.fail_after(5):
            with pytest.raises(HomeBusy, match=f"pid {os.getpid()}"):
                async with Runtime.open(tmp_path):
                    pytest.fail("a second runtime opened a served home")
        assert await rt.append("s", "user", "still served") == "n2"
    async with Runtime.open(tmp_path) as rt:  # released on close
        assert await rt.append("s", "user", "served again") == "n3"


SERVE = textwrap.dedent(
    """
    import sys, anyio, dagmem
    async def main():
        async with dagmem.Runtime.open(sys.argv[1]) as rt:
            await rt.append("s", "user", "from the other process")
            print("serving", flush=True)
            await anyio.sleep(600)
    anyio.run(main)
    """
)


@pytest.fixture
def served_home(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A home served by a runtime in another process (until the test kills it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "serving"
        yield tmp_path, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


async def test_a_home_served_by_another_process_fails_fast_until_that_process_dies(
    served_home: tuple[Path, subprocess.Popen[str]],
) -> None:
    home, proc = served_home
    started = time.monotonic()
    with pytest.raises(HomeBusy, match=f"pid {proc.pid}"):
        async with Runtime.open(home):
            pass
    assert time.monotonic() - started < 2.0  # fails fast: it never waits for the lock
    proc.send_signal(signal.SIGKILL)
    await anyio.to_thread.run_sync(proc.wait)
    async with Runtime.open(home) as rt:  # the kernel released the dead process's lock
        await rt.flush(force=True)
        assert rt.status().pending_turns == 0
