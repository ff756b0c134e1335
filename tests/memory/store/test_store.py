"""The session store (DESIGN §2), run against the file store and the in-memory store alike."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from dagmem import HEAD, FileSessionStore, InvalidInput, MemorySessionStore, SessionStore
from dagmem.memory.errors import BrokenChain, UnknownNode
from dagmem.memory.format import node_relpath


def plant(store: SessionStore, sid: str, relpath: str, data: bytes) -> None:
    """Write raw bytes into a session, as a host (or a bug) might."""
    if isinstance(store, MemorySessionStore):
        store.write_raw(sid, relpath, data)
    else:
        path = store.path(sid, relpath)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        store.forget(sid)


def node_json(node_id: str, seq: int, role: str, predecessor: str | None, content: str = "x") -> bytes:
    return json.dumps(
        {
            "id": node_id,
            "seq": seq,
            "role": role,
            "content": content,
            "predecessor": predecessor,
            "created_at": 1.0 * seq,
            "metadata": {},
        }
    ).encode()


def seed(store: SessionStore, sid: str = "s1") -> dict[str, list[str]]:
    """Trunk m1..m9, then branch A (5 turns) and branch B (11 turns) forking at m3."""
    trunk = []
    for i in range(1, 10):
        trunk.append(store.append(sid, "user" if i % 2 else "assistant", f"m{i}", node_id=f"m{i}").id)
    branches = {"trunk": trunk}
    for name, length in (("a", 5), ("b", 11)):
        previous = "m3"
        ids = ["m1", "m2", "m3"]
        for i in range(1, length + 1):
            node = store.append(sid, "user" if i % 2 else "assistant", f"{name}{i}", predecessor=previous)
            previous = node.id
            ids.append(node.id)
        branches[name] = ids
    return branches


def test_seed_shape_has_three_tips_with_their_branches(store: SessionStore) -> None:
    branches = seed(store)
    tips = store.tips("s1")
    assert [tip.id for tip in tips] == [branches["trunk"][-1], branches["a"][-1], branches["b"][-1]]
    for ids in branches.values():
        assert [node.id for node in store.branch("s1", ids[-1])] == ids
    assert len(branches["a"]) == 3 + 5
    assert len(branches["b"]) == 3 + 11
    # Every append moves the head, a fork's too: it is at the end of the branch appended last.
    assert store.head("s1") == branches["b"][-1]


def test_every_append_moves_the_head_but_a_spawned_one(store: SessionStore) -> None:
    first = store.append("s", "user", "hello")
    assert store.head("s") == first.id  # an empty session's first node becomes the head
    second = store.append("s", "assistant", "hi", predecessor=HEAD)
    assert second.predecessor == first.id
    assert store.head("s") == second.id
    fork = store.append("s", "assistant", "hi again", predecessor=first.id)
    assert store.head("s") == fork.id  # a retry goes on from its new branch
    after = store.append("s", "user", "continue the retry")
    assert after.predecessor == fork.id
    side = store.append("s", "user", "a sub-agent's task", predecessor=first.id, spawned=True)
    assert store.head("s") == after.id  # a side branch leaves the head where it was
    assert side.metadata == {"spawned": True}
    assert store.load("s").meta.head == after.id  # on disk as well: one meta.json write per append
    root = store.append("s", "user", "another thread", predecessor=None)
    assert root.predecessor is None
    assert store.head("s") == root.id


def test_append_bumps_updated_at_and_set_head_does_not(store: SessionStore) -> None:
    store.append("s", "user", "one")
    before = store.meta("s").updated_at
    node = store.append("s", "assistant", "two")
    bumped = store.meta("s").updated_at
    assert bumped > before
    assert bumped == node.created_at
    store.set_head("s", node.predecessor)
    assert store.meta("s").updated_at == bumped


def test_generated_ids_are_deterministic_and_unique(store: SessionStore) -> None:
    store.append("s", "user", "one", node_id="n2")
    ids = [store.append("s", "user", f"t{i}").id for i in range(3)]
    assert ids == ["n2-2", "n3", "n4"]


BAD_IDS = ["../x", "", "a" * 65, "a\x00b", "a/b", "-leading", "sp ace", "é"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_session_ids_are_refused_and_nothing_is_written(store: SessionStore, bad: str) -> None:
    with pytest.raises(InvalidInput, match="session id"):
        store.append(bad, "user", "hello")
    assert store.session_ids() == []


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_node_ids_are_refused_and_nothing_is_written(store: SessionStore, bad: str) -> None:
    store.append("s", "user", "hello", node_id="n0")
    before = store.load("s")
    with pytest.raises(InvalidInput, match="node id"):
        store.append("s", "user", "again", node_id=bad)
    with pytest.raises(InvalidInput, match="predecessor id"):
        store.append("s", "user", "again", predecessor=bad)
    after = store.load("s")
    assert after.nodes == before.nodes
    assert after.meta == before.meta


def test_other_bad_input_is_refused_with_nothing_written(store: SessionStore) -> None:
    store.append("s", "user", "hello", node_id="n0")
    before = store.load("s")
    with pytest.raises(InvalidInput, match="role"):
        store.append("s", "robot", "beep")
    with pytest.raises(InvalidInput, match="content"):
        store.append("s", "user", b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="JSON"):
        store.append("s", "user", "x", metadata={"f": object()})
    with pytest.raises(UnknownNode):
        store.append("s", "user", "x", predecessor="missing")
    with pytest.raises(InvalidInput, match="already has"):
        store.append("s", "user", "x", node_id="n0")
    assert store.load("s").nodes == before.nodes


def test_a_cycle_is_named_in_the_error_and_reported_by_load(store: SessionStore) -> None:
    store.append("s", "user", "root", node_id="r")
    plant(store, "s", node_relpath(2, "user", "x"), node_json("x", 2, "user", "y"))  # type: ignore[arg-type]
    plant(store, "s", node_relpath(3, "user", "y"), node_json("y", 3, "user", "x"))  # type: ignore[arg-type]
    snapshot = store.load("s")
    assert not snapshot.valid
    assert any(
        "cycle" in p.reason and p.path.name in {"000002-u-x.json", "000003-u-y.json"}
        for p in snapshot.problems
    )
    with pytest.raises(BrokenChain, match="cycle") as caught:
        store.branch("s", "x")
    assert caught.value.node_id in {"x", "y"}


def test_a_broken_chain_is_named_in_the_error(store: SessionStore) -> None:
    store.append("s", "user", "root", node_id="r")
    plant(store, "s", node_relpath(5, "user", "orphan"), node_json("orphan", 5, "user", "gone"))  # type: ignore[arg-type]
    snapshot = store.load("s")
    [problem] = snapshot.problems
    assert problem.path.name == "000005-u-orphan.json"
    assert "'gone' does not exist" in problem.reason
    with pytest.raises(BrokenChain, match=r"orphan.*'gone' does not exist"):
        store.branch("s", "orphan")


@pytest.mark.parametrize(
    ("relpath", "data", "reason"),
    [
        ("history/0000/000002-u-bad.json", b"{not json", "malformed JSON"),
        ("history/0000/000002-u-bad.json", b'{"id": "bad"}', "malformed node"),
        ("history/0000/000002-u-bad.json", node_json("other", 2, "user", "r"), "id"),
        ("history/0000/000002-u-bad.json", node_json("bad", 3, "user", "r"), "seq"),
        ("history/0000/000002-u-bad.json", node_json("bad", 2, "assistant", "r"), "role letter"),
        ("history/0001/000002-u-bad.json", node_json("bad", 2, "user", "r"), "shard"),
        ("history/0000/notes.json", b"{}", "not a node file name"),
        ("history/0000/000002-u-bad id.json", node_json("bad", 2, "user", "r"), "not a node file name"),
    ],
)
def test_a_malformed_node_file_is_reported_with_its_path_and_skipped(
    store: SessionStore, relpath: str, data: bytes, reason: str
) -> None:
    store.append("s", "user", "root", node_id="r")
    store.append("s", "assistant", "reply", node_id="a1")
    plant(store, "s", relpath, data)
    snapshot = store.load("s")
    assert [str(p.path).endswith(relpath) for p in snapshot.problems] == [True]
    assert reason in snapshot.problems[0].reason
    assert list(snapshot.nodes) == ["r", "a1"]  # the rest of the session is still read
    assert [tip.id for tip in snapshot.tips()] == ["a1"]


def test_malformed_meta_is_reported(store: SessionStore) -> None:
    store.append("s", "user", "root", node_id="r")
    plant(store, "s", "meta.json", b"[]")
    snapshot = store.load("s")
    assert [p.path.name for p in snapshot.problems] == ["meta.json"]


def test_a_session_without_meta_is_read_with_derived_meta(store: SessionStore) -> None:
    plant(store, "h", node_relpath(1, "user", "a"), node_json("a", 1, "user", None))  # type: ignore[arg-type]
    plant(store, "h", node_relpath(2, "assistant", "b"), node_json("b", 2, "assistant", "a"))  # type: ignore[arg-type]
    snapshot = store.load("h")
    assert snapshot.valid
    assert snapshot.meta.head is None
    assert snapshot.meta.updated_at == 2.0
    assert [tip.id for tip in snapshot.tips()] == ["b"]


def test_metadata_merge_rewrites_only_the_batch_and_keeps_updated_at(store: SessionStore) -> None:
    for i in range(5):
        store.append("s", "user", f"turn {i}", node_id=f"t{i}")
    meta_before = store.load("s").meta
    other_before = {n.id: n.to_json() for n in store.read_nodes("s", ["t0", "t3", "t4"])}
    changed = store.merge_node_metadata("s", {"t1": {"k": 1}, "t2": {"k": 2}})
    assert changed == ["t1", "t2"]
    after = store.load("s")
    assert after.meta == meta_before
    assert after.nodes["t1"].metadata == {"k": 1}
    assert after.nodes["t2"].metadata == {"k": 2}
    assert {n.id: n.to_json() for n in store.read_nodes("s", ["t0", "t3", "t4"])} == other_before


def test_metadata_merge_of_an_unknown_node_writes_nothing(store: SessionStore) -> None:
    store.append("s", "user", "one", node_id="t0")
    with pytest.raises(UnknownNode):
        store.merge_node_metadata("s", {"t0": {"k": 1}, "ghost": {"k": 2}})
    assert store.load("s").nodes["t0"].metadata == {}


def test_rewind_flags_the_undone_nodes_and_moves_the_head(store: SessionStore) -> None:
    ids = [store.append("s", "user" if i % 2 == 0 else "assistant", f"t{i}").id for i in range(6)]
    rewound = store.rewind("s", ids[3])
    assert rewound == ids[3:]
    snapshot = store.load("s")
    assert snapshot.meta.head == ids[2]
    assert all(snapshot.nodes[i].metadata.get("rewound") for i in ids[3:])
    assert not any(snapshot.nodes[i].metadata.get("rewound") for i in ids[:3])
    with pytest.raises(InvalidInput, match="not on the head branch"):
        store.rewind("s", ids[5])


def test_shards_keep_directories_small(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path, fsync=False)
    for i in range(600):
        store.append("s", "user", f"turn {i}")
    shards = sorted((tmp_path / "sessions" / "s" / "history").iterdir())
    assert [shard.name for shard in shards] == ["0000", "0001", "0002"]
    assert max(len(list(shard.iterdir())) for shard in shards) == 256
    assert len(store.load("s").nodes) == 600


def test_files_are_written_atomically_with_no_temp_left(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "hello")
    store.merge_node_metadata("s", {"n1": {"k": True}})
    leftovers = [p for p in (tmp_path / "sessions").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_host_written_session_in_the_documented_format_is_read(tmp_path: Path) -> None:
    session = tmp_path / "sessions" / "host1"
    (session / "history" / "0000").mkdir(parents=True)
    (session / "history" / "0000" / "000001-u-q1.json").write_bytes(
        node_json("q1", 1, "user", None, "question")
    )
    (session / "history" / "0000" / "000002-a-r1.json").write_bytes(
        node_json("r1", 2, "assistant", "q1", "answer")
    )
    (session / "meta.json").write_text(
        json.dumps(
            {"id": "host1", "head": "r1", "created_at": 1.0, "updated_at": 2.0, "branches": {}, "merged": []}
        )
    )
    store = FileSessionStore(tmp_path)
    snapshot = store.load("host1")
    assert snapshot.valid
    assert [n.content for n in snapshot.branch("r1")] == ["question", "answer"]
    follow_up = store.append("host1", "user", "follow-up")
    assert follow_up.seq == 3
    assert follow_up.predecessor == "r1"


def test_git_mode_commits_each_turn(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path, git=True)
    for i in range(4):
        store.append("s", "user" if i % 2 == 0 else "assistant", f"turn {i}")
    repo = tmp_path / "sessions" / "s"
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True, check=True
    )
    assert log.stdout.splitlines() == [
        f"turn {i}: {r} n{i}" for i, r in reversed(list(enumerate(["user", "assistant"] * 2, 1)))
    ]
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
    fsync = subprocess.run(
        ["git", "-C", str(repo), "config", "core.fsync"], capture_output=True, text=True, check=True
    )
    assert fsync.stdout.strip() == "added"
