"""`dagmem import --follow`: poll the files and feed what is new to a running runtime (`dagmem.Runtime`, or
anything with its `append_turn` / `set_head` / `end_session`), so the runtime writes memory as DESIGN §3 says:
a branch's turns when they reach the threshold, an abandoned branch `abandon_after` after the source's head
left it, and (`finish`, when following stops) a boundary write of every session followed."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol

import anyio
import anyio.lowlevel

from ..errors import InvalidInput
from ..store import SessionStore, Turn
from ._import import Importer, ImportReport, SourceClock, StoreSink
from ._mapper import Planned

__all__ = ["Follower", "RuntimeLike"]


class RuntimeLike(Protocol):
    async def append_turn(self, session_id: str, turn: Turn) -> str: ...

    async def set_head(self, session_id: str, node_id: str | None) -> None: ...

    async def end_session(self, session_id: str) -> None: ...


class Follower:
    """`store` must be the runtime's own store (opened with `clock`), so that node times are the source's."""

    def __init__(
        self, importer: Importer, runtime: RuntimeLike, store: SessionStore, clock: SourceClock
    ) -> None:
        self.importer = importer
        self.runtime = runtime
        self.report = ImportReport()
        self._sink = StoreSink(store, clock, self.report)
        self._clock = clock
        self._problems_seen = 0
        self._pending: deque[Planned] = deque()  # read, not yet fed: a poll stopped midway goes on from here

    async def poll(self) -> int:
        """Feed what is new in the files (whole lines only); returns the nodes appended."""
        importer, sink = self.importer, self._sink

        def read_new() -> list[Planned]:
            importer.discover()
            return importer.poll(final=False)

        before = self.report.added
        with anyio.CancelScope(shield=True):  # the readers move on as they read: what they read is kept
            self._pending.extend(await anyio.to_thread.run_sync(read_new))
        self.report.files = len(importer.sources)
        while self._pending:
            # Shielded: a stop (Ctrl-C) lands between nodes, never after the runtime took one but before the
            # report counted it (the actor applies a request whose caller was cancelled).
            with anyio.CancelScope(shield=True):
                # Screened as it is taken (the forget journal read again if a forget changed it meanwhile):
                # a forgotten text's turn reaches the runtime as the tombstone an import stores, marked.
                node = await anyio.to_thread.run_sync(sink.screen, self._pending[0])
                self._pending.popleft()
                if await anyio.to_thread.run_sync(sink.skip, node):
                    continue
                self._clock.now = node.time
                try:
                    turn = await anyio.to_thread.run_sync(sink.turn, node)
                    await self.runtime.append_turn(node.session, turn)
                except InvalidInput as exc:
                    sink.refused(node, exc)
                    continue
                sink.added(node)
            await anyio.lowlevel.checkpoint()
        for sid, head in importer.heads().items():
            with anyio.CancelScope(shield=True):
                target = await anyio.to_thread.run_sync(sink.head_to_set, sid, head)
                if target is not None:
                    await self.runtime.set_head(sid, target)
                self.report.count(sid).head = head
            await anyio.lowlevel.checkpoint()
        self.report.problems.extend(importer.problems[self._problems_seen :])
        self._problems_seen = len(importer.problems)
        for sid, mapper in importer.mappers.items():
            self.report.count(sid).orphans = mapper.orphans
        return self.report.added - before

    async def run(
        self, *, interval: float = 1.0, on_poll: Callable[[ImportReport], None] | None = None
    ) -> None:
        """Poll until cancelled."""
        while True:
            await self.poll()
            if on_poll is not None:
                on_poll(self.report)
            await anyio.sleep(interval)

    async def finish(self) -> None:
        """The boundary write of every session followed (DESIGN §3): nothing they said stays owed; and
        the files followed in which no line looked like the format are named."""
        for sid in sorted(self.importer.mappers):
            if sid in self.report.sessions:
                await self.runtime.end_session(sid)
        self.report.problems.extend(self.importer.format_problems())
