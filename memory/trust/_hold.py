"""What may reach the core (the always-injected block): the hold rule.

A core fact needs evidence a person typed (`user` origin). A candidate drawn only from other origins
(`assistant`, `tool`, `imported`, `system`) is held. When its evidence is mixed (the person's words and
another's), it is held if the claim reads as an instruction to the agent, or if the other evidence holds
one, or a link, an e-mail address or a command line (a model that merged a page's order into the
person's "fact"). A model's usual core fact, the person's words with the assistant's reply cited beside
them, is not held for that alone. A claim on the person's words alone is held only when it reads as an instruction that
those words do not carry (a model that made one up and cited the user's turn).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from ._instruction import looks_like_injection, looks_like_instruction, normalise

__all__ = ["hold_reason", "page_hold_reason"]

# Origins of text no one in the conversation wrote to the other: a tool's output (a page, a file, a
# command's output), a transcript brought in from elsewhere, the host's own text. An instruction in such
# text is the injection the hold queue exists for, wherever it would be filed.
_READ: Final = frozenset({"tool", "imported", "system"})

_WORD: Final = re.compile(r"\w+")
# How a model names the person in a claim about them: not words the person had to say.
_ABOUT: Final = frozenset(
    {"user", "user's", "users", "the", "person", "they", "their", "them", "she", "her", "his"}
)
_SUPPORT = 0.6  # of the claim's words the person's own turns must hold, for an instruction-like claim
# A link, an e-mail address or a command line in evidence the person did not type: a core fact never needs one.
_ADDRESS: Final = re.compile(r"https?://|www\.|[\w.+-]+@[\w-]+\.\w|`[^`]+`|\$ \w|\|\s*(?:ba|z)?sh\b")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(normalise(text)) if len(w) > 2 or not w.isascii()}


def hold_reason(claim: str, evidence: Iterable[tuple[str, str]]) -> str | None:
    """Why the candidate core fact `claim` is held, or None when it may reach the core. `evidence` is
    (origin, text) for each record it cites."""
    cited = list(evidence)
    typed = [text for origin, text in cited if origin == "user"]
    other = [text for origin, text in cited if origin != "user"]
    if not typed:
        origins = sorted({origin for origin, _ in cited}) or ["none"]
        return f"no evidence the person typed (origin {', '.join(origins)})"
    if other:
        if looks_like_instruction(claim):
            return (
                "reads as an instruction to the agent, and part of its evidence was not typed by the person"
            )
        if any(looks_like_instruction(text) or _ADDRESS.search(text) for text in other):
            return "part of its evidence was not typed by the person and holds an instruction, a link or an address"
        return None
    if looks_like_instruction(claim) and not _carried(claim, typed):
        return "reads as an instruction to the agent that the person's own words do not carry"
    return None


def page_hold_reason(claim: str, evidence: Iterable[tuple[str, str]]) -> str | None:
    """Why a block a batch adds to a topic page (not the core) is held, or None when it is filed. `evidence`
    is (origin, text) for each record it cites. A page is recalled and injected like the core, so an
    instruction carried by text read or brought in (origin `tool`, `imported` or `system`) waits for the
    person as a core fact would: held when that text addresses the agent itself (`looks_like_injection`:
    overriding its instructions, a standing order, a fake role marker, ...). The commands, URLs and
    imperatives a tool's output is full of are what an agent's work looks like, and the person's and the
    model's own words are filed as said; what is filed is quoted as material, never as an instruction,
    when it is injected (`render_context`). `claim` is the block's words (kept for a caller's log)."""
    read = [(origin, text) for origin, text in evidence if origin in _READ]
    if not read:
        return None
    if any(looks_like_injection(text) for _, text in read):
        origins = ", ".join(sorted({origin for origin, _ in read}))
        return f"reads as an instruction to the agent, carried by text the person did not type (origin {origins})"
    return None


def _carried(claim: str, typed: list[str]) -> bool:
    """The person's own words hold most of the claim's (a model's paraphrase keeps most of them)."""
    words = _words(claim) - _ABOUT
    said = set().union(*(_words(text) for text in typed))
    return not words or len(words & said) >= _SUPPORT * len(words)
