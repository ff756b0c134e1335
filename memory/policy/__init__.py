"""Policy, pure: what a record is and what a marker means, the DAG view with its running sums, and the
planner that decides which batch is due (DESIGN §3)."""

from __future__ import annotations

from ._dagview import DagView as DagView
from ._dagview import Unwritten as Unwritten
from ._planner import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from ._planner import Batch as Batch
from ._planner import SessionPlanner as SessionPlanner
from ._planner import check_threshold as check_threshold
from ._records import drop_marker as drop_marker
from ._records import is_marked as is_marked
from ._records import is_record_node as is_record_node
from ._records import with_marker as with_marker

__all__ = [
    "DEFAULT_THRESHOLD",
    "Batch",
    "DagView",
    "SessionPlanner",
    "Unwritten",
    "check_threshold",
    "drop_marker",
    "is_marked",
    "is_record_node",
    "with_marker",
]
