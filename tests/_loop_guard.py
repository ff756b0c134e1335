"""A guard that fails a test whose event loop blocks on file I/O, as anyio's own suite has one (there,
blockbuster). It does not time anything, so it does not depend on the machine's speed: it watches the
calls themselves, on the thread running an asyncio or trio loop while that loop runs.

What is watched: Python's audit events for opening a file (`open`, `os.open`, `Path.read_text`, numpy's
loads and saves ...), listing, making, renaming and removing files and directories, and opening SQLite;
and `os.fsync`, `os.fdatasync`, `os.read` and `os.write` on regular files, which raise no audit event.

Whose call it is: dagmem's. A call counts when dagmem's code made it (a test's code is not nearer the
call on the stack) while dagmem's async code is on the stack (a coroutine or async generator of the
package) or its actor runtime is (`dagmem.actors`, whose sync methods run on the loop too:
`Runtime.core()`). A test's own reads and writes, and the sync API it calls from an async test (a store,
the oracle), are the test's business; imports and traceback rendering are not the code under test.

The one exception is documented in the product: a runtime opened with `offload=False` (the simulator,
virtual time, in-memory stores) runs its blocking work inline on purpose. A call is allowed when the
innermost dagmem coroutine on the stack runs with `offload` off (a local `offload`, or `self.offload`:
`Context.io`, `Runtime.open`); all other blocking work must go through that switch.

Calls are recorded, never raised: the code under test runs as it would (it may catch exceptions), and
the test fails at its end, naming each call and where dagmem made it."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import trio.lowlevel

import dagmem

__all__ = ["blocking_calls", "install"]

_PACKAGE = str(Path(dagmem.__file__).parent) + os.sep
_TESTS = str(Path(__file__).parent) + os.sep
_ACTORS = _PACKAGE + "actors" + os.sep
_AUDITED = frozenset(
    {
        "open",
        "os.listdir",
        "os.scandir",
        "os.mkdir",
        "os.rmdir",
        "os.remove",
        "os.rename",
        "os.truncate",
        "os.link",
        "os.symlink",
        "os.chmod",
        "os.utime",
        "shutil.rmtree",
        "shutil.copyfile",
        "sqlite3.connect",
    }
)
_ASYNC = 0x80 | 0x100 | 0x200  # CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR

_armed: list[list[str]] = []  # the record of the test being watched (one at a time per process)


def _loop_runs_here() -> bool:
    return asyncio._get_running_loop() is not None or trio.lowlevel.in_trio_run()


def _ours(name: str) -> bool:
    """A module of dagmem's (not a test, nor a library in a virtual environment inside the checkout)."""
    return (
        name.startswith(_PACKAGE)
        and not name.startswith(_TESTS)
        and "site-packages" not in name[len(_PACKAGE) :]
    )


def _not_the_code_under_test(name: str) -> bool:
    """An import, or a traceback being rendered (its source lines read)."""
    return name.startswith("<frozen importlib") or name.endswith(
        (os.sep + "linecache.py", os.sep + "traceback.py")
    )


def _blocking_site(frame: FrameType | None) -> str | None:
    """Where dagmem made a blocking call whose frames start at `frame`; None when it is not dagmem's, or is
    allowed."""
    site: str | None = None
    counts = False
    for_offload: FrameType | None = None
    while frame is not None:
        name = frame.f_code.co_filename
        if _not_the_code_under_test(name):
            return None
        if site is None and name.startswith(_TESTS):
            return None  # the test's own code made the call (perhaps called back by dagmem's)
        if _ours(name):
            if site is None:
                site = f"{name[len(_PACKAGE) :]}:{frame.f_lineno} ({frame.f_code.co_name})"
            if frame.f_code.co_flags & _ASYNC:
                counts = True
                if for_offload is None:
                    for_offload = frame
            elif name.startswith(_ACTORS):
                counts = True
        frame = frame.f_back
    if not counts or site is None:
        return None
    if for_offload is not None and _offload_off(for_offload):
        return None
    return site


def _offload_off(frame: FrameType) -> bool:
    local = frame.f_locals
    if local.get("offload") is False:
        return True
    return getattr(local.get("self"), "offload", None) is False


def _note(what: str, frame: FrameType | None) -> None:
    calls = _armed[-1] if _armed else None
    if calls is None or not _loop_runs_here():
        return
    site = _blocking_site(frame)
    if site is not None:
        calls.append(f"{what}, by {site}")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _AUDITED and _armed:
        _note(f"{event} {args[0]}" if args else event, sys._getframe(1))


def _on_regular_files(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def checked(fd: int, *args: Any) -> Any:
        if _armed and _loop_runs_here():
            try:
                mode = os.fstat(fd).st_mode
            except OSError:
                mode = 0
            if stat.S_ISREG(mode) or stat.S_ISDIR(mode):  # not a pipe or a socket: a file's I/O
                _note(f"os.{name} of fd {fd}", sys._getframe(1))
        return real(fd, *args)

    checked.__wrapped__ = real  # type: ignore[attr-defined]
    return checked


def install() -> None:
    """Start watching, for the whole process (an audit hook cannot be removed; it does nothing unless a
    test is being watched)."""
    sys.addaudithook(_audit)
    for name in ("fsync", "fdatasync", "read", "write"):
        setattr(os, name, _on_regular_files(name, getattr(os, name)))


@contextmanager
def blocking_calls() -> Iterator[list[str]]:
    """Record the blocking calls dagmem makes on a running event loop's thread while inside."""
    calls: list[str] = []
    _armed.append(calls)
    try:
        yield calls
    finally:
        _armed.remove(calls)
