"""Hooks: memory inside the agents people already run (Claude Code, Codex, pi), and their installs.

`dagmem hook HOST EVENT` serves one host event: the context of a starting session or of a prompt
(read-only), or a transcript handed to a detached worker that imports what is new and writes what is
due (`_queue`, `_worker`), so the host never waits for a write. `dagmem install HOST` merges the hook
entries into the host's own configuration (`_install`). One module per host reads its payload
(`_claude_code`, `_codex`, `_pi`); `_events` is what they share, `_context` the read side, `_home` where a
project's memory lives, `_log` the one line a hook leaves when it cannot serve an event.

Layering: above the domain (`dagmem.memory`), beside the runtime; the command line and `__main__` use it.
"""

from __future__ import annotations

from .._lazy import lazy

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from . import _install
    from ._cli import HOSTS as HOSTS
    from ._cli import add_hook_arguments as add_hook_arguments
    from ._cli import hook_main as hook_main
    from ._cli import memory_off as memory_off
    from ._cli import run_hook as run_hook
    from ._home import hook_home as hook_home
    from ._home import project_home as project_home
    from ._home import state_dir as state_dir
    from ._queue import wait_for_worker as wait_for_worker
    from ._queue import worker_idle as worker_idle
    from ._state import queue_state as queue_state

    install = _install
else:
    # Each name loads its module on first use: the installs load the durable writes, which a hook that runs
    # never needs, and a hook loads only its own event's modules.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "install": "._install:",
            "HOSTS": "._cli",
            "add_hook_arguments": "._cli",
            "hook_main": "._cli",
            "memory_off": "._cli",
            "run_hook": "._cli",
            "hook_home": "._home",
            "project_home": "._home",
            "state_dir": "._home",
            "wait_for_worker": "._queue",
            "worker_idle": "._queue",
            "queue_state": "._state",
        },
    )
