"""`dagmem hook HOST EVENT`: the one entry point hosts call. `python -m dagmem hook ...` comes here
before the command line loads (`__main__`): a hook runs on every prompt, so it imports only what its
event needs.

A hook never blocks or breaks its host: whatever goes wrong (bad input, a damaged home, a bug) it exits
0 with nothing on stdout and leaves one line in `<home>/hooks/hooks.log`; it never exits 2 (Claude Code
reads 2 as "block this prompt"). Only a mistake on its own command line (an unknown host or event, which
`dagmem install` never writes) is refused like any other command's, exit 2. With `DAGMEM_MEMORY=off` it
does nothing at all.

The command lines `dagmem install` writes (`[--home H] HOST EVENT [PAYLOAD]`) are read without argparse,
whose import (and the help formatter's `shutil`) a hook on every prompt need not pay; anything else on
the command line (an option, `--help`, a mistake) goes through the parser, so its grammar and its errors
stay argparse's."""

from __future__ import annotations

import sys
from pathlib import Path

from ..memory.switch import memory_off
from ._home import hook_home
from ._log import log_line
from ._payload import PayloadError, parse_payload, read_payload

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

__all__ = ["HOSTS", "add_hook_arguments", "hook_main", "memory_off", "run_hook"]

# Each host's events: the one list (the parser's, the install's).
HOSTS = {
    "claude-code": ("SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "SessionEnd"),
    "codex": ("notify",),
    "pi": ("UserPromptSubmit", "Stop", "SessionEnd"),
}


def _positive(text: str) -> int:
    import argparse

    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_hook_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", choices=sorted(HOSTS), help="the agent host calling")
    parser.add_argument(
        "event", help="the host's event (claude-code: " + ", ".join(HOSTS["claude-code"]) + ")"
    )
    parser.add_argument("payload", nargs="?", help="codex: the notification JSON (Codex appends it)")
    parser.add_argument("--threshold", type=_positive, help="batch size in tokens for the writes it starts")
    parser.add_argument("--idle-after", type=float, help="seconds of quiet that end a session")
    parser.add_argument("--budget", type=_positive, help="tokens of injected context (default 3000)")


def run_hook(args: argparse.Namespace) -> int:
    """Serve one event; always 0 once the command line is good (see the module's doc)."""
    knobs = {"threshold": args.threshold, "idle_after": args.idle_after, "budget": args.budget}
    return _serve(args.host, args.event, args.payload, getattr(args, "home", None), knobs)


def _serve(host: str, event: str, raw: str | None, explicit: Path | None, knobs: dict[str, Any]) -> int:
    if memory_off():
        return 0
    if event not in HOSTS[host]:
        print(f"error: dagmem hook {host}: unknown event {event!r}", file=sys.stderr)
        return 2
    home = hook_home(explicit)  # never raises: a deleted working directory falls back (see `_home`)
    try:
        payload = parse_payload(raw or "") if host == "codex" else read_payload(sys.stdin.buffer)
        home = hook_home(explicit, payload.get("cwd"))
        out = _answer(host, event, payload, home, knobs)
    except PayloadError as exc:
        log_line(home, f"{host} {event}", str(exc))
        return 0
    except Exception as exc:  # a hook never breaks its host: the reason goes to the log
        log_line(home, f"{host} {event}", f"{type(exc).__name__}: {exc}")
        return 0
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except OSError:  # the host stopped reading
            pass
    return 0


def _answer(host: str, event: str, payload: dict[str, Any], home: Path, knobs: dict[str, Any]) -> str | None:
    if host == "claude-code":
        from . import _claude_code as module
    elif host == "codex":
        from . import _codex as module  # type: ignore[no-redef]
    else:
        from . import _pi as module  # type: ignore[no-redef]
    return module.answer(event, payload, home, knobs)


def _installed(argv: list[str]) -> tuple[str, str, str | None, Path | None] | None:
    """(host, event, payload, home) of a command line as `dagmem install` writes it, `[--home H] HOST
    EVENT [PAYLOAD]` with a known host; None for anything else (the parser reads it)."""
    home = None
    if argv[:1] == ["--home"] and len(argv) > 1 and not argv[1].startswith("-"):
        home, argv = Path(argv[1]), argv[2:]
    if not 2 <= len(argv) <= 3 or argv[0] not in HOSTS or any(a.startswith("-") for a in argv):
        return None
    return argv[0], argv[1], argv[2] if len(argv) == 3 else None, home


def hook_main(argv: Sequence[str]) -> int:
    """`dagmem hook ...` without the command line's parser (the fast path `__main__` takes)."""
    installed = _installed(list(argv))
    if installed is not None:
        host, event, raw, home = installed
        return _serve(host, event, raw, home, {"threshold": None, "idle_after": None, "budget": None})
    import argparse

    parser = argparse.ArgumentParser(prog="dagmem hook")
    parser.add_argument("--home", type=Path, default=None)
    add_hook_arguments(parser)
    # Intermixed: Codex appends its JSON after the options the install wrote. --help, or a mistake:
    # SystemExit, as for every command.
    args = parser.parse_intermixed_args(list(argv))
    return run_hook(args)
