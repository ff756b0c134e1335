"""One line of `.dagmem/txlog.jsonl`: a committed transaction (DESIGN §2)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import DagmemError

__all__ = ["TxRecord", "TxlogCorrupt"]


class TxlogCorrupt(DagmemError):
    """A complete line of the txlog does not parse: the workspace needs a person."""


@dataclass(frozen=True)
class TxRecord:
    tx: str
    seq: int
    at: float
    session: str
    consumed: tuple[str, ...]
    files: dict[str, str | None] = field(default_factory=dict)
    migrated: bool = False

    def to_line(self) -> bytes:
        body = {
            "tx": self.tx,
            "seq": self.seq,
            "at": self.at,
            "session": self.session,
            "consumed": list(self.consumed),
            "files": self.files,
            "migrated": self.migrated,
        }
        return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    @classmethod
    def from_line(cls, line: bytes) -> TxRecord:
        try:
            raw = json.loads(line)
            record = cls(
                tx=str(raw["tx"]),
                seq=int(raw["seq"]),
                at=float(raw["at"]),
                session=str(raw["session"]),
                consumed=tuple(str(x) for x in raw["consumed"]),
                files={str(k): (None if v is None else str(v)) for k, v in raw["files"].items()},
                migrated=bool(raw.get("migrated", False)),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise TxlogCorrupt(f"unreadable txlog line: {exc}") from None
        if not record.tx.startswith(f"{record.seq:08d}-"):
            raise TxlogCorrupt(f"txlog line {record.seq}: tx id {record.tx!r} does not carry its seq")
        return record
