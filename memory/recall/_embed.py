"""Dense vectors for recall: WordLlama's 256-dimension static embeddings, read from its own wheel.

The wheel ships the weights (a safetensors file of 32,000 x 256 float16 rows) and the tokenizer, so
loading never touches the network. Loading is cheap because nothing is decoded up front: the weights
file is memory-mapped where the wheel installed it (a safetensors file is a JSON header and then the raw
rows), and only the rows a text uses are read and widened to float32, the exact conversion WordLlama
makes of the whole matrix; the tokenizer is loaded by `tokenizers` alone, and a reader that finds the
tokenizer's BPE table (`_bpe`, written by the writer once per machine: `_bpe_cache`) does not load it at
all unless a text needs it (one naming a special token). The `wordllama` package itself
(with `requests`, and a `logging.basicConfig` of the host's root logger) is imported only when its wheel
is not laid out as expected, and then its own loader gives the model.

The vectors are Matryoshka-trained: their first 64 dimensions are a coarser embedding of their own, which
the search uses as a fast first pass over every block (0.5 ms at 100,000 blocks, against 5 ms for 256).

A static model's vector is the mean of its tokens' rows, so nearly all of an embedding's cost is the
tokenizer (measured: 200 µs of 250 for a 500-character block). Its BPE runs over the whole text, but its
vocabulary has no token with a word boundary (`▁`) after another character, so no merge crosses a word:
each `▁word` piece tokenizes alone to exactly what it gives in context. Pieces are cached, which makes a
block's ids a few dictionary look-ups; the mean is summed token by token in order, as WordLlama does, so
the vectors are bit-identical to its `embed` (checked against the tokenizer's own path when the model
loads, and against WordLlama by tests).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import re
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ._bpe import Table
from ._bpe_cache import ensure_table, read_table

__all__ = ["COARSE", "DIM", "MODEL", "embed", "load_model", "normalise", "write_table"]

log = logging.getLogger("dagmem.recall")

MODEL: Final = "wordllama-0.4-l2_supercat-256"
DIM: Final = 256
COARSE: Final = 64

# Where the pinned wheel keeps its files, relative to its package directory.
_WEIGHTS: Final = "weights/l2_supercat_256.safetensors"
_TOKENIZER: Final = "tokenizers/l2_supercat_tokenizer_config.json"
_TENSOR: Final = "embedding.weight"
_HEADER_MAX: Final = 1 << 20  # bytes of a safetensors JSON header this reader accepts

_BOUNDARY: Final = "\u2581"  # SentencePiece's word boundary, which the normaliser puts for each space
_PIECE: Final = re.compile(f"{_BOUNDARY}*[^{_BOUNDARY}]+|{_BOUNDARY}+")
_NORMALISER: Final = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": _BOUNDARY},
        {"type": "Replace", "pattern": {"String": " "}, "content": _BOUNDARY},
    ],
}
# sha256 of tokenizer files whose vocabulary was scanned (no `▁` after another character in any token):
# the scan walks 32,000 tokens in Python (15 ms), so a known file skips it; any other file is scanned.
_SCANNED: Final = frozenset({"93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68"})
_SAMPLE_EVERY: Final = 16  # a BPE table is checked against the tokenizer on every 16th vocabulary token
_CACHE_MAX: Final = 1 << 18  # pieces kept (a few tens of MB at most); cleared whole when full
_MEAN_ROWS: Final = 1 << 14  # rows a long text's mean gathers at a time (16 MB of float32)
_CHECK: Final = ["", " ", "  two  spaces ", "a\nb\tc", "Ünïcödé 漢字 🙂 <s> x", "8 May 2023 User: it's fine."]

Rows = npt.NDArray[np.float16] | npt.NDArray[np.float32]


class _Model:
    """The embedding rows (vocabulary x DIM, float16 mapped or float32) and the tokenizer: given at once,
    or, when a BPE table stands in for it (every word piece's ids: see `_bpe`), loaded on first need (a
    text naming a special token, or a piece the table refuses)."""

    def __init__(
        self,
        rows: Rows,
        *,
        tokenizer: Any = None,
        load_tokenizer: Callable[[], Any] | None = None,
        table: Table | None = None,
        source: Path | None = None,
        sha256: str | None = None,
        scanned: bool = False,
    ) -> None:
        self.rows = rows
        self.table = table
        self.source, self.sha256 = source, sha256  # the tokenizer's file (None: WordLlama's loader)
        self._load_tokenizer = load_tokenizer
        self._tokenizer: Any = None
        self.pieces: dict[str, list[int]] = {}
        self.lock = threading.Lock()
        self._loading = threading.Lock()
        if table is not None:
            # A table is written only for a tokenizer of the shape the pieces are exact for, and checked
            # against it then (see `write_table`).
            self.special: tuple[str, ...] = tuple(table.specials)
            self.fast = True
            return
        self._tokenizer = tokenizer
        self.special = tuple(token.content for token in tokenizer.get_added_tokens_decoder().values())
        normaliser = tokenizer.normalizer
        bpe = tokenizer.model
        # The piece cache is exact only for this tokenizer's shape (see the module's doc); any other
        # shape, or a failed self-check, takes the tokenizer's own path for every text.
        self.fast = (
            normaliser is not None
            and json.loads(normaliser.__getstate__()) == _NORMALISER
            and tokenizer.pre_tokenizer is None
            and type(bpe).__name__ == "BPE"
            and bpe.dropout is None
            and (scanned or not any(_BOUNDARY in token.lstrip(_BOUNDARY) for token in tokenizer.get_vocab()))
        )
        if self.fast:
            self.fast = bool(np.array_equal(self.embed(_CHECK), self.slow(_CHECK)))

    @property
    def tokenizer(self) -> Any:
        """The `tokenizers.Tokenizer`, loaded now if a table stood in for it so far."""
        if self._tokenizer is None:
            with self._loading:
                if self._tokenizer is None:
                    assert self._load_tokenizer is not None
                    self._tokenizer = self._load_tokenizer()
        return self._tokenizer

    def piece_ids(self, piece: str) -> list[int]:
        """One word piece's ids: the tokenizer's BPE model, or the table while the tokenizer is not loaded."""
        if self._tokenizer is None and self.table is not None:
            found = self.table.ids(piece)
            if found is not None:
                return found
        return [token.id for token in self.tokenizer.model.tokenize(piece)]

    def ids(self, text: str) -> list[int] | None:
        """`text`'s token ids, or None for a text the pieces do not cover (empty, or naming a special
        token, which the tokenizer splits out before it normalises)."""
        if not text or ("<" in text and any(token in text for token in self.special)):
            return None
        pieces = self.pieces
        out: list[int] = []
        for piece in _PIECE.findall(_BOUNDARY + text.replace(" ", _BOUNDARY)):
            found = pieces.get(piece)
            if found is None:
                found = self.piece_ids(piece)
                with self.lock:
                    if len(pieces) >= _CACHE_MAX:
                        pieces.clear()
                    pieces[piece] = found
            out.extend(found)
        return out

    def mean(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """The mean of the rows of `ids` (zeros for none), as WordLlama pools them: the rows widened to
        float32 (exact), summed row by row in token order in float32, then divided by the count.

        A long text is summed `_MEAN_ROWS` rows at a time, each block led by the running total, so the
        additions are the same ones in the same order (the same bits) while memory stays a few MB: the
        largest turn (8 MiB, 3.7 M tokens) gathered whole took 6 GB and half a minute."""
        if len(ids) <= _MEAN_ROWS:
            total = np.sum(np.asarray(self.rows[ids], dtype=np.float32), axis=0, dtype=np.float32)
        else:
            rows = self.rows.view(np.ndarray)  # a plain view of the mapped rows: no memmap per block
            order = np.asarray(ids, dtype=np.intp)
            block = np.empty((_MEAN_ROWS + 1, DIM), np.float32)
            block[1:] = rows[order[:_MEAN_ROWS]]
            total = np.sum(block[1:], axis=0, dtype=np.float32)
            for start in range(_MEAN_ROWS, len(order), _MEAN_ROWS):
                part = order[start : start + _MEAN_ROWS]
                block[0] = total
                block[1 : len(part) + 1] = rows[part]
                total = np.sum(block[: len(part) + 1], axis=0, dtype=np.float32)
        mean: npt.NDArray[np.float32] = np.asarray(total / np.float32(max(len(ids), 1)), dtype=np.float32)
        return mean

    def slow(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """The tokenizer's own path for every text (WordLlama's: the whole text encoded, no specials)."""
        out = np.empty((len(texts), DIM), np.float32)
        last = len(self.rows) - 1
        for i, encoding in enumerate(self.tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = [
                min(max(t, 0), last) for t, m in zip(encoding.ids, encoding.attention_mask, strict=True) if m
            ]
            out[i] = self.mean(ids)
        return out

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if not self.fast:
            return self.slow(texts)
        out = np.empty((len(texts), DIM), np.float32)
        rest: list[int] = []
        for i, text in enumerate(texts):
            ids = self.ids(text)
            if ids is None:
                rest.append(i)
                continue
            out[i] = self.mean(ids)
        if rest:
            out[rest] = self.slow([texts[i] for i in rest])
        return out


def _package() -> Path | None:
    """The installed wordllama package's directory, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def map_weights(path: Path) -> npt.NDArray[np.float16] | None:
    """The embedding rows of a safetensors file, memory-mapped (nothing read until a row is used); None
    unless it holds exactly one float16 tensor `embedding.weight` of rows of DIM (another layout is
    loaded by WordLlama instead)."""
    try:
        with path.open("rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            if not 0 < length <= _HEADER_MAX:
                return None
            header = json.loads(f.read(length))
            size = path.stat().st_size
    except (OSError, ValueError, struct.error):
        return None
    tensor = header.get(_TENSOR) if isinstance(header, dict) else None
    if not isinstance(tensor, dict) or tensor.get("dtype") != "F16":
        return None
    shape, offsets = tensor.get("shape"), tensor.get("data_offsets")
    if not (isinstance(shape, list) and len(shape) == 2 and shape[1] == DIM and isinstance(shape[0], int)):
        return None
    begin, end = offsets if isinstance(offsets, list) and len(offsets) == 2 else (-1, -1)
    start = 8 + length + begin
    if begin < 0 or end - begin != shape[0] * DIM * 2 or start + shape[0] * DIM * 2 > size or shape[0] < 1:
        return None
    rows: npt.NDArray[np.float16] = np.memmap(
        path, dtype=np.float16, mode="r", offset=start, shape=(shape[0], DIM)
    )
    return rows


def _from_wheel(workspace: Path | None) -> _Model | None:
    """The model from the wheel's files directly (milliseconds; the tokenizer too when `workspace` holds
    no BPE table for it), or None when they are not as expected."""
    package = _package()
    if package is None:
        return None
    rows = map_weights(package / _WEIGHTS)
    source = package / _TOKENIZER
    if rows is None or not source.is_file():
        return None
    sha256 = _sha256(source)

    def load_tokenizer() -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(source))
        tokenizer.no_truncation()  # as WordLlama sets it: a long text is embedded whole
        return tokenizer

    # A reader (it names its workspace) uses the table: the machine's shared copy, else the workspace's
    # own. A writer (no workspace) loads the tokenizer: it embeds whole turns, up to 8 MiB of one word
    # piece, which the table's pure-Python BPE would take minutes over.
    table = read_table(workspace, sha256) if workspace is not None else None
    if table is not None and table.vocab == len(rows):
        return _Model(rows, load_tokenizer=load_tokenizer, table=table, source=source, sha256=sha256)
    tokenizer = load_tokenizer()
    if tokenizer.get_vocab_size(with_added_tokens=True) != len(rows):
        return None
    return _Model(
        rows,
        tokenizer=tokenizer,
        load_tokenizer=load_tokenizer,
        source=source,
        sha256=sha256,
        scanned=sha256 in _SCANNED,
    )


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _from_wordllama() -> _Model:
    import wordllama

    package = Path(wordllama.__file__).parent
    loaded = wordllama.WordLlama.load(cache_dir=package, disable_download=True, dim=DIM)
    tokenizer = loaded.tokenizer
    tokenizer.no_padding()  # WordLlama pads its batches; the mean here takes each text's own ids
    return _Model(loaded.embedding, tokenizer=tokenizer)


_model: _Model | None = None
_lock = threading.Lock()
_tables: dict[str, bytes | None] = {}  # tokenizer sha256 -> its table's bytes (built once a process)


def _load(workspace: Path | None = None) -> _Model:
    global _model
    with _lock:
        if _model is None:
            _model = _from_wheel(workspace) or _from_wordllama()
    return _model


def load_model() -> None:
    """Load the embedding model now (once per process; tens of milliseconds): the writer does it when it
    starts, so that its first install does not wait for it."""
    _load()


def write_table(memory: Path, *, fsync: bool) -> None:
    """Make the BPE table of the installed tokenizer readable for the workspace at `memory` (the writer,
    after an install: one `stat` once it is there): one copy per machine in the user's cache, the
    workspace's own only when the cache cannot be written (`_bpe_cache`). A tokenizer the table cannot
    stand in for, or a table whose ids differ from the tokenizer's on the check sample, gets none
    (readers load it). Never raises."""
    model = _load()
    if model.sha256 is None or model.source is None:
        return
    source, sha256 = model.source, model.sha256

    def build() -> bytes | None:
        with _lock:
            if sha256 not in _tables:
                _tables[sha256] = _table_bytes(model, source, sha256)
            return _tables[sha256]

    ensure_table(memory, sha256, len(model.rows), build, fsync=fsync)


def _table_bytes(model: _Model, source: Path, sha256: str) -> bytes | None:
    if not model.fast:
        return None
    tokenizer = model.tokenizer
    table = Table.from_json(sha256, json.loads(source.read_bytes()), len(model.rows))
    if table is None:
        return None
    sample = sorted(tokenizer.get_vocab())[::_SAMPLE_EVERY]
    sample += [piece for text in _CHECK for piece in _PIECE.findall(_BOUNDARY + text.replace(" ", _BOUNDARY))]
    bpe = tokenizer.model
    wrong = [piece for piece in sample if table.ids(piece) != [token.id for token in bpe.tokenize(piece)]]
    if wrong:
        log.warning("recall: no BPE table for tokenizer %s, its ids differ on %r", sha256[:16], wrong[:3])
        return None
    return table.to_bytes()


def normalise(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    out: npt.NDArray[np.float32] = (vectors / np.maximum(norms, 1e-9)).astype(np.float32)
    return out


def embed(texts: list[str], workspace: Path | None = None) -> npt.NDArray[np.float32]:
    """Unit vectors (len(texts) x DIM, float32); an empty list gives an empty (0 x DIM) array. A reader
    names its `workspace` (its `memory/`): a process whose model is not loaded yet reads that workspace's
    BPE table instead of loading the tokenizer."""
    if not texts:
        return np.zeros((0, DIM), np.float32)
    return normalise(_load(workspace).embed(texts))
