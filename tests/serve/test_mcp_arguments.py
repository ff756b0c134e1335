"""The MCP tools' arguments: what the runtime refuses (a query over its length, an empty one) is an
invalid-params error (`-32602`) naming the argument, never an internal error; an argument a tool does
not take is refused the same way, naming it, never silently dropped. An empty query gets the answer
`dagmem recall ""` gets, from the same rule. A real MCP client, in process, on both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra")

from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from dagmem import Runtime
from dagmem.memory.recall import MAX_QUERY_CHARS
from dagmem.serve._server import build_server
from dagmem.serve._tools import MemoryTools
from dagmem.tests._cli import dagmem_run

pytestmark = pytest.mark.anyio


async def _refusal(client: Client, tool: str, arguments: dict[str, Any]) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await client.call_tool(tool, arguments)
    assert refused.value.error.code == INVALID_PARAMS, refused.value.error
    return refused.value


async def test_runtime_refusals_and_unknown_arguments_are_invalid_params_naming_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with Runtime.open(home) as runtime:
        await runtime.append("s", "user", "We keep the spare key under the blue flowerpot.")
        await runtime.flush(force=True)
        async with Client(build_server(MemoryTools(runtime, home))) as client:
            long = await _refusal(client, "recall", {"query": "key " * (MAX_QUERY_CHARS // 4 + 1)})
            assert long.error.data == {"argument": "query"}
            assert f"{MAX_QUERY_CHARS:,}" in long.error.message
            for tool, arguments, name in (
                ("recall", {"query": "key", "hitsory": True}, "hitsory"),
                ("recall", {"query": "key", "session": "s"}, "session"),
                ("core", {"scope": "all"}, "scope"),
                (
                    "append_turn",
                    {"session_id": "s", "role": "user", "content": "x", "parent": "n1"},
                    "parent",
                ),
                ("set_head", {"session_id": "s", "node_id": "n1", "force": True}, "force"),
            ):
                refused = await _refusal(client, tool, arguments)
                assert refused.error.data == {"argument": name}, (tool, refused.error)
                assert repr(name) in refused.error.message
            # Nothing was appended by the refused append_turn.
            sessions = (await client.call_tool("sessions", {})).structured_content
            assert sessions is not None
            assert [s["nodes"] for s in sessions["result"]] == [1]
            # The arguments a tool does take still work.
            answer = await client.call_tool("recall", {"query": "spare key", "k": 3, "history": False})
            assert not answer.is_error


async def test_an_empty_query_is_refused_by_mcp_and_by_the_command_line_alike(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with Runtime.open(home) as runtime:
        await runtime.append("s", "user", "The boiler is serviced every October.")
        await runtime.flush(force=True)
        async with Client(build_server(MemoryTools(runtime, home))) as client:
            messages = []
            for query in ("", "   "):
                refused = await _refusal(client, "recall", {"query": query})
                assert refused.error.data == {"argument": "query"}
                messages.append(refused.error.message)
    for query in ("", "   "):
        command = dagmem_run("recall", query, "--home", str(home))
        assert command.returncode == 2, command.stdout
        assert command.stdout == ""
        assert "query is empty" in command.stderr
        assert len(command.stderr.splitlines()) == 1
    assert all("query is empty" in message for message in messages)
