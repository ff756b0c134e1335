"""Durability: atomic replace and fsynced appends, the txlog, transactions (stage, commit point, move)
and their recovery, the one rule for reading a committed stage (`Stages`), reading an append-only file's
end, the workspace id, the writer's status file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._atomic import append_bytes as append_bytes
    from ._atomic import atomic_write as atomic_write
    from ._atomic import atomic_write_many as atomic_write_many
    from ._atomic import create_unsynced as create_unsynced
    from ._atomic import fsync_all as fsync_all
    from ._atomic import fsync_dir as fsync_dir
    from ._atomic import fsync_paths as fsync_paths
    from ._atomic import is_temp_name as is_temp_name
    from ._atomic import pid_alive as pid_alive
    from ._atomic import sweep_temp as sweep_temp
    from ._digest import sha256_hex as sha256_hex
    from ._end import holds_last_line as holds_last_line
    from ._end import read_end as read_end
    from ._safe import check_dir as check_dir
    from ._safe import check_file as check_file
    from ._safe import exclusive_lock as exclusive_lock
    from ._safe import open_regular as open_regular
    from ._safe import read_below as read_below
    from ._safe import read_regular as read_regular
    from ._stage import Stages as Stages
    from ._status import LastFailure as LastFailure
    from ._status import WriterStatus as WriterStatus
    from ._status import load_status as load_status
    from ._status import save_status as save_status
    from ._transaction import Installer as Installer
    from ._transaction import Recovery as Recovery
    from ._txlog import TxLog as TxLog
    from ._wsid import ensure_workspace_id as ensure_workspace_id
    from ._wsid import read_workspace_id as read_workspace_id

__all__ = [
    "Installer",
    "LastFailure",
    "Recovery",
    "Stages",
    "TxLog",
    "WriterStatus",
    "append_bytes",
    "atomic_write",
    "atomic_write_many",
    "check_dir",
    "check_file",
    "create_unsynced",
    "ensure_workspace_id",
    "exclusive_lock",
    "fsync_all",
    "fsync_dir",
    "fsync_paths",
    "holds_last_line",
    "is_temp_name",
    "load_status",
    "open_regular",
    "pid_alive",
    "read_below",
    "read_end",
    "read_regular",
    "read_workspace_id",
    "save_status",
    "sha256_hex",
    "sweep_temp",
]

# Each name loads its module on first use: a safe read needs neither the transactions nor the status model.
__getattr__, __dir__ = lazy(
    __name__,
    globals(),
    {
        "Installer": "._transaction",
        "LastFailure": "._status",
        "Recovery": "._transaction",
        "Stages": "._stage",
        "TxLog": "._txlog",
        "WriterStatus": "._status",
        "append_bytes": "._atomic",
        "atomic_write": "._atomic",
        "atomic_write_many": "._atomic",
        "check_dir": "._safe",
        "check_file": "._safe",
        "create_unsynced": "._atomic",
        "ensure_workspace_id": "._wsid",
        "exclusive_lock": "._safe",
        "fsync_all": "._atomic",
        "fsync_dir": "._atomic",
        "fsync_paths": "._atomic",
        "holds_last_line": "._end",
        "is_temp_name": "._atomic",
        "load_status": "._status",
        "open_regular": "._safe",
        "pid_alive": "._atomic",
        "read_below": "._safe",
        "read_end": "._end",
        "read_regular": "._safe",
        "read_workspace_id": "._wsid",
        "save_status": "._status",
        "sha256_hex": "._digest",
        "sweep_temp": "._atomic",
    },
)
