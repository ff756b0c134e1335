"""What each entry of the brief is about: its section (the label its claim opens with) and its subject,
where a newer entry replaces an older one (a command's purpose and program, a file, a session's open
threads). Read by the brief's writer and by a session's start, which must not load the brief's rules."""

from __future__ import annotations

import re
import shlex
from typing import Final, Literal

from ..format import Block, uninert

__all__ = [
    "SECTIONS",
    "Section",
    "all_done",
    "base_command",
    "brief_subject",
    "closes_only",
    "project_steps",
    "purpose_of",
]

Section = Literal["convention", "command", "decision", "fix", "failed", "file", "open", "ended"]
# Each section's label: a brief block's claim opens with it (`<label>: ...`), which is how a reader tells
# the sections apart and what `entry_key` reads back.
SECTIONS: Final[dict[Section, str]] = {
    "convention": "Convention",
    "command": "Command",
    "decision": "Decision",
    "fix": "Fix",
    "failed": "Did not work",
    "file": "File",
    "open": "Open",
    "ended": "Where it ended",
}
_ALL_DONE: Final = re.compile(r"all \d+ to-do items done")


def all_done(items: int) -> str:
    """An `Open` entry's words when a session's to-do list is all done."""
    return f"all {items} to-do items done"


def closes_only(label: str, text: str) -> bool:
    """An entry that only closes what an older one left open (its to-do list all done): it supersedes the
    session's older open threads but is no open thread to give a reader."""
    return label == SECTIONS["open"] and _ALL_DONE.fullmatch(text) is not None


# What a command does to the project, by the words of its command line (the first that matches wins).
_PURPOSES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (purpose, re.compile(pattern, re.IGNORECASE))
    for purpose, pattern in (
        ("commit", r"^git\s+(?:add|commit|push|tag|merge|rebase|cherry-pick|reset|restore|rm|mv)\b"),
        ("test", r"\b(?:test|tests|pytest|jest|vitest|rspec|mocha|phpunit|ctest|unittest|nextest|spec)\b"),
        ("typecheck", r"\b(?:mypy|pyright|tsc|dialyzer|typecheck|type-check|ty\s+check|flow)\b"),
        (
            "lint",
            r"\b(?:lint|ruff|eslint|credo|clippy|flake8|pylint|rubocop|golangci-lint|shellcheck|biome)\b",
        ),
        ("format", r"\b(?:fmt|format|prettier|black|isort|gofmt|rustfmt)\b"),
        ("migrate", r"\b(?:migrate|migration|migrations|ecto\.\w+|alembic|prisma)\b"),
        (
            "build",
            r"\b(?:build|compile|make|webpack|esbuild|rollup|gradle|mvn|bundle|assets\.deploy)\b|\bnode\s+build",
        ),
        ("run", r"\b(?:run|serve|server|start|dev|phx\.server|uvicorn|flask|watch|preview)\b"),
        ("deps", r"\b(?:install|deps\.get|sync|add|pnpm\s+i|npm\s+ci|pip|uv\s+lock|cargo\s+update|bundle)\b"),
        ("release", r"\b(?:release|publish|deploy|upload)\b"),
    )
)
# Looking around, not doing: never a command of the project.
_LOOKING: Final = frozenset(
    """ls cat head tail grep rg ag find fd wc echo printf pwd cd which type file stat tree less more sed awk
    sort uniq diff cut tr xargs true false sleep date env printenv whoami id ps top du df open xdg-open
    curl wget jq yq mkdir rm mv cp touch ln chmod kill pkill tee basename dirname readlink realpath
    test [ for while if do done then fi exit return""".split()
)
_GIT_LOOKING: Final = frozenset(
    {"status", "diff", "log", "show", "branch", "remote", "rev-parse", "blame", "fetch", "stash", "checkout"}
)
# A program that runs a script or a module: the script (or `-m module`) is part of what the command is.
_INTERPRETERS: Final = frozenset({"node", "python", "python3", "ruby", "bash", "sh", "deno", "bun", "perl"})
_ENV: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_SUBCOMMAND: Final = re.compile(r"^[a-z][\w:.-]*$")
_FILE_LIKE: Final = re.compile(
    r"[/\\]|\.(?:py|ex|exs|ts|tsx|js|jsx|mjs|rs|go|rb|json|md|toml|yaml|yml|txt|sh|css|html)$"
)
_SEP: Final = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_REDIRECT: Final = re.compile(r"\s+(?:\d?>>?&?\d?|<)\s*\S*")


def _tokens(command: str) -> list[str]:
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


def project_steps(command: str) -> list[tuple[str, str, str]]:
    """(purpose, base, the step as run) for each step of a command line that does something to the project:
    `cd app && MIX_ENV=test mix ecto.migrate 2>&1 | tail -5` is (migrate, mix ecto.migrate, `MIX_ENV=test mix
    ecto.migrate`). The base is the program and its subcommands (`uv run pytest`), or an interpreter and its
    script or module (`node build.js`, `python -m pytest`); its purpose is named by those words alone, never
    by an argument (a path `test/x.exs` makes no `git add` a test)."""
    out: list[tuple[str, str, str]] = []
    for part in _SEP.split(command):
        words = [w for w in _tokens(part) if not _ENV.match(w)]
        while words and words[0] in ("sudo", "time", "nice", "env", "exec", "command"):
            words = words[1:]
        if not words or not _SUBCOMMAND.match(words[0].rsplit("/", 1)[-1]):
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program in _LOOKING or (program == "git" and (len(words) < 2 or words[1] in _GIT_LOOKING)):
            continue
        base = [program]
        rest = words[1:]
        if program in _INTERPRETERS and rest:
            if rest[0] == "-m" and len(rest) > 1:
                base += rest[:2]
            elif not rest[0].startswith("-"):
                base.append(rest[0].rsplit("/", 1)[-1])
            else:
                continue  # `python -c ...`: a one-off, no command of the project
        else:
            for word in rest:
                if len(base) >= 4 or not _SUBCOMMAND.match(word) or _FILE_LIKE.search(word):
                    break
                base.append(word)
        named = " ".join(base)
        purpose = next((p for p, pattern in _PURPOSES if pattern.search(named)), None)
        if purpose is not None:
            out.append((purpose, named, _REDIRECT.sub("", part.strip())))
    return out


def base_command(command: str) -> str | None:
    """The base of a command line's first step that does something to the project (see `project_steps`)."""
    steps = project_steps(command)
    return steps[0][1] if steps else None


def purpose_of(command: str) -> str | None:
    steps = project_steps(command)
    return steps[0][0] if steps else None


_CODE: Final = re.compile(r"`([^`]+)`")


def brief_subject(block: Block) -> str | None:
    """What a brief block is about, where a newer entry of it replaces the older: a command's purpose and
    program, a file's path, a session's open threads or end; None for what is never replaced (a
    convention, a decision, a fix: each stands until the person says otherwise)."""
    plain = uninert(block.claim)
    label, _, rest = plain.partition(": ")
    section = next((key for key, name in SECTIONS.items() if name == label), None)
    code = _CODE.search(rest)
    if section == "command" and code is not None:
        steps = project_steps(code.group(1))
        return f"command:{steps[0][0]}:{steps[0][1]}" if steps else None
    if section == "file" and code is not None:
        return f"file:{code.group(1)}"
    if section in ("open", "ended"):
        sessions = sorted({s.session_id for c in block.citations for s in c.sources})
        kind = "todo" if (section == "open" and "☐" in rest) or "to-do items done" in rest else "said"
        return f"{section}:{kind}:{','.join(sessions)}"
    return None
