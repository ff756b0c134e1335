"""What the search finds, as plain records: the fields of a `Hit` and its `Evidence` without the models
(pydantic), so that a fresh process that only renders a `<memory-context>` block (a hook on every
prompt, `dagmem recall --context`) never loads them. `search` gives `Hit`s made from these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..checkout import CodeCheck, GitLabel
from ..currency import Status

__all__ = ["BranchClass", "Found", "FoundEvidence", "Siblings"]

BranchClass = Literal["on", "sibling", "other"]
Siblings = Literal["demote", "exclude", "include"]


@dataclass(frozen=True, slots=True)
class FoundEvidence:
    """`Evidence`'s fields (see there)."""

    source_id: str
    session: str
    node: str | None
    role: str | None
    time: str | None
    text: str = ""
    seq: int | None = None
    origin: str | None = None
    git: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Found:
    """`Hit`'s fields (see there)."""

    text: str
    topic: str | None
    block_id: str | None
    score: float
    branch: BranchClass | None
    date: str | None
    evidence: tuple[FoundEvidence, ...]
    held: bool = False
    status: Status = "current"
    superseded_by: str | None = None
    superseded_on: str | None = None
    passage: str = ""
    partly_by: str | None = None
    git: GitLabel | None = None
    code: CodeCheck | None = None
