"""What a host hands a hook: one JSON object on stdin (Claude Code, pi's extension) or in argv (Codex),
read defensively. Nothing here may block or take the host down: stdin is read up to a bound, and a
transcript path is only ever opened when it names a regular file (a FIFO would block an `open`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ..memory.errors import DagmemError

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from typing import Any, BinaryIO

__all__ = [
    "MAX_PAYLOAD",
    "PayloadError",
    "parse_payload",
    "read_head",
    "read_payload",
    "read_tail",
    "regular_file",
    "text",
]

MAX_PAYLOAD = 4 << 20  # bytes of stdin: a prompt larger than this is no question to search memory for


class PayloadError(DagmemError):
    """The host's input is not what its documentation promises (logged; the hook answers nothing)."""


def read_payload(stream: BinaryIO) -> dict[str, Any]:
    data = stream.read(MAX_PAYLOAD + 1)
    if len(data) > MAX_PAYLOAD:
        raise PayloadError(f"stdin holds more than {MAX_PAYLOAD} bytes; ignored")
    return parse_payload(data)


def parse_payload(data: bytes | str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except UnicodeDecodeError:
        raise PayloadError("the payload is not UTF-8") from None
    except (ValueError, RecursionError) as exc:
        raise PayloadError(f"the payload is not JSON ({str(exc)[:120]})") from None
    if not isinstance(value, dict):
        raise PayloadError(f"the payload is a JSON {type(value).__name__}, not an object")
    return value


def text(payload: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    """A string field of the payload; a missing one is a `PayloadError` when `required`."""
    value = payload.get(key)
    if isinstance(value, str) and value:
        return value
    if required:
        raise PayloadError(f"the payload has no {key!r} string")
    return None


def regular_file(raw: str) -> Path:
    """`raw` as a path naming an existing regular file (a symlink to one is fine); else `PayloadError`."""
    path = Path(raw)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise PayloadError(f"transcript_path {raw!r}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise PayloadError(f"transcript_path {raw!r} is not a regular file")
    return path


def read_tail(path: Path, size: int) -> bytes:
    """The last `size` bytes of a regular file. Opened non-blocking and checked again once open: a file
    swapped for a FIFO after `regular_file` looked at it still cannot block the hook."""
    return _read_regular(path, size, from_end=True)


def read_head(path: Path, size: int) -> bytes:
    """The first `size` bytes of a regular file, read as safely as `read_tail` reads its end."""
    return _read_regular(path, size, from_end=False)


def _read_regular(path: Path, size: int, *, from_end: bool) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PayloadError(f"{path} is not a regular file")
        return os.pread(fd, size, max(0, info.st_size - size) if from_end else 0)
    finally:
        os.close(fd)
