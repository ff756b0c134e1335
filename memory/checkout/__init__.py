"""Git, the second axis a coding agent's work branches on (docs/formats.md and docs/currency.md, "Git"):
where a turn was said (a repository, a branch, a commit, read from the checkout's files, never by running
`git` on a prompt's path), what has been merged where (facts `git` computes off that path, cached), how a
reader at a checkout sees a hit's records, and whether a cited file still holds what was cited.

Above `format` (the `GitContext` it stores), below `adopt` (importers record it) and `recall` (readers
label and rank by it)."""

from __future__ import annotations

from ._cited import CITED_LINES, READ_BYTES, CodeCheck, check, cited_of
from ._label import GitLabel, GitReader
from ._merged import MERGED_FILE, Facts, RepoFacts, load_facts, reader_at, refresh
from ._read import Checkout, Location, branch_tip, head_at, locate, read_checkout
from ._where import Whereabouts

__all__ = [
    "CITED_LINES",
    "MERGED_FILE",
    "READ_BYTES",
    "Checkout",
    "CodeCheck",
    "Facts",
    "GitLabel",
    "GitReader",
    "Location",
    "RepoFacts",
    "Whereabouts",
    "branch_tip",
    "check",
    "cited_of",
    "head_at",
    "load_facts",
    "locate",
    "read_checkout",
    "reader_at",
    "refresh",
]
