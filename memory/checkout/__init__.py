"""Git, the second axis a coding agent's work branches on (docs/formats.md and docs/currency.md, "Git"):
where a turn was said (a repository, a branch, a commit, read from the checkout's files, never by running
`git` on a prompt's path), what has been merged where (facts `git` computes off that path, cached), how a
reader at a checkout sees a hit's records, and whether a cited file still holds what was cited.

Above `format` (the `GitContext` it stores), below `adopt` (importers record it) and `recall` (readers
label and rank by it)."""

from __future__ import annotations

from ..._lazy import eager
from ._cited import CITED_LINES as CITED_LINES
from ._cited import READ_BYTES as READ_BYTES
from ._cited import CodeCheck as CodeCheck
from ._cited import check as check
from ._cited import cited_of as cited_of
from ._label import GitLabel as GitLabel
from ._label import GitReader as GitReader
from ._merged import MERGED_FILE as MERGED_FILE
from ._merged import Facts as Facts
from ._merged import RepoFacts as RepoFacts
from ._merged import load_facts as load_facts
from ._merged import reader_at as reader_at
from ._merged import refresh as refresh
from ._read import Checkout as Checkout
from ._read import Location as Location
from ._read import branch_tip as branch_tip
from ._read import head_at as head_at
from ._read import locate as locate
from ._read import read_checkout as read_checkout
from ._where import Whereabouts as Whereabouts

eager(globals())
