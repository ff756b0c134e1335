"""Counted nouns for people: "1 session", "2 sessions"."""

from __future__ import annotations

__all__ = ["plural"]

_IRREGULAR = {"batch": "batches", "branch": "branches", "entry": "entries"}


def plural(count: int, noun: str) -> str:
    """`count` and `noun`, the noun in the plural unless the count is exactly one."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {_IRREGULAR.get(noun, noun + 's')}"
