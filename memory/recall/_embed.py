"""Dense vectors for recall: WordLlama's 256-dimension static embeddings, loaded from its own wheel.

The wheel ships the weights and tokenizer (16 MB), so loading never touches the network: the package
directory is given as the cache and downloads are disabled (its plain `load()` would try a hub first).
The vectors are Matryoshka-trained: their first 64 dimensions are a coarser embedding of their own, which
the search uses as a fast first pass over every block (0.5 ms at 100,000 blocks, against 5 ms for 256).

A static model's vector is the mean of its tokens' rows, so nearly all of an embedding's cost is the
tokenizer (measured: 200 µs of 250 for a 500-character block). Its BPE runs over the whole text, but its
vocabulary has no token with a word boundary (`▁`) after another character, so no merge crosses a word:
each `▁word` piece tokenizes alone to exactly what it gives in context. Pieces are cached, which makes a
block's ids a few dictionary look-ups; the mean is summed token by token in order, as WordLlama does, so
the vectors are bit-identical to its `embed` (checked when the model loads, and by tests).
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["COARSE", "DIM", "MODEL", "embed", "load_model", "normalise"]

MODEL: Final = "wordllama-0.4-l2_supercat-256"
DIM: Final = 256
COARSE: Final = 64

_BOUNDARY: Final = "\u2581"  # SentencePiece's word boundary, which the normaliser puts for each space
_PIECE: Final = re.compile(f"{_BOUNDARY}*[^{_BOUNDARY}]+|{_BOUNDARY}+")
_NORMALISER: Final = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": _BOUNDARY},
        {"type": "Replace", "pattern": {"String": " "}, "content": _BOUNDARY},
    ],
}
_CACHE_MAX: Final = 1 << 18  # pieces kept (a few tens of MB at most); cleared whole when full
_CHECK: Final = ["", " ", "  two  spaces ", "a\nb\tc", "Ünïcödé 漢字 🙂 <s> x", "8 May 2023 User: it's fine."]


class _Model:
    def __init__(self, wordllama: Any) -> None:
        self.wordllama = wordllama
        self.rows: npt.NDArray[np.float32] = wordllama.embedding  # vocab x DIM, float32, contiguous
        tokenizer = wordllama.tokenizer
        self.bpe = tokenizer.model
        self.special = tuple(token.content for token in tokenizer.get_added_tokens_decoder().values())
        normaliser = tokenizer.normalizer
        # The piece cache is exact only for this tokenizer's shape (see the module's doc); any other
        # shape, or a failed self-check, takes WordLlama's own path for every text.
        self.fast = (
            normaliser is not None
            and json.loads(normaliser.__getstate__()) == _NORMALISER
            and tokenizer.pre_tokenizer is None
            and type(self.bpe).__name__ == "BPE"
            and self.bpe.dropout is None
            and not any(_BOUNDARY in token.lstrip(_BOUNDARY) for token in tokenizer.get_vocab())
        )
        self.pieces: dict[str, list[int]] = {}
        self.lock = threading.Lock()
        if self.fast:
            self.fast = bool(np.array_equal(self.embed(_CHECK), self.slow(_CHECK)))

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
                found = [token.id for token in self.bpe.tokenize(piece)]
                with self.lock:
                    if len(pieces) >= _CACHE_MAX:
                        pieces.clear()
                    pieces[piece] = found
            out.extend(found)
        return out

    def slow(self, texts: list[str]) -> npt.NDArray[np.float32]:
        vectors: npt.NDArray[np.float32] = np.asarray(self.wordllama.embed(texts), dtype=np.float32)
        return vectors

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
            # Row by row in token order, in float32, then / count: WordLlama's masked mean exactly.
            out[i] = np.sum(self.rows[ids], axis=0, dtype=np.float32) / np.float32(len(ids))
        if rest:
            out[rest] = self.slow([texts[i] for i in rest])
        return out


_model: _Model | None = None
_lock = threading.Lock()


def _load() -> _Model:
    global _model
    with _lock:
        if _model is None:
            import wordllama

            package = Path(wordllama.__file__).parent
            _model = _Model(wordllama.WordLlama.load(cache_dir=package, disable_download=True, dim=DIM))
    return _model


def load_model() -> None:
    """Load the embedding model now (once per process; about 0.3 s): the writer does it when it starts,
    so that its first install does not wait for it."""
    _load()


def normalise(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    out: npt.NDArray[np.float32] = (vectors / np.maximum(norms, 1e-9)).astype(np.float32)
    return out


def embed(texts: list[str]) -> npt.NDArray[np.float32]:
    """Unit vectors (len(texts) x DIM, float32); an empty list gives an empty (0 x DIM) array."""
    if not texts:
        return np.zeros((0, DIM), np.float32)
    return normalise(_load().embed(texts))
