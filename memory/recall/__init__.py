"""Recall, the read side (DESIGN §8): a hybrid BM25 + dense index of topic blocks kept as a cache under
`memory/.dagmem/recall/`, branch-aware search, and `render_context` for injection. The runtime and the
command line call the same `RecallIndex.open` / `search`. A workspace opened for writing is given a
`RecallUpdater` as its `on_install` hook, which keeps the index up to date install by install."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._branch import path_to as path_to
    from ._branch import reader_for as reader_for
    from ._code import cited_contexts as cited_contexts
    from ._code import code_checks as code_checks
    from ._core_text import core_facts as core_facts
    from ._core_text import core_lines as core_lines
    from ._delta import append_record as append_record
    from ._embed import MODEL as EMBED_MODEL
    from ._embed import embed as embed
    from ._embed import load_model as load_model
    from ._embed import write_table as write_table
    from ._entries import Entry as Entry
    from ._entries import Source as Source
    from ._entries import clear_caches as clear_caches
    from ._found import BranchClass as BranchClass
    from ._found import Found as Found
    from ._found import Siblings as Siblings
    from ._hit import Evidence as Evidence
    from ._hit import Hit as Hit
    from ._hit import Status as Status
    from ._index import RecallIndex as RecallIndex
    from ._index import make_record as make_record
    from ._index import recall_root as recall_root
    from ._query import FLOOR as RECALL_FLOOR
    from ._query import MAX_QUERY_CHARS as MAX_QUERY_CHARS
    from ._query import SIBLINGS as SIBLINGS
    from ._query import QueryRefused as QueryRefused
    from ._query import RecallQuery as RecallQuery
    from ._query import check_floor as check_floor
    from ._query import check_query as check_query
    from ._render import HELD_LABEL as HELD_LABEL
    from ._render import QUOTED_NOTE as QUOTED_NOTE
    from ._render import Line as Line
    from ._render import code_label as code_label
    from ._render import git_label as git_label
    from ._render import git_label_text as git_label_text
    from ._render import in_time_order as in_time_order
    from ._render import render_context as render_context
    from ._render import render_sections as render_sections
    from ._render import status_label as status_label
    from ._scoped import core_for as core_for
    from ._scoped import index_for as index_for
    from ._scoped import topic_for as topic_for
    from ._search import find_hits as find_hits
    from ._search import search as search
    from ._snapshot import VERSION as SNAPSHOT_VERSION
    from ._snapshot import Snapshot as Snapshot
    from ._snapshot import write_snapshot as write_snapshot
    from ._text import analyse as analyse
    from ._text import date_words as date_words
    from ._update import RecallUpdater as RecallUpdater
    from ._update import compact as compact
    from ._update import delta_limit as delta_limit
    from ._update import index_arrays as index_arrays
    from ._visible import Visible as Visible
    from ._visible import visible as visible

__all__ = [
    "EMBED_MODEL",
    "HELD_LABEL",
    "MAX_QUERY_CHARS",
    "QUOTED_NOTE",
    "RECALL_FLOOR",
    "SIBLINGS",
    "SNAPSHOT_VERSION",
    "BranchClass",
    "Entry",
    "Evidence",
    "Found",
    "Hit",
    "Line",
    "QueryRefused",
    "RecallIndex",
    "RecallQuery",
    "RecallUpdater",
    "Siblings",
    "Snapshot",
    "Source",
    "Status",
    "Visible",
    "analyse",
    "append_record",
    "check_floor",
    "check_query",
    "cited_contexts",
    "clear_caches",
    "code_checks",
    "code_label",
    "compact",
    "core_facts",
    "core_for",
    "core_lines",
    "date_words",
    "delta_limit",
    "embed",
    "find_hits",
    "git_label",
    "git_label_text",
    "in_time_order",
    "index_arrays",
    "index_for",
    "load_model",
    "make_record",
    "path_to",
    "reader_for",
    "recall_root",
    "render_context",
    "render_sections",
    "search",
    "status_label",
    "topic_for",
    "visible",
    "write_snapshot",
    "write_table",
]

# Each name loads its module on first use: `render_context` (a hook's core block) needs no numpy, no
# embedding model and no index; the search loads them.
__getattr__, __dir__ = lazy(
    __name__,
    globals(),
    {
        "index_for": "._scoped",
        "BranchClass": "._found",
        "EMBED_MODEL": "._embed:MODEL",
        "Entry": "._entries",
        "Evidence": "._hit",
        "Found": "._found",
        "HELD_LABEL": "._render",
        "Hit": "._hit",
        "MAX_QUERY_CHARS": "._query",
        "QUOTED_NOTE": "._render",
        "Line": "._render",
        "render_sections": "._render",
        "RECALL_FLOOR": "._query:FLOOR",
        "RecallIndex": "._index",
        "QueryRefused": "._query",
        "RecallQuery": "._query",
        "RecallUpdater": "._update",
        "SIBLINGS": "._query",
        "SNAPSHOT_VERSION": "._snapshot:VERSION",
        "Siblings": "._found",
        "Snapshot": "._snapshot",
        "Source": "._entries",
        "Status": "._hit",
        "Visible": "._visible",
        "analyse": "._text",
        "append_record": "._delta",
        "check_floor": "._query",
        "check_query": "._query",
        "clear_caches": "._entries",
        "compact": "._update",
        "core_facts": "._core_text",
        "core_for": "._scoped",
        "core_lines": "._core_text",
        "date_words": "._text",
        "delta_limit": "._update",
        "embed": "._embed",
        "find_hits": "._search",
        "in_time_order": "._render",
        "index_arrays": "._update",
        "load_model": "._embed",
        "make_record": "._index",
        "path_to": "._branch",
        "reader_for": "._branch",
        "recall_root": "._index",
        "render_context": "._render",
        "code_label": "._render",
        "code_checks": "._code",
        "cited_contexts": "._code",
        "git_label": "._render",
        "git_label_text": "._render",
        "search": "._search",
        "status_label": "._render",
        "topic_for": "._scoped",
        "visible": "._visible",
        "write_snapshot": "._snapshot",
        "write_table": "._embed",
    },
)
