"""Adopting what hosts already have: `dagmem migrate` (a home written by a position-cursor system, DESIGN
§4) and `dagmem import` (Claude Code, pi, Codex and OpenAI transcripts, DESIGN §10): one parser module per
format, one shared core that maps their entries to nodes, appended through the store or a running runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._entries import Problem as Problem
    from ._entries import shown_path as shown_path
    from ._entries import to_id as to_id
    from ._follow import Follower as Follower
    from ._follow import RuntimeLike as RuntimeLike
    from ._import import FORMATS as FORMATS
    from ._import import Importer as Importer
    from ._import import ImportReport as ImportReport
    from ._import import SourceClock as SourceClock
    from ._import import import_into_store as import_into_store
    from ._mapper import Planned as Planned
    from ._migrate import RUNTIME_FILE as RUNTIME_FILE
    from ._migrate import MigrationReport as MigrationReport
    from ._migrate import SessionMigration as SessionMigration
    from ._migrate import kept_records as kept_records
    from ._migrate import migrate_home as migrate_home
    from ._migrate import read_cursors as read_cursors
    from ._pi import header_session as header_session
    from ._pi import pi_session_id as pi_session_id
else:
    # Each name loads its module on first use: a hook that needs `to_id` does not load every importer.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "Problem": "._entries",
            "shown_path": "._entries",
            "to_id": "._entries",
            "Follower": "._follow",
            "RuntimeLike": "._follow",
            "FORMATS": "._import",
            "Importer": "._import",
            "ImportReport": "._import",
            "SourceClock": "._import",
            "import_into_store": "._import",
            "Planned": "._mapper",
            "RUNTIME_FILE": "._migrate",
            "MigrationReport": "._migrate",
            "SessionMigration": "._migrate",
            "kept_records": "._migrate",
            "migrate_home": "._migrate",
            "read_cursors": "._migrate",
            "header_session": "._pi",
            "pi_session_id": "._pi",
        },
    )
