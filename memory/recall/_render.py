"""`render_context`: memory as one `<memory-context>` block, ready to inject into a prompt (DESIGN §8).

The block holds the core block first, then each hit with its date and evidence labels. Given a string, a
string that already is such a block comes back unchanged and any other is wrapped once: wrapping twice (the
peer's bug) gave two layers, and the inner one was later stripped to an empty shell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ._hit import Hit

__all__ = ["render_context"]

OPEN: Final = "<memory-context>"
CLOSE: Final = "</memory-context>"
_WRAPPED: Final = re.compile(r"\s*<memory-context>\n(?P<body>(?:.*\n)?)</memory-context>\s*", re.DOTALL)


def _neutral(text: str) -> str:
    # Quoted memory must not close (or open) the block it sits in.
    return text.replace(CLOSE, "</memory-context\u200b>").replace(OPEN, "<memory-context\u200b>")


def _label(hit: Hit) -> str:
    labels = []
    for evidence in hit.evidence:
        when = f" {evidence.time[:16].replace('T', ' ')}" if evidence.time else ""
        labels.append(f"{evidence.role or 'record'} {evidence.source_id}{when}")
    return "; ".join(labels)


def render_context(hits: Sequence[Hit] | str, core: str | None = None) -> str:
    """One `<memory-context>` block for `hits` (and the core block first, if given)."""
    if isinstance(hits, str):
        wrapped = _WRAPPED.fullmatch(hits)
        if wrapped is not None and OPEN not in wrapped["body"] and CLOSE not in wrapped["body"]:
            return hits
        body = [_neutral(hits.strip("\n"))]
        if core:
            body.insert(0, _neutral(core.strip("\n")))
        return "\n".join([OPEN, *body, CLOSE])
    parts: list[str] = []
    if core and core.strip():
        parts.append(_neutral(core.strip("\n")))
    if hits:
        lines = ["## Recalled"]
        for hit in hits:
            date = f"[{hit.date}] " if hit.date else ""
            where = f" ({hit.topic}#{hit.block_id})" if hit.topic else ""
            lines.append(f"- {date}{_neutral(hit.text)}{where}")
            label = _label(hit)
            if label:
                lines.append(f"  evidence: {_neutral(label)}")
        parts.append("\n".join(lines))
    return "\n".join([OPEN, *(parts or [""]), CLOSE]) if parts else f"{OPEN}\n{CLOSE}"
