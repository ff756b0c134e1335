"""Where the extractive distiller places a source of the batch's session: on the batch's path or a side
branch of it (with the order it was said), or possibly on an alternative (refused). The node a source
names is read from its label and trusted only when its anchor is that node's."""

from __future__ import annotations

from dagmem.memory.currency import SessionShape
from dagmem.memory.format import ArchiveRecord, SourceRef, anchor_of
from dagmem.memory.write._distill import BatchInput, side_rule

# r -> a -> u1 (an edited-away prompt) ; a -> u2 (the head's) ; a -> s (a sub-agent's, spawned)
SHAPE = SessionShape(
    "s",
    {"r": None, "a": "r", "u1": "a", "u2": "a", "s": "a"},
    {"r": "user", "a": "assistant", "u1": "user", "u2": "user", "s": "user"},
    frozenset({"s"}),
    "u2",
)


def source(node: str, *, label_node: str | None = None) -> SourceRef:
    return SourceRef(f"user s/{label_node or node}", "s", anchor_of(f"s/{node}"))


def batch_at(node: str) -> BatchInput:
    record = ArchiveRecord("s", node, "user", 9, 1_750_000_000.0, "Update: I moved to Rome.")
    return BatchInput("s", (record,), shapes={"s": SHAPE}.get)


def test_a_side_branch_and_the_path_are_placed_an_alternative_is_not() -> None:
    aside = side_rule(batch_at("u2"))
    assert aside is not None
    assert aside(source("s")) == 4  # a sub-agent's turn beside the path: the fifth said
    assert aside(source("a")) == 1  # on the path
    assert aside(source("u1")) is None  # the alternative the head left: never superseded from here


def test_a_label_naming_another_node_than_its_anchor_is_not_trusted() -> None:
    aside = side_rule(batch_at("u2"))
    assert aside is not None
    assert aside(source("u1", label_node="s")) is None  # u1's anchor, labelled as the side branch
    assert aside(SourceRef("a note", "s", anchor_of("s/s"))) is None  # no node in the label


def test_without_shapes_nothing_is_placed() -> None:
    record = ArchiveRecord("s", "u2", "user", 9, 1_750_000_000.0, "Update: I moved to Rome.")
    assert side_rule(BatchInput("s", (record,))) is None
