"""Backfill (`dagmem reorganise --backfill`): distil the archived evidence that no block cites.

Which records are owed to memory is the txlog's to say, and a consumed record is never written again by
a write; but a consumed record may be cited by no block: migration consumes the records the system it
adopts had written (their memory was that system's), and a topic file mended by hand may have lost a
block. Backfill takes exactly those, consumed, archived, not forgotten and cited nowhere, session by
session in archive order, in batches of the write's token threshold, and installs each batch through the
write core (the same distiller, hold queue, validation, core and topic index) in a transaction that
consumes nothing: they are consumed already. Once it commits they are cited, so no later backfill takes
them again; under the lock each batch is checked against what the transactions committed since it was
read (another backfill may have cited them), and a crash at any point leaves them either uncited (taken
again) or cited (its commit rolled forward), never cited twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..durable import read_regular
from ..errors import UnsafePath
from ..format import (
    ArchiveRecord,
    TopicFormatError,
    anchor_of,
    count_tokens,
    is_topic_path,
    is_valid_id,
    parse_topic,
    scan_archive,
)
from ..outcomes import ReasonCode, WriteFailure
from ..policy import DEFAULT_THRESHOLD, split_batches
from ..workspace import Workspace
from ._core import distil_batch, install_edits
from ._distill import Distiller

__all__ = ["Backfilled", "backfill", "uncited_records"]

log = logging.getLogger("dagmem.backfill")


@dataclass(frozen=True)
class Backfilled:
    records: int  # records now cited that no block cited before
    batches: int
    txs: tuple[str, ...]  # the transactions committed, in order


def _cited(workspace: Workspace) -> set[tuple[str, str]]:
    """(session, anchor) of every citation of every topic file. A file that does not parse may cite
    anything: backfill refuses to guess (it would file that evidence twice), and says which file."""
    cited: set[tuple[str, str]] = set()
    for path in sorted(workspace.topics.glob("*.md")):
        relpath = f"topics/{path.name}"
        if not is_topic_path(relpath):
            continue
        try:
            data = workspace.read_bytes(relpath)
            if data is None:
                continue
            topic = parse_topic(data.decode("utf-8"), relpath)
        except (TopicFormatError, UnicodeDecodeError, UnsafePath) as exc:
            raise WriteFailure(
                ReasonCode.INVALID_TOPIC_FORMAT,
                f"{relpath} cannot be read ({exc}); mend it first (`dagmem verify` names the problem)",
            ) from None
        cited.update(
            (s.session_id, s.anchor) for block in topic.blocks for c in block.citations for s in c.sources
        )
    return cited


def uncited_records(workspace: Workspace) -> dict[str, list[ArchiveRecord]]:
    """session -> its consumed, archived, unforgotten records that no block cites, in archive order."""
    cited = _cited(workspace)
    out: dict[str, list[ArchiveRecord]] = {}
    for path in sorted(workspace.sources.glob("*.md")):
        session = path.stem
        if not is_valid_id(session):
            continue
        data = read_regular(path)
        if data is None:
            continue
        frames = [
            f
            for f in scan_archive(data, session).frames
            if not f.forgotten and (session, anchor_of(f.source_id)) not in cited
        ]
        consumed = workspace.consumed(f.source_id for f in frames)
        records = [
            ArchiveRecord(session, f.node_id, f.role, f.seq, f.created_at, f.content, f.origin, f.git)
            for f in frames
            if f.source_id in consumed
        ]
        if records:
            out[session] = records
    return out


def _cited_since(workspace: Workspace, start: int, batch: Sequence[ArchiveRecord]) -> bool:
    """Whether a transaction committed after txlog byte `start` cites a record of `batch` (under the
    lock, after recovery: only the topic files those lines touched are read)."""
    keys = {(r.session_id, anchor_of(r.source_id)) for r in batch}
    touched = {
        path
        for _end, record in workspace.txlog.read_from(start)
        for path, digest in record.files.items()
        if digest is not None and is_topic_path(path)
    }
    for relpath in sorted(touched):
        data = workspace.read_bytes(relpath)
        if data is None:
            continue
        topic = parse_topic(data.decode("utf-8"), relpath)
        if any(
            (s.session_id, s.anchor) in keys for b in topic.blocks for c in b.citations for s in c.sources
        ):
            return True
    return False


def _batches(records: Sequence[ArchiveRecord], threshold: int) -> list[list[ArchiveRecord]]:
    by_id = {r.source_id: r for r in records}
    sized = [(r.source_id, count_tokens(r.content)) for r in records]
    return [[by_id[i] for i in ids] for ids, _complete in split_batches(sized, threshold)]


def backfill(
    workspace: Workspace,
    distiller: Distiller,
    *,
    threshold: int = DEFAULT_THRESHOLD,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> Backfilled:
    """Distil every uncited consumed record, batch by batch; `on_start(records)` is told how many there
    are, `on_batch(records)` each batch installed. Raises `WriteFailure` at the first batch that fails:
    the batches before it stay installed, and a run again takes up what is left."""
    if threshold < 1:
        raise WriteFailure(ReasonCode.INVALID_INPUT, f"the token threshold must be >= 1, not {threshold}")
    todo = uncited_records(workspace)
    if on_start is not None:
        on_start(sum(len(records) for records in todo.values()))
    txs: list[str] = []
    done = 0
    for session, records in todo.items():
        for batch in _batches(records, threshold):
            start = workspace.txlog.size()
            reader, files = distil_batch(workspace, session, batch, distiller)  # outside the lock
            with workspace.lock():
                workspace.recover()
                ids = {r.source_id for r in batch}
                if workspace.forgotten_sources() & ids:
                    raise WriteFailure(
                        ReasonCode.CONCURRENT_UPDATE, "part of the batch was forgotten meanwhile"
                    )
                if _cited_since(workspace, start, batch):
                    raise WriteFailure(ReasonCode.CONCURRENT_UPDATE, "part of the batch was cited meanwhile")
                record = install_edits(
                    workspace, session, batch, reader, files, currency=None, consumes=False
                )
            log.debug("backfill: tx %s cites %d records of %s", record.tx, len(batch), session)
            txs.append(record.tx)
            done += len(batch)
            if on_batch is not None:
                on_batch(len(batch))
    return Backfilled(done, len(txs), tuple(txs))
