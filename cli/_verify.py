"""`dagmem verify [--strict] [--repair]`: the oracle (DESIGN §6) on a real home.

Read-only unless `--repair`, which fixes only what is safe: a frame appended twice byte for byte (a stale
index cache let a write do it) loses its second copy, and the index cache is rebuilt from the files; a
marker whose record was never consumed is dropped, so the record is owed (and written) again; and a
record stranded behind a marker (unmarked, older
than a marked record of its branch: a forged marker did that) is made owed again by dropping this
workspace's markers after it on that branch: their records are consumed, so the next write only marks them
again, and writes the stranded ones. It never deletes evidence."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..memory.audit import UNCITED_SHOWN, OracleReport, Violation, check_home
from ..memory.durable import read_below, read_workspace_id
from ..memory.errors import DagmemError
from ..memory.format import (
    TOPIC_INDEX,
    HomePaths,
    Topic,
    TopicFormatError,
    WorkspacePaths,
    parse_forgotten,
    parse_topic,
)
from ..memory.policy import drop_marker, is_marked, is_record_node
from ..memory.store import FileSessionStore
from ..memory.workspace import Workspace
from ..memory.write import identical_claims
from ._words import plural

__all__ = ["command", "duplicate_claims", "rebuild_index", "repair_markers", "unstrand"]


def repair_markers(store: FileSessionStore, report: OracleReport, workspace_id: str) -> list[str]:
    """Drop every marker the oracle found without a consumption; returns the source ids repaired."""
    by_session: dict[str, list[str]] = {}
    for violation in report.violations:
        if violation.kind == "marker-without-consumption":
            session_id, _, node_id = violation.subject.partition("/")
            by_session.setdefault(session_id, []).append(node_id)
    repaired: list[str] = []
    for session_id, node_ids in by_session.items():
        changed = store.update_node_metadata(
            session_id, node_ids, lambda _id, metadata: drop_marker(metadata, workspace_id), site="repair"
        )
        repaired.extend(f"{session_id}/{node_id}" for node_id in changed)
    return repaired


def unstrand(store: FileSessionStore, session_ids: list[str], workspace_id: str) -> list[str]:
    """Drop this workspace's markers that hide an unmarked record behind them (every branch's walk stops
    at the first marked record, so nothing would ever write it); returns the source ids unmarked."""
    unmarked: list[str] = []
    for session_id in session_ids:
        snapshot = store.load(session_id)
        if not snapshot.valid:
            continue  # `verify` reports it; a write refuses it until it is fixed
        hiding: dict[str, None] = {}
        for tip in snapshot.tips():
            records = [node for node in snapshot.branch(tip.id) if is_record_node(node)]
            marks = [is_marked(node.metadata, workspace_id) for node in records]
            if False in marks:  # the marked records after the oldest unmarked one hide it
                first = marks.index(False)
                pairs = zip(records[first:], marks[first:], strict=True)
                hiding.update((node.id, None) for node, marked in pairs if marked)
        if hiding:
            changed = store.update_node_metadata(
                session_id, hiding, lambda _id, metadata: drop_marker(metadata, workspace_id), site="repair"
            )
            unmarked.extend(f"{session_id}/{node_id}" for node_id in changed)
    return unmarked


def duplicate_claims(memory: Path) -> list[str]:
    """A warning per claim filed more than once (recall shows it once; `dagmem reorganise` merges the
    copies, carrying every citation). Not a violation: nothing is lost or wrong, only repeated. Files that
    do not parse are the oracle's to report, not this check's."""
    topics: dict[str, Topic] = {}
    for found in sorted(WorkspacePaths(memory).topics.glob("*.md")):
        relpath = found.relative_to(memory).as_posix()
        if relpath == TOPIC_INDEX:
            continue  # the map of the topics, no topic
        try:  # never through a link (the oracle reports one)
            data = read_below(memory, relpath)
            if data is not None:
                topics[relpath] = parse_topic(data.decode("utf-8"), relpath)
        except (OSError, UnicodeDecodeError, TopicFormatError, DagmemError):
            continue
    return [
        "duplicate-claim: "
        + ", ".join(f"{path}#{block_id}" for path, block_id in holders)
        + " hold the same claim (dagmem reorganise merges them)"
        for holders in identical_claims(topics)
    ]


def rebuild_index(memory: Path) -> tuple[bool, list[str]]:
    """Drop the exact copies of frames a stale index let a write append again, and rebuild the index
    cache from the files; returns (whether the index disagreed with them, the source ids of the copies)."""
    with Workspace(memory) as workspace:
        dropped = workspace.drop_duplicate_frames()
        return workspace.rebuild_index(), dropped


def _forgotten_copies(home: Path) -> list[str]:
    """Where a forgotten text is still found (`--forgotten`); a forget a crash left part done is one too."""
    from ..memory.forget import verify_forgotten

    copies = [str(copy) for copy in verify_forgotten(home)]
    data = read_below(home, HomePaths(home).workspace.forgotten.relative_to(home).as_posix())
    try:
        entries = [] if data is None else parse_forgotten(data)
    except ValueError as exc:
        return [*copies, f"memory/.dagmem/forgotten.json: unreadable ({exc})"]
    if any(not entry.done for entry in entries):
        copies.append("memory/.dagmem/forgotten.json: a forget is not finished (run `dagmem forget` again)")
    return copies


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    paths = HomePaths(home).workspace
    memory = paths.root
    workspace_id = read_workspace_id(paths.workspace_id)
    store = FileSessionStore(home, read_only=not args.repair)
    report = check_home(store, memory, workspace_id, drained=args.strict)
    repaired: list[str] = []
    unhidden: list[str] = []
    # An unreadable txlog line may hold the consumption of marked records: writing them again would file
    # their memory twice, so no marker is touched until the txlog is repaired.
    txlog_unreadable = any(v.kind == "txlog-unreadable" for v in report.violations)
    rebuilt, copies = False, list[str]()
    if args.repair and workspace_id is not None and not txlog_unreadable:
        rebuilt, copies = rebuild_index(memory)
        if copies:
            report = check_home(store, memory, workspace_id, drained=args.strict)
        repaired = repair_markers(store, report, workspace_id)
        touched = sorted(
            {
                v.subject.partition("/")[0]
                for v in report.violations
                if v.kind in ("marker-without-consumption", "stranded")
            }
        )
        unhidden = unstrand(FileSessionStore(home), touched, workspace_id)
        repaired += unhidden
        if repaired:
            report = check_home(FileSessionStore(home), memory, workspace_id, drained=args.strict)
    warnings = duplicate_claims(memory)
    remaining = _forgotten_copies(home) if args.forgotten else []
    if remaining:
        report.violations.extend(Violation("forgotten-copy", str(copy)) for copy in remaining)
    if args.json:
        extra = {"index_rebuilt": rebuilt, "duplicates_dropped": copies} if args.repair else {}
        print(
            json.dumps(
                {
                    "home": str(home),
                    "workspace_id": workspace_id,
                    **report.as_json(),
                    "repaired": repaired,
                    **extra,
                    "warnings": warnings,
                }
            )
        )
        return 0 if report.ok else 1
    print(
        f"{plural(report.records, 'record')}, {report.consumed} consumed, {report.archived} archived, "
        f"{report.cited} cited, {report.marked} marked"
    )
    for source_id in copies:
        print(f"repaired: dropped a second copy of the frame of {source_id} from its archive (byte for byte)")
    if rebuilt:
        print("repaired: rebuilt the index cache from the files (it disagreed with them)")
    for source_id in repaired:
        if source_id in unhidden:
            print(
                f"repaired: dropped the marker of {source_id} (it hid unwritten records; marked again later)"
            )
        else:
            print(f"repaired: dropped the marker of {source_id} (it will be written again)")
    if args.repair and txlog_unreadable:
        print("not repairing markers: a txlog line is unreadable, and it may hold their consumption")
    if report.uncited:
        shown = ", ".join(report.uncited[:UNCITED_SHOWN])
        more = (
            f", and {len(report.uncited) - UNCITED_SHOWN} more" if len(report.uncited) > UNCITED_SHOWN else ""
        )
        print(
            f"{plural(len(report.uncited), 'consumed record')} no block cites (not violations once migrated; "
            f"`dagmem reorganise --backfill` distils them): {shown}{more}"
        )
    if report.owed and not args.strict:
        print(
            f"{plural(len(report.owed), 'record')} owed but not yet due (not violations; --strict makes them so)"
        )
    for warning in warnings:
        print(f"warning: {warning}")
    for violation in report.violations:
        print(f"VIOLATION {violation}")
    print("ok" if report.ok else plural(len(report.violations), "violation"))
    return 0 if report.ok else 1
