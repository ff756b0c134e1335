"""Recall, the read side (DESIGN §8): a hybrid BM25 + dense index of topic blocks kept as a cache under
`memory/.dagmem/recall/`, branch-aware search, and `render_context` for injection. The runtime and the
command line call the same `RecallIndex.open` / `search`. A workspace opened for writing is given a
`RecallUpdater` as its `on_install` hook, which keeps the index up to date install by install."""

from __future__ import annotations

import typing as _typing

if _typing.TYPE_CHECKING:
    from ._branch import path_to as path_to
    from ._branch import reader_for as reader_for
    from ._core_text import core_facts as core_facts
    from ._core_text import core_lines as core_lines
    from ._delta import append_record as append_record
    from ._embed import MODEL as EMBED_MODEL
    from ._embed import embed as embed
    from ._embed import load_model as load_model
    from ._entries import Entry as Entry
    from ._entries import Source as Source
    from ._entries import clear_caches as clear_caches
    from ._hit import BranchClass as BranchClass
    from ._hit import Evidence as Evidence
    from ._hit import Hit as Hit
    from ._hit import Siblings as Siblings
    from ._hit import Status as Status
    from ._index import RecallIndex as RecallIndex
    from ._index import make_record as make_record
    from ._index import recall_root as recall_root
    from ._pick import FLOOR as RECALL_FLOOR
    from ._pick import check_floor as check_floor
    from ._query import MAX_QUERY_CHARS as MAX_QUERY_CHARS
    from ._query import check_query as check_query
    from ._render import HELD_LABEL as HELD_LABEL
    from ._render import QUOTED_NOTE as QUOTED_NOTE
    from ._render import in_time_order as in_time_order
    from ._render import render_context as render_context
    from ._render import status_label as status_label
    from ._search import SIBLINGS as SIBLINGS
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
    from ._visible import core_for as core_for
    from ._visible import index_for as index_for
    from ._visible import topic_for as topic_for
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
    "Hit",
    "RecallIndex",
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
    "clear_caches",
    "compact",
    "core_facts",
    "core_for",
    "core_lines",
    "date_words",
    "delta_limit",
    "embed",
    "in_time_order",
    "index_arrays",
    "index_for",
    "load_model",
    "make_record",
    "path_to",
    "reader_for",
    "recall_root",
    "render_context",
    "search",
    "status_label",
    "topic_for",
    "visible",
    "write_snapshot",
]

# Each name loads its module on first use: `render_context` (a hook's core block) needs no numpy, no
# embedding model and no index; the search loads them.
_LAZY: dict[str, tuple[str, str]] = {
    "BranchClass": ("._hit", "BranchClass"),
    "EMBED_MODEL": ("._embed", "MODEL"),
    "Entry": ("._entries", "Entry"),
    "Evidence": ("._hit", "Evidence"),
    "HELD_LABEL": ("._render", "HELD_LABEL"),
    "Hit": ("._hit", "Hit"),
    "MAX_QUERY_CHARS": ("._query", "MAX_QUERY_CHARS"),
    "QUOTED_NOTE": ("._render", "QUOTED_NOTE"),
    "RECALL_FLOOR": ("._pick", "FLOOR"),
    "RecallIndex": ("._index", "RecallIndex"),
    "RecallUpdater": ("._update", "RecallUpdater"),
    "SIBLINGS": ("._search", "SIBLINGS"),
    "SNAPSHOT_VERSION": ("._snapshot", "VERSION"),
    "Siblings": ("._hit", "Siblings"),
    "Snapshot": ("._snapshot", "Snapshot"),
    "Source": ("._entries", "Source"),
    "Status": ("._hit", "Status"),
    "Visible": ("._visible", "Visible"),
    "analyse": ("._text", "analyse"),
    "append_record": ("._delta", "append_record"),
    "check_floor": ("._pick", "check_floor"),
    "check_query": ("._query", "check_query"),
    "clear_caches": ("._entries", "clear_caches"),
    "compact": ("._update", "compact"),
    "core_facts": ("._core_text", "core_facts"),
    "core_for": ("._visible", "core_for"),
    "core_lines": ("._core_text", "core_lines"),
    "date_words": ("._text", "date_words"),
    "delta_limit": ("._update", "delta_limit"),
    "embed": ("._embed", "embed"),
    "in_time_order": ("._render", "in_time_order"),
    "index_for": ("._visible", "index_for"),
    "index_arrays": ("._update", "index_arrays"),
    "load_model": ("._embed", "load_model"),
    "make_record": ("._index", "make_record"),
    "path_to": ("._branch", "path_to"),
    "reader_for": ("._branch", "reader_for"),
    "recall_root": ("._index", "recall_root"),
    "render_context": ("._render", "render_context"),
    "search": ("._search", "search"),
    "status_label": ("._render", "status_label"),
    "topic_for": ("._visible", "topic_for"),
    "visible": ("._visible", "visible"),
    "write_snapshot": ("._snapshot", "write_snapshot"),
}


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module, __name__), attribute)
        globals()[name] = value  # once: later lookups are plain attribute reads
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
