"""`dagmem mcp`: memory for agents over the Model Context Protocol (stdio), on the embedded runtime.

Tools: `recall(query, session_id?, tip?, k?)`, `core()`, `status()`, `append_turn(session_id, role, content,
predecessor?, spawned?)`, `set_head(session_id, node_id)`; resources: `memory://topics/<slug>`. Needs the `mcp`
extra (`pip install 'dagmem[mcp]'`)."""

from __future__ import annotations

from .._lazy import eager
from ..memory.errors import ExtraMissing as _ExtraMissing

try:
    import mcp as _mcp  # noqa: F401  (the optional extra: refused here, once, with how to install it)
except ImportError:
    raise _ExtraMissing("dagmem.serve needs the MCP SDK: pip install 'dagmem[mcp]'") from None

from ._server import DagmemServer as DagmemServer
from ._server import build_server as build_server
from ._server import serve as serve
from ._tools import ArgumentError as ArgumentError
from ._tools import MemoryTools as MemoryTools

eager(globals())
