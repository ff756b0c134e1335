"""The deterministic simulator, its independent oracle, fault injection, benchmarks and reports.

`dagmem sim` (`command`): `workload` plans seeded session scripts, `content` renders their text, `runner`
drives one home's sessions through the real runtime in virtual time (`determinism`), with a seeded fault
plan (`faults`) and a store that keeps count (`recording`); `shards` runs several homes in processes side by
side and joins their results; the oracle (`dagmem.memory.audit`) judges the files; `gitgrowth` replays a sample into
real git; `report` prints, saves and plots. `bench*` and `crashload` reuse the oracle.
"""

from __future__ import annotations

from .._lazy import eager
from ..memory.audit import OracleReport as OracleReport
from ..memory.audit import check_home as check_home
from . import _gitgrowth, _report
from ._content import load_content as load_content
from ._determinism import run_virtual as run_virtual
from ._gitgrowth import measure as measure
from ._rss import peak_rss_bytes as peak_rss_bytes
from ._runner import EPOCH as EPOCH
from ._runner import SimConfig as SimConfig
from ._runner import SimResult as SimResult
from ._shards import run as run
from ._workload import plan_session as plan_session

gitgrowth = _gitgrowth  # the git replay `dagmem sim` runs after the simulation
report = _report  # the summary, the JSON report and the plot
eager(globals())
