"""Alternatives and left branches from the DAG: the cases the issue names, then properties over random
DAGs (hypothesis)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from dagmem.memory.currency import SessionShape, are_alternatives, left_nodes
from dagmem.memory.format import ancestors


def shape(
    edges: dict[str, str | None],
    roles: dict[str, str],
    head: str | None,
    spawned: frozenset[str] = frozenset(),
) -> SessionShape:
    return SessionShape("s", edges, roles, spawned, head)


# r(user) -> a(assistant) -> u1(user) -> a1(assistant)
#                          \-> u2(user) -> a2 (an edited prompt: u1 and u2 are alternatives)
EDIT = {"r": None, "a": "r", "u1": "a", "a1": "u1", "u2": "a", "a2": "u2"}
EDIT_ROLES = {"r": "user", "a": "assistant", "u1": "user", "a1": "assistant", "u2": "user", "a2": "assistant"}


def test_an_edited_prompt_leaves_the_branch_the_head_left() -> None:
    assert left_nodes(shape(EDIT, EDIT_ROLES, "a2")) == {"u1", "a1"}
    assert left_nodes(shape(EDIT, EDIT_ROLES, "a1")) == {"u2", "a2"}


def test_a_head_at_the_fork_leaves_nothing() -> None:
    assert left_nodes(shape(EDIT, EDIT_ROLES, "a")) == frozenset()
    assert left_nodes(shape(EDIT, EDIT_ROLES, None)) == frozenset()


def test_a_retry_is_an_alternative_even_when_one_reply_starts_with_a_tool_call() -> None:
    edges = {"u": None, "t1": "u", "a1": "t1", "a2": "u"}
    roles = {"u": "user", "t1": "tool", "a1": "assistant", "a2": "assistant"}
    assert left_nodes(shape(edges, roles, "a2")) == {"t1", "a1"}
    assert are_alternatives(shape(edges, roles, "a2"), "a1", "a2")


def test_a_child_of_another_role_starts_a_side_branch() -> None:
    edges = {"u": None, "a": "u", "u2": "u"}
    roles = {"u": "user", "a": "assistant", "u2": "user"}
    assert left_nodes(shape(edges, roles, "a")) == frozenset()
    assert not are_alternatives(shape(edges, roles, "a"), "a", "u2")


def test_a_spawned_node_and_a_separate_root_start_side_branches() -> None:
    edges = {"u": None, "a1": "u", "a2": "u", "x": None, "y": "x"}
    roles = {"u": "user", "a1": "assistant", "a2": "assistant", "x": "user", "y": "assistant"}
    spawned = shape(edges, roles, "a1", frozenset({"a2"}))
    assert left_nodes(spawned) == frozenset()
    assert not are_alternatives(spawned, "a1", "a2")
    assert not are_alternatives(spawned, "a1", "y")  # separate roots


def test_nested_forks_a_node_is_left_when_any_fork_on_its_path_makes_it_left() -> None:
    # The head path takes u2 at the outer fork; inside u1's branch another retry forked (b1, b2).
    edges = {**EDIT, "b1": "a1", "b2": "a1"}
    roles = {**EDIT_ROLES, "b1": "user", "b2": "user"}
    assert left_nodes(shape(edges, roles, "a2")) == {"u1", "a1", "b1", "b2"}
    assert left_nodes(shape(edges, roles, "b1")) == {"u2", "a2", "b2"}


def test_alternatives_are_on_different_children_of_their_common_fork() -> None:
    s = shape(EDIT, EDIT_ROLES, "a2")
    assert are_alternatives(s, "a1", "a2")
    assert are_alternatives(s, "u1", "a2")
    assert not are_alternatives(s, "a", "a2")  # one path
    assert not are_alternatives(s, "a2", "a2")
    assert not are_alternatives(s, "a1", "missing")


# -- properties over random DAGs -------------------------------------------------------------------


@st.composite
def dags(draw: st.DrawFn) -> SessionShape:
    n = draw(st.integers(1, 40))
    edges: dict[str, str | None] = {}
    roles: dict[str, str] = {}
    spawned: set[str] = set()
    for i in range(n):
        node = f"n{i}"
        parent = None if i == 0 or draw(st.integers(0, 9)) == 0 else f"n{draw(st.integers(0, i - 1))}"
        edges[node] = parent
        roles[node] = draw(st.sampled_from(["user", "assistant", "assistant", "user", "tool", "system"]))
        if parent is not None and draw(st.integers(0, 7)) == 0:
            spawned.add(node)
    head = draw(st.sampled_from([None, *edges]))
    return SessionShape("s", edges, roles, frozenset(spawned), head)


PROPERTIES = settings(max_examples=300, database=None, derandomize=True, deadline=None)


@PROPERTIES
@given(dags())
def test_left_nodes_are_never_on_the_head_path(s: SessionShape) -> None:
    path = set(ancestors(s.predecessors, s.head)) if s.head is not None else set()
    assert not left_nodes(s) & path


@PROPERTIES
@given(dags(), st.data())
def test_moving_the_head_into_a_left_branch_makes_it_not_left(s: SessionShape, data: st.DataObject) -> None:
    left = left_nodes(s)
    if not left:
        return
    target = data.draw(st.sampled_from(sorted(left)))
    moved = left_nodes(dataclasses.replace(s, head=target))
    assert not moved & set(ancestors(s.predecessors, target))


@PROPERTIES
@given(dags())
def test_the_left_set_is_closed_under_children(s: SessionShape) -> None:
    left = left_nodes(s)
    for node, parent in s.predecessors.items():
        if parent in left:
            assert node in left


@PROPERTIES
@given(dags())
def test_spawned_nodes_and_roots_are_never_alternatives(s: SessionShape) -> None:
    for node in s.predecessors:
        for other in s.predecessors:
            if are_alternatives(s, node, other):
                assert are_alternatives(s, other, node)
                # the two children of their fork that lead to them are neither spawned nor roots
                a, b = ancestors(s.predecessors, node), ancestors(s.predecessors, other)
                common = set(a) & set(b)
                child_a = next(x for x in a if s.predecessors[x] in common)
                child_b = next(x for x in b if s.predecessors[x] in common)
                assert child_a not in s.spawned
                assert child_b not in s.spawned
                assert s.predecessors[child_a] is not None


@PROPERTIES
@given(dags())
def test_a_node_is_left_exactly_when_it_is_an_alternative_of_a_head_path_node_at_a_head_path_fork(
    s: SessionShape,
) -> None:
    """The definition, checked by brute force: x is left iff some node h on the head path and x lie on
    alternatives of a fork that is itself on the head path."""
    path = ancestors(s.predecessors, s.head) if s.head is not None else []
    expected = {x for x in s.predecessors if any(are_alternatives(s, x, h) for h in path)}
    assert left_nodes(s) == expected


# -- left for a reader at a tip: its own path decides the forks it passes through ---------------------


def test_a_reader_inside_a_left_alternative_sees_the_heads_alternative_as_left() -> None:
    s = shape(EDIT, EDIT_ROLES, "a2")
    assert left_nodes(s, "a1") == {"u2", "a2"}
    assert left_nodes(s, "u1") == {"u2", "a2"}
    assert left_nodes(s, "a2") == left_nodes(s) == {"u1", "a1"}
    assert left_nodes(s, "a") == {"u1", "a1"}  # at the fork: the head decides it


def test_a_reader_on_a_side_branch_leaves_nothing_of_the_main_branch() -> None:
    # A sub-agent's turns spawned off `a`, beside the head's u2 -> a2; u1 is the edited-away prompt.
    edges = {**EDIT, "s": "a", "t": "s"}
    roles = {**EDIT_ROLES, "s": "user", "t": "assistant"}
    side = shape(edges, roles, "a2", frozenset({"s"}))
    assert left_nodes(side, "t") == {"u1", "a1"}  # the fork it does not pass through: the head's choice


def test_a_side_branch_inside_the_readers_alternative_is_not_left_for_it() -> None:
    edges = {**EDIT, "s": "u1", "t": "s"}
    roles = {**EDIT_ROLES, "s": "user", "t": "assistant"}
    inside = shape(edges, roles, "a2", frozenset({"s"}))
    assert left_nodes(inside) == {"u1", "a1", "s", "t"}
    assert left_nodes(inside, "a1") == {"u2", "a2"}


@PROPERTIES
@given(dags(), st.data())
def test_left_for_a_tip_is_never_on_its_path_and_matches_the_definition(
    s: SessionShape, data: st.DataObject
) -> None:
    """x is left for a reader at T iff it lies on an alternative of a node of path(T) at a fork path(T)
    passes through, or on an alternative of a head-path node h at a head-path fork where path(T) does
    not take h's child or an alternative of it (T passes it on a side branch, at its tip, or not at all)."""
    tip = data.draw(st.sampled_from(sorted(s.predecessors)))
    mine = ancestors(s.predecessors, tip)
    head = ancestors(s.predecessors, s.head) if s.head is not None else []

    def child_at(fork: str, path: list[str]) -> str | None:
        return next((n for n in path if s.predecessors[n] == fork), None)

    def fork_of(x: str, h: str) -> str:
        common = set(ancestors(s.predecessors, x))
        return next(n for n in ancestors(s.predecessors, h) if n in common)

    def by_reader(x: str) -> bool:
        return any(are_alternatives(s, x, h) and child_at(fork_of(x, h), mine) is not None for h in mine)

    def by_head(x: str) -> bool:
        for h in head:
            if not are_alternatives(s, x, h):
                continue
            fork = fork_of(x, h)
            own, theirs = child_at(fork, mine), child_at(fork, head)
            if own is None or not (own == theirs or are_alternatives(s, own, h)):
                return True
        return False

    expected = {x for x in s.predecessors if by_reader(x) or by_head(x)}
    left = left_nodes(s, tip)
    assert not left & set(mine)
    assert left == expected
