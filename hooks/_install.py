"""`dagmem install HOST`: the hook entries merged into the host's own configuration, and taken out again.

- claude-code: `hooks` of `~/.claude/settings.json` (`--user`) or `DIR/.claude/settings.json`
  (`--project DIR`): one command hook per event (SessionStart, UserPromptSubmit, Stop, SubagentStop,
  PreCompact, SessionEnd), appended beside the hooks already there;
- codex: the top-level `notify` program of `$CODEX_HOME/config.toml` (`~/.codex`); Codex runs one notify
  program, so one set to something else is refused, never replaced;
- pi: the extension file `~/.pi/agent/extensions/dagmem.ts` (`--user`) or `DIR/.pi/extensions/dagmem.ts`.

Every other setting, hook and line is kept; a second install changes nothing; `--uninstall` takes out
exactly what an install put in (entries are recognised by their command, `... dagmem hook HOST ...`). A
file is rewritten whole (temp file, fsync, rename: never half-written), through a symbolic link to where
it points, keeping its mode. A file that does not parse, holds comments (JSON has none, and they would be
lost), or cannot be written is refused with one line, and nothing is written."""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..memory.durable import atomic_write
from ..memory.errors import InvalidInput
from ._cli import HOSTS
from ._pi import EXTENSION
from ._queue import ISOLATED

__all__ = ["Change", "apply", "hook_command", "plan", "target"]

_TIMEOUTS = {"SessionStart": 30, "UserPromptSubmit": 30}  # seconds; the events that only queue: 10
_PI_HEADER = "// Written by `dagmem install pi`"
_CODEX_MARK = "# dagmem: memory for Codex (`dagmem install codex --uninstall` takes it out)"


@dataclass(frozen=True)
class Change:
    path: Path  # the file written (a symbolic link's target)
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is to be removed

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                (self.after or "").splitlines(keepends=True),
                fromfile=f"{self.path} (before)" if self.before is not None else "/dev/null",
                tofile=f"{self.path} (after)" if self.after is not None else "/dev/null",
            )
        )


def hook_command(host: str, home: Path | None) -> list[str]:
    """The hook's command: this interpreter running dagmem (so no PATH is needed where the host runs it),
    with `--home` when one was given (an absolute path: the host runs hooks from anywhere). `-P`: the host
    runs it in the project's directory, which `-m` would put first on `sys.path`, so a project's own
    `queue.py` or `types.py` would shadow the standard library's."""
    command = [*ISOLATED, "dagmem", "hook", host]
    if home is not None:
        command[len(ISOLATED) + 2 : len(ISOLATED) + 2] = ["--home", str(home.absolute())]
    return command


def target(host: str, project: Path | None, env: dict[str, str] | None = None) -> Path:
    """The configuration file `host` reads: the user's (`project` None) or the project's."""
    environ = dict(os.environ) if env is None else env
    user = Path(environ.get("HOME") or Path.home())
    if host == "claude-code":
        return (project or user) / ".claude" / "settings.json"
    if host == "codex":
        if project is not None:
            raise InvalidInput("codex reads its notify program from the user's config only: use --user")
        return Path(environ.get("CODEX_HOME") or user / ".codex") / "config.toml"
    if host == "pi":
        return (
            project / ".pi" / "extensions" / "dagmem.ts"
            if project
            else user / ".pi/agent/extensions/dagmem.ts"
        )
    raise InvalidInput(f"unknown host {host!r}: one of {', '.join(sorted(HOSTS))}")


def plan(host: str, path: Path, *, home: Path | None, uninstall: bool) -> Change:
    """What installing (or uninstalling) would make of `path`; `InvalidInput` when it cannot be done."""
    real = path.resolve() if path.is_symlink() else path
    before = _read(real)
    command = hook_command(host, home)
    if host == "claude-code":
        after = _claude_code(real, before, command, uninstall)
    elif host == "codex":
        after = _codex(real, before, command, uninstall)
    else:
        after = _pi(real, before, command, uninstall)
    return Change(real, before, after)


def apply(change: Change) -> None:
    """Write the change (atomically), or remove the file an uninstall empties of ours."""
    if not change.changed:
        return
    mode = stat.S_IMODE(change.path.stat().st_mode) if change.before is not None else None
    # No write bit, or no permission: read-only (a rename would replace it all the same, and root may
    # write anything: the file's own mode says what its owner wants).
    if mode is not None and (mode & 0o222 == 0 or not os.access(change.path, os.W_OK)):
        raise InvalidInput(f"{change.path}: read-only; nothing changed")
    if change.after is None:
        change.path.unlink()
        return
    change.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        atomic_write(change.path, change.after.encode("utf-8"))
    except PermissionError as exc:
        raise InvalidInput(f"{change.path}: cannot be written ({exc.strerror}); nothing changed") from None
    if mode is not None:
        os.chmod(change.path, mode)


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InvalidInput(f"{path}: a directory, not a settings file") from None
    except PermissionError as exc:
        raise InvalidInput(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}: not UTF-8; nothing changed") from None


def _ours(command: object, host: str) -> bool:
    """Whether a hook command is dagmem's for `host`: `... dagmem hook [--home H] HOST ...` (a shell
    string, as Claude Code keeps it, or an argv list, as Codex does)."""
    try:
        words = shlex.split(command) if isinstance(command, str) else [str(w) for w in command]  # type: ignore[attr-defined]
    except (ValueError, TypeError):
        return False
    for i, word in enumerate(words[:-1]):
        if Path(word).name == "dagmem" and words[i + 1] == "hook":
            rest = words[i + 2 :]
            if rest[:1] == ["--home"]:
                rest = rest[2:]
            return rest[:1] == [host]
    return False


# --- Claude Code: settings.json, hooks.EVENT = [{"matcher"?, "hooks": [{"type": "command", ...}]}] ---


def _claude_code(path: Path, before: str | None, command: list[str], uninstall: bool) -> str | None:
    settings = _json_object(path, before)
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{path}: 'hooks' is not an object; nothing changed")
    for event in HOSTS["claude-code"]:
        groups = hooks.get(event, [])
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise InvalidInput(f"{path}: hooks.{event} is not a list of objects; nothing changed")
        wanted = {
            "type": "command",
            "command": shlex.join([*command, event]),
            "timeout": _TIMEOUTS.get(event, 10),
        }
        kept = [g for g in map(_without_ours, groups) if g is not None]
        present = [h for g in groups for h in _hooks_of(g) if _ours(h.get("command"), "claude-code")]
        if not uninstall and present == [wanted]:
            continue  # installed as wanted already: left where it is
        if not uninstall:
            kept.append({"hooks": [wanted]})
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    if before is None and not settings:
        return None
    after = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    if before is not None and json.loads(before) == settings:
        return before  # nothing to change: the bytes stay as they are, formatting and all
    return after


def _hooks_of(group: dict[str, Any]) -> list[dict[str, Any]]:
    found = group.get("hooks", [])
    return [h for h in found if isinstance(h, dict)] if isinstance(found, list) else []


def _without_ours(group: dict[str, Any]) -> dict[str, Any] | None:
    """The group without dagmem's hooks; None when nothing else was in it."""
    found = group.get("hooks")
    if not isinstance(found, list):
        return group
    rest = [h for h in found if not (isinstance(h, dict) and _ours(h.get("command"), "claude-code"))]
    if len(rest) == len(found):
        return group
    return {**group, "hooks": rest} if rest else None


def _json_object(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        hint = " (comments are not JSON: take them out first)" if re.search(r"^\s*//|/\*", text, re.M) else ""
        raise InvalidInput(f"{path}: not valid JSON{hint} ({exc}); nothing changed") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"{path}: not a JSON object; nothing changed")
    return value


# --- Codex: config.toml, top-level `notify = [...]` ---


def _codex(path: Path, before: str | None, command: list[str], uninstall: bool) -> str | None:
    text = before or ""
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc}); nothing changed") from None
    current = config.get("notify")
    wanted = [*command, "notify"]
    ours = isinstance(current, list) and _ours(current, "codex")
    if current is not None and not ours:
        if uninstall:
            return before
        raise InvalidInput(
            f"{path}: notify is already set to {current!r}; Codex runs one notify program, so it is left as "
            "it is (take it out first to let dagmem in)"
        )
    lines = text.splitlines(keepends=True)
    if ours:
        if not uninstall and current == wanted:
            return before
        lines = [ln for ln in lines if ln.rstrip("\n") != _CODEX_MARK and not re.match(r"\s*notify\s*=", ln)]
    if not uninstall:
        line = f"{_CODEX_MARK}\nnotify = {json.dumps(wanted)}\n"
        first_table = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("[")), len(lines))
        lines.insert(first_table, line)  # a top-level key: before the first table
    after = "".join(lines)
    if tomllib.loads(after).get("notify") != (None if uninstall else wanted):
        raise InvalidInput(f"{path}: notify could not be set without rewriting the file; nothing changed")
    return None if (before is None and not after) else after


# --- pi: one extension file of its own ---


def _pi(path: Path, before: str | None, command: list[str], uninstall: bool) -> str | None:
    if before is not None and not before.startswith(_PI_HEADER):
        raise InvalidInput(f"{path}: a file dagmem did not write; nothing changed")
    if uninstall:
        return None
    return EXTENSION.replace("__COMMAND__", json.dumps(command))
