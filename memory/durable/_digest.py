"""The content digest of the txlog's lines and files (sha256, in hex): a leaf, so a reader that checks one
loads none of the transactions' machinery."""

from __future__ import annotations

import hashlib

__all__ = ["sha256_hex"]


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
