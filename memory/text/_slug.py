"""Slugs: how words name a file ("Belém Tower" -> "belem-tower")."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["slug_of"]


def slug_of(words: list[str]) -> str:
    """How a topic file is named after words ("Belém Tower" -> "belem-tower"): accents stripped, lower case,
    every run of other characters one "-", at most 48 characters."""
    folded = unicodedata.normalize("NFKD", " ".join(words).casefold()).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", folded).strip("-")[:48]
