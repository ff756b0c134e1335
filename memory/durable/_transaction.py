"""All-or-nothing installs of topic edits (DESIGN §4, step 2).

Stage only the touched files under `.dagmem/stage/<tx>/` (written and fsynced), append the txlog line
(the commit point), then move each staged file into place and remove the stage. Recovery, under the
workspace lock, finishes a stage whose line is committed and discards one whose line is not, so readers
that hold the lock see the old workspace or the new one, never half of a transaction. Cost: O(files
touched).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import posixpath
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import faults
from ..format import TxRecord
from ._atomic import Pins, atomic_write_many, fsync_dirs, sweep_temp
from ._digest import sha256_hex
from ._stage import Stages
from ._txlog import TxLog

__all__ = ["Installer", "Recovery", "sha256_hex", "tx_id"]  # sha256_hex: re-exported

log = logging.getLogger("dagmem.transaction")


def tx_id(seq: int, session: str, consumed: Sequence[str], files: Mapping[str, str | None]) -> str:
    """`<seq:08d>-<8 hex>`, the hex derived from the content, so a replayed run names it the same."""
    digest = hashlib.sha256(
        "\n".join([session, *consumed, *(f"{k}={v}" for k, v in sorted(files.items()))]).encode()
    ).hexdigest()
    return f"{seq:08d}-{digest[:8]}"


@dataclass
class Recovery:
    """What recovery did: stages finished (rolled forward), stages discarded, temp files removed."""

    rolled_forward: list[str] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)
    temp_removed: list[Path] = field(default_factory=list)
    txlog_truncated: bool = False
    txlog_newline_restored: bool = False  # the last line, committed, had lost only its newline

    def __bool__(self) -> bool:
        return bool(
            self.rolled_forward
            or self.discarded
            or self.temp_removed
            or self.txlog_truncated
            or self.txlog_newline_restored
        )


class Installer:
    """Installs transactions into a workspace root. The caller holds the workspace lock."""

    def __init__(self, root: Path, stage_root: Path, txlog: TxLog, *, fsync: bool = True) -> None:
        self.root = root
        self.stage_root = stage_root
        self.stages = Stages(stage_root)
        self.txlog = txlog
        self.fsync = fsync

    def commit(
        self,
        session: str,
        consumed: Sequence[str],
        files: Mapping[str, bytes | None],
        *,
        at: float,
        migrated: bool = False,
    ) -> tuple[TxRecord, int]:
        """Stage, commit and install. Returns the record and the txlog size after its line."""
        hashes = {path: (None if data is None else sha256_hex(data)) for path, data in sorted(files.items())}
        seq = self.txlog.next_seq()
        record = TxRecord(
            tx=tx_id(seq, session, consumed, hashes),
            seq=seq,
            at=at,
            session=session,
            consumed=tuple(consumed),
            files=hashes,
            migrated=migrated,
        )
        stage = self.stages.of(record.tx)
        # Staged even when empty: a stage is how recovery tells a torn line from a damaged committed one.
        self._stage(record.tx, files)
        size = self.txlog.size()
        try:
            end = self.txlog.append(record)  # the commit point
        except faults.InjectedCrash:
            raise
        except BaseException:
            # A failed append puts the txlog back as it was (a partial line left anyway is a torn tail):
            # not committed, so the stage goes. Should the whole line still stand, it is committed, and
            # the stage stays for recovery to finish.
            self.txlog.recover_tail({record.tx})
            if self.txlog.size() <= size:
                shutil.rmtree(stage, ignore_errors=True)
            raise
        try:
            self.apply(record)
        except faults.InjectedCrash:
            raise
        except Exception as exc:
            # Committed: only the moves are left, and they are safe to redo. Roll forward now, as recovery
            # would, so a failure that passed (a permission restored, space freed) is no failure of this
            # pass; one that persists propagates, and the next locked recovery finishes the stage.
            log.warning("installing transaction %s failed (%s); rolling it forward", record.tx, exc)
            self.apply(record)
        return record, end

    def _stage(self, tx: str, files: Mapping[str, bytes | None]) -> None:
        stage = self.stages.of(tx)
        try:
            stage.mkdir(parents=True)
            made = {stage}
            items = []
            for relpath, data in files.items():
                if data is None:
                    continue
                target = self.stages.file(tx, relpath)
                if target.parent not in made:  # once per directory, not per file
                    target.parent.mkdir(parents=True, exist_ok=True)
                    made.add(target.parent)
                items.append((target, data))
            # The stage's own entry in stage_root is fsynced in the same round as its files.
            atomic_write_many(items, fsync=self.fsync, site="stage", dirs=[self.stage_root])
        except faults.InjectedCrash:
            raise
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise

    def apply(self, record: TxRecord) -> None:
        """Move a committed transaction's staged files into place (idempotent: safe to redo)."""
        stage = self.stages.of(record.tx)
        directories: dict[Path, None] = {}
        pins = Pins()  # the replaced topics' inodes are freed together at the end, not one per rename
        try:
            for relpath, digest in record.files.items():
                target = self.root / relpath
                if digest is None:
                    faults.hit("install:unlink")
                    pins.hold(target)
                    target.unlink(missing_ok=True)
                    directories[target.parent] = None
                    continue
                staged = self.stages.file(record.tx, relpath)
                if staged.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    faults.hit("install:rename")
                    pins.hold(target)
                    os.replace(staged, target)
                    directories[target.parent] = None
                elif not target.exists() or sha256_hex(target.read_bytes()) != digest:
                    raise RuntimeError(
                        f"transaction {record.tx}: staged {relpath} is missing and not installed"
                    )
        finally:
            pins.release()
        if self.fsync:
            fsync_dirs(directories, site="install")
        faults.hit("install:cleanup")
        _remove_stage(stage, record.files)

    def recover(self, *, sweep: Sequence[Path] = ()) -> Recovery:
        """Finish or discard what a dead process left: a torn txlog line, stages, and the temp files of
        dead writers in the `sweep` directories. Raises `TxlogCorrupt` (nothing changed) if the txlog's
        end is damaged in a way no crash explains."""
        stages = sorted(self.stage_root.iterdir()) if self.stage_root.is_dir() else []
        tail = self.txlog.recover_tail({stage.name for stage in stages})
        report = Recovery(txlog_truncated=tail == "truncated", txlog_newline_restored=tail == "restored")
        if stages:
            committed = self._committed({stage.name for stage in stages})
            for stage in stages:
                record = committed.get(stage.name)
                if record is not None:
                    log.warning("finishing transaction %s left by a crashed writer", stage.name)
                    self.apply(record)
                    report.rolled_forward.append(stage.name)
                else:
                    log.warning("discarding uncommitted stage %s left by a crashed writer", stage.name)
                    faults.hit("recover:discard")
                    shutil.rmtree(stage, ignore_errors=True)
                    report.discarded.append(stage.name)
        for directory in sweep:
            report.temp_removed.extend(sweep_temp(directory))
        return report

    def _committed(self, names: set[str]) -> dict[str, TxRecord]:
        """The committed records among `names`. A stage can only be committed if it is the last line
        (every install recovers first), so look there before scanning the whole log."""
        last = self.txlog.last()
        if last is not None and names == {last.tx}:
            return {last.tx: last}
        return {record.tx: record for _end, record in self.txlog.read_from(0) if record.tx in names}


def _remove_stage(stage: Path, relpaths: Iterable[str]) -> None:
    """Remove a stage its moves emptied: its directories, deepest first (no listing, no walk); a stage
    that still holds anything (a redo finds some files moved already, or none) goes by `rmtree`."""
    directories = {posixpath.dirname(relpath) for relpath in relpaths} - {""}
    for directory in list(directories):
        while (directory := posixpath.dirname(directory)) != "":
            directories.add(directory)
    try:
        for directory in sorted(directories, key=lambda d: -d.count("/")):
            with contextlib.suppress(FileNotFoundError):  # nothing staged there (deletions only)
                os.rmdir(stage / directory)
        os.rmdir(stage)
    except OSError:
        shutil.rmtree(stage, ignore_errors=True)
