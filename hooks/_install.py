"""`dagmem install HOST`: the hook entries merged into the host's own configuration, and taken out again.

- claude-code: `hooks` of `~/.claude/settings.json` (`--user`) or `DIR/.claude/settings.json`
  (`--project DIR`): one command hook per event (SessionStart, UserPromptSubmit, Stop, SubagentStop,
  PreCompact, SessionEnd), appended beside the hooks already there;
- codex: the top-level `notify` program of `$CODEX_HOME/config.toml` (`~/.codex`); Codex runs one notify
  program, so one set to something else is refused, never replaced;
- pi: the extension file `~/.pi/agent/extensions/dagmem.ts` (`--user`) or `DIR/.pi/extensions/dagmem.ts`.

Every other setting, hook and line is kept; a second install changes nothing; `--uninstall` takes out
exactly what an install put in (entries are recognised by their command, `... dagmem hook [OPTIONS]
HOST ...`, whatever else the user changed in them). Our entry edited by the user (its timeout, an option)
is updated in place, keeping what they set. The file is written only if it still holds what was read
(`_install_file`: a host writing it meanwhile gets its change merged, not lost). A file that does not
parse, holds comments (JSON has none, and they would be lost) or a key twice, or cannot be written, is
refused with one line, and nothing is written."""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..memory.errors import InvalidInput
from . import _install_file as files
from ._cli import HOSTS
from ._pi import EXTENSION
from ._queue import ISOLATED
from ._toml_lines import Statement, Unfollowable, statements

__all__ = ["ATTEMPTS", "Change", "apply", "hook_command", "install", "plan", "target"]

_TIMEOUTS = {"SessionStart": 30, "UserPromptSubmit": 30}  # seconds; the events that only queue: 10
_PI_HEADER = "// Written by `dagmem install pi`"
_CODEX_MARK = "# dagmem: memory for Codex (`dagmem install codex --uninstall` takes it out)"
ATTEMPTS = 5  # plans of a file its host keeps rewriting, before the install gives up (one line)
# The options `dagmem hook` takes before or after HOST EVENT, each with a value.
_HOOK_OPTIONS = frozenset({"--home", "--threshold", "--idle-after", "--budget"})


@dataclass(frozen=True)
class Change:
    path: Path  # the file written (a symbolic link's target)
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is to be removed
    raw: bytes | None = None  # the bytes `before` was read from: the file is written only if it holds them

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
    real = files.real_path(path)
    raw = files.read(real)
    before = _text(real, raw)
    command = hook_command(host, home)
    try:
        if host == "claude-code":
            after = _claude_code(real, before, command, uninstall)
        elif host == "codex":
            after = _codex(real, before, command, uninstall)
        else:
            after = _pi(real, before, command, uninstall)
    except RecursionError:  # a file nested thousands deep: no settings file is
        raise InvalidInput(f"{real}: nested too deeply to be a settings file; nothing changed") from None
    return Change(real, before, after, raw)


def apply(change: Change) -> None:
    """Write the change, or remove the file an uninstall empties of ours: only if the file still holds
    what the change was planned from (`_install_file.Changed` otherwise; `install` plans it again)."""
    if not change.changed:
        return
    after = None if change.after is None else change.after.encode("utf-8")
    files.write(change.path, change.raw, after)


def install(host: str, path: Path, *, home: Path | None, uninstall: bool, dry_run: bool = False) -> Change:
    """Plan the change and write it (unless `dry_run`); planned again from the file as it is now when its
    host wrote it meanwhile, up to `ATTEMPTS` times, so the host's change is merged, never lost."""
    for _attempt in range(ATTEMPTS):
        change = plan(host, path, home=home, uninstall=uninstall)
        if dry_run:
            return change
        try:
            apply(change)
        except files.Changed:
            continue
        return change
    raise InvalidInput(
        f"{path}: changed by another program each time dagmem was about to write it ({ATTEMPTS} tries; is "
        "the host rewriting it now?); nothing changed, run the install again"
    )


def _text(path: Path, raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}: not UTF-8; nothing changed") from None


def _words(command: object) -> list[str] | None:
    try:
        return shlex.split(command) if isinstance(command, str) else [str(w) for w in command]  # type: ignore[attr-defined]
    except (ValueError, TypeError):
        return None


def _hook_args(command: object) -> tuple[list[str], list[str]] | None:
    """A hook command's words after `dagmem hook` as (positional words, options with their values), or
    None when it is not `... dagmem hook ...` (a shell string, as Claude Code keeps it, or an argv list,
    as Codex does)."""
    words = _words(command)
    if words is None:
        return None
    for i, word in enumerate(words[:-1]):
        if Path(word).name == "dagmem" and words[i + 1] == "hook":
            positional: list[str] = []
            options: list[str] = []
            rest = iter(words[i + 2 :])
            for arg in rest:
                if arg.startswith("--"):
                    options.append(arg)
                    if "=" not in arg and arg in _HOOK_OPTIONS:
                        options.append(next(rest, ""))
                else:
                    positional.append(arg)
            return positional, options
    return None


def _ours(command: object, host: str) -> bool:
    """Whether a hook command is dagmem's for `host`: `... dagmem hook [OPTIONS] HOST ...`."""
    found = _hook_args(command)
    return found is not None and found[0][:1] == [host]


def _user_options(command: object) -> list[str]:
    """The options a user added to our hook command (`--budget 5000`): kept when it is updated. `--home`
    is the install's own, given again (or not) by each install."""
    found = _hook_args(command)
    if found is None:
        return []
    options, kept = found[1], []
    i = 0
    while i < len(options):
        name = options[i].split("=", 1)[0]
        width = 2 if "=" not in options[i] and name in _HOOK_OPTIONS else 1
        if name != "--home":
            kept += options[i : i + width]
        i += width
    return kept


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
        if uninstall:
            kept = [g for g in map(_without_ours, groups) if g is not None]
        else:
            updated = _update_ours(groups, [*command, event])
            # None of ours in this event: a group of its own, after the user's.
            kept = updated if updated is not None else [*groups, {"hooks": [_entry(command, event)]}]
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
    if before is not None and before.strip() and _loads(path, before) == settings:
        return before  # nothing to change: the bytes stay as they are, formatting and all
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def _entry(command: list[str], event: str) -> dict[str, Any]:
    return {"type": "command", "command": shlex.join([*command, event]), "timeout": _TIMEOUTS.get(event, 10)}


def _update_ours(groups: list[dict[str, Any]], command: list[str]) -> list[dict[str, Any]] | None:
    """The groups with our first hook of the event set to `command` in place (the user's timeout, other
    fields and own options kept) and any second one of ours taken out; None when none is ours."""
    first: dict[str, Any] | None = None
    out: list[dict[str, Any]] = []
    for group in groups:
        found = group.get("hooks")
        if not isinstance(found, list):
            out.append(group)
            continue
        rest: list[Any] = []
        for hook in found:
            if isinstance(hook, dict) and _ours(hook.get("command"), "claude-code"):
                if first is not None:
                    continue  # a second entry of ours (an older install's): one is enough
                words = [*command, *_user_options(hook.get("command"))]
                first = {**hook, "type": "command", "command": shlex.join(words)}
                rest.append(first)
                continue
            rest.append(hook)
        if rest or len(rest) == len(found):
            out.append({**group, "hooks": rest} if rest != found else group)
    return None if first is None else out


def _without_ours(group: dict[str, Any]) -> dict[str, Any] | None:
    """The group without dagmem's hooks; None when nothing else was in it."""
    found = group.get("hooks")
    if not isinstance(found, list):
        return group
    rest = [h for h in found if not (isinstance(h, dict) and _ours(h.get("command"), "claude-code"))]
    if len(rest) == len(found):
        return group
    return {**group, "hooks": rest} if rest else None


class _Duplicate(InvalidInput):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refusing a key given twice: `json` would keep the last and silently drop the
    first (a user's whole `hooks`, say), which the rewrite would then make final."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _loads(path: Path, text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        raise InvalidInput(
            f"{path}: the key {exc.key!r} appears twice in one object (JSON keeps only the last); "
            "merge them first; nothing changed"
        ) from None
    except RecursionError:
        raise InvalidInput(f"{path}: nested too deeply to be a settings file; nothing changed") from None
    except ValueError as exc:
        hint = " (comments are not JSON: take them out first)" if re.search(r"^\s*//|/\*", text, re.M) else ""
        raise InvalidInput(f"{path}: not valid JSON{hint} ({exc}); nothing changed") from None


def _json_object(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    value = _loads(path, text)
    if not isinstance(value, dict):
        raise InvalidInput(f"{path}: not a JSON object; nothing changed")
    return value


# --- Codex: config.toml, top-level `notify = [...]` ---


def _codex(path: Path, before: str | None, command: list[str], uninstall: bool) -> str | None:
    text = before or ""
    config = _toml(path, text)
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
    if ours and not uninstall and current == wanted:
        return before
    if not ours and uninstall:
        return before
    try:
        found = statements(text)
    except Unfollowable as exc:
        raise InvalidInput(f"{path}: cannot be edited safely ({exc}); nothing changed") from None
    after = _codex_edit(text, found, wanted, uninstall)
    expected = {k: v for k, v in config.items() if k != "notify"} | ({} if uninstall else {"notify": wanted})
    try:
        parsed: dict[str, Any] | None = tomllib.loads(after)
    except (tomllib.TOMLDecodeError, RecursionError):
        parsed = None
    if parsed is None or not _same(parsed, expected):  # the edit must change notify and nothing else
        raise InvalidInput(f"{path}: notify could not be set without rewriting the file; nothing changed")
    return None if (before is None and not after) else after


def _codex_edit(text: str, found: list[Statement], wanted: list[str], uninstall: bool) -> str:
    """`text` with the top-level `notify` statement (and our comment) taken out, set in place, or put
    before the first table: by the statements' own positions, never by matching lines."""
    table = next((s for s in found if s.kind == "table"), None)
    top = [s for s in found if table is None or s.start < table.start]
    notify = [s for s in top if s.kind == "key" and s.key == ("notify",)]
    newline = "\r\n" if "\r\n" in text else "\n"
    assignment = f"notify = {json.dumps(wanted)}"
    if notify and not uninstall:  # ours, but another command (another interpreter, --home): in place
        s = notify[0]
        return text[: s.begin] + assignment + text[s.end :]
    cuts = list(notify) + [
        s for s in found if s.kind == "comment" and text[s.begin : s.end].rstrip() == _CODEX_MARK
    ]
    out, at = [], 0
    for s in sorted(cuts, key=lambda s: s.start):
        out.append(text[at : s.start])
        at = s.line_end
    out.append(text[at:])
    edited = "".join(out)
    if uninstall:
        return edited
    insert = table.start if table is not None else len(text)
    insert -= sum(s.line_end - s.start for s in cuts if s.start < insert)
    lead = edited[:insert]
    if lead and not lead.endswith("\n"):
        lead += newline  # a last line without its newline: ours goes on a line of its own
    return lead + _CODEX_MARK + newline + assignment + newline + edited[insert:]


def _toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc}); nothing changed") from None


def _same(a: object, b: object) -> bool:
    """Equal as TOML values (a NaN equals itself here: the file's own `nan` must not fail the check)."""
    return a == b or json.dumps(a, sort_keys=True, default=repr) == json.dumps(
        b, sort_keys=True, default=repr
    )


# --- pi: one extension file of its own ---


def _pi(path: Path, before: str | None, command: list[str], uninstall: bool) -> str | None:
    if before is not None and not before.startswith(_PI_HEADER):
        raise InvalidInput(f"{path}: a file dagmem did not write; nothing changed")
    if uninstall:
        return None
    return EXTENSION.replace("__COMMAND__", json.dumps(command))
