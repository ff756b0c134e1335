"""The independent oracle `dagmem verify` runs: it checks a home from its files alone.

By design it shares nothing with the write path but the file-format parsers and the durable layer's safe
reads: it never reads the index, the planner or the DAG view, and it walks branches with its own code, so a
bug in the writer cannot hide itself from the check. The simulator, the crash load and the benchmarks judge
their homes with it too.
"""

from __future__ import annotations

from ..._lazy import eager
from ._oracle import UNCITED_SHOWN as UNCITED_SHOWN
from ._oracle import OracleReport as OracleReport
from ._oracle import Violation as Violation
from ._oracle import check_home as check_home
from ._oracle import check_workspace as check_workspace

eager(globals())
