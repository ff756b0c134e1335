"""`dagmem forget`: remove turns from every copy a home keeps, as one crash-safe operation, and prove it.

The targets (source ids) and the hashes of every form of their texts go into `forgotten.json` first
(fsynced, under the workspace lock), as an entry not `done`. Then, each step idempotent:

1. node files: content replaced by a tombstone (`metadata.forgotten_at`; role, id, predecessor, times,
   markers stay);
2. archives: one atomic rewrite per session, each frame of a target replaced by a tombstone frame that
   keeps its source id (appended for a target never archived, so no later append archives its text);
3. topics: blocks citing only forgotten evidence removed, others re-distilled from what they keep, and
   `core.md` re-rendered, as one transaction (txlog line, stage, moves);
4. git: each session repository's history rewritten with the tombstones, everything unreachable pruned;
5. caches: the recall index deleted and rebuilt from the files, stages finished, SQLite vacuumed;
6. the scan of every byte under the home; then the entry is marked `done`.

A crash anywhere leaves the entry not done: a rerun, `Runtime.open` or `dagmem write` finishes it (the
targets are ids, so nothing needs the texts again; the final scan uses the hashes). The whole forget holds
the workspace lock, so a writer in another process that read a turn before it was forgotten cannot
install it after: under the lock its transaction finds the source forgotten and is retried from the
tombstones."""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import faults
from ..durable import read_regular
from ..errors import InvalidInput, UnknownSession
from ..format import (
    CORE_FILE,
    CORE_MASTER,
    FORGOTTEN_KEY,
    ForgetEntry,
    HomePaths,
    Node,
    check_id,
)
from ..store import FileSessionStore, rewrite_history
from ..workspace import Workspace
from ..write import core_after
from ._forms import MIN_BYTES, hashes, name_forms, subject_slugs
from ._scan import Copy, Needles, scan_home
from ._topics import rewrite_topics

__all__ = [
    "ForgetPlan",
    "ForgetReport",
    "finish_pending",
    "forget",
    "forgotten_check",
    "plan_forget",
    "verify_forgotten",
]

log = logging.getLogger("dagmem.forget")

_LOCK_WAIT_S = 120.0  # a forget waits for the writer's installs, which are short
_TXLOG_TOPIC = re.compile(rb"topics/([a-z0-9][a-z0-9-]{0,63})\.md")


@dataclass(frozen=True)
class ForgetPlan:
    """What a forget would remove. `texts` stay in memory: they are hashed, never written."""

    targets: tuple[str, ...]  # source ids, sorted
    texts: tuple[str, ...] = field(repr=False)
    blocks: tuple[str, ...]  # "<topic relpath>#<block id>" citing a target
    files: tuple[str, ...]  # home-relative files that change
    # `--match` texts under `MIN_BYTES`: removed with their turns, but too short to scan for on their own
    # (the turns that hold them and the topic names they give are scanned for).
    too_short: tuple[str, ...] = field(default=(), repr=False)

    def as_json(self) -> dict[str, Any]:
        return {
            "targets": list(self.targets),
            "blocks": list(self.blocks),
            "files": list(self.files),
            "unscanned": len(self.too_short),
        }


@dataclass
class ForgetReport:
    targets: list[str] = field(default_factory=list)
    blocks_removed: list[str] = field(default_factory=list)
    blocks_redistilled: list[str] = field(default_factory=list)
    topics_renamed: dict[str, str] = field(default_factory=dict)  # a topic named after a forgotten text
    git_rewritten: list[str] = field(default_factory=list)  # sessions whose history was rewritten
    copies: list[Copy] = field(default_factory=list)  # what the final scan still found
    seconds: float = 0.0

    @property
    def clean(self) -> bool:
        return not self.copies

    def as_json(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "targets": self.targets,
            "blocks_removed": self.blocks_removed,
            "blocks_redistilled": self.blocks_redistilled,
            "topics_renamed": self.topics_renamed,
            "git_rewritten": self.git_rewritten,
            "copies": [{"where": c.where, "offset": c.offset} for c in self.copies],
            "seconds": round(self.seconds, 3),
        }


def _forgotten(node: Node) -> bool:
    return node.metadata.get(FORGOTTEN_KEY) is not None and not node.content


def plan_forget(
    home: Path | str,
    *,
    node: str | None = None,
    session: str | None = None,
    match: str | None = None,
    regex: bool = False,
) -> ForgetPlan:
    """Resolve exactly one of `node` ("<sid>/<node_id>"), `session` or `match` (literal, or a Python
    regular expression with `regex`) to the turns it names; `InvalidInput` for a bad argument. Reads only."""
    if sum(x is not None for x in (node, session, match)) != 1:
        raise InvalidInput("give exactly one of --node, --session, --match")
    home = Path(home)
    store = FileSessionStore(home, read_only=True)
    targets: list[str] = []
    texts: list[str] = []
    named: set[str] = set()  # texts whose own name is forgotten whether or not a topic has it yet
    if node is not None:
        sid, slash, nid = node.partition("/")
        if not slash:
            raise InvalidInput(f"--node {node!r}: expected <session>/<node>")
        check_id(sid, "session id")
        check_id(nid, "node id")
        if not store.has_session(sid):
            raise UnknownSession(sid)
        nodes = store.load(sid).nodes
        if nid not in nodes:
            raise InvalidInput(f"session {sid!r} has no node {nid!r}")
        if not _forgotten(nodes[nid]):
            targets.append(f"{sid}/{nid}")
            texts.append(nodes[nid].content)
    elif session is not None:
        check_id(session, "session id")
        if not store.has_session(session):
            raise UnknownSession(session)
        for nid, item in sorted(store.load(session).nodes.items()):
            if item.content and not _forgotten(item):
                targets.append(f"{session}/{nid}")
                texts.append(item.content)
    else:
        assert match is not None
        if not match:
            raise InvalidInput("--match needs a non-empty text")
        named.add(match)
        try:
            pattern = re.compile(match if regex else re.escape(match))
        except re.error as exc:
            raise InvalidInput(f"--regex {match!r}: {exc}") from None
        found: set[str] = set() if regex else {match}
        for sid in store.session_ids():
            for nid, item in sorted(store.load(sid).nodes.items()):
                hits = [m.group(0) for m in pattern.finditer(item.content) if m.group(0)]
                if hits and not _forgotten(item):
                    targets.append(f"{sid}/{nid}")
                    texts.append(item.content)
                    found.update(hits)
        texts.extend(sorted(found))
        named.update(found)
    short = tuple(sorted({t for t in named if len(t.encode("utf-8", "surrogatepass")) < MIN_BYTES}))
    names = _derived_names(home, store, targets, texts, named)
    return _plan(home, targets, [*texts, *name_forms(names)], short)


def _topic_names(home: Path) -> set[str]:
    """Every topic name the home holds or has held: its topic files, and the paths its txlog names."""
    workspace = HomePaths(home).workspace
    found = {path.stem for path in workspace.topics.glob("*.md")}
    data = read_regular(workspace.txlog) or b""
    found.update(m.decode() for m in _TXLOG_TOPIC.findall(data))
    return {name.partition("--")[0] for name in found}


def _derived_names(
    home: Path, store: FileSessionStore, targets: list[str], texts: list[str], named: set[str]
) -> set[str]:
    """The topic names that are copies of the forgotten texts: a name derived from one (a word or a name
    it says: what topics are named after) that a topic has or had, or that a `--match` text itself
    takes, and that no turn the forget keeps could have given (then the word is still said there, and
    the name is that turn's as much)."""
    if not targets:
        return set()
    derived: set[str] = set()
    for text in texts:
        derived |= subject_slugs(text)
    derived &= _topic_names(home) | {slug for text in named for slug in subject_slugs(text)}
    if not derived:
        return derived
    forgotten = set(targets)
    for sid in store.session_ids():
        for nid, item in store.load(sid).nodes.items():
            if item.content and f"{sid}/{nid}" not in forgotten and not _forgotten(item):
                derived -= subject_slugs(item.content)
                if not derived:
                    return derived
    return derived


def _plan(home: Path, targets: list[str], texts: list[str], short: tuple[str, ...] = ()) -> ForgetPlan:
    paths = HomePaths(home)
    changes = rewrite_topics(paths.workspace, targets, Needles(hashes(texts)))
    workspace = paths.workspace

    def rel(path: Path) -> str:
        return path.relative_to(home).as_posix()

    files: set[str] = set()
    for source in targets:
        sid = source.partition("/")[0]
        files.update({rel(paths.session(sid) / "history"), rel(workspace.source(sid))})
        if (paths.session(sid) / ".git").is_dir():
            files.add(rel(paths.session(sid) / ".git"))
    files.update(rel(workspace.root / relpath) for relpath in changes.files)
    if CORE_MASTER in changes.files:
        files.add(rel(workspace.core))
    if targets:
        files.update({rel(workspace.index), rel(workspace.recall), rel(workspace.slots)})
    if changes.renamed:
        files.add(rel(workspace.txlog))  # the old topic names in its lines
    blocks = sorted({*changes.removed, *changes.redistilled})
    return ForgetPlan(tuple(sorted(targets)), tuple(texts), tuple(blocks), tuple(sorted(files)), short)


def forget(
    home: Path | str,
    plan: ForgetPlan,
    *,
    fsync: bool = True,
    clock: Callable[[], float] = time.time,
    workspace: Workspace | None = None,
) -> ForgetReport:
    """Remove the plan's turns from every copy under `home`; the report names any copy the final scan
    still found (then it is not clean). Forgetting nothing (again) changes nothing. `workspace`: the
    home's, when its opener holds it open (the runtime's writer); else one is opened for the forget."""
    home = Path(home)
    report = finish_pending(home, fsync=fsync, workspace=workspace)
    if not plan.targets:
        return report
    started = time.monotonic()
    with _opened(home, workspace, fsync=fsync, clock=clock) as held, held.lock(_LOCK_WAIT_S):
        entries = held.forgotten()
        entry = ForgetEntry(clock(), plan.targets, tuple(hashes(plan.texts)))
        faults.hit("forget:journal")
        held.save_forgotten([*entries, entry])
        report = _finish(home, held, len(entries), entry, fsync=fsync)
    report.seconds = time.monotonic() - started
    return report


def finish_pending(
    home: Path | str, *, fsync: bool = True, workspace: Workspace | None = None
) -> ForgetReport:
    """Finish every forget a crash left part done (an entry of `forgotten.json` not `done`). `workspace`:
    as for `forget`."""
    home = Path(home)
    report = ForgetReport()
    if not HomePaths(home).workspace.forgotten.exists():
        return report
    with _opened(home, workspace, fsync=fsync) as held, held.lock(_LOCK_WAIT_S):
        for number, entry in enumerate(held.forgotten()):
            if not entry.done:
                log.warning("finishing a forget of %d turns left by a crash", len(entry.sources))
                report = _finish(home, held, number, entry, fsync=fsync)
    return report


@contextlib.contextmanager
def _opened(
    home: Path, workspace: Workspace | None, *, fsync: bool, clock: Callable[[], float] = time.time
) -> Iterator[Workspace]:
    """The workspace a forget works in: the one given, or the home's, opened for the forget and closed
    after; its install hook set aside meanwhile (step 5 rebuilds the recall index from the files)."""
    with contextlib.ExitStack() as stack:
        if workspace is None:
            memory = HomePaths(home).memory
            workspace = stack.enter_context(
                Workspace(memory, fsync=fsync, clock=clock, lock_timeout=_LOCK_WAIT_S)
            )
        hook, workspace.on_install = workspace.on_install, None
        try:
            yield workspace
        finally:
            workspace.on_install = hook


def _by_session(sources: Iterable[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for source in sources:
        sid, _, nid = source.partition("/")
        grouped.setdefault(sid, []).append(nid)
    return grouped


def _finish(
    home: Path, workspace: Workspace, number: int, entry: ForgetEntry, *, fsync: bool
) -> ForgetReport:
    """Every step of one forget, under the workspace lock; each is a no-op when already done."""
    paths = HomePaths(home)
    store = FileSessionStore(home, fsync=fsync)
    report = ForgetReport(targets=list(entry.sources))
    sessions = _by_session(entry.sources)
    for sid, nids in sessions.items():
        if not store.has_session(sid):
            continue
        snapshot = store.load(sid)
        present = [nid for nid in nids if nid in snapshot.nodes]
        faults.hit("forget:nodes")
        store.tombstone(sid, present, entry.at)
        heads = {
            nid: (str(snapshot.nodes[nid].role), snapshot.nodes[nid].seq, snapshot.nodes[nid].created_at)
            for nid in present
        }
        faults.hit("forget:archive")
        workspace.tombstone_archive(sid, heads, entry.at)
    changes = rewrite_topics(paths.workspace, entry.sources, Needles(entry.texts))
    report.blocks_removed, report.blocks_redistilled = changes.removed, changes.redistilled
    report.topics_renamed = changes.renamed
    if changes.files:
        files = dict(changes.files)
        if CORE_MASTER in files:
            master = files[CORE_MASTER]
            files[CORE_FILE] = None if master is None else core_after(workspace, files, master)
        faults.hit("forget:topics")
        workspace.install(next(iter(sessions)), [], files)
    needles = Needles(entry.texts)
    faults.hit("forget:txlog")
    workspace.rename_in_txlog(lambda path: needles.find(path.encode()) is not None)
    for sid, nids in sessions.items():
        root = paths.session(sid)
        if not (root / ".git").is_dir() or not store.has_session(sid):
            continue
        snapshot = store.load(sid)
        replace = {
            snapshot.nodes[nid].relpath: snapshot.nodes[nid].to_json()
            for nid in nids
            if nid in snapshot.nodes
        }
        with store.session_lock(sid):  # no commit of this session meanwhile
            rewrite_history(root, replace)
        report.git_rewritten.append(sid)
    _purge_caches(workspace, fsync=fsync)
    report.copies = scan_home(home, Needles(entry.texts))
    entries = workspace.forgotten()
    entries[number] = ForgetEntry(entry.at, entry.sources, entry.texts, done=True)
    faults.hit("forget:done")
    workspace.save_forgotten(entries)
    return report


def _purge_caches(workspace: Workspace, *, fsync: bool) -> None:
    """Stages finished, the recall index rebuilt from the files (every snapshot and delta of the old one
    deleted first), the SQLite index vacuumed."""
    workspace.recover(full=True)
    # The slot index names the subjects of the blocks it lists: deleted, it is rebuilt from the files.
    for path in (
        workspace.paths.slots,
        workspace.paths.slots.with_name(workspace.paths.slots.name + "-journal"),
    ):
        path.unlink(missing_ok=True)
    faults.hit("forget:recall")
    shutil.rmtree(workspace.paths.recall, ignore_errors=True)
    from ..recall import compact  # the read side (numpy, the embedding model) only when a forget runs

    compact(workspace.root, fsync=fsync)
    faults.hit("forget:vacuum")
    workspace.vacuum_index()


def forgotten_check(home: Path | str) -> Callable[[str], bool] | None:
    """A test of a text against every forget of `home` (None when nothing was forgotten): True when the
    text holds a form of a forgotten text, so an import stores a tombstone instead of bringing it back
    (a resumed or forked copy of a transcript holds the same lines under another session id).
    `ForgottenCorrupt` for a damaged journal: what was forgotten is then unknown, and nothing is imported."""
    from ..format import ForgottenCorrupt, parse_forgotten

    paths = HomePaths(Path(home)).workspace
    data = read_regular(paths.forgotten)
    if data is None:
        return None
    try:
        entries = parse_forgotten(data)
    except ValueError as exc:
        raise ForgottenCorrupt(paths.forgotten, str(exc)) from None
    needles = Needles(text for entry in entries for text in entry.texts)
    if not needles:
        return None
    return lambda text: needles.find(text.encode("utf-8", "surrogatepass")) is not None


def verify_forgotten(home: Path | str) -> list[Copy]:
    """Where any form of any forgotten text is still found under `home` (`dagmem verify --forgotten`)."""
    paths = HomePaths(Path(home)).workspace
    from ..durable import read_regular
    from ..format import ForgottenCorrupt, parse_forgotten

    data = read_regular(paths.forgotten)
    if data is None:
        return []
    try:
        entries = parse_forgotten(data)
    except ValueError as exc:
        raise ForgottenCorrupt(paths.forgotten, str(exc)) from None
    texts = [text for entry in entries for text in entry.texts]
    return scan_home(Path(home), Needles(texts))
