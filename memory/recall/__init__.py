"""Recall, the read side (DESIGN §8): a hybrid BM25 + dense index of topic blocks kept as a cache under
`memory/.dagmem/recall/`, branch-aware search, and `render_context` for injection. The runtime and the
command line call the same `RecallIndex.open` / `search`. A workspace opened for writing is given a
`RecallUpdater` as its `on_install` hook, which keeps the index up to date install by install."""

from __future__ import annotations

import typing as _typing

if _typing.TYPE_CHECKING:
    from ._branch import branch_class as branch_class
    from ._branch import path_to as path_to
    from ._branch import session_path as session_path
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
    from ._index import RecallIndex as RecallIndex
    from ._index import make_record as make_record
    from ._index import recall_root as recall_root
    from ._pick import FLOOR as RECALL_FLOOR
    from ._pick import check_floor as check_floor
    from ._query import MAX_QUERY_CHARS as MAX_QUERY_CHARS
    from ._query import check_query as check_query
    from ._render import in_time_order as in_time_order
    from ._render import render_context as render_context
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

__all__ = [
    "EMBED_MODEL",
    "MAX_QUERY_CHARS",
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
    "analyse",
    "append_record",
    "branch_class",
    "check_floor",
    "check_query",
    "clear_caches",
    "compact",
    "core_facts",
    "core_lines",
    "date_words",
    "delta_limit",
    "embed",
    "in_time_order",
    "index_arrays",
    "load_model",
    "make_record",
    "path_to",
    "recall_root",
    "render_context",
    "search",
    "session_path",
    "write_snapshot",
]

# Each name loads its module on first use: `render_context` (a hook's core block) needs no numpy, no
# embedding model and no index; the search loads them.
_LAZY: dict[str, tuple[str, str]] = {
    "branch_class": ("._branch", "branch_class"),
    "path_to": ("._branch", "path_to"),
    "session_path": ("._branch", "session_path"),
    "core_facts": ("._core_text", "core_facts"),
    "core_lines": ("._core_text", "core_lines"),
    "append_record": ("._delta", "append_record"),
    "EMBED_MODEL": ("._embed", "MODEL"),
    "embed": ("._embed", "embed"),
    "load_model": ("._embed", "load_model"),
    "Entry": ("._entries", "Entry"),
    "Source": ("._entries", "Source"),
    "clear_caches": ("._entries", "clear_caches"),
    "BranchClass": ("._hit", "BranchClass"),
    "Evidence": ("._hit", "Evidence"),
    "Hit": ("._hit", "Hit"),
    "Siblings": ("._hit", "Siblings"),
    "RecallIndex": ("._index", "RecallIndex"),
    "make_record": ("._index", "make_record"),
    "recall_root": ("._index", "recall_root"),
    "RECALL_FLOOR": ("._pick", "FLOOR"),
    "check_floor": ("._pick", "check_floor"),
    "MAX_QUERY_CHARS": ("._query", "MAX_QUERY_CHARS"),
    "check_query": ("._query", "check_query"),
    "in_time_order": ("._render", "in_time_order"),
    "render_context": ("._render", "render_context"),
    "SIBLINGS": ("._search", "SIBLINGS"),
    "search": ("._search", "search"),
    "SNAPSHOT_VERSION": ("._snapshot", "VERSION"),
    "Snapshot": ("._snapshot", "Snapshot"),
    "write_snapshot": ("._snapshot", "write_snapshot"),
    "analyse": ("._text", "analyse"),
    "date_words": ("._text", "date_words"),
    "RecallUpdater": ("._update", "RecallUpdater"),
    "compact": ("._update", "compact"),
    "delta_limit": ("._update", "delta_limit"),
    "index_arrays": ("._update", "index_arrays"),
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
