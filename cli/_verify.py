"""`dagmem verify [--strict] [--repair]`: the oracle (DESIGN §6) on a real home.

Read-only unless `--repair`, which fixes only what is safe: a marker whose record was never consumed is
dropped, so the record is owed (and written) again. It never deletes evidence."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..memory.durable import read_workspace_id
from ..memory.policy import drop_marker
from ..memory.store import FileSessionStore
from ..sim import OracleReport, check_home

__all__ = ["command", "repair_markers"]


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


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    memory = home / "memory"
    workspace_id = read_workspace_id(memory / ".dagmem" / "workspace-id")
    store = FileSessionStore(home, read_only=not args.repair)
    report = check_home(store, memory, workspace_id, drained=args.strict)
    repaired: list[str] = []
    if args.repair and workspace_id is not None:
        repaired = repair_markers(store, report, workspace_id)
        if repaired:
            report = check_home(FileSessionStore(home), memory, workspace_id, drained=args.strict)
    if args.json:
        print(
            json.dumps(
                {"home": str(home), "workspace_id": workspace_id, **report.as_json(), "repaired": repaired}
            )
        )
        return 0 if report.ok else 1
    print(
        f"{report.records} records, {report.consumed} consumed, {report.archived} archived, "
        f"{report.cited} cited, {report.marked} marked"
    )
    for source_id in repaired:
        print(f"repaired: dropped the marker of {source_id} (it will be written again)")
    if report.owed and not args.strict:
        print(f"{len(report.owed)} records owed but not yet due (not violations; --strict makes them so)")
    for violation in report.violations:
        print(f"VIOLATION {violation}")
    print("ok" if report.ok else f"{len(report.violations)} violations")
    return 0 if report.ok else 1
