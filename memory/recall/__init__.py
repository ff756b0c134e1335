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
    from ._embed import MODEL
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
    from ._query import FLOOR
    from ._query import MAX_QUERY_CHARS as MAX_QUERY_CHARS
    from ._query import SIBLINGS as SIBLINGS
    from ._query import QueryRefused as QueryRefused
    from ._query import RecallQuery as RecallQuery
    from ._query import check_floor as check_floor
    from ._query import check_query as check_query
    from ._render import HELD_LABEL as HELD_LABEL
    from ._render import QUOTED as QUOTED
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
    from ._snapshot import VERSION
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

    EMBED_MODEL = MODEL
    RECALL_FLOOR = FLOOR
    SNAPSHOT_VERSION = VERSION
else:
    # Each name loads its module on first use: `render_context` (a hook's core block) needs no numpy, no
    # embedding model and no index; the search loads them.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "path_to": "._branch",
            "reader_for": "._branch",
            "cited_contexts": "._code",
            "code_checks": "._code",
            "core_facts": "._core_text",
            "core_lines": "._core_text",
            "append_record": "._delta",
            "EMBED_MODEL": "._embed:MODEL",
            "embed": "._embed",
            "load_model": "._embed",
            "write_table": "._embed",
            "Entry": "._entries",
            "Source": "._entries",
            "clear_caches": "._entries",
            "BranchClass": "._found",
            "Found": "._found",
            "Siblings": "._found",
            "Evidence": "._hit",
            "Hit": "._hit",
            "Status": "._hit",
            "RecallIndex": "._index",
            "make_record": "._index",
            "recall_root": "._index",
            "RECALL_FLOOR": "._query:FLOOR",
            "QueryRefused": "._query",
            "RecallQuery": "._query",
            "SIBLINGS": "._query",
            "check_floor": "._query",
            "MAX_QUERY_CHARS": "._query",
            "check_query": "._query",
            "HELD_LABEL": "._render",
            "QUOTED": "._render",
            "QUOTED_NOTE": "._render",
            "Line": "._render",
            "code_label": "._render",
            "git_label": "._render",
            "git_label_text": "._render",
            "in_time_order": "._render",
            "render_context": "._render",
            "render_sections": "._render",
            "status_label": "._render",
            "core_for": "._scoped",
            "index_for": "._scoped",
            "topic_for": "._scoped",
            "find_hits": "._search",
            "search": "._search",
            "SNAPSHOT_VERSION": "._snapshot:VERSION",
            "Snapshot": "._snapshot",
            "write_snapshot": "._snapshot",
            "analyse": "._text",
            "date_words": "._text",
            "RecallUpdater": "._update",
            "compact": "._update",
            "delta_limit": "._update",
            "index_arrays": "._update",
            "Visible": "._visible",
            "visible": "._visible",
        },
    )
