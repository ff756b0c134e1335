"""`SessionStore.append_many`: a run of turns of one session under one hold of its lock, each turn exactly
as `append` would have it (the same node files and meta.json bytes, the same refusals and their errors,
the same no-op for a turn already there); a turn the store refuses is that turn's outcome and the next is
taken; turns are taken one at a time, each outcome told before the next turn is taken."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagmem import HEAD, FileSessionStore, InvalidInput, MemorySessionStore, Node, SessionStore
from dagmem.memory.errors import SessionInvalid
from dagmem.memory.store import FakeClock, Turn

_PREDECESSORS = st.sampled_from([HEAD, HEAD, HEAD, None, "u1", "u2", "n1", "n3", "gone"])
_TURNS = st.fixed_dictionaries(  # a turn's arguments: a `Turn` made of them may refuse them
    {
        "role": st.sampled_from(["user", "user", "assistant", "tool", "system", "robot"]),
        "content": st.sampled_from(["hello", "hi", "two\nlines", "", "x" * 300]),
        "predecessor": _PREDECESSORS,
        "node_id": st.sampled_from([None, None, None, "u1", "u2", "u3", "not an id"]),
        "metadata": st.sampled_from(
            [None, None, {"k": 1}, {"k": 2}, {"memory_written_dagmem": "w"}, {"display": 3}]
        ),
        "spawned": st.sampled_from([False, False, True]),
        "spawned_from": st.sampled_from([None, None, None, "p/a", "p/b", "p"]),
        "origin": st.sampled_from([None, None, "tool", "imported", "elsewhere"]),
    }
)
Args = dict[str, Any]


def one_at_a_time(store: SessionStore, sid: str, turns: list[Args]) -> list[Node | InvalidInput]:
    outcomes: list[Node | InvalidInput] = []
    for args in turns:
        try:
            outcomes.append(store.append(sid, **args))
        except InvalidInput as exc:
            outcomes.append(exc)
    return outcomes


def in_a_run(store: SessionStore, sid: str, turns: list[Args]) -> list[Node | InvalidInput]:
    """The turns through `append_many`; a turn refused as it is made is its outcome, in its place."""
    outcomes: list[Node | InvalidInput] = []

    def made() -> Iterator[Turn]:
        for args in turns:
            try:
                turn = Turn(**args)
            except InvalidInput as exc:
                outcomes.append(exc)
                continue
            yield turn

    store.append_many(sid, made(), on_outcome=lambda _turn, outcome: outcomes.append(outcome))
    return outcomes


def shown(outcomes: list[Node | InvalidInput]) -> list[Any]:
    return [o if isinstance(o, Node) else (type(o).__name__, str(o)) for o in outcomes]


def files_under(root: Path) -> dict[str, bytes]:
    """Every file of the sessions, by path (the lock file aside: it holds a counter of writers)."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != ".lock"
    }


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@given(st.lists(_TURNS, max_size=14), st.booleans())
def test_a_run_in_memory_leaves_what_appends_one_at_a_time_leave(turns: list[Args], started: bool) -> None:
    stores = [MemorySessionStore(clock=FakeClock()), MemorySessionStore(clock=FakeClock())]
    if started:  # a session with nodes already, one of them a caller's id
        for store in stores:
            store.append("s", "user", "first", node_id="u1")
    one = one_at_a_time(stores[0], "s", turns)
    run = in_a_run(stores[1], "s", turns)
    assert shown(run) == shown(one)
    assert stores[1].backend.files == stores[0].backend.files


@settings(max_examples=40, database=None, derandomize=True, deadline=None)
@given(st.lists(_TURNS, max_size=10), st.booleans())
def test_a_run_on_disk_leaves_the_same_bytes_as_appends_one_at_a_time(turns: list[Args], bulk: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        homes = [Path(scratch, "one"), Path(scratch, "run")]
        one_store, run_store = (FileSessionStore(home, clock=FakeClock()) for home in homes)
        with one_store.bulk() if bulk else nullcontext(), run_store.bulk() if bulk else nullcontext():
            one = one_at_a_time(one_store, "s", turns)
            run = in_a_run(run_store, "s", turns)
        assert shown(run) == shown(one)
        assert files_under(homes[1]) == files_under(homes[0])


def test_a_refused_turn_is_its_outcome_and_the_rest_of_the_run_is_appended(store: SessionStore) -> None:
    turns = [
        Turn("user", "question", node_id="q"),
        Turn("assistant", "answer", node_id="a", spawned_from="p/x"),  # not at the session's first append
        Turn("assistant", "another answer", predecessor="q", node_id="b"),
        Turn("user", "follow-up", predecessor="a", node_id="c"),  # names the refused turn
        Turn("user", "next", node_id="d"),
    ]
    outcomes = store.append_many("s", turns)
    assert [type(o).__name__ for o in outcomes] == ["Node", "InvalidInput", "Node", "UnknownNode", "Node"]
    assert "first append" in str(outcomes[1])
    assert "'a'" in str(outcomes[3])
    snapshot = store.load("s")
    assert snapshot.valid
    assert sorted(snapshot.nodes) == ["b", "d", "q"]
    assert snapshot.nodes["d"].predecessor == "b"
    assert snapshot.meta.head == "d"


def test_turns_are_taken_one_at_a_time_each_outcome_told_before_the_next_is_taken(
    store: SessionStore,
) -> None:
    events: list[str] = []

    def turns() -> Iterator[Turn]:
        for name in ("a", "b", "c"):
            events.append(f"take {name}")
            yield Turn("user", name, node_id=name, predecessor="gone" if name == "b" else HEAD)

    def told(turn: Turn, outcome: Node | InvalidInput) -> None:
        events.append(f"{turn.node_id} {'added' if isinstance(outcome, Node) else 'refused'}")

    store.append_many("s", turns(), on_outcome=told)
    assert events == ["take a", "a added", "take b", "b refused", "take c", "c added"]


def test_a_run_whose_every_turn_is_refused_creates_no_session(store: SessionStore) -> None:
    outcomes = store.append_many(
        "s", [Turn("user", "y", predecessor="elsewhere"), Turn("user", "z", predecessor="gone")]
    )
    assert all(isinstance(o, InvalidInput) for o in outcomes)
    assert not store.has_session("s")


def test_a_run_takes_turns_only(store: SessionStore) -> None:
    unchecked: Any = {"role": "user", "content": "hi"}
    with pytest.raises(InvalidInput, match=r"dagmem\.Turn, not dict"):
        store.append_many("s", [unchecked])
    assert not store.has_session("s")


def test_the_same_turns_again_add_nothing(store: SessionStore) -> None:
    turns = [Turn("user", f"turn {i}", node_id=f"t{i}") for i in range(5)]
    first = store.append_many("s", turns)
    before = store.load("s")
    again = store.append_many("s", turns)
    assert again == first
    assert store.load("s").nodes == before.nodes
    assert store.load("s").meta == before.meta


def test_a_session_found_unsafe_ends_the_run_with_the_turns_before_it_appended(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "home")
    store.append("s", "user", "a turn", node_id="t0")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    told: list[str] = []

    def turns() -> Iterator[Turn]:
        yield Turn("user", "written", node_id="t1")
        # A shard directory replaced by a symlink before the run's next node needs it.
        (tmp_path / "home" / "sessions" / "s" / "history" / "0001").symlink_to(elsewhere)
        for i in range(2, 300):
            yield Turn("user", f"turn {i}", node_id=f"t{i}")

    with store.bulk(), pytest.raises(SessionInvalid, match="symbolic link"):
        store.append_many("s", turns(), on_outcome=lambda turn, _o: told.append(str(turn.node_id)))
    assert told == [f"t{i}" for i in range(1, 255)]  # seq 256, the first of shard 0001, is t255
    assert list(elsewhere.iterdir()) == []  # nothing written through the symlink
    assert not FileSessionStore(tmp_path / "home").load("s").valid
