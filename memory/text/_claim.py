"""What a claim of the extractive distiller quotes the person as saying.

An extractive claim quotes each turn of an exchange as `<Speaker>: “<gist>”` (`User`, `Assistant`,
`Agent`, `Tool`), its text made inert (Markdown characters backslash-escaped). The person's words are the
`User` quotes, unescaped; a claim written in other words (a model's) is taken whole."""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["user_text"]

_USER_QUOTE: Final = re.compile(r"User: “(.*?)”(?= Assistant: “| User: “| Agent: “| Tool: “|$)")
_UNESCAPE: Final = re.compile(r"\\([!-/:-@\[-`{-~])")


@functools.lru_cache(maxsize=8192)
def user_text(claim: str) -> str:
    """The user's words quoted in a stored claim (`User: “…”`, the extractive form), plain; for a claim
    written in other words (a model's), the whole claim; for one quoting only others, nothing. Remembered:
    every write asks it again of each block of the files it touches, and recall of each hit it orders."""
    plain = _UNESCAPE.sub(r"\1", claim)
    quotes = _USER_QUOTE.findall(plain)
    if quotes:
        return " ".join(quotes)
    return "" if plain.startswith(("Assistant: “", "Agent: “", "Tool: “")) else plain
