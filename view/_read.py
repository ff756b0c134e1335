"""Everything the page shows, read from a home and never written: each session's nodes with their state
for this workspace, the archive frames (strict scanner), the topics (strict parser), the core block and
the writer's status, and currency (DESIGN §12): the nodes of each session lying in a left branch, and
each topic block's status for nobody in particular (`currency.resolve`, the rule recall uses). Opening
files read-only is the only I/O here; a missing file reads as absent."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from ..memory.currency import Reader, SessionShape, Status, left_nodes, resolve
from ..memory.durable import WriterStatus, check_dir, load_status, read_below, read_workspace_id
from ..memory.errors import UnknownSession, UnsafePath
from ..memory.format import (
    CORE_FILE,
    FORGOTTEN_KEY,
    MARKER_KEY,
    TOPIC_INDEX,
    Block,
    Frame,
    HomePaths,
    Node,
    Role,
    Topic,
    TopicFormatError,
    TopicIndex,
    WorkspacePaths,
    anchor_of,
    graph_problems,
    is_topic_path,
    parse_topic,
    parse_topic_index,
    scan_archive,
)
from ..memory.policy import is_marked, is_record_node
from ..memory.store import FileSessionStore

__all__ = ["HomeView", "SessionView", "State", "TopicView", "read_home"]

log = logging.getLogger("dagmem.view")

State = Literal["written", "owed", "stranded", "other"]


@dataclass
class SessionView:
    """One session as the page draws it. `drawable` is False when its graph is broken (a missing
    predecessor or a cycle): its problems are listed instead of a picture."""

    session_id: str
    workspace_id: str | None
    nodes: dict[str, Node]
    head: str | None
    children: dict[str, list[str]]
    states: dict[str, State]
    reasons: dict[str, str]  # why a node is not a record, or what its state means
    frames: dict[str, Frame]
    archive: bytes
    archive_problem: str | None
    problems: list[str]
    drawable: bool
    shape: SessionShape | None = None  # None when its graph cannot be drawn
    left: frozenset[str] = frozenset()  # nodes inside a branch the head left (an edit or a retry)

    @property
    def tips(self) -> list[str]:
        return [node_id for node_id in self.nodes if not self.children.get(node_id)]

    @property
    def forks(self) -> list[str]:
        return [node_id for node_id, kids in self.children.items() if len(kids) > 1]

    @property
    def owed(self) -> int:
        return sum(1 for state in self.states.values() if state == "owed")

    def frame_text(self, node_id: str) -> str | None:
        frame = self.frames.get(node_id)
        if frame is None:
            return None
        return self.archive[frame.offset : frame.end].decode("utf-8", "replace")


@dataclass(frozen=True)
class TopicView:
    path: str  # "topics/<slug>.md"
    topic: Topic | None
    error: str | None


@dataclass
class HomeView:
    home: Path
    workspace_id: str | None
    status: WriterStatus
    core: str | None
    sessions: list[SessionView]
    topics: list[TopicView]
    shown: set[str] = field(default_factory=set)  # the session ids drawn (topics are filtered by them)
    # (topic, block id) -> (status, superseded by): every block not listed is current
    currency: dict[tuple[str, str], tuple[Status, str | None]] = field(default_factory=dict)
    index: TopicIndex | None = None  # the topic index, when there is one that reads as one
    index_error: str | None = None  # why `topics/index.md` is not shown, when it is there


def _read(memory: Path, relpath: str) -> bytes | None:
    """A file of the workspace, never through a symlink nor from a FIFO (a planted link would put any file
    of the machine on the page): such a file is logged and read as absent."""
    try:
        return read_below(memory, relpath)
    except NotADirectoryError:
        return None
    except UnsafePath as exc:
        log.warning("not shown: %s", exc)
        return None


def _not_record_reason(node: Node) -> str:
    forgotten = node.metadata.get(FORGOTTEN_KEY)
    if isinstance(forgotten, int | float) and not isinstance(forgotten, bool):
        at = datetime.fromtimestamp(forgotten, UTC).isoformat(timespec="seconds")
        return f"forgotten on {at} (dagmem forget): its text is gone from every copy"
    if node.role in (Role.TOOL, Role.SYSTEM):
        return f"not a record: a {node.role} row"
    if node.metadata.get("display") == "runtime":
        return "not a record: a runtime-scheduled turn"
    if node.metadata.get("rewound"):
        return "not a record: rewound"
    return "not a record: blank text"


def _states(
    nodes: dict[str, Node], children: dict[str, list[str]], workspace_id: str | None
) -> tuple[dict[str, State], dict[str, str]]:
    """Each node's state (DESIGN §3): a record marked for this workspace is written; an unmarked record that
    some tip's walk reaches before a marked one is owed; an unmarked record behind a marked one on every
    branch is stranded (what `verify` calls a violation); everything else is not a record."""
    record = {node_id: is_record_node(node) for node_id, node in nodes.items()}
    marked = {
        node_id: record[node_id] and workspace_id is not None and is_marked(node.metadata, workspace_id)
        for node_id, node in nodes.items()
    }
    owed: set[str] = set()
    seen: set[str] = set()
    for tip in (node_id for node_id in nodes if not children.get(node_id)):
        current: str | None = tip
        while current is not None and current not in seen:
            seen.add(current)
            if record[current]:
                if marked[current]:
                    break
                owed.add(current)
            current = nodes[current].predecessor
    states: dict[str, State] = {}
    reasons: dict[str, str] = {}
    for node_id, node in nodes.items():
        if not record[node_id]:
            states[node_id], reasons[node_id] = "other", _not_record_reason(node)
        elif marked[node_id]:
            states[node_id], reasons[node_id] = "written", f"written: marked for workspace {workspace_id}"
        elif node_id in owed:
            states[node_id] = "owed"
            other = " (another workspace marked it)" if MARKER_KEY in node.metadata else ""
            reasons[node_id] = f"owed: a record no batch of this workspace has written yet{other}"
        else:
            states[node_id] = "stranded"
            reasons[node_id] = "stranded: unmarked, yet older than a marked record on every branch"
    return states, reasons


def _session(store: FileSessionStore, memory: Path, session_id: str, workspace_id: str | None) -> SessionView:
    snapshot = store.load(session_id)
    nodes = snapshot.nodes
    problems = [str(problem) for problem in snapshot.problems]
    drawable = not graph_problems(snapshot.predecessors) and not any(
        node.predecessor is not None and node.predecessor not in nodes for node in nodes.values()
    )
    children: dict[str, list[str]] = {node_id: [] for node_id in nodes}
    if drawable:
        for node in nodes.values():  # seq order: children come out oldest first
            if node.predecessor is not None:
                children[node.predecessor].append(node.id)
        states, reasons = _states(nodes, children, workspace_id)
    else:
        states, reasons = {}, {}
    archive = _read(memory, WorkspacePaths.source_relpath(session_id)) or b""
    frames: dict[str, Frame] = {}
    archive_problem = None
    if archive:
        scan = scan_archive(archive, session_id)
        frames = {frame.node_id: frame for frame in scan.frames}
        if scan.status != "complete":
            archive_problem = f"archive {scan.status} at byte {scan.damage_offset}: {scan.reason}"
    head = snapshot.meta.head if snapshot.meta.head in nodes else None
    shape = SessionShape.from_snapshot(snapshot) if drawable else None
    return SessionView(
        session_id,
        workspace_id,
        nodes,
        head,
        children,
        states,
        reasons,
        frames,
        archive,
        archive_problem,
        problems,
        drawable,
        shape,
        left_nodes(shape) if shape is not None else frozenset(),
    )


def _statuses(
    store: FileSessionStore, memory: Path, views: list[SessionView], topics: list[TopicView]
) -> dict[tuple[str, str], tuple[Status, str | None]]:
    """Each topic block's status for nobody in particular, where it is not current. A session the page
    does not draw is read for its shape when a block cites it (its evidence's nodes from its archive)."""
    drawn = {view.session_id: view for view in views}
    nodes: dict[str, dict[str, str]] = {}  # session -> anchor -> node

    def anchors(session_id: str) -> dict[str, str]:
        if session_id not in nodes:
            view = drawn.get(session_id)
            frames: list[Frame]
            if view is not None:
                frames = list(view.frames.values())
            else:
                data = (
                    _read(memory, WorkspacePaths.source_relpath(session_id))
                    if store.has_session(session_id)
                    else None
                )
                frames = scan_archive(data, session_id).frames if data else []
            nodes[session_id] = {anchor_of(f.source_id): f.node_id for f in frames}
        return nodes[session_id]

    shapes: dict[str, SessionShape | None] = {}

    def shape(session_id: str) -> SessionShape | None:
        if session_id not in shapes:
            view = drawn.get(session_id)
            if view is not None:
                shapes[session_id] = view.shape
            elif store.has_session(session_id):
                snapshot = store.load(session_id)
                shapes[session_id] = SessionShape.from_snapshot(snapshot) if snapshot.valid else None
            else:
                shapes[session_id] = None
        return shapes[session_id]

    blocks: dict[str, Block] = {}
    for topic in topics:
        for block in topic.topic.blocks if topic.topic is not None else ():
            blocks.setdefault(block.id, block)

    def superseded_by(block_id: str) -> str | None:
        found = blocks.get(block_id)
        successor = found.superseded.by if found is not None and found.superseded is not None else None
        return successor if successor in blocks else None  # a dangling successor hides nothing

    def evidence_of(block_id: str) -> list[tuple[str, str | None]]:
        found = blocks.get(block_id)
        refs = [r for c in found.citations for r in c.sources] if found is not None else []
        return [(r.session_id, anchors(r.session_id).get(r.anchor)) for r in refs]

    reader = Reader(shape)
    out: dict[tuple[str, str], tuple[Status, str | None]] = {}
    for topic in topics:
        for block in topic.topic.blocks if topic.topic is not None else ():
            status = resolve(block.id, superseded_by, evidence_of, reader)
            if status[0] != "current":
                out[(topic.path, block.id)] = status
    return out


def _topics(memory: Path) -> list[TopicView]:
    directory = WorkspacePaths(memory).topics
    try:
        if not check_dir(directory):
            return []
    except UnsafePath as exc:
        log.warning("not shown: %s", exc)
        return []
    out: list[TopicView] = []
    for path in sorted(directory.glob("*.md")):
        relpath = f"topics/{path.name}"
        if not is_topic_path(relpath):  # not a topic file: the write pass never reads or writes it
            continue
        try:
            data = read_below(memory, relpath)
            if data is None:
                continue
            out.append(TopicView(relpath, parse_topic(data.decode("utf-8"), relpath), None))
        except (TopicFormatError, UnicodeDecodeError, OSError, UnsafePath) as exc:
            out.append(TopicView(relpath, None, str(exc)))
    return out


def _index(memory: Path) -> tuple[TopicIndex | None, str | None]:
    """(the topic index, why it is not shown) of `topics/index.md`; (None, None) when there is none."""
    data = _read(memory, TOPIC_INDEX)
    if data is None:
        return None, None
    try:
        return parse_topic_index(data.decode("utf-8")), None
    except (TopicFormatError, UnicodeDecodeError) as exc:
        return None, str(exc)


def read_home(home: Path, sessions: Sequence[str] | None = None) -> HomeView:
    """Read `home` for the page (only `sessions` when given). Never writes, never creates a file: the store
    is opened read-only (no sweep of dead writers' temp files) and the workspace id is only read."""
    paths = HomePaths(home).workspace
    memory = paths.root
    workspace_id = read_workspace_id(paths.workspace_id)
    store = FileSessionStore(home, read_only=True)
    wanted = list(sessions) if sessions else store.session_ids()
    views: list[SessionView] = []
    for session_id in wanted:
        if sessions and not store.has_session(session_id):
            raise UnknownSession(session_id)
        views.append(_session(store, memory, session_id, workspace_id))
    core = _read(memory, CORE_FILE)
    topics = _topics(memory)
    index, index_error = _index(memory)
    return HomeView(
        home=home,
        workspace_id=workspace_id,
        status=load_status(paths.status),
        core=None if core is None else core.decode("utf-8", "replace"),
        sessions=views,
        topics=topics,
        shown={view.session_id for view in views},
        currency=_statuses(store, memory, views, topics),
        index=index,
        index_error=index_error,
    )
