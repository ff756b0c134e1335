"""The one write core: one batch, archive → distil → install, then (the caller) mark (DESIGN §4).

`write_batch` distils outside the lock, archives the evidence, and installs the edits as one transaction
under the lock, through `Workspace.install` (which also runs the workspace's `on_install` hook: the recall
index's update, given by whoever opened the workspace). It returns the node ids the caller may now mark:
those it committed, or found already committed by an earlier (crashed, or concurrent) writer. Marking is
the caller's step 3 (`mark_nodes`, node files rewritten through the store under the session's lock):
the batch writer marks (`BatchWriter.mark`, in chunks, so a session's appends interleave), which lets
the runtime's writer actor mark one batch while it installs the next; `dagmem migrate` marks what an old
cursor says was written.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ..currency import SessionShape
from ..durable import sha256_hex
from ..format import (
    CORE_FILE,
    FORGOTTEN_KEY,
    GIT_KEY,
    ORIGIN_KEY,
    ORIGINS,
    TOPIC_INDEX,
    ArchiveRecord,
    Node,
    TopicFormatError,
    TopicLookup,
    TxRecord,
    anchor_of,
    git_context_of,
    is_topic_path,
    parse_topic,
    validate_topic,
)
from ..format import CORE_MASTER as LAYOUT_CORE_MASTER
from ..outcomes import ReasonCode, WriteFailure, classify
from ..policy import with_marker
from ..store import SessionStore
from ..workspace import Workspace
from ._current import InstallCurrency, TopicBlocks, current_core
from ._distill import BatchInput, Distiller, PlainDistiller
from ._held import hold_untrusted
from ._slot_index import SlotIndex

__all__ = ["WriteOutcome", "mark_nodes", "records_of", "write_batch"]

log = logging.getLogger("dagmem.write")

CORE_MASTER = LAYOUT_CORE_MASTER


@dataclass(frozen=True)
class WriteOutcome:
    node_ids: tuple[str, ...]  # the records now consumed, oldest first, to mark: the batch or a prefix of it
    tx: str | None  # the transaction committed by this call; None if all were consumed already
    files: dict[str, str | None] = field(default_factory=dict)


def records_of(session_id: str, nodes: Sequence[Node]) -> list[ArchiveRecord]:
    return [
        ArchiveRecord(
            session_id,
            node.id,
            str(node.role),
            node.seq,
            node.created_at,
            node.content,
            origin_of(node),
            git_context_of(node.metadata.get(GIT_KEY)),
        )
        for node in nodes
    ]


def origin_of(node: Node) -> str | None:
    """The node's origin when it says one dagmem knows (`metadata["origin"]`, set by `append(origin=...)`
    or by a host writing node files itself); None: its role's default."""
    origin = node.metadata.get(ORIGIN_KEY)
    return origin if isinstance(origin, str) and origin in ORIGINS else None


class _Reader:
    """Hands topic files to the distiller and remembers what each looked like (sha256, or None when
    absent), so the install can tell whether anyone changed them meanwhile."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.bases: dict[str, str | None] = {}
        # A batch asks a file's size hundreds of times (each part, each subject's page): one stat each.
        self._sizes: dict[str, int | None] = {}
        self._root = str(workspace.root)

    def read(self, relpath: str) -> str | None:
        if not is_topic_path(relpath):
            raise WriteFailure(ReasonCode.PATH_OUTSIDE_WORKSPACE, f"not a topic file: {relpath!r}")
        data = self.workspace.read_bytes(relpath)
        self.bases.setdefault(relpath, None if data is None else sha256_hex(data))
        return None if data is None else data.decode("utf-8")

    def topic_index(self) -> str | None:
        """The topic index as the last install left it (the map of every topic), None when there is none."""
        data = self.workspace.read_bytes(TOPIC_INDEX)
        return None if data is None else data.decode("utf-8", "replace")

    def paths(self) -> list[str]:
        """Every topic file of the workspace, sorted (a directory listing: no file is read)."""
        return sorted(
            f"topics/{entry.name}"
            for entry in os.scandir(self.workspace.topics)
            if entry.is_file() and is_topic_path(f"topics/{entry.name}")
        )

    def size(self, relpath: str) -> int | None:
        if relpath in self._sizes:
            return self._sizes[relpath]
        if not is_topic_path(relpath):
            raise WriteFailure(ReasonCode.PATH_OUTSIDE_WORKSPACE, f"not a topic file: {relpath!r}")
        try:
            size: int | None = os.stat(f"{self._root}/{relpath}").st_size
        except FileNotFoundError:
            size = None
        self._sizes[relpath] = size
        return size


def write_batch(
    workspace: Workspace,
    session_id: str,
    records: Sequence[ArchiveRecord],
    distiller: Distiller,
    *,
    lineage: Callable[[], frozenset[str]] | None = None,
    currency: InstallCurrency | None = None,
    slots: SlotIndex | None = None,
) -> WriteOutcome:
    """Archive, distil and install one batch (all of one session). Raises `WriteFailure`; on any failure
    nothing is installed and the batch stays owed. `lineage`: see `BatchInput`. `currency`: the shapes
    the core's rendering reads and the shape cache's update (without it, no branch is left). `slots`: the
    slot index of the workspace, when the caller keeps one open across batches."""
    try:
        return _write(workspace, session_id, records, distiller, lineage, currency=currency, slots=slots)
    except WriteFailure:
        raise
    except Exception as exc:
        raise classify(exc) from exc


def _write(
    workspace: Workspace,
    session_id: str,
    records: Sequence[ArchiveRecord],
    distiller: Distiller,
    lineage: Callable[[], frozenset[str]] | None,
    *,
    currency: InstallCurrency | None,
    slots: SlotIndex | None,
) -> WriteOutcome:
    if not records:
        raise WriteFailure(ReasonCode.INVALID_INPUT, "an empty batch")
    all_ids = tuple(r.node_id for r in records)
    source_ids = [r.source_id for r in records]

    # A redo after a crash, or another writer that got there first: consumed records are only marked,
    # once their transaction is installed (its install may have failed part way, or be running now).
    # A consumed leading run is marked on its own: a crash between the marks of a committed batch leaves
    # one, and batching what follows as usual writes exactly what a run without the crash wrote.
    done = workspace.consumed(source_ids)
    prefix = 0
    while prefix < len(records) and records[prefix].source_id in done:
        prefix += 1
    if prefix:
        workspace.archive(session_id, records)
        with workspace.lock():
            workspace.recover()
        return WriteOutcome(all_ids[:prefix], None)
    todo = [r for r in records if r.source_id not in done]
    try:
        return _install(
            workspace, session_id, records, todo, distiller, lineage=lineage, currency=currency, slots=slots
        )
    except Exception as exc:
        failure = classify(exc)  # a simulated crash is never classified: it propagates
        if failure.code not in FILED_PLAINLY:
            if failure is exc:
                raise
            raise failure from exc
        # What the distiller could not file is filed plainly: no text of a turn stops a session's memory.
        log.warning("session %s: %s; the batch is filed as plain cited blocks", session_id, failure)
    return _install(workspace, session_id, records, todo, PlainDistiller(), currency=currency, slots=slots)


# Failures the batch's text can cause through a distiller, and that a plain filing cannot: a write that
# meets one files the batch with `PlainDistiller` instead of failing for good. A model server that refuses
# (its key, the batch's length or content, an answer invalid after the repair round), a full disk or a
# damaged workspace is no such failure: it is reported as it is, and the batch stays owed.
FILED_PLAINLY: Final = frozenset(
    {
        ReasonCode.INVALID_TOPIC_FORMAT,
        ReasonCode.PATH_OUTSIDE_WORKSPACE,
        ReasonCode.WRITER_NO_PROGRESS,
        ReasonCode.DISTILLER_FAILED,
        ReasonCode.WRITER_FAILURE_UNKNOWN,
    }
)


def _install(
    workspace: Workspace,
    session_id: str,
    records: Sequence[ArchiveRecord],
    todo: Sequence[ArchiveRecord],
    distiller: Distiller,
    *,
    lineage: Callable[[], frozenset[str]] | None = None,
    currency: InstallCurrency | None,
    slots: SlotIndex | None,
) -> WriteOutcome:
    all_ids = tuple(r.node_id for r in records)
    source_ids = [r.source_id for r in records]
    # 2a. Distil, outside the lock (a model call can take minutes). Before the archive step, so that a
    # distiller that fails (a model server that says no) leaves the workspace byte-identical.
    reader, new_files = _distil(
        session_id, todo, distiller, _Reader(workspace), lineage=lineage, currency=currency, slots=slots
    )

    # 1. Archive the evidence (idempotent, append-only): before anything cites it.
    workspace.archive(session_id, records)

    # 2b. Install, under the lock.
    with workspace.lock():
        workspace.recover()
        done = workspace.consumed(source_ids)
        if len(done) == len(source_ids):
            return WriteOutcome(all_ids, None)
        if workspace.forgotten_sources().intersection(source_ids):
            # A forget ran since these records were read: their text must not be written back. Retried,
            # the batch is read again and the tombstones are no records.
            raise WriteFailure(ReasonCode.CONCURRENT_UPDATE, "part of the batch was forgotten meanwhile")
        if any(r.source_id in done for r in todo):
            raise WriteFailure(ReasonCode.CONCURRENT_UPDATE, "part of the batch was consumed meanwhile")
        record = install_edits(
            workspace, session_id, todo, reader, new_files, currency=currency, consumes=True
        )
        if currency is not None:
            try:
                currency.record()  # the shape cache: a cache, so its trouble never fails the install
            except Exception as exc:
                log.warning("session %s: the shape cache was not updated: %s", session_id, exc)
    log.debug("session %s: tx %s consumed %d records", session_id, record.tx, len(todo))
    return WriteOutcome(all_ids, record.tx, dict(record.files))


def _distil(
    session_id: str,
    todo: Sequence[ArchiveRecord],
    distiller: Distiller,
    reader: _Reader,
    *,
    lineage: Callable[[], frozenset[str]] | None,
    currency: InstallCurrency | None,
    slots: SlotIndex | None = None,
) -> tuple[_Reader, dict[str, bytes | None]]:
    """The distiller's edits of `todo` as bytes (None: a file removed), read through `reader`. `slots`:
    the caller's slot index, kept open (else one is opened for this batch)."""
    try:
        shapes = None if currency is None else currency.shapes
        own = slots is None
        if slots is None:
            slots = SlotIndex(reader.workspace.root)
        else:
            slots.next_batch()
        try:
            edits = distiller.distill(BatchInput(session_id, tuple(todo), lineage, shapes, slots), reader)
        finally:
            if own:
                slots.close()
    except WriteFailure:
        raise
    except Exception as exc:
        failure = classify(exc)
        if failure.code is ReasonCode.WRITER_FAILURE_UNKNOWN:
            failure = WriteFailure(ReasonCode.DISTILLER_FAILED, failure.detail)
        raise failure from exc
    # Only what the person typed reaches the core: the rest waits in the hold queue (one rule, every distiller).
    edits = hold_untrusted(edits, todo, reader)
    new_files: dict[str, bytes | None] = {}
    for relpath, text in edits.items():
        if not is_topic_path(relpath):
            raise WriteFailure(ReasonCode.PATH_OUTSIDE_WORKSPACE, f"edit outside topics/: {relpath!r}")
        new_files[relpath] = None if text is None else text.encode("utf-8")
    return reader, new_files


def distil_batch(
    workspace: Workspace, session_id: str, records: Sequence[ArchiveRecord], distiller: Distiller
) -> tuple[_Reader, dict[str, bytes | None]]:
    """Distil archived records again, outside the lock (`dagmem reorganise --backfill`): no lineage, no
    shapes; the reader remembers what each file looked like for `install_edits`."""
    return _distil(session_id, records, distiller, _Reader(workspace), lineage=None, currency=None)


def install_edits(
    workspace: Workspace,
    session_id: str,
    todo: Sequence[ArchiveRecord],
    reader: _Reader,
    new_files: Mapping[str, bytes | None],
    *,
    currency: InstallCurrency | None,
    consumes: bool,
) -> TxRecord:
    """Under the lock: check that no file the edits touch changed since it was read, validate them (every
    record of `todo` cited, new citations only to `todo`), re-render the core, and install them as one
    transaction that consumes `todo` (`consumes`; a backfill's records are consumed already)."""
    current: dict[str, bytes | None] = {path: workspace.read_bytes(path) for path in new_files}
    for path, data in current.items():
        base = reader.bases.get(path)
        if (None if data is None else sha256_hex(data)) != base:
            raise WriteFailure(ReasonCode.CONCURRENT_UPDATE, f"{path} changed while the batch was distilled")
    changed = {path: data for path, data in new_files.items() if data != current[path]}
    consumed = [r.source_id for r in todo] if consumes else []
    if not changed:
        if consumed and _all_cited(reader, todo):
            # The topics hold the batch already (a redo after a lost txlog line was repaired): its records
            # are consumed by a transaction that changes no file.
            return workspace.install(session_id, consumed, {}, before={}, records=todo)
        raise WriteFailure(ReasonCode.WRITER_NO_PROGRESS, "the distiller's edits changed no file")
    _validate(workspace, changed, current, [r.source_id for r in todo])
    core = _core_after(workspace, changed, currency)
    if core is not None:
        changed[CORE_FILE] = core[0]
    # The install: commit, index, and the hook the workspace was opened with (recall's updater).
    return workspace.install(session_id, consumed, changed, before=current, records=todo)


def _all_cited(reader: _Reader, records: Sequence[ArchiveRecord]) -> bool:
    """Does some topic file cite each of `records`? A scan of every topic file's bytes for the links, so
    only for the rare batch whose edits changed nothing (record text, made inert, cannot forge a link)."""
    links = {f"(../sources/{r.session_id}.md#{anchor_of(r.source_id)})".encode() for r in records}
    for path in reader.paths():
        data = reader.workspace.read_bytes(path) or b""
        links = {link for link in links if link not in data}
        if not links:
            return True
    return not links


def _core_after(
    workspace: Workspace, changed: dict[str, bytes | None], currency: InstallCurrency | None
) -> tuple[bytes | None] | None:
    """`memory/core.md` after the transaction, as a 1-tuple (its bytes, None: removed), or None when it
    stays as it is. Re-rendered when the master changes, or when the session's head moved since its last
    install (a branch the core cites may be left now); only current blocks are shown."""
    master_changed = CORE_MASTER in changed
    if not master_changed and (currency is None or not currency.head_moved):
        return None
    master = changed[CORE_MASTER] if master_changed else workspace.read_bytes(CORE_MASTER)
    if master is None:
        return (None,) if master_changed else None
    lookup = TopicLookup(
        lambda relpath: changed[relpath] if relpath in changed else workspace.read_bytes(relpath)
    )
    shapes = currency.shapes if currency is not None else _no_shapes
    text = current_core(master.decode(), TopicBlocks(lookup, workspace.source_of), shapes).encode()
    if not master_changed and text == workspace.read_bytes(CORE_FILE):
        return None
    return (text,)


def _no_shapes(_session_id: str) -> SessionShape | None:
    return None


def _validate(
    workspace: Workspace,
    changed: dict[str, bytes | None],
    current: dict[str, bytes | None],
    batch: list[str],
) -> None:
    """Every touched topic must parse and validate, and every record of the batch must be cited."""
    cited: set[tuple[str, str]] = set()
    lookup = TopicLookup(
        lambda relpath: changed[relpath] if relpath in changed else workspace.read_bytes(relpath)
    )
    try:
        for path, data in changed.items():
            if data is None:
                continue
            new = parse_topic(data.decode("utf-8"), path)
            old_bytes = current[path]
            old = None if old_bytes is None else parse_topic(old_bytes.decode("utf-8"), path)
            validate_topic(
                path,
                new,
                old,
                batch_sources=batch,
                is_archived=workspace.is_archived,
                block_exists=lookup.block_exists,
                superseded_by=lookup.superseded_by,
            )
            cited.update(
                (source.session_id, source.anchor)
                for block in new.blocks
                for citation in block.citations
                for source in citation.sources
            )
    except (TopicFormatError, UnicodeDecodeError) as exc:
        raise WriteFailure(ReasonCode.INVALID_TOPIC_FORMAT, str(exc)) from exc
    uncited = [s for s in batch if (s.partition("/")[0], anchor_of(s)) not in cited]
    if uncited:
        raise WriteFailure(
            ReasonCode.INVALID_TOPIC_FORMAT,
            f"{len(uncited)} records of the batch are not cited: {uncited[:5]}",
        )


def mark_nodes(store: SessionStore, session_id: str, node_ids: Sequence[str], workspace_id: str) -> list[str]:
    """Step 3: mark exactly these nodes for this workspace (rewrites only them; never `updated_at`)."""
    return store.update_node_metadata(
        session_id,
        node_ids,
        # A node forgotten since its batch was planned is no record: it is never marked.
        lambda _id, metadata: (
            metadata if metadata.get(FORGOTTEN_KEY) is not None else with_marker(metadata, workspace_id)
        ),
    )
