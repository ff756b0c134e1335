"""Where each part of a session's DAG goes on the page: one row per drawn item, read top to bottom like
`git log --graph --date-order`, with a lane per branch.

Rows are in time order (the order the turns were appended, `seq`), a node never above its predecessor.
What is always drawn on its own: roots, tips, forks and the head. Between them, a run of five or more
nodes, each the previous one's only child and next in time, becomes one item (split where the records
change state, so a run is all written or all owed): a run holds every turn of its seq range, and a
5,000-turn session with 50 forks draws a few hundred rows. A node's lane is its predecessor's when it
continues that line (the child on the head's path, else the latest child), so the head's line runs down
lane 0; a branch or a separate root (a sub-agent's sidechain) takes a lane free for its whole span."""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass

from ..memory.format import Node, ancestors

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
    on_head: bool = False  # its nodes are on the head's path


@dataclass(frozen=True)
class Layout:
    items: list[Item]
    order: list[str]  # every node id in time order: an item's members are a slice of it
    lanes: int
    roots: list[str]  # the roots, in time order


def _head_path(nodes: Mapping[str, Node], head: str | None) -> set[str]:
    if head is None:
        return set()
    return set(ancestors({node_id: node.predecessor for node_id, node in nodes.items()}, head))


def _time_order(nodes: Mapping[str, Node], children: Mapping[str, list[str]]) -> list[str]:
    """Every node by (seq, id), except that a node never comes before its predecessor (an imported
    session's seqs need not follow its edges): the earliest node whose predecessor is placed, each time."""
    ready = [(node.seq, node_id) for node_id, node in nodes.items() if node.predecessor is None]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, node_id = heapq.heappop(ready)
        order.append(node_id)
        for child in children.get(node_id, ()):
            heapq.heappush(ready, (nodes[child].seq, child))
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
    """Each chain (an item and the children that continue it, down to a tip) keeps one lane from its
    parent's row to its end; greedy by start row (the head's chain first), optimal for intervals."""
    last_child: dict[int, int] = {}
    for index, item in enumerate(items):
        if item.parent is None:
            continue
        # The child on the head's path continues its parent's line; else the latest child does.
        previous = last_child.get(item.parent)
        if previous is None or item.on_head or not items[previous].on_head:
            last_child[item.parent] = index
    chains: list[tuple[int, int, list[int]]] = []
    for index, item in enumerate(items):
        if item.parent is not None and last_child[item.parent] == index:
            continue  # continues its parent's chain
        chain = [index]
        while chain[-1] in last_child:
            chain.append(last_child[chain[-1]])
        start = items[item.parent].row if item.parent is not None else item.row
        chains.append((start, 0 if item.on_head else 1, chain))
    busy_until: list[int] = []
    for start, _, chain in sorted(chains, key=lambda c: (c[0], c[1], c[2][0])):
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
    order = _time_order(nodes, children)
    on_head = _head_path(nodes, head)
    item_of: dict[str, int] = {}
    items: list[Item] = []
    for segment in _segments(order, nodes, children, states, head):
        first = nodes[segment[0]].predecessor
        parent = None if first is None else item_of[first]
        run = len(segment) > 1
        state = _run_state(segment, states) if run else states[segment[0]]
        items.append(Item(segment, state, parent, run, row=len(items), on_head=segment[0] in on_head))
        for member in segment:
            item_of[member] = len(items) - 1
    roots = [node_id for node_id in order if nodes[node_id].predecessor is None]
    return Layout(items, order, _assign_lanes(items), roots)
