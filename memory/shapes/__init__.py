"""Where currency's session shapes come from cheaply: `ShapeCache`, a small SQLite cache under
`memory/.dagmem/shapes.sqlite3` that every install keeps current for its session (from the DAG the
session actor holds: O(new nodes) per install), rebuilt from the session files when missing or stale. A
reader in another session reads a shape from it instead of re-reading the whole session; a reader in its
own session reads its session fresh (`reading_from`). `shapes_for(home)` opens one for reading."""

from __future__ import annotations

from ..._lazy import eager
from ._cache import ShapeCache as ShapeCache
from ._cache import shapes_for as shapes_for

eager(globals())
