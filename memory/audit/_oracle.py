"""The independent oracle (DESIGN §6): checks a home from its files alone.

It shares only the file format with the writer (the strict archive scanner, the topic parser and the
layout's file names, `WorkspacePaths`, which are names, not rules of the writer); it never reads the
index, the planner or the DAG view, and it computes branches with its own walk. It judges a stage
itself too (it does not call the writer's `Stages`). After a drain, every record reachable from a tip
must be consumed exactly once and cited; in any state, no marker may exist without its consumption, no
record may be stranded behind a marker, no source may be archived twice, every consumed record must
be archived and (unless migrated) cited, and every superseded line (and partly superseded line) must name
a block that exists, with no chain of successors coming back on itself. Currency (`_currency`): no
supersession links two alternatives of one fork, and the core never holds a superseded or left block.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..currency import SessionShape
from ..durable import read_regular
from ..errors import UnsafePath
from ..format import (
    FORGOTTEN_KEY,
    MARKER_KEY,
    TOPIC_INDEX,
    Block,
    TopicFormatError,
    WorkspacePaths,
    anchor_of,
    parse_topic,
    parse_topic_index,
    restore_final_newline,
    scan_archive,
)
from ..store import SessionStore
from ._currency import check_currency

__all__ = ["UNCITED_SHOWN", "OracleReport", "Violation", "check_home", "check_workspace"]

UNCITED_SHOWN = 5  # uncited records named in a report; the rest are counted


@dataclass(frozen=True)
class Violation:
    kind: str  # consumed-twice, marker-without-consumption, stranded, ..., supersession_missing, ...
    subject: str  # a source id, a file, a tx
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class OracleReport:
    violations: list[Violation] = field(default_factory=list)
    owed: list[str] = field(default_factory=list)  # records not yet consumed (a violation with `drained`)
    records: int = 0  # record nodes now: user/assistant text, neither runtime display nor rewound
    consumed: int = 0  # source ids in the txlog: every record written, including those rewound since
    consumed_rewound: int = 0  # of `consumed`, nodes rewound after they were written (no longer records)
    archived: int = 0
    cited: int = 0
    marked: int = 0
    # Consumed, unforgotten records no block cites, sorted: a migration's are no violation (the system it
    # adopted wrote their memory), and `dagmem reorganise --backfill` distils them all.
    uncited: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "violations": [
                {"kind": v.kind, "subject": v.subject, "detail": v.detail} for v in self.violations
            ],
            "owed": len(self.owed),
            "records": self.records,
            "consumed": self.consumed,
            "consumed_rewound": self.consumed_rewound,
            "archived": self.archived,
            "cited": self.cited,
            "marked": self.marked,
            "uncited": {"count": len(self.uncited), "first": self.uncited[:UNCITED_SHOWN]},
        }


def _is_record(node: Mapping[str, Any]) -> bool:
    metadata = node.get("metadata") or {}
    # A user or assistant turn with text, or a tool row the importer made tool evidence (`"evidence": "tool"`).
    role = node.get("role")
    return (
        (role in ("user", "assistant") or (role == "tool" and metadata.get("evidence") == "tool"))
        and isinstance(node.get("content"), str)
        and bool(node["content"].strip())
        and metadata.get("display") != "runtime"
        and not metadata.get("rewound")
        and metadata.get(FORGOTTEN_KEY) is None
    )


def _marked(node: Mapping[str, Any], workspace_id: str) -> bool:
    value = (node.get("metadata") or {}).get(MARKER_KEY)
    return value == workspace_id or (isinstance(value, list) and workspace_id in value)


@dataclass(frozen=True)
class _Archived:
    """What a frame says of its node (the content as a digest: a whole home's text is not kept)."""

    role: str
    seq: int
    created_at: float
    content: str  # sha256 hex of the UTF-8 content

    @staticmethod
    def digest(content: str) -> str:
        return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class _Workspace:
    consumed: Counter[str]
    migrated: set[str]
    archived: dict[str, set[str]]  # session -> source ids archived (valid prefix)
    cited: set[tuple[str, str]]  # (session, anchor)
    frames: dict[str, dict[str, _Archived]] = field(default_factory=dict)  # session -> node id -> frame
    blocks: dict[tuple[str, str], Block] = field(default_factory=dict)  # (topic relpath, block id) -> block


def _read(path: Path, kind: str, report: OracleReport) -> bytes | None:
    """The bytes of a workspace file, never through a symlink (the writer never follows one either);
    anything unreadable is a violation naming the file, never an exception."""
    try:
        data = read_regular(path)
    except UnsafePath as exc:
        report.violations.append(Violation(kind, str(path), exc.reason))
        return None
    except OSError as exc:
        report.violations.append(Violation(kind, str(path), exc.strerror or str(exc)))
        return None
    if data is None:
        report.violations.append(Violation(kind, str(path), "vanished while it was read"))
    return data


def _real_dir(path: Path, report: OracleReport) -> bool:
    """Whether `path` is a directory to read: a symlink in its place is reported, never followed."""
    if path.is_symlink():
        report.violations.append(
            Violation("unsafe-path", str(path), "a symbolic link: dagmem never reads or writes through one")
        )
        return False
    return path.is_dir()


def check_workspace(memory: Path, report: OracleReport) -> _Workspace:
    """Read the txlog, archives and topics of a workspace, reporting what is wrong with them alone."""
    if not _real_dir(memory, report):  # missing, or a symlink (reported): nothing of it is read
        return _Workspace(Counter(), set(), {}, set())
    consumed, migrated = _read_txlog(WorkspacePaths(memory), report)
    for source_id, times in consumed.items():
        if times > 1:
            report.violations.append(Violation("consumed-twice", source_id, f"{times} txlog lines"))
    archived: dict[str, set[str]] = {}
    forgotten: set[str] = set()  # tombstone frames: their evidence was forgotten, so nothing cites it
    frames: dict[str, dict[str, _Archived]] = {}
    sources = WorkspacePaths(memory).sources
    for path in sorted(sources.glob("*.md")) if _real_dir(sources, report) else []:
        session = path.stem
        data = _read(path, "archive-unreadable", report)
        if data is None:
            archived[session] = set()
            continue
        scan = scan_archive(data, session)
        if scan.status == "corrupt":
            report.violations.append(Violation("archive-corrupt", str(path), scan.reason or ""))
        archived[session] = {frame.source_id for frame in scan.frames}
        forgotten.update(frame.source_id for frame in scan.frames if frame.forgotten)
        frames[session] = {
            f.node_id: _Archived(f.role, f.seq, f.created_at, _Archived.digest(f.content))
            for f in scan.frames
        }
        if scan.status == "torn" and any(
            s.partition("/")[0] == session and s not in archived[session] for s in consumed
        ):
            # A crash tears only frames nobody consumed yet; this damage came later and is no torn tail.
            fixable = restore_final_newline(data, session) is not None
            report.violations.append(
                Violation(
                    "archive-damaged",
                    str(path),
                    f"{scan.reason} at byte {scan.damage_offset}, and a consumed source is not in the valid "
                    "prefix"
                    + ("; only the final newline is missing: the next write restores it" if fixable else ""),
                )
            )
        if scan.status != "complete":
            # The strict scan stops at a frame whose source id it has seen: after a valid prefix, a whole
            # frame again is not a torn write but evidence archived twice.
            for frame in scan_archive(data, session, start=scan.valid_end).frames:
                if frame.source_id in archived[session]:
                    report.violations.append(Violation("archived-twice", frame.source_id, str(path)))
    anchors: dict[str, set[str]] = {}  # session -> anchors of its archived frames, computed once

    def archived_anchors(session: str) -> set[str]:
        found = anchors.get(session)
        if found is None:
            found = anchors[session] = {anchor_of(s) for s in archived.get(session, ())}
        return found

    forgotten_keys = {(s.partition("/")[0], anchor_of(s)) for s in forgotten}
    cited: set[tuple[str, str]] = set()
    claims: dict[tuple[str, frozenset[tuple[str, str]]], str] = {}  # (claim, its sources) -> first block
    blocks: dict[tuple[str, str], Block] = {}
    unreadable: set[str] = set()  # topic files reported unreadable: what they hold is unknown
    topics = WorkspacePaths(memory).topics
    for path in sorted(topics.rglob("*.md")) if _real_dir(topics, report) else []:
        relpath = path.relative_to(memory).as_posix()
        raw = _read(path, "topic-unreadable", report)
        if raw is None:
            continue
        if relpath == TOPIC_INDEX:  # the map of the topics, derived by every install: no topic itself
            _check_topic_index(memory, raw, report)
            continue
        try:
            topic = parse_topic(raw.decode("utf-8"), relpath)
        except (TopicFormatError, UnicodeDecodeError) as exc:
            report.violations.append(Violation("topic-unreadable", relpath, str(exc)))
            unreadable.add(relpath)
            continue
        for block in topic.blocks:
            where = f"{relpath}#{block.id}"
            blocks[(relpath, block.id)] = block
            claim = (
                block.claim,
                frozenset((s.session_id, s.anchor) for c in block.citations for s in c.sources),
            )
            if claim in claims:
                report.violations.append(
                    Violation(
                        "duplicate-claim", where, f"the same claim citing the same sources as {claims[claim]}"
                    )
                )
            claims.setdefault(claim, where)
            for citation in block.citations:
                for source in citation.sources:
                    key = (source.session_id, source.anchor)
                    cited.add(key)
                    if key in forgotten_keys:
                        report.violations.append(
                            Violation("cites-forgotten", where, f"{source.session_id}#{source.anchor}")
                        )
                    if source.anchor not in archived_anchors(source.session_id):
                        report.violations.append(
                            Violation(
                                "dangling-citation",
                                f"{relpath}#{block.id}",
                                f"{source.session_id}#{source.anchor}",
                            )
                        )
    _check_supersessions(blocks, unreadable, report)
    for source_id in consumed:
        session = source_id.partition("/")[0]
        if source_id not in archived.get(session, set()):
            report.violations.append(Violation("consumed-not-archived", source_id))
        if source_id not in forgotten and (session, anchor_of(source_id)) not in cited:
            report.uncited.append(source_id)
            if source_id not in migrated:
                report.violations.append(Violation("consumed-not-cited", source_id))
    report.uncited.sort()
    report.consumed = len(consumed)
    report.archived = sum(len(v) for v in archived.values())
    report.cited = len(cited)
    return _Workspace(consumed, migrated, archived, cited, frames, blocks)


def _check_topic_index(memory: Path, raw: bytes, report: OracleReport) -> None:
    """The topic index parses, and every topic it lists exists (`topic-index-unreadable`,
    `topic-index-dangling`)."""
    try:
        index = parse_topic_index(raw.decode("utf-8"))
    except (TopicFormatError, UnicodeDecodeError) as exc:
        report.violations.append(Violation("topic-index-unreadable", TOPIC_INDEX, str(exc)))
        return
    for entry in index.entries:
        if not (memory / entry.path).is_file():
            report.violations.append(
                Violation("topic-index-dangling", TOPIC_INDEX, f"lists {entry.path}, which does not exist")
            )


def _check_supersessions(
    blocks: Mapping[tuple[str, str], Block], unreadable: set[str], report: OracleReport
) -> None:
    """Every superseded and partly superseded line names a block that exists (`supersession_missing`; not
    reported when the named file is itself unreadable, which is reported already), and no chain of
    successors returns on itself (`supersession_cycle`, once per cycle, a block superseded by itself
    included; a partly superseded line leaves its block current, so it links no chain). Each block has at
    most one successor, so one walk per block, each block visited once, finds every cycle."""
    successor: dict[tuple[str, str], tuple[str, str]] = {}
    for key, block in blocks.items():  # file order, files sorted
        for mark, chained in ((block.superseded, True), (block.partly, False)):
            if mark is None:
                continue
            target = (posixpath.normpath(mark.topic), mark.by)
            if target in blocks:
                if chained:
                    successor[key] = target
            elif target[0] not in unreadable:
                report.violations.append(
                    Violation(
                        "supersession_missing",
                        _where(key),
                        f"{'' if chained else 'partly '}superseded by {_where(target)}, which does not exist",
                    )
                )
    done: set[tuple[str, str]] = set()
    for start in successor:
        walk: list[tuple[str, str]] = []
        at: tuple[str, str] | None = start
        while at is not None and at not in done and at not in walk:
            walk.append(at)
            at = successor.get(at)
        if at is not None and at in walk:
            cycle = walk[walk.index(at) :]
            first = cycle.index(min(cycle))  # each cycle told from the same block, however it was entered
            cycle = cycle[first:] + cycle[:first]
            detail = (
                "superseded by itself"
                if len(cycle) == 1
                else " -> ".join(_where(key) for key in [*cycle, cycle[0]])
            )
            report.violations.append(Violation("supersession_cycle", _where(cycle[0]), detail))
        done.update(walk)


def _where(key: tuple[str, str]) -> str:
    return f"{key[0]}#{key[1]}"


def _read_txlog(paths: WorkspacePaths, report: OracleReport) -> tuple[Counter[str], set[str]]:
    """(times each source id was consumed, ids consumed by migration) from the committed txlog lines.

    Every line must be a transaction: a blank or unreadable one is a violation. At the end of the file, a
    partial line whose stage still exists is a crash's torn write, not committed (recovery removes it);
    blank lines after the last line hold nothing (recovery removes them too); a last line that parses but
    lost its newline counts as committed unless its stage still exists."""
    consumed: Counter[str] = Counter()
    migrated: set[str] = set()
    state, path = paths.state, paths.txlog
    data = b""
    if _real_dir(state, report) and os.path.lexists(path):
        data = _read(path, "txlog-unreadable", report) or b""
    body = data.rstrip(b"\n")
    stage = paths.stage_root
    stages = {p.name for p in stage.iterdir()} if _real_dir(stage, report) else set()
    lines = body.split(b"\n") if body else []
    for number, line in enumerate(lines, 1):
        partial = number == len(lines) and len(body) == len(data)
        if not line.strip():
            report.violations.append(Violation("txlog-unreadable", f"line {number}", "a blank line"))
            continue
        try:
            entry = json.loads(line)
            tx = str(entry["tx"])
            ids = [str(x) for x in entry["consumed"]]
        except (ValueError, KeyError, TypeError):
            heads = [f'{{"tx":"{stage}"'.encode() for stage in stages]
            if partial and any(head.startswith(line) or line.startswith(head) for head in heads):
                continue  # torn by a crash: its stage exists
            report.violations.append(
                Violation(
                    "txlog-unreadable",
                    f"line {number}",
                    "incomplete, and no stage of it exists" if partial else "not a transaction line",
                )
            )
            continue
        if partial and tx in stages:
            continue  # its newline never landed: not committed, recovery discards it
        consumed.update(ids)
        if entry.get("migrated"):
            migrated.update(ids)
    return consumed, migrated


def _branches(nodes: Mapping[str, Mapping[str, Any]]) -> Iterable[list[str]]:
    """Every root -> tip path, walked independently of the writer's DAG code."""
    parents = {str(n.get("predecessor")) for n in nodes.values() if n.get("predecessor") is not None}
    for tip in nodes:
        if tip in parents:
            continue
        path: list[str] = []
        current: str | None = tip
        seen: set[str] = set()
        while current is not None and current in nodes and current not in seen:
            seen.add(current)
            path.append(current)
            predecessor = nodes[current].get("predecessor")
            current = None if predecessor is None else str(predecessor)
        yield path[::-1]


def _compare_frames(
    session_id: str,
    nodes: Mapping[str, Mapping[str, Any]],
    frames: Mapping[str, _Archived],
    migrated: set[str],
    report: OracleReport,
) -> None:
    """Each archived frame must say what its node says: a frame edited by hand (and still well formed)
    is evidence that no longer matches the conversation. A migrated record's frame was written by the
    system it came from, which migration trusts for its role and content only."""
    for node_id, frame in frames.items():
        node = nodes.get(node_id)
        if node is None:
            continue  # a node file removed or unreadable: the session's own problems say so
        content = node.get("content")
        checks = [
            ("role", frame.role == node.get("role")),
            ("content", isinstance(content, str) and frame.content == _Archived.digest(content)),
        ]
        if f"{session_id}/{node_id}" not in migrated:
            checks += [
                ("seq", frame.seq == node.get("seq")),
                ("created_at", frame.created_at == node.get("created_at")),
            ]
        differ = [what for what, same in checks if not same]
        if differ:
            report.violations.append(
                Violation(
                    "archive-mismatch",
                    f"{session_id}/{node_id}",
                    f"the archived frame's {', '.join(differ)} {'differs' if len(differ) == 1 else 'differ'} "
                    "from its node's",
                )
            )


def check_home(
    store: SessionStore,
    memory: Path,
    workspace_id: str | None,
    *,
    drained: bool = False,
    sessions: Iterable[str] | None = None,
) -> OracleReport:
    """Check sessions (from `store`) against the workspace at `memory`. With `drained`, any record still
    owed is a violation too."""
    report = OracleReport()
    ws = check_workspace(memory, report)
    wsid = workspace_id or ""
    if sessions is None:
        try:
            sessions = store.session_ids()
        except UnsafePath as exc:  # a symlinked sessions/: reported, never followed
            report.violations.append(Violation("unsafe-path", str(exc.path), exc.reason))
            sessions = []
    shapes: dict[str, SessionShape] = {}
    for session_id in sessions:
        snapshot = store.load(session_id)
        if snapshot.valid:
            shapes[session_id] = SessionShape.from_snapshot(snapshot)
        nodes = {nid: node.model_dump(mode="json") for nid, node in snapshot.nodes.items()}
        for problem in snapshot.problems:
            report.violations.append(Violation("session-invalid", session_id, str(problem)))
        records = {nid for nid, node in nodes.items() if _is_record(node)}
        report.records += len(records)
        _compare_frames(session_id, nodes, ws.frames.get(session_id, {}), ws.migrated, report)
        # A rewind after the write leaves the record consumed but no longer a record: this is why
        # `consumed` may exceed `records` after a clean drain.
        report.consumed_rewound += sum(
            1
            for nid, node in nodes.items()
            if (node.get("metadata") or {}).get("rewound") and ws.consumed[f"{session_id}/{nid}"]
        )
        for node_id, node in nodes.items():
            if not _marked(node, wsid):
                continue
            report.marked += 1
            if ws.consumed[f"{session_id}/{node_id}"] == 0:
                report.violations.append(Violation("marker-without-consumption", f"{session_id}/{node_id}"))
        owed: set[str] = set()
        for path in _branches(nodes):
            newest_mark = max(
                (i for i, nid in enumerate(path) if nid in records and _marked(nodes[nid], wsid)), default=-1
            )
            for i, node_id in enumerate(path):
                if node_id not in records:
                    continue
                source_id = f"{session_id}/{node_id}"
                if i < newest_mark and not _marked(nodes[node_id], wsid):
                    report.violations.append(
                        Violation("stranded", source_id, "unmarked, older than a marked record")
                    )
                if ws.consumed[source_id] == 0:
                    owed.add(source_id)
        report.owed.extend(sorted(owed))
        if drained:
            report.violations.extend(Violation("owed-after-drain", s) for s in sorted(owed))
    # Supersessions that need the sessions' DAGs (never between two alternatives of one fork) and the
    # core's currency.
    if _real_dir(memory, OracleReport()):
        nodes_of = {session: set(frames) for session, frames in ws.frames.items()}
        report.violations.extend(
            Violation(v.kind, v.subject, v.detail) for v in check_currency(memory, shapes, nodes_of)
        )
    return report
