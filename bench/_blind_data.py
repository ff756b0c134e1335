"""`dagmem bench currency --blind`: its data, `devsets/currency/<langs>-<set>.json` in the checkout.

Each file is a list of items written by people who had read only the task, never dagmem's rules:
`{id, lang, kind ("update" | "negative"), category, sessions: [[{role, content, origin?}, ...], ...],
first: [session, turn], second: [session, turn], question, current: [str], stale: [str]}`. In an update
`second` states a new value and `first`'s is stale; in a negative `second` is a distractor (another
person, a pet, a hypothetical, pasted tool text, ...) and `first` stays current. The `unseen` files are
read by this module only, never by whoever tunes the rules.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..memory.errors import InvalidInput

__all__ = ["DEVSETS", "SETS", "Item", "Turn", "load", "quick_pick"]

DEVSETS = Path(__file__).resolve().parent.parent / "devsets" / "currency"  # the checkout is the package
SETS = ("dev", "unseen")
Kind = Literal["update", "negative"]
Place = tuple[int, int]  # (session, turn), both from 0


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    origin: str | None = None  # "user", "tool" (pasted or fetched text in a user-role row), ...


@dataclass(frozen=True)
class Item:
    id: str
    set: str  # dev / unseen
    lang: str
    kind: Kind
    category: str
    sessions: tuple[tuple[Turn, ...], ...]
    first: Place
    second: Place
    question: str
    current: tuple[str, ...]
    stale: tuple[str, ...]

    @property
    def current_at(self) -> Place:
        """The statement whose value is current: the update (`second`), or a negative's `first`."""
        return self.second if self.kind == "update" else self.first

    @property
    def stale_at(self) -> Place:
        """The other one: the stale old value of an update, or a negative's distractor."""
        return self.first if self.kind == "update" else self.second


def load(sets: Iterable[str], devsets: Path | None = None) -> list[Item]:
    """The items of `sets` (each of `SETS`) from `devsets` (default `DEVSETS`), file by file in name order;
    a malformed item is refused in one line that names its file and id."""
    devsets = DEVSETS if devsets is None else devsets
    items: list[Item] = []
    for name in sets:
        if name not in SETS:
            raise InvalidInput(f"no currency set {name!r}: choose among {', '.join(SETS)}")
        paths = sorted(devsets.glob(f"*-{name}.json"))
        if not paths:
            raise InvalidInput(f"no devsets/currency/*-{name}.json under {devsets}")
        for path in paths:
            items.extend(_file(path, name))
    return items


def quick_pick(items: Sequence[Item], per: int = 1) -> list[Item]:
    """The first `per` items of each (set, language, kind), in file order: every language and kind, few."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for item in items:
        key = (item.set, item.lang, item.kind)
        if seen.get(key, 0) < per:
            seen[key] = seen.get(key, 0) + 1
            out.append(item)
    return out


def _file(path: Path, name: str) -> list[Item]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path}: not a readable JSON file: {exc}") from None
    if not isinstance(raw, list):
        raise InvalidInput(f"{path}: expected a list of items")
    out = []
    for number, entry in enumerate(raw):
        try:
            out.append(_item(entry, name))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            ident = entry.get("id", f"#{number}") if isinstance(entry, dict) else f"#{number}"
            raise InvalidInput(f"{path}: item {ident}: {type(exc).__name__}: {exc}") from None
    return out


def _item(entry: dict[str, Any], name: str) -> Item:
    kind = entry["kind"]
    if kind not in ("update", "negative"):
        raise ValueError(f"kind {kind!r}")
    sessions = tuple(
        tuple(Turn(str(t["role"]), str(t["content"]), t.get("origin")) for t in session)
        for session in entry["sessions"]
    )
    item = Item(
        id=str(entry["id"]),
        set=name,
        lang=str(entry["lang"]),
        kind=kind,
        category=str(entry["category"]),
        sessions=sessions,
        first=_place(entry["first"]),
        second=_place(entry["second"]),
        question=str(entry["question"]),
        current=tuple(map(str, entry["current"])),
        stale=tuple(map(str, entry["stale"])),
    )
    for s, t in (item.first, item.second):
        if not (s < len(sessions) and t < len(sessions[s])):
            raise IndexError(f"place [{s}, {t}] is outside the sessions")
    if item.first == item.second:
        raise ValueError("first and second are the same turn")
    return item


def _place(value: Any) -> Place:
    s, t = value
    if not isinstance(s, int) or not isinstance(t, int) or s < 0 or t < 0:
        raise ValueError(f"place {value!r}")
    return s, t
