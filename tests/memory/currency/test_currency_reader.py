"""Readers (a session and a tip, or nobody), spawn across sessions, and `resolve`."""

from __future__ import annotations

import pytest

from dagmem.memory.currency import Reader, SessionShape, between_alternatives, resolve
from dagmem.memory.errors import UnknownNode, UnknownSession

# s1: r -> a -> u1 -> a1 (left) ; a -> u2 -> a2 (head)
S1 = SessionShape(
    "s1",
    {"r": None, "a": "r", "u1": "a", "a1": "u1", "u2": "a", "a2": "u2"},
    {"r": "user", "a": "assistant", "u1": "user", "a1": "assistant", "u2": "user", "a2": "assistant"},
    frozenset(),
    "a2",
)
# s2: spawned from s1/a2 (a sub-agent of the accepted branch)
S2 = SessionShape(
    "s2", {"x": None, "y": "x"}, {"x": "user", "y": "assistant"}, frozenset(), "y", ("s1", "a2")
)
# s3: spawned from s1/a1 (a sub-agent of the branch the user edited away)
S3 = SessionShape("s3", {"p": None}, {"p": "user"}, frozenset(), "p", ("s1", "a1"))
SHAPES = {"s1": S1, "s2": S2, "s3": S3}


def test_nobody_in_particular_sees_a_left_branch_as_left() -> None:
    reader = Reader(SHAPES.get)
    assert reader.is_left([("s1", "a1")])
    assert not reader.is_left([("s1", "a2")])
    assert not reader.is_left([("s1", "a1"), ("s1", "a2")])  # said on both: not only on left branches
    assert not reader.is_left([])
    assert not reader.is_left([("s1", None)])
    assert not reader.is_left([("unknown", "n")])
    assert reader.branch([("s1", "a1")]) is None


def test_a_reader_inside_the_left_branch_sees_it_as_its_own() -> None:
    reader = Reader(SHAPES.get, "s1", "a1")
    assert not reader.is_left([("s1", "a1")])
    assert reader.branch([("s1", "a1")]) == "on"
    assert reader.branch([("s1", "a2")]) == "sibling"
    head = Reader(SHAPES.get, "s1")
    assert head.tip == "a2"
    assert head.is_left([("s1", "a1")])
    assert head.branch([("s1", "a1")]) == "sibling"


def test_spawn_a_reader_on_the_parent_path_sees_the_child_session_as_on() -> None:
    on_path = Reader(SHAPES.get, "s1")
    assert on_path.branch([("s2", "y")]) == "on"
    assert on_path.branch([("s3", "p")]) == "other"  # spawned from a node off the reader's path
    off_path = Reader(SHAPES.get, "s1", "a1")
    assert off_path.branch([("s2", "y")]) == "other"
    assert off_path.branch([("s3", "p")]) == "on"


def test_spawn_a_reader_in_the_child_sees_the_parent_root_to_node_as_on_and_not_left() -> None:
    child = Reader(SHAPES.get, "s3")
    assert child.branch([("s1", "u1")]) == "on"
    assert child.branch([("s1", "a")]) == "on"
    assert child.branch([("s1", "a2")]) == "other"
    assert not child.is_left([("s1", "a1")])  # its own context, though its parent edited it away
    assert Reader(SHAPES.get, "s2").is_left([("s1", "a1")])


def test_an_unknown_session_or_tip_is_refused() -> None:
    with pytest.raises(UnknownSession):
        Reader(SHAPES.get, "nope")
    with pytest.raises(UnknownNode):
        Reader(SHAPES.get, "s1", "nope")


EVIDENCE = {"old": [("s1", "r")], "new": [("s1", "a2")], "edited": [("s1", "a1")], "fix": [("s1", "u2")]}


def test_resolve_superseded_left_and_current() -> None:
    chain = {"old": "new"}
    nobody = Reader(SHAPES.get)
    assert resolve("old", chain.get, EVIDENCE.__getitem__, nobody) == ("superseded", "new")
    assert resolve("new", chain.get, EVIDENCE.__getitem__, nobody) == ("current", None)
    assert resolve("edited", chain.get, EVIDENCE.__getitem__, nobody) == ("left", None)


def test_a_correction_said_on_a_left_branch_does_not_hide_the_old_fact() -> None:
    chain = {"old": "edited"}
    assert resolve("old", chain.get, EVIDENCE.__getitem__, Reader(SHAPES.get)) == ("current", None)
    # ...but it does for the reader on that branch
    own = Reader(SHAPES.get, "s1", "a1")
    assert resolve("old", chain.get, EVIDENCE.__getitem__, own) == ("superseded", "edited")


def test_resolve_walks_past_left_successors_and_survives_a_cycle() -> None:
    chain = {"old": "edited", "edited": "new"}
    assert resolve("old", chain.get, EVIDENCE.__getitem__, Reader(SHAPES.get)) == ("superseded", "new")
    loop = {"old": "edited", "edited": "old"}
    assert resolve("old", loop.get, EVIDENCE.__getitem__, Reader(SHAPES.get)) == ("current", None)


def test_no_supersession_between_alternatives_of_one_fork() -> None:
    assert between_alternatives(SHAPES.get, EVIDENCE["edited"], EVIDENCE["new"])
    assert not between_alternatives(SHAPES.get, EVIDENCE["old"], EVIDENCE["new"])  # one path
    # said on both branches: it holds on the new one's path, so an update there is fine
    assert not between_alternatives(SHAPES.get, [("s1", "a1"), ("s1", "u2")], EVIDENCE["new"])
    assert not between_alternatives(SHAPES.get, [("s2", "y")], EVIDENCE["new"])  # no shared session


def test_a_reader_inside_the_left_branch_sees_the_heads_alternative_as_left() -> None:
    own = Reader(SHAPES.get, "s1", "a1")
    assert own.is_left([("s1", "a2")])
    assert own.is_left([("s1", "u2")])
    assert not own.is_left([("s1", "a")])  # the shared prefix
    # the head's update of the old fact is on a branch this reader does not see: the old one is current
    chain = {"old": "new"}
    assert resolve("old", chain.get, EVIDENCE.__getitem__, own) == ("current", None)
    assert resolve("new", chain.get, EVIDENCE.__getitem__, own) == ("left", None)
    # ...and a later update past it is seen again
    past = {"old": "new", "new": "later"}
    later = {**EVIDENCE, "later": [("s2", "y")]}
    assert resolve("old", past.get, later.__getitem__, own) == ("superseded", "later")


def test_spawn_a_child_of_a_left_branch_reads_its_parent_as_from_the_spawn_node() -> None:
    child = Reader(SHAPES.get, "s3")  # spawned from s1/a1, inside the branch the head left
    assert child.is_left([("s1", "a2")])  # the head's alternative is not the child's context
    assert not child.is_left([("s1", "a1")])
    assert not Reader(SHAPES.get, "s2").is_left([("s1", "a2")])  # s2 was spawned on the head's branch
