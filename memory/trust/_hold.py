"""What may reach the core (the always-injected block): the hold rule.

A core fact needs evidence a person typed (`user` origin). A candidate drawn only from other origins
(`assistant`, `tool`, `imported`, `system`) is held. So is one that reads as an instruction to the agent
when part of its evidence was not typed by the person, or when the words the person typed do not carry it
(a model that turned a page's order into a "fact" and cited the user's turn beside it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from ._instruction import looks_like_instruction, normalise

__all__ = ["hold_reason"]

_WORD: Final = re.compile(r"\w+")
_SUPPORT = 0.6  # of the claim's words the person's own turns must hold, for an instruction-like claim


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(normalise(text)) if len(w) > 2 or not w.isascii()}


def hold_reason(claim: str, evidence: Iterable[tuple[str, str]]) -> str | None:
    """Why the candidate core fact `claim` is held, or None when it may reach the core. `evidence` is
    (origin, text) for each record it cites."""
    cited = list(evidence)
    typed = [text for origin, text in cited if origin == "user"]
    if not typed:
        origins = sorted({origin for origin, _ in cited}) or ["none"]
        return f"no evidence the person typed (origin {', '.join(origins)})"
    if not looks_like_instruction(claim):
        return None
    if len(typed) < len(cited):
        return "reads as an instruction to the agent, and part of its evidence was not typed by the person"
    words = _words(claim)
    said = set().union(*(_words(text) for text in typed))
    if words and len(words & said) < _SUPPORT * len(words):
        return "reads as an instruction to the agent that the person's own words do not carry"
    return None
