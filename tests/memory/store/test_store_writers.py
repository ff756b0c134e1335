"""More than one writer on a session (issue 17, case 2): node files are created exclusively (a file that is
there, such as a host's node not announced yet, is never overwritten), and writers in different processes
take turns on the session's lock and see each other's nodes and head. The two-process SIGKILL loop is in
tests/crash/test_crash_kill.py."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from dagmem import HEAD, FileSessionStore, InvalidInput, Runtime
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import Node, Role
from dagmem.sim import check_home


def node(node_id: str, seq: int, role: str, content: str, predecessor: str | None) -> Node:
    return Node(
        id=node_id, seq=seq, role=Role(role), content=content, predecessor=predecessor, created_at=1.0 * seq
    )


def host_node(home: Path, sid: str, node: Node) -> Path:
    """Write a node file as a host does (the documented format), without telling any store."""
    path = home / "sessions" / sid / node.relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(node.to_json())
    return path


def session_files(home: Path, sid: str) -> dict[str, bytes]:
    """The session's node files and meta.json (not the lock file: bookkeeping of writers)."""
    root = home / "sessions" / sid
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def assert_sound(store: FileSessionStore, sid: str) -> None:
    """Valid, and no two node files share an id or a seq."""
    snapshot = store.load(sid)
    assert snapshot.problems == []
    names = [p.name for p in (store.home / "sessions" / sid / "history").rglob("*.json")]
    seqs = [name.split("-", 1)[0] for name in names]
    assert len(set(seqs)) == len(seqs), f"duplicate seqs: {sorted(seqs)}"
    assert len(names) == len(snapshot.nodes)


def test_an_append_never_overwrites_a_host_node_not_announced_yet(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    first = store.append("s", "user", "where do trams go?")
    # The host writes its answer under exactly the name the store would pick next (seq 2, id n2).
    theirs = node("n2", 2, "assistant", "the host's answer", first.id)
    path = host_node(tmp_path, "s", theirs)
    mine = store.append("s", "assistant", "the store's answer")
    assert path.read_bytes() == theirs.to_json()
    assert (mine.id, mine.seq) == ("n3", 3)
    assert_sound(FileSessionStore(tmp_path), "s")
    assert {n.content for n in FileSessionStore(tmp_path).load("s").nodes.values()} == {
        "where do trams go?",
        "the host's answer",
        "the store's answer",
    }


def test_an_explicit_id_that_collides_with_a_host_file_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    first = store.append("s", "user", "where do trams go?")
    theirs = node("answer", 2, "assistant", "host", first.id)
    host_node(tmp_path, "s", theirs)
    before = session_files(tmp_path, "s")
    with pytest.raises(InvalidInput, match="already has a node 'answer'"):
        store.append("s", "assistant", "mine", node_id="answer")
    assert session_files(tmp_path, "s") == before
    assert store.head("s") == first.id


def test_two_processes_appending_to_one_session_take_turns(tmp_path: Path) -> None:
    """Two stores stand for two processes: each keeps its own view, and each sees the other's nodes and
    head before it picks a seq, an id or a predecessor."""
    a, b = FileSessionStore(tmp_path), FileSessionStore(tmp_path)
    ids = []
    for i in range(10):
        writer = a if i % 2 == 0 else b
        ids.append(writer.append("s", "user" if i % 2 == 0 else "assistant", f"turn {i}").id)
    assert_sound(FileSessionStore(tmp_path), "s")
    branch = FileSessionStore(tmp_path).branch("s", ids[-1])
    assert [n.id for n in branch] == ids  # each append followed the other's head
    b.set_head("s", ids[3])
    fork = a.append("s", "user", "again from turn 3", predecessor=HEAD)
    assert fork.predecessor == ids[3]
    assert FileSessionStore(tmp_path).head("s") == fork.id


def test_appends_from_threads_with_their_own_stores_never_collide(tmp_path: Path) -> None:
    """Concurrent writers with separate views (as two processes are) on one session."""
    stores = [FileSessionStore(tmp_path, fsync=False) for _ in range(3)]
    stores[0].append("s", "user", "root")
    done: list[list[str]] = [[] for _ in stores]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(40):
                done[k].append(stores[k].append("s", "user", f"writer {k} turn {i}").id)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    fresh = FileSessionStore(tmp_path)
    assert_sound(fresh, "s")
    nodes = fresh.load("s").nodes
    returned = [node_id for ids in done for node_id in ids]
    assert len(set(returned)) == len(returned) == 120
    assert set(returned) <= set(nodes)


def test_the_session_lock_file_is_neither_a_node_a_session_nor_a_temp_file(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "hello")
    store.merge_node_metadata("s", {"n1": {"k": True}})
    assert (tmp_path / "sessions" / "s" / ".lock").is_file()
    fresh = FileSessionStore(tmp_path)
    assert fresh.session_ids() == ["s"]
    assert fresh.load("s").problems == []
    assert (tmp_path / "sessions" / "s" / ".lock").is_file()  # the sweep of a new store left it


def test_an_append_that_raises_creates_no_session(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    with pytest.raises(InvalidInput):
        store.append("new", "user", "hello", predecessor="nowhere")
    assert not (tmp_path / "sessions" / "new").exists()


@pytest.mark.anyio
async def test_the_runtime_never_overwrites_a_host_node_before_its_notify_turn(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path, token_threshold=10_000) as rt:
        first = await rt.append("s", "user", "what is a funicular?")
        second = await rt.append("s", "assistant", "a cable railway on a steep slope")
        theirs = node("n3", 3, "user", "the host's question", second)
        path = host_node(tmp_path, "s", theirs)  # announced below, after the runtime appended
        mine = await rt.append("s", "user", "the runtime's question", predecessor=first)
        await rt.notify_turn("s", theirs)
        await rt.flush(force=True)
    assert mine == "n4"
    store = FileSessionStore(tmp_path)
    assert_sound(store, "s")
    assert json.loads(path.read_bytes())["content"] == "the host's question"
    workspace_id = read_workspace_id(tmp_path / "memory" / ".dagmem" / "workspace-id")
    assert workspace_id is not None
    report = check_home(store, tmp_path / "memory", workspace_id, drained=True)
    assert report.violations == []
