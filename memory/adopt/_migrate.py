"""`dagmem migrate`: adopt a home written by a position-cursor system (DESIGN §4, §2 `runtime.json`).

Such a system wrote each session's turns to the evidence archive and kept a position (`cursors`) of how far
it had distilled. Positions are never identity here, so the cursor only says "this home was written before";
what is adopted is what can be verified from the files: for each session, every real branch path (root to
tip, from the DAG) is walked from its oldest record, and records are kept while each is found, with its role
and content, in the archive's valid prefix as the strict scanner reads it (`format.scan_archive`: a header
quoted inside a record's body stays content, and nothing after the first invalid frame counts). The walk of
a path stops at its first record that is not; the records after it are written again by the ordinary write
(the archive never appends a source id twice, so an archived one is not archived again).

Each session's kept records get one txlog line `"migrated": true, "files": {}` (through the installer, under
the workspace lock, like any transaction: records already consumed are left out), then markers. `cursors`
is removed from `runtime.json` only after every session succeeded (other keys stay); on any failure it is
kept for a retry, and a retry redoes nothing that was done: consumed records are only marked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..durable import atomic_write_many
from ..errors import InvalidInput
from ..format import Node, WorkspacePaths, is_valid_id, scan_archive
from ..outcomes import classify
from ..policy import is_marked, is_record_node
from ..store import SessionStore
from ..workspace import Workspace
from ..write import mark_nodes

__all__ = [
    "RUNTIME_FILE",
    "MigrationReport",
    "SessionMigration",
    "kept_records",
    "migrate_home",
    "read_cursors",
]

RUNTIME_FILE = WorkspacePaths(Path()).runtime  # relative to the workspace root
_MARK_CHUNK = 256


@dataclass
class SessionMigration:
    session: str
    outcome: Literal["migrated", "nothing", "failed"]
    kept: int = 0  # records of the verified, contiguous, archived prefixes
    consumed: int = 0  # of those, consumed by this run's txlog line (the rest were consumed before)
    marked: int = 0  # markers written by this run
    tx: str | None = None
    archive: Literal["complete", "torn", "corrupt", "missing"] = "missing"
    reason_code: str | None = None
    detail: str | None = None

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class MigrationReport:
    found: bool  # runtime.json had cursors
    sessions: list[SessionMigration] = field(default_factory=list)
    cursors_removed: bool = False

    @property
    def ok(self) -> bool:
        return all(s.outcome != "failed" for s in self.sessions)

    def as_json(self) -> dict[str, Any]:
        return {
            "found": self.found,
            "ok": self.ok,
            "cursors_removed": self.cursors_removed,
            "sessions": [s.as_json() for s in self.sessions],
        }


def read_cursors(memory: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the whole of runtime.json, its cursors) or None when there is nothing to migrate. A file that is
    not a JSON object, or cursors that are not an object, is `InvalidInput` (nothing is written)."""
    path = memory / RUNTIME_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(f"{path}: not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise InvalidInput(f"{path}: not a JSON object")
    cursors = raw.get("cursors")
    if cursors is None:
        return None
    if not isinstance(cursors, dict):
        raise InvalidInput(f"{path}: 'cursors' is not an object of session ids")
    return raw, cursors


def kept_records(nodes: Mapping[str, Node], archived: Mapping[str, tuple[str, str]]) -> list[Node]:
    """The records of every root-to-tip path up to (not including) its first record whose (role, content)
    is not in `archived` (node id -> (role, content) of its valid frame). Non-records pass (DESIGN §3).
    Oldest first (seq order). A DFS from the roots: once a path stops, its whole subtree is stopped."""
    children: dict[str | None, list[str]] = {}
    for node in nodes.values():
        children.setdefault(node.predecessor, []).append(node.id)
    kept: list[Node] = []
    stack = list(children.get(None, ()))
    while stack:
        node = nodes[stack.pop()]
        if is_record_node(node):
            if archived.get(node.id) != (str(node.role), node.content):
                continue  # stop: neither it nor anything after it on these paths is kept
            kept.append(node)
        stack.extend(children.get(node.id, ()))
    kept.sort(key=lambda n: (n.seq, n.id))
    return kept


def _migrate_session(store: SessionStore, workspace: Workspace, sid: str) -> SessionMigration:
    if not is_valid_id(sid):
        raise InvalidInput(f"cursor for {sid!r}: not a valid session id")
    result = SessionMigration(sid, "nothing")
    if not store.has_session(sid):
        result.detail = "no such session in sessions/: nothing to adopt"
        return result
    snapshot = store.load(sid)
    snapshot.require_valid()
    path = workspace.sources / f"{sid}.md"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = None
    archived: dict[str, tuple[str, str]] = {}
    if data is not None:
        scan = scan_archive(data, sid)
        result.archive = scan.status
        archived = {frame.node_id: (frame.role, frame.content) for frame in scan.frames}
    kept = kept_records(snapshot.nodes, archived)
    result.kept = len(kept)
    if not kept:
        return result
    source_ids = [f"{sid}/{node.id}" for node in kept]
    with workspace.lock():
        workspace.recover()
        done = workspace.consumed(source_ids)
        todo = [s for s in source_ids if s not in done]
        if todo:
            record = workspace.install(sid, todo, {}, migrated=True)
            result.tx, result.consumed = record.tx, len(todo)
    # Markers only after the commit point: a crash before this leaves consumed records that the next run
    # (or the ordinary write) marks without consuming them again.
    unmarked = [node.id for node in kept if not is_marked(node.metadata, workspace.workspace_id)]
    for start in range(0, len(unmarked), _MARK_CHUNK):
        chunk = unmarked[start : start + _MARK_CHUNK]
        result.marked += len(mark_nodes(store, sid, chunk, workspace.workspace_id))
    if result.consumed or result.marked:
        result.outcome = "migrated"
    return result


def migrate_home(store: SessionStore, memory: Path, *, fsync: bool = True) -> MigrationReport:
    """Migrate every session named in `runtime.json`'s cursors. Never raises for one session's problem (it
    is in the report, and the cursors stay); a malformed runtime.json raises `InvalidInput`. Its workspace
    needs no install hook: a migrated transaction changes no topic file, so recall has nothing to index."""
    found = read_cursors(memory)
    if found is None:
        return MigrationReport(found=False)
    raw, cursors = found
    report = MigrationReport(found=True)
    with Workspace(memory, fsync=fsync) as workspace:
        for sid in sorted(cursors):
            try:
                result = _migrate_session(store, workspace, sid)
            except (
                Exception
            ) as exc:  # an injected crash (a simulated death) is a BaseException: it propagates
                failure = classify(exc)
                result = SessionMigration(sid, "failed", reason_code=str(failure.code), detail=str(exc))
            report.sessions.append(result)
    if report.ok:
        rest = {key: value for key, value in raw.items() if key != "cursors"}
        body = (json.dumps(rest, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()
        atomic_write_many([(memory / RUNTIME_FILE, body)], fsync=fsync, site="runtime")
        report.cursors_removed = True
    return report
