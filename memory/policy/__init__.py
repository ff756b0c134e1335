"""Policy, pure: what a record is and what a marker means, the DAG view with its running sums, the
planner that decides which batch is due (DESIGN §3), and the session machine that owns the planner and
decides idle, end, whom to answer and when to retire (DESIGN §5): the session actor feeds it events and
performs the actions it returns."""

from __future__ import annotations

from ..._lazy import eager
from ._dagview import DagView as DagView
from ._dagview import Unwritten as Unwritten
from ._planner import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from ._planner import Batch as Batch
from ._planner import SessionPlanner as SessionPlanner
from ._planner import check_threshold as check_threshold
from ._planner import exponential_backoff as exponential_backoff
from ._planner import split_batches as split_batches
from ._records import drop_marker as drop_marker
from ._records import is_marked as is_marked
from ._records import is_record_node as is_record_node
from ._records import with_marker as with_marker
from .machine import Carryover as Carryover
from .machine import SessionMachine as SessionMachine
from .machine import SessionSnapshot as SessionSnapshot

eager(globals())
