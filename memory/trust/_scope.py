"""A reader's scope: which sessions and origins it may read, whether it sees held items and the core, and
whether it may write. The owner's scope (`OWNER`) sees everything.

A scope file is JSON, every key optional:
`{"sessions": ["a*"], "origins": ["user", "assistant"], "held": false, "core": true, "read_only": true}`.
`sessions` are shell-style globs (`fnmatch`, case-sensitive) over session ids. A block is visible only
when every record it cites is: its claim may quote any of them.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, StrictBool, ValidationError

from ..errors import InvalidInput

__all__ = ["OWNER", "Origin", "OutOfScope", "Scope", "load_scope"]

Origin = Literal["user", "assistant", "tool", "imported", "system"]
_ALL_ORIGINS: Final[tuple[Origin, ...]] = ("user", "assistant", "tool", "imported", "system")


class OutOfScope(InvalidInput):
    """A reader asked for what its scope does not allow. The message names nothing it may not see."""

    def __init__(self, what: str = "that") -> None:
        super().__init__(f"{what} is outside this reader's scope")


class Scope(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    sessions: tuple[str, ...] = ("*",)
    origins: tuple[Origin, ...] = _ALL_ORIGINS
    # Strict: only true or false. A lax bool would read "no" as False and "yes" (or 1) as True: a scope
    # file's `"read_only": "no"` is the writer's mistake, named, not a guess.
    held: StrictBool = False
    core: StrictBool = True
    read_only: StrictBool = False

    def allows_session(self, session_id: str) -> bool:
        return any(fnmatch.fnmatchcase(session_id, pattern) for pattern in self.sessions)

    def allows_evidence(self, evidence: Iterable[tuple[str, str | None]]) -> bool:
        """Every (session, origin) cited is in scope (an unknown origin only when every origin is)."""
        everything = set(self.origins) == set(_ALL_ORIGINS)
        return all(
            self.allows_session(session) and (origin in self.origins if origin is not None else everything)
            for session, origin in evidence
        )

    @property
    def is_owner(self) -> bool:
        return self == OWNER


OWNER: Final = Scope(held=True)


def load_scope(path: str | os.PathLike[str]) -> Scope:
    """The scope in the JSON file at `path` (a `str` or any path-like); `InvalidInput` naming the file and
    the problem (a field: its name; a boolean is `true` or `false`, nothing else)."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidInput(f"scope file: a path is a str or os.PathLike, not {type(path).__name__}")
    return _load(Path(path))


def _load(path: Path) -> Scope:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInput(f"scope file {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"scope file {path}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise InvalidInput(f"scope file {path}: expected a JSON object")
    try:
        return Scope.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top)"
        if first["type"] == "bool_type":
            problem = f"must be true or false, not {json.dumps(first['input'])}"
        else:
            problem = first["msg"]
        raise InvalidInput(f"scope file {path}: {where}: {problem}") from None
