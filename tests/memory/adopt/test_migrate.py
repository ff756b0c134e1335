"""`dagmem migrate` (DESIGN §4): adopting a home written by a position-cursor system.

Each test builds such a home by hand: sessions in the store, the archive frames the old system wrote
(`render_frame`, the documented format), and `runtime.json` with cursors. Then it checks exactly what was
marked and consumed, that `write --force` and `verify --strict` pass afterwards, and that no turn is lost
or archived twice."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dagmem import FileSessionStore, Node, Role
from dagmem.memory import faults
from dagmem.memory.adopt import migrate_home
from dagmem.memory.durable import ensure_workspace_id, read_workspace_id
from dagmem.memory.format import HEADER, MARKER_KEY, ArchiveRecord, render_frame, scan_archive
from dagmem.memory.store import SessionStore
from dagmem.sim import check_home
from dagmem.tests._cli import dagmem_run


def dagmem(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args, "--home", str(home))


def frame(sid: str, node: Node, content: str | None = None) -> bytes:
    text = node.content if content is None else content
    return render_frame(ArchiveRecord(sid, node.id, str(node.role), node.seq, node.created_at, text))


def chain(
    store: SessionStore, sid: str, items: list[tuple[str, str, str]], after: str | None = None
) -> list[Node]:
    """Append (node id, role, text) in order after `after` (None: a new root)."""
    nodes = []
    for node_id, role, text in items:
        node = store.append(sid, role, text, predecessor=after, node_id=node_id)
        nodes.append(node)
        after = node.id
    return nodes


def write_archive(home: Path, sid: str, frames: list[bytes]) -> Path:
    path = home / "memory" / "sources" / f"{sid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(HEADER + b"".join(frames))
    return path


def write_cursors(home: Path, sessions: list[str], **extra: Any) -> Path:
    path = home / "memory" / ".dagmem" / "runtime.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    cursors = {sid: {"ordinal": 3, "message_id": "m3"} for sid in sessions}
    path.write_text(json.dumps({"cursors": cursors, **extra}))
    return path


def marked(home: Path, sid: str) -> set[str]:
    wsid = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    nodes = FileSessionStore(home).load(sid).nodes
    return {nid for nid, node in nodes.items() if node.metadata.get(MARKER_KEY) == wsid}


def txlog(home: Path) -> list[dict[str, Any]]:
    path = home / "memory" / ".dagmem" / "txlog.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def archived_counts(home: Path, sid: str) -> Counter[str]:
    """How many frames of each source id the archive holds (the strict scan, then anything after)."""
    data = (home / "memory" / "sources" / f"{sid}.md").read_bytes()
    scan = scan_archive(data, sid)
    counts = Counter(f.source_id for f in scan.frames)
    counts.update(f.source_id for f in scan_archive(data, sid, start=scan.valid_end).frames)
    return counts


def write_then_verify(home: Path) -> None:
    written = dagmem("write", "--force", "--json", home=home)
    assert written.returncode == 0, written.stdout + written.stderr
    verified = dagmem("verify", "--strict", "--json", home=home)
    assert verified.returncode == 0, verified.stdout


def snapshot_files(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and p.name != "lock" and ".sqlite3" not in p.name
    }


TRUNK = [
    ("m1", "user", "How long should sourdough proof?"),
    ("m2", "assistant", "Four to six hours at room temperature."),
    ("m3", "user", "And in the fridge?"),
    ("b1", "assistant", "Overnight, twelve to sixteen hours."),
    ("b2", "user", "Does rye change that?"),
    ("b3", "assistant", "Rye ferments faster: shorten it."),
]


def test_the_gap_marks_only_the_contiguous_archived_prefix(tmp_path: Path) -> None:
    """m1 ✓ m2 ✓ m3 ✓ b1 ✗ b2 ✗ b3 ✓: only m1..m3 are adopted; b1..b3 are written again, and b3 is not
    archived twice."""
    store = FileSessionStore(tmp_path)
    nodes = {n.id: n for n in chain(store, "s", TRUNK)}
    write_archive(tmp_path, "s", [frame("s", nodes[i]) for i in ("m1", "m2", "m3", "b3")])
    runtime = write_cursors(tmp_path, ["s"], keep_me={"other": 1})

    report = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")

    assert report.ok
    assert report.cursors_removed
    assert marked(tmp_path, "s") == {"m1", "m2", "m3"}
    lines = txlog(tmp_path)
    assert len(lines) == 1
    assert lines[0]["migrated"] is True
    assert lines[0]["files"] == {}
    assert lines[0]["consumed"] == ["s/m1", "s/m2", "s/m3"]
    assert json.loads(runtime.read_text()) == {"keep_me": {"other": 1}}  # cursors gone, the rest kept
    assert check_home(FileSessionStore(tmp_path), tmp_path / "memory", report_wsid(tmp_path)).ok

    write_then_verify(tmp_path)
    assert marked(tmp_path, "s") == set(nodes)
    counts = archived_counts(tmp_path, "s")
    assert counts["s/b3"] == 1
    assert set(counts.values()) == {1}
    consumed = Counter(s for line in txlog(tmp_path) for s in line["consumed"])
    assert set(consumed.values()) == {1}
    assert set(consumed) == {f"s/{n}" for n in nodes}


def report_wsid(home: Path) -> str | None:
    return read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")


def test_every_real_branch_path_is_walked_from_its_oldest_record(tmp_path: Path) -> None:
    """A fork: the fully archived branch is adopted to its tip, the other only up to its gap; tool rows
    and system rows (not records) neither stop a walk nor get marked."""
    store = FileSessionStore(tmp_path)
    trunk = chain(store, "s", [("r1", "user", "Plan a trip to Porto"), ("t1", "tool", "search: porto")])
    r2 = chain(store, "s", [("r2", "assistant", "Two days: Ribeira and the wine cellars.")], after="t1")
    left = chain(
        store, "s", [("x1", "user", "Where to eat?"), ("x2", "assistant", "Cantinho do Avillez.")], "r2"
    )
    right = chain(
        store, "s", [("y1", "user", "And by train?"), ("y2", "assistant", "From Lisbon, 3 hours.")], "r2"
    )
    archived = [*trunk, *r2, *left, right[1]]  # y1 is missing: y2 is after the gap
    write_archive(tmp_path, "s", [frame("s", n) for n in archived if n.role != "tool"])
    write_cursors(tmp_path, ["s"])

    report = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")

    assert report.ok
    assert marked(tmp_path, "s") == {"r1", "r2", "x1", "x2"}
    assert report.sessions[0].kept == 4
    write_then_verify(tmp_path)
    assert archived_counts(tmp_path, "s")["s/y2"] == 1


def test_mixed_line_endings_are_verified_byte_for_byte(tmp_path: Path) -> None:
    """Contents with CRLF, a lone CR and LF are archived split on LF only (the CR stays): all verified."""
    store = FileSessionStore(tmp_path)
    nodes = chain(
        store,
        "s",
        [
            ("m1", "user", "line one\r\nline two\r\n"),
            ("m2", "assistant", "old mac\rline\nunix line"),
            ("m3", "user", "\r\nwhy\r\n\r"),
            ("m4", "assistant", "plain"),
        ],
    )
    write_archive(tmp_path, "s", [frame("s", n) for n in nodes])
    write_cursors(tmp_path, ["s"])

    report = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")

    assert report.ok
    assert report.sessions[0].archive == "complete"
    assert marked(tmp_path, "s") == {"m1", "m2", "m3", "m4"}
    write_then_verify(tmp_path)


def test_a_frame_rewritten_with_crlf_stops_the_walk_and_nothing_after_it_counts(tmp_path: Path) -> None:
    """A tool that rewrote one frame's header with CRLF made it invalid: the strict scanner stops there and
    never resynchronises, so the valid frames after it are not trusted (the archive is corrupt)."""
    store = FileSessionStore(tmp_path)
    nodes = chain(store, "s", TRUNK[:4])
    crlf = frame("s", nodes[1]).replace(b"\n", b"\r\n")
    write_archive(tmp_path, "s", [frame("s", nodes[0]), crlf, frame("s", nodes[2]), frame("s", nodes[3])])
    write_cursors(tmp_path, ["s"])

    report = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")

    assert report.ok
    assert report.sessions[0].archive == "corrupt"
    assert marked(tmp_path, "s") == {"m1"}
    assert [line["consumed"] for line in txlog(tmp_path)] == [["s/m1"]]


def test_a_header_forged_in_a_record_body_is_never_trusted(tmp_path: Path) -> None:
    """m2's text quotes a whole frame for b1 (header lines and all). The strict scanner reads it as m2's
    content, so b1 is not archived and the walk stops at it."""
    store = FileSessionStore(tmp_path)
    nodes = {n.id: n for n in chain(store, "s", TRUNK[:2])}
    b1_shape = Node(
        id="b1", seq=3, role=Role.ASSISTANT, content="forged", predecessor="m2", created_at=1.0, metadata={}
    )
    forged = frame("s", b1_shape).decode()
    m3 = chain(store, "s", [("m3", "user", f"look at this:\n{forged}\nend")], after="m2")[0]
    b1 = chain(store, "s", [("b1", "assistant", "forged")], after="m3")[0]
    write_archive(tmp_path, "s", [frame("s", nodes["m1"]), frame("s", nodes["m2"]), frame("s", m3)])
    write_cursors(tmp_path, ["s"])

    report = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")

    assert report.ok
    assert marked(tmp_path, "s") == {"m1", "m2", "m3"}
    assert b1.id not in marked(tmp_path, "s")
    write_then_verify(tmp_path)
    assert marked(tmp_path, "s") == {"m1", "m2", "m3", "b1"}


def test_a_forged_frame_after_damage_is_not_resynchronised_to(tmp_path: Path) -> None:
    """Garbage after m1, then a perfectly shaped frame for m2: the scanner stops at the garbage."""
    store = FileSessionStore(tmp_path)
    nodes = chain(store, "s", TRUNK[:2])
    write_archive(tmp_path, "s", [frame("s", nodes[0]), b"<!-- not a frame -->\n\n", frame("s", nodes[1])])
    write_cursors(tmp_path, ["s"])

    report = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")

    assert report.sessions[0].archive == "corrupt"
    assert marked(tmp_path, "s") == {"m1"}


def test_a_frame_whose_text_differs_from_the_node_is_not_verified(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    nodes = chain(store, "s", TRUNK[:3])
    write_archive(
        tmp_path, "s", [frame("s", nodes[0]), frame("s", nodes[1], "edited later"), frame("s", nodes[2])]
    )
    write_cursors(tmp_path, ["s"])
    migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")
    assert marked(tmp_path, "s") == {"m1"}


def test_a_crash_mid_migration_keeps_the_cursors_and_a_retry_finishes_without_duplicates(
    tmp_path: Path,
) -> None:
    store = FileSessionStore(tmp_path)
    for sid in ("a", "b"):
        nodes = chain(store, sid, TRUNK[:4])
        write_archive(tmp_path, sid, [frame(sid, n) for n in nodes])
    runtime = write_cursors(tmp_path, ["a", "b"])
    before = runtime.read_bytes()

    # The process 'dies' writing the first marker: after session a's txlog line (the commit point).
    with faults.armed(faults.crash_once("mark:rename")), pytest.raises(faults.InjectedCrash):
        migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")
    assert runtime.read_bytes() == before
    assert len(txlog(tmp_path)) == 1
    assert marked(tmp_path, "a") == set()

    report = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")
    assert report.ok
    assert report.cursors_removed
    assert [s.consumed for s in report.sessions] == [0, 4]  # a's records were consumed already: only marked
    assert marked(tmp_path, "a") == marked(tmp_path, "b") == {"m1", "m2", "m3", "b1"}
    consumed = Counter(s for line in txlog(tmp_path) for s in line["consumed"])
    assert set(consumed.values()) == {1}
    assert len(consumed) == 8
    write_then_verify(tmp_path)


def test_a_failed_session_keeps_the_cursors_the_others_are_migrated(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    for sid in ("a", "b"):
        nodes = chain(store, sid, TRUNK[:2])
        write_archive(tmp_path, sid, [frame(sid, n) for n in nodes])
    (tmp_path / "sessions" / "b" / "history" / "0000" / "000009-u-junk.json").write_text("{not json")
    runtime = write_cursors(tmp_path, ["a", "b"])

    result = dagmem("migrate", "--json", home=tmp_path)

    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert {s["session"]: s["outcome"] for s in out["sessions"]} == {"a": "migrated", "b": "failed"}
    assert out["sessions"][1]["reason_code"] == "INVALID_INPUT"
    assert "cursors" in json.loads(runtime.read_text())
    assert marked(tmp_path, "a") == {"m1", "m2"}


def test_a_second_run_changes_nothing(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    nodes = chain(store, "s", TRUNK)
    write_archive(tmp_path, "s", [frame("s", n) for n in nodes[:3]])
    write_cursors(tmp_path, ["s"])
    first = dagmem("migrate", home=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "cursors removed" in first.stdout
    # The old system wrote runtime.json again: the records are consumed and marked, so nothing changes.
    write_cursors(tmp_path, ["s"])
    before = snapshot_files(tmp_path)
    again = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")
    after = snapshot_files(tmp_path)
    assert again.ok
    assert again.sessions[0].outcome == "nothing"
    assert {k: v for k, v in after.items() if not k.endswith("runtime.json")} == {
        k: v for k, v in before.items() if not k.endswith("runtime.json")
    }
    assert dagmem("migrate", home=tmp_path).returncode == 0  # no cursors now: nothing to do


def test_a_record_already_consumed_by_a_write_is_only_marked(tmp_path: Path) -> None:
    """The home was written by dagmem too before the migration: its consumed records are left alone."""
    store = FileSessionStore(tmp_path)
    chain(store, "s", TRUNK[:2])
    write_then_verify(tmp_path)  # archived, consumed (not migrated), cited, marked
    chain(store := FileSessionStore(tmp_path), "s", TRUNK[2:3], after="m2")
    nodes = store.load("s").nodes
    archive = tmp_path / "memory" / "sources" / "s.md"
    archive.write_bytes(archive.read_bytes() + frame("s", nodes["m3"]))
    write_cursors(tmp_path, ["s"])
    lines = len(txlog(tmp_path))
    report = migrate_home(FileSessionStore(tmp_path), tmp_path / "memory")
    assert report.sessions[0].consumed == 1
    assert txlog(tmp_path)[lines]["consumed"] == ["s/m3"]
    write_then_verify(tmp_path)


def test_migrate_without_cursors_creates_nothing(tmp_path: Path) -> None:
    FileSessionStore(tmp_path).append("s", "user", "hello")
    result = dagmem("migrate", "--json", home=tmp_path)
    assert result.returncode == 0
    assert json.loads(result.stdout)["found"] is False
    assert not (tmp_path / "memory").exists()


def test_migrate_refuses_a_malformed_runtime_json(tmp_path: Path) -> None:
    ensure_workspace_id(tmp_path / "memory" / ".dagmem" / "workspace-id")
    (tmp_path / "memory" / ".dagmem" / "runtime.json").write_text("[1, 2")
    result = dagmem("migrate", "--json", home=tmp_path)
    assert result.returncode == 2
    assert json.loads(result.stdout)["code"] == "INVALID_INPUT"
    assert "Traceback" not in result.stderr
