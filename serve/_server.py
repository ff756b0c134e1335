"""`dagmem mcp`: dagmem's memory as a Model Context Protocol server over stdio (the official `mcp` SDK).

The server embeds one `Runtime` on the home, so turns sent through `append_turn` are written as DESIGN §3
says (per turn, on head moves, at the boundary). It stops cleanly on the end of stdin or on SIGTERM /
SIGINT: the server stops taking calls, then `flush(force=True)` boundary-writes every session, so nothing
is left owed. A SIGKILL loses nothing either: every acknowledged turn is already on disk, and the next
server (or `dagmem write`) writes what is owed.

Invalid arguments are MCP protocol errors (`-32602`, invalid params) whose message and `data.argument`
name the argument, whether the SDK's schema check or dagmem's own check found them; nothing is written."""

from __future__ import annotations

import logging
import signal
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, InputRequiredResult
from mcp_types import Resource as MCPResource
from pydantic import Field, ValidationError

from .._version import __version__
from ..actors import Runtime, RuntimeConfig
from ..memory.errors import InvalidInput
from ..memory.trust import OWNER, Origin, Scope
from ._stdin import StdinLines
from ._tools import MAX_K, ArgumentError, MemoryTools

__all__ = ["DagmemServer", "build_server", "serve"]

log = logging.getLogger("dagmem.mcp")

Role = Literal["user", "assistant", "tool", "system"]
SessionId = Annotated[str, Field(description="the session id ([A-Za-z0-9][A-Za-z0-9_-]{0,63})")]


def _invalid(argument: str, message: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=message, data={"argument": argument})


class DagmemServer(MCPServer[Any]):
    """MCPServer with dagmem's argument errors and one listed resource per topic file."""

    def __init__(self, tools: MemoryTools) -> None:
        super().__init__(
            "dagmem",
            version=__version__,
            instructions=(
                "Long-term memory of branching conversations. Send every user and assistant turn with "
                "append_turn (fork by naming an earlier node as predecessor); call recall before answering "
                "to find what was said before, on this branch first; core() is the always-injected block."
            ),
            log_level="WARNING",
        )
        self.tools = tools
        self._taken: dict[str, frozenset[str]] | None = None  # each tool's arguments, read on the first call
        # dagmem has no prompts, and the SDK advertises the capability whenever its handlers are
        # registered: a client would list an empty set. Without the handlers, nothing is advertised.
        for method in ("prompts/list", "prompts/get"):
            self._lowlevel_server._request_handlers.pop(method, None)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        # An argument the tool does not take is refused, never dropped: a caller that misspells `history`
        # as `hitsory` would otherwise get an answer to another question without knowing it.
        taken = await self._arguments_of(name)
        unknown = sorted(set(arguments or {}) - taken) if taken is not None else []
        if unknown:
            listed = ", ".join(sorted(taken or ())) or "none"
            raise _invalid(
                unknown[0],
                f"invalid argument {unknown[0]!r}: {name} takes no such argument (it takes: {listed})",
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ArgumentError):
                raise _invalid(cause.argument, str(cause)) from None
            if isinstance(cause, InvalidInput):  # refused by the runtime's own checks: still the caller's
                raise _invalid("arguments", f"invalid arguments: {cause}") from None
            if isinstance(cause, ValidationError):
                errors = cause.errors()
                where = ".".join(str(part) for part in errors[0]["loc"]) if errors else "arguments"
                message = "; ".join(
                    f"invalid argument {'.'.join(str(p) for p in e['loc'])!r}: {e['msg']}" for e in errors
                )
                raise _invalid(where, message or str(cause)) from None
            raise

    async def _arguments_of(self, name: str) -> frozenset[str] | None:
        """The names of the arguments tool `name` takes (its input schema's properties); None for no such
        tool (the SDK refuses it as it does)."""
        if self._taken is None:
            self._taken = {
                tool.name: frozenset((tool.input_schema or {}).get("properties", {}))
                for tool in await self.list_tools()
            }
        return self._taken.get(name)

    async def list_resources(self) -> list[MCPResource]:
        listed = await super().list_resources()
        for slug in await anyio.to_thread.run_sync(self.tools.readable_slugs):
            listed.append(
                MCPResource(
                    uri=f"memory://topics/{slug}",
                    name=slug,
                    title=f"topics/{slug}.md",
                    description="a topic of distilled memory: claims with footnotes citing the archive",
                    mime_type="text/markdown",
                )
            )
        return listed


def build_server(tools: MemoryTools) -> DagmemServer:
    server = DagmemServer(tools)

    @server.tool()
    async def recall(
        query: Annotated[str, Field(description="what to look for")],
        session_id: Annotated[str | None, Field(description="rank relative to this session")] = None,
        tip: Annotated[str | None, Field(description="the branch's last node (default: the head)")] = None,
        k: Annotated[int, Field(description=f"how many hits (1 to {MAX_K})")] = 5,
        *,
        history: Annotated[
            bool,
            Field(description="rank superseded and left blocks by relevance too (what was once true)"),
        ] = False,
        held: Annotated[
            bool, Field(strict=True, description="also candidate core facts held for review (labelled)")
        ] = False,
        checkout: Annotated[
            str | None,
            Field(description="the reader's working directory in a git worktree: git branch labels"),
        ] = None,
    ) -> list[dict[str, Any]]:
        """Search memory: the best topic blocks, each with its evidence (the archived turns it cites, with
        each one's origin and, when known, the git repository, branch and commit it was said at), its
        status (current / superseded, with superseded_by and superseded_on / left: said on a branch the
        user edited or retried away) and, with a session, its branch class (on / sibling / other)
        relative to `tip`. With `checkout`, its git label (said on a branch not merged into the
        checkout's HEAD, or in another repository: ranked below the reader's own) and `code` when a file
        an edit it cites no longer holds what it wrote. By default no superseded or left block ranks
        above a current one. A current block with partly_by is partly superseded: that block holds a
        newer value of part of it, and comes right after it."""
        return await tools.recall(query, session_id, tip, k, history=history, held=held, checkout=checkout)

    @server.tool()
    async def core() -> str:
        """The core block (memory/core.md): the facts always worth having in context ("" when none)."""
        return await anyio.to_thread.run_sync(tools.core)

    @server.tool()
    async def status() -> dict[str, Any]:
        """The writer's last outcome and failure, and the turns the live sessions still owe to memory."""
        return tools.status()

    @server.tool()
    async def sessions() -> list[dict[str, Any]]:
        """Each session of the home: its node count, head, tips (each with its last turn's first words;
        any unique prefix of an id is accepted wherever a node id is asked for) and records still owed."""
        return await anyio.to_thread.run_sync(tools.sessions)

    if tools.scope.read_only:
        _resources(server, tools)
        return server

    @server.tool()
    async def flush() -> dict[str, Any]:
        """Write everything owed now: every session of the home is boundary-written (the server also does
        this when it stops). Returns the status afterwards; on a full disk it returns at once, its
        `waiting_out` saying why nothing is written (DISK_FULL) and that the writes are being retried."""
        return await tools.flush()

    @server.tool()
    async def append_turn(
        session_id: SessionId,
        role: Annotated[Role, Field(description="who said it; only user and assistant turns are records")],
        content: Annotated[str, Field(description="the turn's text")],
        predecessor: Annotated[
            str | None, Field(description="the node it answers; omitted: after the head (a fork otherwise)")
        ] = None,
        *,
        spawned: Annotated[
            bool,
            Field(
                strict=True, description="a side branch (a sub-agent's turns): the head stays where it was"
            ),
        ] = False,
        origin: Annotated[
            Origin | None,
            Field(
                description="where the text came from, when not the role's default: tool for a fetched page "
                "or a command's output pasted as a user turn, imported for another program's transcript; "
                "only text the person typed (user) may become a core fact"
            ),
        ] = None,
    ) -> str:
        """Append a turn to a session and return its node id; the head moves to it. Without `predecessor`
        the turn continues the head. Naming an earlier node forks there (an edited prompt, a retry): the
        conversation goes on from the new turn and the branch it left is written to memory as it stands.
        `spawned=true` adds a sub-agent's turn on a side branch and leaves the head where it was."""
        return await tools.append_turn(session_id, role, content, predecessor, spawned=spawned, origin=origin)

    @server.tool()
    async def set_head(
        session_id: SessionId,
        node_id: Annotated[str, Field(description="the node the conversation continues from")],
    ) -> dict[str, str]:
        """Move a session's head (the user went back to an earlier turn). The branch it leaves is written
        to memory if the head does not return to it soon."""
        return await tools.set_head(session_id, node_id)

    _resources(server, tools)
    return server


def _resources(server: DagmemServer, tools: MemoryTools) -> None:
    @server.resource(
        "memory://index",
        name="topic-index",
        title="topics/index.md",
        description="the map of memory: one line per topic (title, what it holds, blocks, last date), "
        "newest first",
        mime_type="text/markdown",
    )
    async def topic_index() -> str:
        return await anyio.to_thread.run_sync(tools.topic_index)

    @server.resource(
        "memory://topics/{slug}",
        name="topic",
        description="a topic file of distilled memory (markdown with footnotes)",
        mime_type="text/markdown",
    )
    async def topic(slug: str) -> str:
        text = await anyio.to_thread.run_sync(tools.topic, slug)
        if text is None:
            raise ResourceNotFoundError(f"no topic {slug!r}")
        return text


async def serve(home: Path, *, config: RuntimeConfig | None = None, scope: Scope = OWNER) -> None:
    """Serve MCP on stdin/stdout until stdin ends or a SIGTERM/SIGINT, then boundary-write everything.

    The signal handlers stay installed through the final write, so a second SIGTERM (a host that gives up
    waiting) does not cut it short; only SIGKILL does, and that loses nothing (the next start writes it)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with Runtime.open(home, config=config) as runtime:
            server = build_server(MemoryTools(runtime, home, scope=scope))
            lines = StdinLines()
            lines.start()
            async with anyio.create_task_group() as tg:

                async def stop_on_signal() -> None:
                    async for signum in signals:
                        log.info("signal %s: stopping", signum)
                        tg.cancel_scope.cancel()
                        return

                tg.start_soon(stop_on_signal)
                # `MCPServer.run_stdio_async` with our stdin: the SDK types `stdin` as an AsyncFile but only
                # iterates over it, and MCPServer has no public handle on its low-level server (mcp is
                # pinned to 2.x; tests/serve/test_mcp.py fails loudly if this changes).
                lowlevel = server._lowlevel_server
                async with (
                    stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read, write),
                    anyio.create_task_group() as answering,
                ):
                    # The lines refused before the SDK saw them; it ends with stdin, as `run` does.
                    answering.start_soon(lines.answer, write)
                    await lowlevel.run(read, write, lowlevel.create_initialization_options())
                tg.cancel_scope.cancel()
            with anyio.CancelScope(shield=True):
                await runtime.flush(force=True)
    # Everything is written: a host's SIGTERM from now on (while the event loop and the interpreter shut
    # down, which takes seconds on a loaded machine) has nothing left to stop, and must not turn this clean
    # exit into a kill. (The receiver above, on its way out, put back the default action: terminate.)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
