"""WordLlama's BPE over one word piece, from a small table: what a reader needs of the tokenizer.

Loading the tokenizer (`tokenizers`' `Tokenizer.from_file` of the wheel's 1.8 MB JSON, 61,249 merges) costs
50 ms on an idle machine and several times that on a busy one: most of a fresh recall. A query has a few
word pieces, and a piece's ids are its BPE: start from its characters (a character outside the vocabulary
as its UTF-8 bytes' `<0xXX>` tokens), then merge, again and again, the adjacent pair whose merge comes
first in the merge list (the leftmost of equals), until no adjacent pair has a merge. This module does
exactly what `tokenizers`' BPE model does for one piece, queue and stale-entry rule included, over a
table of the characters, the byte tokens and the merges as sorted arrays (1 MB, read in a millisecond).

The table is a cache, derived from the tokenizer's file and named by its sha256, so another wheel gets
its own: `bpe-<16 hex>.bin` (an 8-byte length, a JSON header, then the merge arrays; its CRC-32 in the
header), one per machine in the user's cache directory (`_bpe_cache`; a home's own
`memory/.dagmem/bpe-<16 hex>.bin` only when that cannot be written), written by the writer (temp file
and rename) once it has checked the table's ids against the tokenizer's own on a sample of the
vocabulary. A reader that finds none, or one it cannot read, loads the tokenizer. Only tokenizers of the
shape this rule covers get a table (`from_json`).
"""

from __future__ import annotations

import array
import bisect
import heapq
import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Self

import numpy as np
import numpy.typing as npt

__all__ = ["Table", "table_path"]

FORMAT: Final = 1


def table_path(memory: Path, tokenizer_sha256: str) -> Path:
    return memory / ".dagmem" / f"bpe-{tokenizer_sha256[:16]}.bin"


def _ints(values: npt.NDArray[np.int64] | npt.NDArray[np.int32]) -> Sequence[int]:
    """A 1-d integer array's items as Python ints, as an `array.array` (a copy of its bytes: no
    Python object per item)."""
    wide = values.dtype.itemsize == 8
    return array.array(
        "q" if wide else "i", np.ascontiguousarray(values, np.int64 if wide else np.int32).tobytes()
    )


class Table:
    """The BPE of one tokenizer: `chars` (character -> id), `byte_ids` (256 ids of `<0x00>`..`<0xFF>`),
    and the merges as `keys` (left id << 32 | right id, sorted) with each one's `ranks` and `new` id."""

    def __init__(
        self,
        sha256: str,
        vocab: int,
        *,
        chars: dict[str, int],
        byte_ids: list[int],
        specials: list[str],
        keys: npt.NDArray[np.int64],
        ranks: npt.NDArray[np.int32],
        new: npt.NDArray[np.int32],
    ) -> None:
        self.sha256, self.vocab = sha256, vocab  # the tokenizer's file, and its vocabulary's size
        self.chars, self.byte_ids, self.specials = chars, byte_ids, specials
        self.keys, self.ranks, self.new = keys, ranks, new
        # As memoryviews: a piece's merges are a few dozen look-ups, each a bisection, and a view's items
        # are plain ints (numpy's per call overhead made a piece cost a millisecond); lists of the
        # 61,249 merges cost a fresh process 10 ms to build.
        self._keys: Sequence[int] = _ints(keys)
        self._ranks: Sequence[int] = _ints(ranks)
        self._new: Sequence[int] = _ints(new)

    @classmethod
    def from_json(cls, sha256: str, config: dict[str, Any], vocab_size: int) -> Self | None:
        """The table of a tokenizer's JSON, or None for a model this rule does not reproduce (not BPE,
        dropout, word prefixes or suffixes, merges ignored, a byte without its token)."""
        model = config.get("model")
        if not isinstance(model, dict) or model.get("type") != "BPE" or model.get("dropout") is not None:
            return None
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            return None
        if model.get("ignore_merges") or not model.get("byte_fallback"):
            return None
        vocab, merges = model.get("vocab"), model.get("merges")
        if not isinstance(vocab, dict) or not isinstance(merges, list):
            return None
        byte_ids = [vocab.get(f"<0x{b:02X}>") for b in range(256)]
        if not all(isinstance(i, int) for i in byte_ids):
            return None  # a character outside the vocabulary could become the unknown token
        table: dict[int, tuple[int, int]] = {}
        for rank, merge in enumerate(merges):
            pair = merge.split(" ") if isinstance(merge, str) else merge
            if not isinstance(pair, list) or len(pair) != 2:
                return None
            left, right = vocab.get(pair[0]), vocab.get(pair[1])
            joined = vocab.get(pair[0] + pair[1])
            if not (isinstance(left, int) and isinstance(right, int) and isinstance(joined, int)):
                return None
            table[(left << 32) | right] = (rank, joined)  # a repeated pair: the last one counts, as there
        ordered = sorted(table)
        keys = np.array(ordered, dtype=np.int64)
        ranks = np.array([table[key][0] for key in ordered], dtype=np.int32)
        new = np.array([table[key][1] for key in ordered], dtype=np.int32)
        chars = {token: i for token, i in vocab.items() if len(token) == 1}
        added = config.get("added_tokens") or []
        specials = [
            str(token["content"]) for token in added if isinstance(token, dict) and "content" in token
        ]
        bytes_ = [int(i) for i in byte_ids if isinstance(i, int)]
        return cls(
            sha256,
            vocab_size,
            chars=chars,
            byte_ids=bytes_,
            specials=specials,
            keys=keys,
            ranks=ranks,
            new=new,
        )

    def to_bytes(self) -> bytes:
        body = self.keys.tobytes() + self.ranks.tobytes() + self.new.tobytes()
        header = {
            "format": FORMAT,
            "tokenizer_sha256": self.sha256,
            "vocab": self.vocab,
            "chars": self.chars,
            "bytes": self.byte_ids,
            "specials": self.specials,
            "merges": len(self.keys),
            "crc32": zlib.crc32(body),
        }
        raw = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return len(raw).to_bytes(8, "little") + raw + body

    @classmethod
    def from_bytes(cls, data: bytes, sha256: str) -> Self | None:
        """The table in `data`, or None unless it is a whole one of this format for tokenizer `sha256`."""
        try:
            length = int.from_bytes(data[:8], "little")
            header = json.loads(data[8 : 8 + length])
            count = header["merges"]
            body = memoryview(data)[8 + length :]
            if (
                header["format"] != FORMAT
                or header["tokenizer_sha256"] != sha256
                or not isinstance(count, int)
                or len(body) != 16 * count
                or zlib.crc32(body) != header["crc32"]
            ):
                return None
            keys = np.frombuffer(body, np.int64, count)
            ranks = np.frombuffer(body, np.int32, count, 8 * count)
            new = np.frombuffer(body, np.int32, count, 12 * count)
            chars, byte_ids, specials, vocab = (
                header["chars"],
                header["bytes"],
                header["specials"],
                header["vocab"],
            )
            if not (isinstance(chars, dict) and isinstance(byte_ids, list) and len(byte_ids) == 256):
                return None
            if (
                not isinstance(vocab, int)
                or max([*byte_ids, *chars.values(), int(new.max(initial=0))]) >= vocab
            ):
                return None
            return cls(
                sha256,
                vocab,
                chars=chars,
                byte_ids=byte_ids,
                specials=list(specials),
                keys=keys,
                ranks=ranks,
                new=new,
            )
        except (ValueError, KeyError, TypeError):
            return None

    @classmethod
    def read(cls, path: Path, sha256: str) -> Self | None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                return cls.from_bytes(f.read(), sha256)
        except OSError:
            return None

    def _merge(self, left: int, right: int) -> tuple[int, int] | None:
        """(rank, new id) of the merge of the pair, None when it has none."""
        keys, key = self._keys, (left << 32) | right
        i = bisect.bisect_left(keys, key)
        return (self._ranks[i], self._new[i]) if i < len(keys) and keys[i] == key else None

    def ids(self, piece: str) -> list[int] | None:
        """The token ids of one word piece, as the tokenizer's BPE model gives them; None for a piece
        it would not take (a lone surrogate)."""
        symbols: list[int] = []
        for char in piece:
            known = self.chars.get(char)
            if known is not None:
                symbols.append(known)
                continue
            try:
                symbols.extend(self.byte_ids[b] for b in char.encode("utf-8"))
            except UnicodeEncodeError:
                return None
        n = len(symbols)
        if n < 2:
            return symbols
        after = [*range(1, n), -1]
        before = list(range(-1, n - 1))
        alive = [True] * n
        queue = [
            (merge[0], pos, merge[1])
            for pos in range(n - 1)
            if (merge := self._merge(symbols[pos], symbols[pos + 1])) is not None
        ]
        heapq.heapify(queue)  # the first merge in the list, then the leftmost: `tokenizers`' order
        while queue:
            _rank, pos, joined = heapq.heappop(queue)
            right = after[pos]
            if not alive[pos] or right == -1:
                continue
            current = self._merge(symbols[pos], symbols[right])
            if current is None or current[1] != joined:
                continue  # an entry for a pair that is no longer there
            symbols[pos] = joined
            alive[right] = False
            nxt = after[right]
            after[pos] = nxt
            if nxt != -1:
                before[nxt] = pos
            prev = before[pos]
            if prev != -1 and (merge := self._merge(symbols[prev], joined)) is not None:
                heapq.heappush(queue, (merge[0], prev, merge[1]))
            if nxt != -1 and (merge := self._merge(joined, symbols[nxt])) is not None:
                heapq.heappush(queue, (merge[0], pos, merge[1]))
        return [symbol for symbol, kept in zip(symbols, alive, strict=True) if kept]
