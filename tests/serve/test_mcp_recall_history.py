"""MCP `recall` and currency, through the SDK's own client connected to the server in process (both
backends): each hit carries its status, superseded_by and superseded_on, and `history` is passed through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra")

from mcp import Client
from mcp.shared.exceptions import MCPError

from dagmem import Runtime
from dagmem.serve._server import build_server
from dagmem.serve._tools import MemoryTools
from dagmem.tests._hand_home import MOVED, HandHome

pytestmark = pytest.mark.anyio


async def recall(client: Client, **arguments: Any) -> list[dict[str, Any]]:
    result = await client.call_tool("recall", arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    hits: list[dict[str, Any]] = result.structured_content["result"]
    return hits


async def test_mcp_recall_gives_status_and_passes_history(tmp_path: Path) -> None:
    hand = HandHome(tmp_path / "home")
    query = "do I live in Paris near the canal"
    async with (
        Runtime.open(hand.root) as runtime,
        Client(build_server(MemoryTools(runtime, hand.root))) as client,
    ):
        default = await recall(client, query=query)
        assert [h["block_id"] for h in default[:2]] == [hand.berlin_id, hand.paris_id]
        assert (default[1]["status"], default[1]["superseded_by"], default[1]["superseded_on"]) == (
            "superseded",
            hand.berlin_id,
            MOVED,
        )
        history = await recall(client, query=query, history=True)
        assert [h["block_id"] for h in history[:2]] == [hand.paris_id, hand.berlin_id]
        left = await recall(client, query="which conference city Lisbon hall", session_id="s1")
        assert [(h["block_id"], h["status"]) for h in left[:2]] == [
            (hand.kyoto_id, "current"),
            (hand.lisbon_id, "left"),
        ]
        with pytest.raises(MCPError, match="invalid argument 'history'"):
            await client.call_tool("recall", {"query": query, "history": "maybe"})
