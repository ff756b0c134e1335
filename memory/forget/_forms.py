"""The forms a forgotten text takes in a home, and their hashes (never the text itself).

A turn's text is written as it is (node files, archive frames), JSON-escaped (node files, with and
without `ensure_ascii`), folded and made inert (claims quote `inert(excerpt(text))`), capitalised (a topic
title), casefolded (a topic's file name) and cut to an excerpt (claims and recall entries). Each form shorter than `MIN_BYTES` is left out:
so few bytes cannot be told from ordinary bytes of other data (documented in docs/forget.md)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Final

from ..format import TextHash, inert, is_topic_slug
from ..write import excerpt, may_name, topic_slug

__all__ = ["HEAD_MASK", "MIN_BYTES", "P", "forms", "hashes", "name_forms", "roll", "subject_slugs"]

MIN_BYTES: Final = 8  # also the head's window: every form has one
HEAD_MASK: Final = (1 << 32) - 1  # a head keeps 32 bits of its window's rolling hash
P: Final = 0x100000001B3  # odd, so invertible modulo 2**64 (the scanner divides by its powers)
_MASK: Final = (1 << 64) - 1


def roll(data: bytes) -> int:
    """sum(data[k] * P**k) mod 2**64: the rolling hash the scanner computes for every window."""
    h, power = 0, 1
    for byte in data:
        h = (h + byte * power) & _MASK
        power = (power * P) & _MASK
    return h


def _variants(text: str) -> set[str]:
    folded = " ".join(text.split())
    gist = excerpt(text)
    gist = gist[:-2] if gist.endswith(" …") else gist
    out: set[str] = set()
    # As said; folded; the gist a claim quotes; capitalised (a topic's title) and casefolded (its file name).
    for base in {text, folded, gist, text[:1].upper() + text[1:], text.casefold()}:
        for form in (base, inert(base)):
            out.update((form, json.dumps(form, ensure_ascii=False)[1:-1], json.dumps(form)[1:-1]))
    return out


def forms(texts: Iterable[str]) -> list[bytes]:
    """The distinct byte forms of `texts` worth scanning for, sorted."""
    found: set[bytes] = set()
    for text in texts:
        for form in _variants(text):
            data = form.encode("utf-8", "surrogatepass")
            if len(data) >= MIN_BYTES:
                found.add(data)
    return sorted(found)


def hashes(texts: Iterable[str]) -> list[TextHash]:
    return [
        TextHash(len(f), roll(f[:MIN_BYTES]) & HEAD_MASK, hashlib.sha256(f).hexdigest()) for f in forms(texts)
    ]


# A word as the subject picker reads one, and the longest name it takes (a run of capitalised words).
_TOKEN: Final = re.compile(r"[^\W\d_](?:[\w’'-]*[^\W_])?")
_NAME_WORDS: Final = 3
# Names no subject gives a topic (the fallback page, the reserved ones): never a copy of a text.
_FIXED: Final = frozenset({"notes", "core", "held", "rejected", "index"})


def subject_slugs(text: str) -> set[str]:
    """The slugs a topic named after `text` could take: each word that may name a subject (and its
    singulars), and each run of up to three capitalised words ("New York" -> `new-york`)."""
    tokens = _TOKEN.findall(text)
    out: set[str] = set()
    for i, token in enumerate(tokens):
        if may_name(token):
            lower = token.casefold()
            words = {token}
            if lower.endswith("s") and len(lower) > 3:
                words |= {lower[:-1], lower[:-2], lower[:-3] + "y"}
            out.update(topic_slug(word) for word in words if word)
        if token[:1].isupper():
            run = [token]
            for nxt in tokens[i + 1 : i + _NAME_WORDS]:
                if not nxt[:1].isupper():
                    break
                run.append(nxt)
                out.add(topic_slug(" ".join(run)))
    return {slug for slug in out if is_topic_slug(slug) and slug not in _FIXED}


def name_forms(slugs: Iterable[str]) -> list[str]:
    """How a topic named `slug` shows in a home: its file name (in the txlog, the index, the recall
    index, the file system), the prefix of its parts (`topics/<slug>--2.md`, ...) and of the file its
    held blocks wait in (`topics/held--<slug>.md`)."""
    return sorted(
        form
        for slug in slugs
        for form in (f"topics/{slug}.md", f"topics/{slug}--", f"topics/held--{slug}")  # and its held blocks
    )
