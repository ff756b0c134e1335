"""Where each part of a session's DAG goes on the page: one row per drawn item, read top to bottom like
`git log --graph`, with a lane per branch.

What is always drawn on its own: roots, tips, forks and the head. Between them, a linear run of five or
more nodes becomes one item (split where the records change state, so a run is all written or all owed),
so a 5,000-turn session with 50 forks draws a few hundred rows. Items come in depth-first pre-order, a
node's children oldest first except that the child on the head's path comes last: side branches then sit
just below their fork, in short lanes that are free again soon, and the head's line runs down lane 0."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..memory.format import Node

__all__ = ["MIN_RUN", "Item", "Layout", "layout"]

MIN_RUN = 5  # shorter linear runs are drawn node by node


@dataclass
class Item:
    """One drawn row: a node, or a collapsed run of `len(members)` nodes (oldest first)."""

    members: list[str]
    state: str
    parent: int | None  # the item holding the first member's predecessor
    run: bool
    row: int = 0
    lane: int = 0


@dataclass(frozen=True)
class Layout:
    items: list[Item]
    order: list[str]  # every node id in pre-order: an item's members are a slice of it
    lanes: int


def _head_path(nodes: Mapping[str, Node], head: str | None) -> set[str]:
    path: set[str] = set()
    current = head
    while current is not None and current not in path:
        path.add(current)
        current = nodes[current].predecessor
    return path


def _preorder(nodes: Mapping[str, Node], children: Mapping[str, list[str]], head: str | None) -> list[str]:
    on_head = _head_path(nodes, head)

    def key(node_id: str) -> tuple[bool, int, str]:
        return (node_id in on_head, nodes[node_id].seq, node_id)

    roots = sorted((n for n, node in nodes.items() if node.predecessor is None), key=key)
    order: list[str] = []
    stack = list(reversed(roots))  # iterative: a 5,000-turn chain would overflow recursion
    while stack:
        node_id = stack.pop()
        order.append(node_id)
        stack.extend(sorted(children.get(node_id, ()), key=key, reverse=True))
    return order


def _record_key(state: str) -> str | None:
    return None if state == "other" else state


def _segments(
    order: list[str],
    nodes: Mapping[str, Node],
    children: Mapping[str, list[str]],
    states: Mapping[str, str],
    head: str | None,
) -> list[list[str]]:
    def alone(node_id: str) -> bool:
        return node_id == head or nodes[node_id].predecessor is None or len(children.get(node_id, ())) != 1

    segments: list[list[str]] = []
    open_key: str | None = None
    is_open = False
    for node_id in order:
        if alone(node_id):
            segments.append([node_id])
            is_open = False
            continue
        key = _record_key(states[node_id])
        joins = (
            is_open
            and segments[-1][-1] == nodes[node_id].predecessor
            and (key is None or open_key is None or key == open_key)
        )
        if joins:
            segments[-1].append(node_id)
            open_key = open_key or key
        else:
            segments.append([node_id])
            is_open, open_key = True, key
    # A short run is drawn node by node.
    out: list[list[str]] = []
    for segment in segments:
        if len(segment) < MIN_RUN:
            out.extend([member] for member in segment)
        else:
            out.append(segment)
    return out


def _run_state(members: list[str], states: Mapping[str, str]) -> str:
    for member in members:
        if states[member] != "other":
            return states[member]
    return "other"


def _assign_lanes(items: list[Item]) -> int:
    """Each chain (an item and its last children, down to a tip) keeps one lane from its parent's row to
    its end; greedy by start row, which is optimal for intervals."""
    last_child: dict[int, int] = {}
    for index, item in enumerate(items):
        if item.parent is not None:
            last_child[item.parent] = index  # pre-order: the last one seen is the last child
    chains: list[tuple[int, int, list[int]]] = []
    for index, item in enumerate(items):
        if item.parent is not None and last_child[item.parent] == index:
            continue  # continues its parent's chain
        chain = [index]
        while chain[-1] in last_child:
            chain.append(last_child[chain[-1]])
        start = items[item.parent].row if item.parent is not None else item.row
        chains.append((start, item.row, chain))
    busy_until: list[int] = []
    for start, _, chain in sorted(chains, key=lambda c: (c[0], c[1])):
        end = items[chain[-1]].row
        lane = next((lane for lane, until in enumerate(busy_until) if until < start), len(busy_until))
        if lane == len(busy_until):
            busy_until.append(end)
        else:
            busy_until[lane] = end
        for index in chain:
            items[index].lane = lane
    return max(1, len(busy_until))


def layout(
    nodes: Mapping[str, Node],
    children: Mapping[str, list[str]],
    states: Mapping[str, str],
    head: str | None,
) -> Layout:
    """The rows and lanes of a drawable session (predecessors exist, no cycles)."""
    order = _preorder(nodes, children, head)
    item_of: dict[str, int] = {}
    items: list[Item] = []
    for segment in _segments(order, nodes, children, states, head):
        first = nodes[segment[0]].predecessor
        parent = None if first is None else item_of[first]
        run = len(segment) > 1
        state = _run_state(segment, states) if run else states[segment[0]]
        items.append(Item(segment, state, parent, run, row=len(items)))
        for member in segment:
            item_of[member] = len(items) - 1
    return Layout(items, order, _assign_lanes(items))
