"""Session and node ids: `[A-Za-z0-9][A-Za-z0-9_-]{0,63}` (DESIGN §2). They become file names, so
anything else is refused before a byte is written."""

from __future__ import annotations

import hashlib
import re

from ..errors import InvalidInput

__all__ = ["ID_PATTERN", "anchor_of", "check_id", "is_valid_id"]

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None


def check_id(value: object, what: str = "id") -> str:
    """Return `value` if it is a valid id, else raise `InvalidInput` naming the problem."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, not {type(value).__name__}")
    if not is_valid_id(value):
        shown = value if len(value) <= 80 else value[:77] + "..."
        raise InvalidInput(
            f"invalid {what} {shown!r}: ids match [A-Za-z0-9][A-Za-z0-9_-]{{0,63}} "
            "(letters, digits, '_' and '-', at most 64 characters, starting with a letter or digit)"
        )
    return value


def anchor_of(source_id: str) -> str:
    """A record's anchor in its session's archive (`src-` and 16 hex digits of its id's sha256); here, in
    a leaf, so that rendering a hit's evidence loads no archive codec."""
    return "src-" + hashlib.sha256(source_id.encode()).hexdigest()[:16]
