"""The workspace `memory/`: the archive appender, the SQLite index (a cache of the files), and the
`Workspace` facade (lock, recovery, the one install, status) that the write core uses."""

from __future__ import annotations

from ..._lazy import eager
from ._archive import SessionArchive as SessionArchive
from ._serving import HomeBusy as HomeBusy
from ._serving import ServingLock as ServingLock
from ._workspace import InstallHook as InstallHook
from ._workspace import TxInstalled as TxInstalled
from ._workspace import Workspace as Workspace
from ._workspace import check_workspace_paths as check_workspace_paths

eager(globals())
