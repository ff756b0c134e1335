"""What recall returns (DESIGN §8): one `Hit` per topic block, with the records it cites, its branch class
and its currency status (DESIGN §12)."""

from __future__ import annotations

from dataclasses import fields

from pydantic import BaseModel, ConfigDict

from ..checkout import CodeCheck, GitLabel
from ..currency import Status
from ._found import BranchClass, Found, FoundEvidence, Siblings

__all__ = ["BranchClass", "CodeCheck", "Evidence", "GitLabel", "Hit", "Siblings", "Status", "hit_of"]


class Evidence(BaseModel):
    """One cited record: `source_id` is `<session>/<node>`; `time` is ISO-8601 UTC (to the second; `seq`,
    the record's number in its session, orders records said within one second); `origin` says who wrote
    its text (None for a citation the archive does not hold)."""

    model_config = ConfigDict(frozen=True)
    source_id: str
    session: str
    node: str | None
    role: str | None
    time: str | None
    text: str = ""  # the start of the record (up to 300 characters)
    seq: int | None = None
    origin: str | None = None  # where its text came from: user, assistant, tool, imported, system
    # Where in git it was said (`format.GitContext`'s JSON: repo, branch, commit, and an edit's path and
    # cited text), None when not known.
    git: dict[str, str] | None = None


class Hit(BaseModel):
    """A topic block found by recall. `branch` is None when no session was given; `evidence` is in order
    of relevance to the query (the citation order breaks ties). `status` is the block's currency for the
    reader: `"current"`, `"superseded"` (a later block states a newer value: `superseded_by` names it, and
    `superseded_on` is the date it was superseded) or `"left"` (said only on a branch the session left).
    `partly_by` names the block holding a newer value of part of a current hit (its other facts stand):
    that part's current statement, given right after the hit unless it ranks above it already or the
    reader may not see it (with no room left in k, the block the topic file names)."""

    model_config = ConfigDict(frozen=True)
    text: str
    topic: str | None
    block_id: str | None
    score: float
    branch: BranchClass | None
    date: str | None
    evidence: tuple[Evidence, ...]
    held: bool = False  # a candidate core fact held for review (returned only with `held=True`)
    status: Status = "current"
    superseded_by: str | None = None
    superseded_on: str | None = None  # YYYY-MM-DD, with `superseded_by`
    # The part of the block's text (its claim and the rest of every turn it quotes the start of) that
    # holds what the query asks, with some text around it: what `render_context` quotes of the hit.
    passage: str = ""
    partly_by: str | None = None  # a block id, b-<8 hex>; added after the other fields (the wire is additive)
    # For a reader at a checkout (`checkout=`): the hit on the git axis (the branch its records were said
    # on, whether that counts as the reader's, the same repository?), None when it has no place there;
    # and `code`, when a file an edit it cites wrote no longer holds what it wrote (or is gone).
    git: GitLabel | None = None
    code: CodeCheck | None = None


def hit_of(found: Found) -> Hit:
    """The `Hit` of what the search found (its evidence as `Evidence`)."""
    # Field by field, not `dataclasses.asdict`: it deep-copies every value (a third of a warm query).
    values = {name: getattr(found, name) for name in _HIT_FIELDS}
    values["evidence"] = tuple(
        Evidence(**{name: getattr(e, name) for name in _EVIDENCE_FIELDS}) for e in found.evidence
    )
    return Hit(**values)


_HIT_FIELDS = tuple(f.name for f in fields(Found))
_EVIDENCE_FIELDS = tuple(f.name for f in fields(FoundEvidence))
