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
else:
    # Each name loads its module on first use: a safe read needs neither the transactions nor the status
    # model.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "append_bytes": "._atomic",
            "atomic_write": "._atomic",
            "atomic_write_many": "._atomic",
            "create_unsynced": "._atomic",
            "fsync_all": "._atomic",
            "fsync_dir": "._atomic",
            "fsync_paths": "._atomic",
            "is_temp_name": "._atomic",
            "pid_alive": "._atomic",
            "sweep_temp": "._atomic",
            "sha256_hex": "._digest",
            "holds_last_line": "._end",
            "read_end": "._end",
            "check_dir": "._safe",
            "check_file": "._safe",
            "exclusive_lock": "._safe",
            "open_regular": "._safe",
            "read_below": "._safe",
            "read_regular": "._safe",
            "Stages": "._stage",
            "LastFailure": "._status",
            "WriterStatus": "._status",
            "load_status": "._status",
            "save_status": "._status",
            "Installer": "._transaction",
            "Recovery": "._transaction",
            "TxLog": "._txlog",
            "ensure_workspace_id": "._wsid",
            "read_workspace_id": "._wsid",
        },
    )
