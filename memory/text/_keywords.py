"""What a set of texts holds, in a few words: the names a person would scan a list of topics by.

Code-like words first (a path, a file, an identifier with `_`, `.` or inner capitals: what a working
session is about), then the content words said most often; function words, narration and the speakers'
labels never count. Pure and deterministic (ties: the word seen first)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Final

from .lang import en

__all__ = ["keywords"]

_TOKEN: Final = re.compile(r"[A-Za-z_][\w./-]*[\w]|[A-Za-z]{3,}|[\u3400-\u9fff\u3040-\u30ff]{2,}")
_CODE: Final = re.compile(r"[_./]|[a-z][A-Z]")
_ESCAPE: Final = re.compile(r"\\(.)")
_STOP: Final = frozenset(w.casefold() for w in en.STOPWORDS)


def _words(text: str) -> list[str]:
    return [w.strip("./-") for w in _TOKEN.findall(_ESCAPE.sub(r"\1", text))]


def keywords(texts: Iterable[str], *, limit: int = 6, exclude: Iterable[str] = ()) -> list[str]:
    """The words `texts` are about: code-like words by count, then content words (at least four letters,
    not function words) by count, each once (compared case-insensitively), at most `limit`."""
    skip = {w.casefold() for w in exclude}
    code: Counter[str] = Counter()
    plain: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for text in texts:
        for word in _words(text):
            key = word.casefold()
            if not word or key in skip or key in _STOP or word.startswith(("http", "www.")):
                continue
            if _CODE.search(word) and len(word) >= 3:
                code[key] += 1
            elif len(word) >= 4 and not word.isdigit():
                plain[key] += 1
            else:
                continue
            shown.setdefault(key, word)
    chosen = [k for k, _ in code.most_common()] + [k for k, _ in plain.most_common() if k not in code]
    return [shown[k] for k in chosen[:limit]]
