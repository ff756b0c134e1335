"""One line of `.dagmem/txlog.jsonl`: a committed transaction (DESIGN §2)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ..errors import DagmemError
from ..outcomes import ReasonCode
from ._limits import time_problem

__all__ = ["TxRecord", "TxlogCorrupt"]


# What a person can do, true to what the reader accepts: any line that parses as a transaction again (the
# one it was, from a copy; or mended by hand), and nothing at all in place of a blank line. Deleting a line
# that was a transaction would make its records owed again, so that is not offered.
_HOW_TO_REPAIR = (
    "nothing is written until every line is a transaction again: restore txlog.jsonl from a copy (a backup "
    "or git) or mend that line by hand (a blank line can simply be deleted); `dagmem verify` lists every "
    "damaged line"
)


class TxlogCorrupt(DagmemError):
    """A line of the txlog is not a committed transaction's line: writes are refused until a person looks.

    `reason` says what is wrong with the line; `path` and `line` (1-based) say where, once known (the
    line parser knows neither; the txlog reader adds them with `at`)."""

    code: ClassVar[ReasonCode] = ReasonCode.TXLOG_CORRUPT

    def __init__(self, reason: str, *, path: Path | None = None, line: int | None = None) -> None:
        where = "txlog" if path is None else f"txlog {path}"
        if line is not None:
            where += f" is damaged at line {line}"
        super().__init__(f"{where}: {reason}; {_HOW_TO_REPAIR}")
        self.reason = reason
        self.path = path
        self.line = line

    def at(self, path: Path, line: int) -> TxlogCorrupt:
        return TxlogCorrupt(self.reason, path=path, line=line)


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
        if not line.strip():
            raise TxlogCorrupt("a blank line (every line must be a committed transaction)")
        try:
            raw = json.loads(line)
        except (ValueError, RecursionError):
            raise TxlogCorrupt("not a JSON line") from None
        if not isinstance(raw, dict):
            raise TxlogCorrupt("not a JSON object")
        try:
            record = cls(
                tx=str(raw["tx"]),
                seq=int(raw["seq"]),
                at=float(raw["at"]),
                session=str(raw["session"]),
                consumed=tuple(str(x) for x in raw["consumed"]),
                files={str(k): (None if v is None else str(v)) for k, v in raw["files"].items()},
                migrated=bool(raw.get("migrated", False)),
            )
        except KeyError as exc:
            raise TxlogCorrupt(f"no {exc} field") from None
        except (ValueError, TypeError, AttributeError) as exc:
            raise TxlogCorrupt(f"a field has the wrong type ({exc})") from None
        if type(raw["seq"]) is not int or record.seq < 1:
            raise TxlogCorrupt(f"seq {raw['seq']!r} is not a line number (an int from 1)")
        if time_problem(raw["at"]) is not None:
            raise TxlogCorrupt(f"at {raw['at']!r} is not a time in epoch seconds")
        if not record.tx.startswith(f"{record.seq:08d}-"):
            raise TxlogCorrupt(f"tx id {record.tx!r} does not carry its seq {record.seq}")
        return record
