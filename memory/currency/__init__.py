"""Currency, pure and synchronous: whether a block is `current`, `superseded` or `left`, from the DAG
alone (DESIGN §12). `SessionShape` is what it needs of a session (edges, roles, side-branch marks, the
head; never the text); `left_nodes` and `are_alternatives` read one shape; a `Reader` (a session and a
tip, or nobody in particular) says what is left and on which branch for it, spawn-aware across
sessions; `resolve` gives a block's status; `between_alternatives` is the rule that no supersession links
two alternatives of one fork (the writer and `dagmem verify` call it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._alternatives import are_alternatives as are_alternatives
    from ._alternatives import between_alternatives as between_alternatives
    from ._alternatives import left_nodes as left_nodes
    from ._alternatives import side_of as side_of
    from ._reader import BranchClass as BranchClass
    from ._reader import Reader as Reader
    from ._reader import resolve as resolve
    from ._shape import DagLike as DagLike
    from ._shape import SessionShape as SessionShape
    from ._shape import ShapeSource as ShapeSource
    from ._shape import Status as Status
    from ._shape import parse_spawned_from as parse_spawned_from
else:
    # Each name loads its module on first use: a hit's `Status` needs no DAG walk.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "are_alternatives": "._alternatives",
            "between_alternatives": "._alternatives",
            "left_nodes": "._alternatives",
            "side_of": "._alternatives",
            "BranchClass": "._reader",
            "Reader": "._reader",
            "resolve": "._reader",
            "DagLike": "._shape",
            "SessionShape": "._shape",
            "ShapeSource": "._shape",
            "Status": "._shape",
            "parse_spawned_from": "._shape",
        },
    )
