"""The workspace id `w-<16 hex>` in `memory/.dagmem/workspace-id`: created exactly once, even when
threads and processes race to create it (DESIGN §2). Markers carry it, so it must never change."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from .. import faults
from ..outcomes import ReasonCode, WriteFailure
from ._atomic import fsync_dir

__all__ = ["WORKSPACE_ID", "ensure_workspace_id", "read_workspace_id"]

WORKSPACE_ID = re.compile(r"w-[0-9a-f]{16}")


def read_workspace_id(path: Path) -> str | None:
    """The id in `path`, None if the file does not exist; a malformed file is an error (never replaced:
    replacing it would orphan every marker that carries the old id)."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise WriteFailure(ReasonCode.WORKSPACE_INVALID, f"{path}: {exc}") from None
    if WORKSPACE_ID.fullmatch(text) is None:
        raise WriteFailure(ReasonCode.WORKSPACE_INVALID, f"{path} does not hold a workspace id (w-<16 hex>)")
    return text


def ensure_workspace_id(path: Path, *, fsync: bool = True, new_id: str | None = None) -> str:
    """Read the id, creating it if missing. Creation writes a complete temp file and hard-links it into
    place: `link` fails if the name exists, so exactly one candidate wins and every racer reads it."""
    existing = read_workspace_id(path)
    if existing is not None:
        return existing
    candidate = new_id or f"w-{secrets.token_hex(8)}"
    if WORKSPACE_ID.fullmatch(candidate) is None:
        raise ValueError(f"invalid workspace id {candidate!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, f"{candidate}\n".encode())
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        faults.hit("wsid:link")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        else:
            if fsync:
                fsync_dir(path.parent, site="wsid")
    finally:
        tmp.unlink(missing_ok=True)
    winner = read_workspace_id(path)
    assert winner is not None
    return winner
