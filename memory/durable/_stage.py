"""The stages of transactions, `.dagmem/stage/<tx>/<relpath>`, and the one rule for reading one.

A transaction's files are staged before its txlog line is appended and the stage is removed only after
they are moved into place, so a stage that exists for a committed line holds that transaction's bytes not
yet installed: the installer moves them, recovery finishes them, and a reader that never takes the lock
(recall) may read them, each file trusted only when its sha256 is the digest the txlog committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UnsafePath
from ._digest import sha256_hex
from ._safe import read_regular

__all__ = ["Stages"]


@dataclass(frozen=True)
class Stages:
    """The stage directory of a workspace (`WorkspacePaths.stage_root`)."""

    root: Path

    def of(self, tx: str) -> Path:
        """The stage of transaction `tx`."""
        return self.root / tx

    def file(self, tx: str, relpath: str) -> Path:
        """Where transaction `tx` stages the new bytes of `relpath` (relative to the workspace root)."""
        return self.root / tx / relpath

    def pending(self, tx: str) -> bool:
        """Whether transaction `tx` is staged and not yet fully installed."""
        return self.of(tx).exists()

    def read_committed(self, tx: str, relpath: str, digest: str | None) -> bytes | None:
        """The bytes committed transaction `tx` staged for `relpath`, when its stage still holds them and
        they are the committed ones (sha256 `digest`); None otherwise (installed, deleted, or not those
        bytes). Never through a symlink."""
        if digest is None:
            return None
        try:
            data = read_regular(self.file(tx, relpath))
        except (NotADirectoryError, UnsafePath):
            return None
        if data is None or sha256_hex(data) != digest:
            return None
        return data
