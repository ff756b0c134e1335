"""The page's rows: in time order, a collapsed run claiming only the seqs it holds, and each of a
session's separate roots (a sub-agent's sidechain) labelled as one."""

from __future__ import annotations

import re
from pathlib import Path

from dagmem import FileSessionStore
from dagmem.view import read_home
from dagmem.view._layout import Layout, layout
from dagmem.view._read import SessionView
from dagmem.view._svg import session_svg


def drawn(home: Path, session_id: str) -> tuple[SessionView, Layout, str]:
    (session,) = read_home(home, [session_id]).sessions
    view = layout(session.nodes, session.children, session.states, session.head)
    return session, view, session_svg(0, session, view)


def test_rows_are_in_time_order(tmp_path: Path) -> None:
    """A side branch forked early and written later is drawn where it happened in time, not just below its
    fork; the head's line still runs down lane 0."""
    store = FileSessionStore(tmp_path)
    main = [store.append("s", "user" if i % 2 else "assistant", f"main {i}").id for i in range(8)]
    side = main[2]
    for j in range(3):
        side = store.append("s", "user", f"side {j}", predecessor=side).id
    for i in range(8, 12):
        main.append(store.append("s", "assistant", f"main {i}", predecessor=main[-1]).id)
    store.set_head("s", main[-1])
    session, view, _ = drawn(tmp_path, "s")
    seqs = [session.nodes[node_id].seq for node_id in view.order]
    assert seqs == sorted(seqs)
    rows = [session.nodes[item.members[0]].seq for item in view.items]
    assert rows == sorted(rows)
    by_node = {m: item for item in view.items for m in item.members}
    assert {by_node[n].lane for n in main} == {0}
    assert by_node[side].lane > 0
    for item in view.items:
        if item.parent is not None:
            assert view.items[item.parent].row < item.row


def test_a_collapsed_run_claims_only_the_seqs_it_holds(tmp_path: Path) -> None:
    """Two branches written turn about: a run may not claim "seq 3–19" when half of those are the other
    branch's turns."""
    store = FileSessionStore(tmp_path)
    fork = store.append("s", "user", "start").id
    left, right = fork, fork
    for i in range(12):
        left = store.append("s", "assistant", f"left {i}", predecessor=left).id
        right = store.append("s", "assistant", f"right {i}", predecessor=right).id
    more = left
    for i in range(8):  # and a plain run at the end, which is collapsed
        more = store.append("s", "user", f"more {i}", predecessor=more).id
    store.set_head("s", left)
    session, view, svg = drawn(tmp_path, "s")
    claims = re.findall(r"⋯ (\d+) turns, seq (\d+)–(\d+)", svg)
    assert claims  # the final run is collapsed and claims its range
    seqs = [node.seq for node in session.nodes.values()]
    for count, first, last in claims:
        assert sum(1 for q in seqs if int(first) <= q <= int(last)) == int(count), (count, first, last)
    for item in view.items:
        if item.run:
            held = sorted(session.nodes[m].seq for m in item.members)
            between = [q for q in seqs if held[0] <= q <= held[-1]]
            assert len(between) == len(held)


def test_separate_roots_are_labelled(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    main = store.append("s", "user", "the main conversation").id
    store.append("s", "assistant", "an answer", predecessor=main)
    agent = store.append("s", "user", "a sub-agent's task", predecessor=None).id
    store.append("s", "assistant", "the sub-agent's answer", predecessor=agent)
    _, view, svg = drawn(tmp_path, "s")
    assert "root 1/2" in svg
    assert "root 2/2" in svg
    assert view.roots == [main, agent]
    # A session with one root has no such label.
    store.append("t", "user", "alone")
    assert "root 1/" not in drawn(tmp_path, "t")[2]
