"""What the MCP tools do, over one embedded `Runtime` and its home. Every argument is checked before the
runtime is called, and a bad one raises `ArgumentError` naming it: nothing is written.

The runtime checks what it alone can (does the predecessor exist?) and raises `UnknownNode` /
`UnknownSession` before it writes anything; those are mapped to the argument they came from."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread
from pydantic import BaseModel

from ..actors import Runtime
from ..memory.durable import check_dir
from ..memory.errors import InvalidInput, UnknownNode, UnknownSession, UnsafePath
from ..memory.format import (
    HEAD,
    HomePaths,
    WorkspacePaths,
    content_problem,
    is_topic_slug,
    is_valid_id,
)
from ..memory.listing import AmbiguousNode, list_sessions, resolve_stored
from ..memory.recall import QueryRefused, RecallQuery, core_for, index_for, topic_for
from ..memory.store import FileSessionStore, Turn
from ..memory.trust import OWNER, OutOfScope, Scope

__all__ = ["MAX_K", "ArgumentError", "MemoryTools", "topic_slugs"]

MAX_K: Final = 50


class ArgumentError(InvalidInput):
    """A tool argument is invalid; `argument` is its name."""

    def __init__(self, argument: str, reason: str) -> None:
        super().__init__(f"invalid argument {argument!r}: {reason}")
        self.argument = argument
        self.reason = reason


def _jsonable(value: object) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def topic_slugs(memory: Path) -> list[str]:
    """The slugs of the topic files in `memory/topics/`, sorted: regular files only, never a symlink."""
    directory = WorkspacePaths(memory).topics
    try:
        if not check_dir(directory):
            return []
    except UnsafePath:
        return []
    return sorted(
        p.stem for p in directory.glob("*.md") if is_topic_slug(p.stem) and p.is_file() and not p.is_symlink()
    )


class MemoryTools:
    """The tools for one reader. `scope` is what it may see and do (default: the owner, everything); a
    request outside it is refused with a message that names nothing beyond the argument, so an existing
    session outside the scope and a missing one look the same."""

    def __init__(self, runtime: Runtime, home: Path, *, scope: Scope = OWNER) -> None:
        self.runtime = runtime
        self.home = home
        self.layout = HomePaths(home)
        self.memory = self.layout.memory
        self.scope = scope

    # -- argument checks -------------------------------------------------------------------------------

    @staticmethod
    def _id(argument: str, value: str) -> str:
        if not is_valid_id(value):
            raise ArgumentError(argument, f"{value!r} is not an id ([A-Za-z0-9][A-Za-z0-9_-]{{0,63}})")
        return value

    def _in_scope(self, argument: str, value: str) -> str:
        if not self.scope.allows_session(value):
            raise ArgumentError(argument, "that session is outside this reader's scope")
        return value

    def _session(self, argument: str, value: str) -> str:
        self._id(argument, value)
        self._in_scope(argument, value)
        if not self.layout.session(value).is_dir():
            raise ArgumentError(argument, f"no session {value!r}")
        return value

    def _resolve(self, argument: str, session_id: str, given: str) -> str:
        """The node a prefix names, asked only after the runtime knew no node of that whole id: a whole id
        costs nothing more. Acknowledged turns are on disk, so the files hold every node."""
        try:
            return resolve_stored(FileSessionStore(self.home, read_only=True), session_id, given)
        except (UnknownNode, UnknownSession, AmbiguousNode) as exc:
            raise ArgumentError(argument, str(exc)) from None

    # -- the tools -------------------------------------------------------------------------------------

    async def recall(
        self,
        query: str,
        session_id: str | None,
        tip: str | None,
        k: int,
        *,
        history: bool = False,
        held: bool = False,
        checkout: str | None = None,
    ) -> list[dict[str, Any]]:
        try:  # the runtime's own rules (the query empty, too long, not text; a tip without its session)
            asked = RecallQuery(query, session_id=session_id, tip=tip, k=k, history=history, held=held)
        except QueryRefused as exc:
            raise ArgumentError(exc.argument, str(exc)) from None
        if k > MAX_K:
            raise ArgumentError("k", f"must be 1 to {MAX_K}, not {k}")
        if session_id is not None:
            self._session("session_id", session_id)
        if held and not self.scope.held:
            raise ArgumentError("held", "held items are outside this reader's scope")
        if checkout is not None and (
            not isinstance(checkout, str) or not await anyio.Path(checkout).is_dir()
        ):
            raise ArgumentError("checkout", f"must be a directory, not {checkout!r}")
        scope = None if self.scope.is_owner else self.scope
        try:
            hits: Sequence[object] = await self.runtime.recall_query(asked, scope=scope, checkout=checkout)
        except UnknownNode:
            if session_id is None or tip is None:  # only a named tip can be unknown
                raise
            whole = await anyio.to_thread.run_sync(self._resolve, "tip", session_id, tip)
            try:
                hits = await self.runtime.recall_query(
                    dataclasses.replace(asked, tip=whole), scope=scope, checkout=checkout
                )
            except UnknownNode as exc:
                raise ArgumentError("tip", str(exc)) from None
        except UnknownSession as exc:
            raise ArgumentError("session_id", str(exc)) from None
        return [_jsonable(hit) for hit in hits]

    def sessions(self) -> list[dict[str, Any]]:
        """Each session of the home: nodes, head, tips (with their last turn's first words), records owed."""
        return [
            summary.as_json() for summary in list_sessions(self.home) if self.scope.allows_session(summary.id)
        ]

    def core(self) -> str:
        """core.md's text ("" when none); never through a symlink (`UnsafePath`), like the archive. Under
        a scope, only the facts whose evidence it may see."""
        try:
            return core_for(self.memory, self.scope)
        except OutOfScope:
            raise ArgumentError("core", "the core block is outside this reader's scope") from None

    def status(self) -> dict[str, Any]:
        scope = None if self.scope.is_owner else self.scope
        return {
            "home": str(self.home),
            "workspace_id": self.runtime.workspace_id,
            **self.runtime.status(scope=scope).model_dump(mode="json"),
        }

    async def flush(self) -> dict[str, Any]:
        """Write everything owed; the status afterwards. On a full disk it does not wait for space: the
        status's `waiting_out` says why nothing is written (DISK_FULL, retrying), and the writes go on."""
        await self.runtime.flush(force=True, wait_out=False)
        return self.status()

    async def append_turn(
        self,
        session_id: str,
        role: str,
        content: str,
        predecessor: str | None,
        *,
        spawned: bool = False,
        origin: str | None = None,
    ) -> str:
        self._id("session_id", session_id)
        self._in_scope("session_id", session_id)
        if not isinstance(spawned, bool):
            raise ArgumentError("spawned", f"must be true or false, not {spawned!r}")
        problem = content_problem(content)
        if problem is not None:
            raise ArgumentError("content", problem)
        if predecessor is not None:
            self._id("predecessor", predecessor)
            if not self.layout.session(session_id).is_dir():
                raise ArgumentError("predecessor", f"session {session_id!r} has no node {predecessor!r}")
        try:
            turn = Turn(
                role,
                content,
                predecessor=HEAD if predecessor is None else predecessor,
                spawned=spawned,
                origin=origin,
            )
        except InvalidInput as exc:  # nothing else is left to refuse, but never a bare crash
            raise ArgumentError("arguments", str(exc)) from None
        try:
            return await self._append(session_id, turn)
        except UnknownNode:
            if predecessor is None:
                raise ArgumentError("predecessor", "the head is gone") from None
        # Nothing was written: the predecessor may be a prefix of a node's id; append once more.
        whole = await anyio.to_thread.run_sync(self._resolve, "predecessor", session_id, predecessor)
        try:
            return await self._append(session_id, dataclasses.replace(turn, predecessor=whole))
        except UnknownNode as exc:
            raise ArgumentError("predecessor", str(exc)) from None

    async def _append(self, session_id: str, turn: Turn) -> str:
        """`Runtime.append_turn`, its refusals named by argument; an `UnknownNode` is left to the caller."""
        try:
            return await self.runtime.append_turn(session_id, turn)
        except UnknownNode:
            raise
        except UnknownSession as exc:
            raise ArgumentError("predecessor", str(exc)) from None
        except InvalidInput as exc:  # nothing else is left to refuse, but never a bare crash
            raise ArgumentError("arguments", str(exc)) from None

    async def set_head(self, session_id: str, node_id: str) -> dict[str, str]:
        self._session("session_id", session_id)
        self._id("node_id", node_id)
        try:
            await self.runtime.set_head(session_id, node_id)
        except UnknownNode:
            node_id = await anyio.to_thread.run_sync(self._resolve, "node_id", session_id, node_id)
            try:
                await self.runtime.set_head(session_id, node_id)
            except UnknownNode as exc:
                raise ArgumentError("node_id", str(exc)) from None
        return {"session_id": session_id, "head": node_id}

    def readable_slugs(self) -> list[str]:
        """The topics this reader may list: every one for the owner, else those with a block it may see."""
        slugs = topic_slugs(self.memory)
        return slugs if self.scope.is_owner else [slug for slug in slugs if self.topic(slug) is not None]

    def topic_index(self) -> str:
        """The topic index (`topics/index.md`: one line per topic, newest first; "" when none), as this
        reader may see it; never through a symlink."""
        try:
            return index_for(self.memory, self.scope)
        except (UnsafePath, InvalidInput):  # a planted link, or a listed topic damaged since: no index
            return ""

    def topic(self, slug: str) -> str | None:
        """The text of `topics/<slug>.md`, or None when there is no such topic."""
        if not is_topic_slug(slug):
            return None
        try:
            return topic_for(self.memory, f"topics/{slug}.md", self.scope)
        except UnsafePath:  # a planted link: served as no topic at all, never the file it names
            return None
        except InvalidInput:  # a damaged topic file: only the owner reads it (whole, unparsed)
            return None
