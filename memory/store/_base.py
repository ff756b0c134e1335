"""The session store: sessions as DAGs of node files (DESIGN §2), on disk or in memory.

One class holds the logic; a small backend does the I/O. `FileSessionStore` writes real files (temp +
fsync + rename + directory fsync, optional git); `MemorySessionStore` keeps the same bytes in dicts for
the simulator's speed. The shared test suite runs against both.

Appends are O(1): each session's id index (id -> file) is read once per process from the file names and
kept. Writers take the session's lock (an `flock` on `sessions/<sid>/.lock`, which the kernel releases
when a process dies), so two processes appending to one session take turns; a store that finds the
session changed by another since it last wrote reads its index again under the lock. Node files are
created exclusively: an existing file (a host's node not announced yet) is never overwritten. `load()`
always re-reads from storage. An import appends a run of one session's turns with `append_many`: the
session's lock is taken once for the run, and each turn goes through the one core `append` uses."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .. import faults
from ..errors import InvalidInput, SessionInvalid, UnknownNode, UnknownSession
from ..format import (
    FORGOTTEN_KEY,
    GIT_KEY,
    HEAD,
    ORIGIN_KEY,
    SPAWNED_KEY,
    BranchInfo,
    GitContext,
    HeadType,
    Node,
    Problem,
    Role,
    SessionMeta,
    SessionSnapshot,
    Tip,
    check_id,
    check_metadata,
    graph_problems,
    is_valid_id,
    parse_node,
    parse_node_filename,
    shard_of,
    walk_branch,
)
from ._turns import RESERVED_METADATA_KEYS, WRITTEN_BY_DAGMEM, Turn

__all__ = ["RESERVED_METADATA_KEYS", "SessionStore", "Turn"]

Clock = Callable[[], float]


def _check_turn(turn: object) -> None:
    if not isinstance(turn, Turn):  # a `Turn` was checked when it was made: anything else never was
        raise InvalidInput(f"a turn must be a dagmem.Turn, not {type(turn).__name__}")


def _nothing() -> None:
    return None


class _Held(Protocol):
    """A held session lock: the generation found in it (None: nothing else can change the session)."""

    generation: int | None

    def bump(self) -> None: ...


class _Backend(Protocol):
    """Raw storage of one home's `sessions/` tree; paths are relative to a session's directory. `read`,
    `write` and `lock` raise `SessionInvalid` for a symlink or a non-regular file in the session."""

    def sessions(self) -> list[str]: ...
    def exists(self, sid: str) -> bool: ...
    def unsafe(self, sid: str) -> tuple[Path, str] | None: ...
    def read(self, sid: str, relpath: str) -> bytes | None: ...
    def history(self, sid: str) -> list[str]: ...
    def lock(self, sid: str) -> AbstractContextManager[_Held]: ...
    def write(
        self, sid: str, items: list[tuple[str, bytes]], site: str, *, exclusive: bool = False
    ) -> None: ...
    def remove(self, sid: str, relpath: str) -> None: ...
    def commit(self, sid: str, relpaths: list[str], message: str) -> None: ...
    def path(self, sid: str, relpath: str = "") -> Path: ...
    def sweep(self, sid: str) -> list[Path]: ...


@dataclass
class _Live:
    """What the store keeps per session between calls: meta, id -> relpath, the highest seq."""

    meta: SessionMeta
    index: dict[str, str]
    max_seq: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    generation: int | None = -1  # of the session lock when this was last in step with storage; -1: never


def _json_copy(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A rewrite of metadata read from a node file (a mark): kept as JSON had it, never refused for what a
    host's file already holds (a NaN, deep nesting), or the batch could never be marked."""
    try:
        return dict(json.loads(json.dumps(dict(metadata), ensure_ascii=False)))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"metadata must be JSON-serialisable: {exc}") from None


class SessionStore:
    """Sessions as DAGs. Every mutating call validates first and writes nothing on bad input."""

    #: True when calls do blocking file I/O (async callers should run them in a worker thread).
    blocking: bool = True

    def __init__(self, backend: _Backend, *, clock: Clock = time.time) -> None:
        self._backend = backend
        self._clock = clock
        self._live: dict[str, _Live] = {}
        self._guard = threading.Lock()
        self._swept: set[str] = set()
        self._read_only = False
        # Inside a bulk run (`FileSessionStore.bulk`): the sessions whose meta.json an append left to the
        # run's next flush; None outside one.
        self._deferred: dict[str, _Live] | None = None

    # -- reading ---------------------------------------------------------------------------------------

    def session_ids(self) -> list[str]:
        """Every session directory name, sorted (invalid names included: `load` reports them)."""
        return sorted(self._backend.sessions())

    def has_session(self, session_id: str) -> bool:
        return is_valid_id(session_id) and self._backend.exists(session_id)

    def path(self, session_id: str, relpath: str = "") -> Path:
        return self._backend.path(session_id, relpath)

    def load(self, session_id: str) -> SessionSnapshot:
        """Read a whole session from storage. Malformed files are skipped and reported in `problems`,
        each with its path; they never raise."""
        if not is_valid_id(session_id):
            return SessionSnapshot(
                session_id,
                SessionMeta(id=session_id, created_at=0.0, updated_at=0.0),
                {},
                [Problem(self._backend.path(session_id), "session directory name is not a valid id")],
            )
        if not self._backend.exists(session_id):
            raise UnknownSession(session_id)
        unsafe = self._backend.unsafe(session_id)
        if unsafe is not None:  # nothing is read through a symlink: the session is refused as it is
            return SessionSnapshot(
                session_id, SessionMeta(id=session_id, created_at=0.0, updated_at=0.0), {}, [Problem(*unsafe)]
            )
        self._sweep_once(session_id)
        problems: list[Problem] = []
        # meta.json first: an append writes the node file before meta.json, so a head read now is among
        # the node files listed next, even while another process appends to the session.
        try:
            meta_data = self._backend.read(session_id, "meta.json")
        except SessionInvalid as exc:
            problems.append(Problem(exc.path or self.path(session_id, "meta.json"), exc.reason))
            meta_data = None
        nodes: list[Node] = []
        seen: dict[str, str] = {}
        for relpath in self._backend.history(session_id):
            node = self._read_node_file(session_id, relpath, problems)
            if node is None:
                continue
            if node.id in seen:
                problems.append(Problem(self.path(session_id, relpath), f"duplicate node id {node.id!r}"))
                continue
            seen[node.id] = relpath
            nodes.append(node)
        nodes.sort(key=lambda n: (n.seq, n.id))
        by_id = {node.id: node for node in nodes}
        for node_id, reason in graph_problems({n.id: n.predecessor for n in nodes}):
            problems.append(Problem(self.path(session_id, seen[node_id]), reason))
        meta = self._read_meta(session_id, by_id, problems, meta_data)
        return SessionSnapshot(session_id, meta, by_id, problems)

    def _read_node_file(self, sid: str, relpath: str, problems: list[Problem]) -> Node | None:
        parts = relpath.split("/")
        parsed = parse_node_filename(parts[-1]) if len(parts) == 3 else None
        if parsed is None:
            problems.append(
                Problem(
                    self.path(sid, relpath), "not a node file name (history/<shard>/<seq:06d>-<r>-<id>.json)"
                )
            )
            return None
        try:
            data = self._backend.read(sid, relpath)
        except SessionInvalid as exc:  # a FIFO or a symlink: never opened, never followed
            problems.append(Problem(exc.path or self.path(sid, relpath), exc.reason))
            return None
        if data is None:
            return None  # removed between listing and reading
        node, reason = parse_node(data)
        if node is None:
            problems.append(Problem(self.path(sid, relpath), reason or "malformed node"))
            return None
        seq, role, node_id = parsed
        mismatch = [
            what
            for what, ok in (
                ("id", node.id == node_id),
                ("seq", node.seq == seq),
                ("role letter", node.role == role),
                ("shard", parts[1] == shard_of(node.seq)),
            )
            if not ok
        ]
        if mismatch:
            problems.append(
                Problem(self.path(sid, relpath), f"file name disagrees with its JSON ({', '.join(mismatch)})")
            )
            return None
        return node

    def _read_meta(
        self, sid: str, nodes: Mapping[str, Node], problems: list[Problem], data: bytes | None
    ) -> SessionMeta:
        meta: SessionMeta | None = None
        if data is not None:
            try:
                meta = SessionMeta.from_json(data)
            except ValueError as exc:
                problems.append(Problem(self.path(sid, "meta.json"), f"malformed meta.json: {exc}"))
            else:
                if meta.id != sid:
                    problems.append(
                        Problem(self.path(sid, "meta.json"), f"meta id {meta.id!r} is not {sid!r}")
                    )
                if meta.head is not None and meta.head not in nodes:
                    problems.append(
                        Problem(
                            self.path(sid, "meta.json"), f"head {meta.head!r} is not a node of the session"
                        )
                    )
        if meta is None:
            # A crash between the first node file and meta.json leaves no meta: derive it.
            times = [node.created_at for node in nodes.values()] or [0.0]
            meta = SessionMeta(id=sid, created_at=min(times), updated_at=max(times))
        return meta

    def meta(self, session_id: str) -> SessionMeta:
        return self._get_live(session_id).meta.model_copy(deep=True)

    def head(self, session_id: str) -> str | None:
        return self._get_live(session_id).meta.head

    def read_nodes(self, session_id: str, node_ids: Iterable[str]) -> list[Node]:
        """The named nodes, read fresh from storage, in the order asked; O(len(node_ids))."""
        live = self._get_live(session_id)
        nodes = []
        for node_id in node_ids:
            relpath = live.index.get(node_id)
            if relpath is None:
                # Another process may have appended it since this one indexed the session (a host that
                # appends while `dagmem write` marks): look at the files again before calling it unknown.
                live.max_seq = max(live.max_seq, self._index_files(session_id, live.index))
                relpath = live.index.get(node_id)
            data = None if relpath is None else self._backend.read(session_id, relpath)
            node = None if data is None else parse_node(data)[0]
            if node is None:
                raise UnknownNode(session_id, node_id)
            nodes.append(node)
        return nodes

    def tips(self, session_id: str) -> list[Tip]:
        return self.load(session_id).tips()

    def branch(self, session_id: str, tip: str) -> list[Node]:
        """Root to `tip`, oldest first; a cycle or missing predecessor raises `BrokenChain`."""
        snapshot = self.load(session_id)
        if tip not in snapshot.nodes:
            raise UnknownNode(session_id, tip)
        return snapshot.branch(tip)

    # -- writing ---------------------------------------------------------------------------------------

    def bulk(self, *, flush_every: int = 1000) -> AbstractContextManager[None]:
        """A block of writes made durable together (`FileSessionStore.bulk`); a store with no fsync per
        write to spare does nothing."""
        return nullcontext()

    def append(
        self,
        session_id: str,
        role: Role | str,
        content: str,
        *,
        predecessor: str | HeadType | None = HEAD,
        node_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        spawned: bool = False,
        spawned_from: str | None = None,
        origin: str | None = None,
        git: GitContext | Mapping[str, Any] | None = None,
    ) -> Node:
        """Add a node: `append_turn` with the `Turn`'s fields as arguments (their meaning is the
        `Turn`'s). `predecessor=HEAD` appends after the head, `None` starts a new root, an id forks there.
        The head moves to the new node (in the same write of `meta.json`), unless `spawned`: a side branch
        (a sub-agent's turns), recorded as `metadata["spawned"]`, that leaves the head where it was."""
        check_id(session_id, "session id")
        turn = Turn(
            role,
            content,
            predecessor=predecessor,
            node_id=node_id,
            metadata=metadata,
            spawned=spawned,
            spawned_from=spawned_from,
            origin=origin,
            git=git,
        )
        return self.append_turn(session_id, turn)

    def append_turn(self, session_id: str, turn: Turn) -> Node:
        """Add `turn`'s node (see `append`). `spawned_from` is kept in `meta.json`: given at a session's
        first append, and later only with the same value."""
        check_id(session_id, "session id")
        _check_turn(turn)
        live = self._live_for(session_id, turn)
        with live.lock, self._writing(session_id, live, changes_view=True) as changing:
            return self._add(session_id, live, turn, changing)

    def append_many(
        self,
        session_id: str,
        turns: Iterable[Turn],
        *,
        on_outcome: Callable[[Turn, Node | InvalidInput], None] | None = None,
    ) -> list[Node | InvalidInput]:
        """Append turns to one session, in order, each exactly as `append_turn` would (the same node
        files, head moves, refusals and no-op for a turn already there), holding the session's lock once
        for all. A turn refused with `InvalidInput` (a fork at a node the session lacks, another turn at
        its id) is refused alone: that error is its outcome and the next turn is taken. `SessionInvalid`
        (the session on disk is not one dagmem writes to) and any other error end the call, the turns
        before it done. Turns are taken one at a time and `on_outcome(turn, outcome)` is called before
        the next is taken, so a caller can make a refused turn's children follow its predecessor. Returns
        each turn's outcome (its node, or why it was refused)."""
        check_id(session_id, "session id")
        outcomes: list[Node | InvalidInput] = []
        with ExitStack() as held:
            live: _Live | None = None
            changing: Callable[[], None] = _nothing
            for turn in turns:
                _check_turn(turn)
                outcome: Node | InvalidInput
                try:
                    if live is None:
                        # The lock (which creates the session's directory) is taken for the first turn
                        # that is not refused: a call whose every turn is refused creates nothing.
                        live = self._live_for(session_id, turn)
                        held.enter_context(live.lock)
                        changing = held.enter_context(self._writing(session_id, live, changes_view=True))
                    else:
                        self._check_fork(session_id, live, turn)
                    outcome = self._add(session_id, live, turn, changing)
                except SessionInvalid:
                    raise
                except InvalidInput as refused:
                    outcome = refused
                outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(turn, outcome)
                self._between_turns()
        return outcomes

    def _between_turns(self) -> None:
        """Called between the turns of `append_many`, each turn whole (a bulk run's flush may fall here)."""

    def _live_for(self, session_id: str, turn: Turn) -> _Live:
        """The session's state to append `turn` to (made if the session is new); a fork in a session that
        does not exist is `UnknownNode`, and no session is created for it."""
        live = self._get_live(session_id, create=True)
        self._check_fork(session_id, live, turn)
        return live

    def _check_fork(self, session_id: str, live: _Live, turn: Turn) -> None:
        if isinstance(turn.predecessor, str) and not live.index and not self._backend.exists(session_id):
            raise UnknownNode(session_id, turn.predecessor)  # no session to fork in, and none is created

    def _add(self, session_id: str, live: _Live, turn: Turn, changing: Callable[[], None]) -> Node:
        """One append, the session's lock held (`append`, `append_many`): its node file, then the head
        move and `updated_at` in meta.json (written now, or left to a bulk run's flush)."""
        predecessor, node_id, spawned_from = turn.predecessor, turn.node_id, turn.spawned_from
        metadata = turn.node_metadata()
        while True:
            parent = live.meta.head if predecessor is HEAD else predecessor
            assert not isinstance(parent, HeadType)
            if spawned_from is not None and spawned_from != live.meta.spawned_from and live.index:
                raise InvalidInput(
                    f"spawned_from is given at a session's first append: session {session_id!r} "
                    + (
                        f"was spawned from {live.meta.spawned_from!r}"
                        if live.meta.spawned_from is not None
                        else "was not spawned from another"
                    )
                )
            if node_id is not None and node_id in live.index:
                # A retried append (Ray retries a task at least once): the same turn is a no-op.
                return self._same_turn(session_id, node_id, turn)
            if parent is not None and parent not in live.index:
                raise UnknownNode(session_id, parent)
            now = self._clock()
            node = Node(
                id=self._new_id(live) if node_id is None else node_id,
                seq=live.max_seq + 1,
                role=turn.role,
                content=turn.content,
                predecessor=parent,
                created_at=now,
                metadata=metadata,
            )
            relpath = node.relpath
            changing()
            try:
                self._backend.write(session_id, [(relpath, node.to_json())], "node", exclusive=True)
            except FileExistsError:
                # A file this store was not told of has that name (a host's node, not announced
                # yet): it is never overwritten. Read the names again and take the next seq (each
                # round raises it past the file that collided).
                self._refresh(session_id, live)
                continue
            break
        # A shallow copy: `branches` is shared with the old meta, which no one mutates (an annotation
        # copies deeply before it edits). The head move is part of this one write of meta.json.
        update: dict[str, Any] = {"head": live.meta.head if turn.spawned else node.id, "updated_at": now}
        if spawned_from is not None:
            update["spawned_from"] = spawned_from
        meta = live.meta.model_copy(update=update)
        deferred = self._deferred
        if deferred is not None:
            # A bulk run writes meta.json once per flush, not per node: until then it names an
            # earlier head (a node on disk) and time, so a crash leaves the session valid.
            with self._guard:
                deferred[session_id] = live
        else:
            try:
                self._backend.write(session_id, [("meta.json", meta.to_json())], "meta")
            except faults.InjectedCrash:
                raise  # a 'dead' process undoes nothing
            except BaseException:
                # An append that raises leaves nothing: its node file would be a turn the host was
                # told failed (and retries), or a tip no one knows of, written later all the same.
                self._backend.remove(session_id, relpath)
                raise
        live.index[node.id] = relpath
        live.max_seq = node.seq
        live.meta = meta
        self._backend.commit(
            session_id, [relpath, "meta.json"], f"turn {node.seq}: {turn.role.value} {node.id}"
        )
        return node

    def write_deferred_meta(self) -> None:
        """Write the meta.json each append of a bulk run left for its flush (the session's lock is still
        held for the run's window, `FileSessionStore.bulk`). Meta objects are replaced, never mutated, so
        reading `live.meta` without the session's lock sees one whole state."""
        with self._guard:
            deferred = self._deferred
            if not deferred:
                return
            todo, self._deferred = list(deferred.items()), {}
        for sid, live in todo:
            self._backend.write(sid, [("meta.json", live.meta.to_json())], "meta")

    def catch_up(self, session_id: str) -> bool:
        """Finish what a crash between an append's node file and its meta.json left (a bulk run writes
        meta.json once per flush): `updated_at` becomes the time of the session's last-appended node (the
        highest seq), as that append would have written. A session in step is left alone; True when
        meta.json was rewritten. One node file read. (The head is the caller's: an import moves it
        to its source's leaf.)"""
        live = self._get_live(session_id)
        with live.lock, self._writing(session_id, live, changes_view=True) as changing:
            last = self._last_node(session_id, live)
            if last is None or last.created_at == live.meta.updated_at:
                return False
            meta = live.meta.model_copy(update={"updated_at": last.created_at})
            changing()
            self._backend.write(session_id, [("meta.json", meta.to_json())], "meta")
            live.meta = meta
            self._backend.commit(session_id, ["meta.json"], f"catch up: {last.id}")
            return True

    def _last_node(self, sid: str, live: _Live) -> Node | None:
        """The node with the highest seq (the last appended), read from its file."""
        return self._node_at_seq(sid, live.index, live.max_seq)

    def _node_at_seq(self, sid: str, index: Mapping[str, str], seq: int) -> Node | None:
        prefix = f"{seq:06d}-"
        for relpath in index.values():  # in memory; one file read
            if relpath.rsplit("/", 1)[-1].startswith(prefix):
                data = self._backend.read(sid, relpath)
                node = None if data is None else parse_node(data)[0]
                if node is not None and node.seq == seq:
                    return node
        return None

    def _same_turn(self, session_id: str, node_id: str, turn: Turn) -> Node:
        """The node `node_id` exists: it is this append's, done before, when role, content, metadata and
        the predecessor (unless `HEAD`, which has moved on since) match; otherwise `InvalidInput`."""
        (existing,) = self.read_nodes(session_id, [node_id])
        metadata = turn.node_metadata()
        spawned = metadata.pop(SPAWNED_KEY, False)
        origin = metadata.pop(ORIGIN_KEY, None)
        metadata.pop(GIT_KEY, None)  # read from a checkout at each try: a retry may see a newer commit
        theirs = {k: v for k, v in existing.metadata.items() if k not in WRITTEN_BY_DAGMEM}
        differs = [
            what
            for what, same in (
                ("role", existing.role == turn.role),
                ("content", existing.content == turn.content),
                ("predecessor", turn.predecessor is HEAD or existing.predecessor == turn.predecessor),
                ("metadata", theirs == metadata),
                ("spawned", (existing.metadata.get(SPAWNED_KEY) is True) == spawned),
                ("origin", existing.metadata.get(ORIGIN_KEY) == origin),
            )
            if not same
        ]
        if differs:
            raise InvalidInput(
                f"session {session_id!r} already has a node {node_id!r} with another {', '.join(differs)}"
            )
        return existing

    @staticmethod
    def _new_id(live: _Live) -> str:
        # Derived from the seq, so ids are deterministic (the simulator replays traces from a seed).
        base = f"n{live.max_seq + 1}"
        candidate, k = base, 1
        while candidate in live.index:
            k += 1
            candidate = f"{base}-{k}"
        return candidate

    def set_head(self, session_id: str, node_id: str | None) -> None:
        """Move the head (None: no head). Does not change `updated_at`."""
        if node_id is not None:
            check_id(node_id, "node id")
        live = self._get_live(session_id)
        with live.lock, self._writing(session_id, live, changes_view=True) as changing:
            if node_id is not None and node_id not in live.index:
                raise UnknownNode(session_id, node_id)
            meta = live.meta.model_copy(update={"head": node_id})  # shallow, as in `append`
            changing()
            self._backend.write(session_id, [("meta.json", meta.to_json())], "meta")
            live.meta = meta
            self._backend.commit(session_id, ["meta.json"], f"head: {node_id}")

    def annotate_branch(
        self,
        session_id: str,
        tip: str,
        *,
        archived: bool | None = None,
        name: str | None = None,
        merged: bool | None = None,
    ) -> None:
        """Set people's annotations of a tip (archived, name, merged); they never decide what is written."""
        check_id(tip, "tip id")
        live = self._get_live(session_id)
        with live.lock, self._writing(session_id, live, changes_view=True) as changing:
            if tip not in live.index:
                raise UnknownNode(session_id, tip)
            meta = live.meta.model_copy(deep=True)
            info = meta.branches.setdefault(tip, BranchInfo())
            if archived is not None:
                info.archived = archived
            if name is not None:
                info.name = name
            if merged is True and tip not in meta.merged:
                meta.merged.append(tip)
            elif merged is False and tip in meta.merged:
                meta.merged.remove(tip)
            changing()
            self._backend.write(session_id, [("meta.json", meta.to_json())], "meta")
            live.meta = meta
            self._backend.commit(session_id, ["meta.json"], f"annotate {tip}")

    def update_node_metadata(
        self,
        session_id: str,
        node_ids: Iterable[str],
        update: Callable[[str, dict[str, Any]], dict[str, Any]],
        *,
        site: str = "mark",
    ) -> list[str]:
        """Rewrite the metadata of exactly these nodes: `update(node_id, old) -> new`. Never touches
        `meta.json` (so never `updated_at`) or any other node. Unknown ids raise before anything is
        written. Returns the ids whose bytes changed."""
        live = self._get_live(session_id)
        # Under the session lock, so that two processes marking one node cannot lose a mark.
        with live.lock, self._writing(session_id, live, changes_view=False):
            nodes = self.read_nodes(session_id, list(dict.fromkeys(node_ids)))
            items: list[tuple[str, bytes]] = []
            changed: list[str] = []
            for node in nodes:
                new = update(node.id, dict(node.metadata))
                if new == node.metadata:
                    continue
                rewritten = node.model_copy(update={"metadata": _json_copy(new)})
                items.append((live.index[node.id], rewritten.to_json()))
                changed.append(node.id)
            if items:
                self._backend.write(session_id, items, site)
                self._backend.commit(
                    session_id, [relpath for relpath, _ in items], f"{site}: {len(items)} nodes"
                )
            return changed

    def tombstone(self, session_id: str, node_ids: Iterable[str], at: float) -> list[str]:
        """`dagmem forget`: replace these nodes' content by a tombstone (empty content, `metadata.forgotten_at
        = at`; role, id, predecessor, times and markers stay). Not committed to the session's git: the
        history rewrite that follows gives every commit the tombstone. Returns the ids rewritten (a node
        already a tombstone is left as it is)."""
        live = self._get_live(session_id)
        with live.lock, self._writing(session_id, live, changes_view=False):
            items: list[tuple[str, bytes]] = []
            changed: list[str] = []
            for node in self.read_nodes(session_id, list(dict.fromkeys(node_ids))):
                if node.metadata.get(FORGOTTEN_KEY) is not None and not node.content:
                    continue
                metadata = {**node.metadata, FORGOTTEN_KEY: node.metadata.get(FORGOTTEN_KEY, at)}
                tomb = node.model_copy(update={"content": "", "metadata": _json_copy(metadata)})
                items.append((live.index[node.id], tomb.to_json()))
                changed.append(node.id)
            if items:
                self._backend.write(session_id, items, "forget")
            return changed

    def merge_node_metadata(self, session_id: str, patches: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """Shallow-merge a patch into each named node's metadata, as one batch."""
        clean = {check_id(node_id, "node id"): check_metadata(patch) for node_id, patch in patches.items()}
        return self.update_node_metadata(session_id, clean, lambda node_id, old: {**old, **clean[node_id]})

    def rewind(self, session_id: str, node_id: str) -> list[str]:
        """Undo the head branch back to `node_id` (inclusive): those nodes get `metadata.rewound` and
        the head moves to `node_id`'s predecessor. Returns the rewound ids, oldest first."""
        check_id(node_id, "node id")
        snapshot = self.load(session_id)
        head = snapshot.meta.head
        if node_id not in snapshot.nodes:
            raise UnknownNode(session_id, node_id)
        path = [] if head is None else walk_branch(session_id, snapshot.predecessors, head)
        if node_id not in path:
            raise InvalidInput(f"node {node_id!r} is not on the head branch of session {session_id!r}")
        rewound = path[path.index(node_id) :]
        now = self._clock()
        self.merge_node_metadata(session_id, {nid: {"rewound": True, "rewound_at": now} for nid in rewound})
        self.set_head(session_id, snapshot.nodes[node_id].predecessor)
        return rewound

    def adopt_node(self, session_id: str, node: Node) -> None:
        """A host wrote this node's file itself (the adapter protocol): index it without a rescan. The
        file must exist at its documented path and hold exactly this node."""
        live = self._get_live(session_id, create=True)
        with live.lock:
            data = self._backend.read(session_id, node.relpath)
            stored = None if data is None else parse_node(data)[0]
            if stored is None:
                raise InvalidInput(
                    f"session {session_id!r}: no readable node file at {self.path(session_id, node.relpath)}"
                )
            if stored != node:
                raise InvalidInput(f"session {session_id!r}: {node.relpath} does not hold the node announced")
            if node.predecessor is not None and node.predecessor not in live.index:
                raise UnknownNode(session_id, node.predecessor)
            live.index[node.id] = node.relpath
            live.max_seq = max(live.max_seq, node.seq)

    def reload_meta(self, session_id: str) -> SessionMeta:
        """Re-read `meta.json` (a host moved the head itself)."""
        live = self._get_live(session_id)
        with live.lock:
            data = self._backend.read(session_id, "meta.json")
            if data is not None:
                try:
                    live.meta = SessionMeta.from_json(data)
                except ValueError as exc:
                    raise SessionInvalid(
                        session_id, self.path(session_id, "meta.json"), f"malformed meta.json: {exc}"
                    ) from None
            return live.meta.model_copy(deep=True)

    def session_lock(self, session_id: str) -> AbstractContextManager[object]:
        """Hold the session's lock across processes (no append, mark or commit of it meanwhile)."""
        return self._backend.lock(check_id(session_id, "session id"))

    def forget(self, session_id: str) -> None:
        """Drop what this process keeps of a session (it is re-read on next use)."""
        with self._guard:
            self._live.pop(session_id, None)

    # -- internals -------------------------------------------------------------------------------------

    @contextmanager
    def _writing(self, sid: str, live: _Live, *, changes_view: bool) -> Iterator[Callable[[], None]]:
        """Hold the session's lock across processes (inside `live.lock`). `changes_view`: the call changes
        what stores keep (ids, the head), so first catch up if another process changed the session since
        this store last wrote. Yields `changing()`, to call just before the first write: it bumps the
        generation (before the write, so a writer that dies mid-write still tells the others)."""
        with self._backend.lock(sid) as held:
            if changes_view and held.generation is not None and held.generation != live.generation:
                self._refresh(sid, live)
                live.generation = held.generation
            bumped = not changes_view

            def changing() -> None:
                nonlocal bumped
                if not bumped:
                    held.bump()
                    live.generation = held.generation
                    bumped = True

            yield changing

    def _refresh(self, sid: str, live: _Live) -> None:
        """Read the session's file names and `meta.json` again (another process changed them); O(session)."""
        index: dict[str, str] = {}
        max_seq = self._index_files(sid, index)
        data = self._backend.read(sid, "meta.json")
        if data is not None:
            live.meta = self._parse_meta(sid, data)
        live.index, live.max_seq = index, max_seq

    def _parse_meta(self, sid: str, data: bytes) -> SessionMeta:
        try:
            return SessionMeta.from_json(data)
        except ValueError as exc:
            raise SessionInvalid(sid, self.path(sid, "meta.json"), f"malformed meta.json: {exc}") from None

    def _sweep_once(self, session_id: str) -> None:
        """The first time this store (this process) opens a session, remove the temp files that dead
        writers left in it (a process killed between a write and its rename)."""
        if session_id in self._swept or self._read_only:
            return
        self._swept.add(session_id)
        self._backend.sweep(session_id)

    def _get_live(self, session_id: str, *, create: bool = False) -> _Live:
        check_id(session_id, "session id")
        with self._guard:
            live = self._live.get(session_id)
            if live is not None:
                return live
            live = self._open(session_id, create=create)
            self._live[session_id] = live
            return live

    def _index_files(self, sid: str, index: dict[str, str]) -> int:
        """Add every node file of the session to `index` (id -> relpath); returns the highest seq."""
        max_seq = 0
        for relpath in self._backend.history(sid):
            parsed = parse_node_filename(relpath.rsplit("/", 1)[-1])
            if parsed is None:
                continue
            seq, _role, node_id = parsed
            index.setdefault(node_id, relpath)
            max_seq = max(max_seq, seq)
        return max_seq

    def _open(self, sid: str, *, create: bool) -> _Live:
        if not self._backend.exists(sid):
            if not create:
                raise UnknownSession(sid)
            now = self._clock()
            return _Live(SessionMeta(id=sid, created_at=now, updated_at=now), {}, 0)
        unsafe = self._backend.unsafe(sid)
        if unsafe is not None:
            raise SessionInvalid(sid, *unsafe)
        self._sweep_once(sid)
        index: dict[str, str] = {}
        max_seq = self._index_files(sid, index)
        data = self._backend.read(sid, "meta.json")
        meta = self._derived_meta(sid, index, max_seq) if data is None else self._parse_meta(sid, data)
        return _Live(meta, index, max_seq)

    def _derived_meta(self, sid: str, index: Mapping[str, str], max_seq: int) -> SessionMeta:
        """The meta of a session with node files and no meta.json (a crash before its first was written):
        created when its first node was, updated when its last was, as those appends would have said."""
        now = self._clock()
        first = min((relpath.rsplit("/", 1)[-1] for relpath in index.values()), default=None)
        seqs = [] if first is None else [int(first.split("-", 1)[0]), max_seq]
        times = [node.created_at for seq in seqs if (node := self._node_at_seq(sid, index, seq)) is not None]
        if len(times) != 2:
            return SessionMeta(id=sid, created_at=now, updated_at=now)
        return SessionMeta(id=sid, created_at=times[0], updated_at=times[1])
