"""`memory/.dagmem/forgotten.json`: the journal and the record of `dagmem forget`, pure.

    {"version": 1, "entries": [{"at": <epoch>, "done": false, "sources": ["<sid>/<node_id>", ...],
                                "texts": [{"bytes": <length>, "head": <32-bit hash>, "sha256": "<hex>"}]}]}

An entry is written (atomically, fsynced) before a forget changes anything and marked `done` when no copy
is left: an entry not done is a forget to finish. It never holds a forgotten text, only the source ids
(which are not secret) and, for each form of each text, its length, a 32-bit rolling hash of its first 8
bytes (`head`: to find candidate windows in one pass over the bytes, whatever the lengths; 32 bits of an
8-byte prefix name no prefix) and its sha256 (to confirm a candidate)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInput
from ._ids import is_valid_id

__all__ = ["ForgetEntry", "ForgottenCorrupt", "TextHash", "parse_forgotten", "render_forgotten"]


class ForgottenCorrupt(InvalidInput):
    """`forgotten.json` does not parse: no forget is begun or finished until it is restored."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason} (restore it from a copy: it lists what was forgotten)")
        self.path = path


@dataclass(frozen=True)
class TextHash:
    """One form of a forgotten text, as hashes only."""

    size: int
    head: int
    sha256: str


@dataclass(frozen=True)
class ForgetEntry:
    at: float
    sources: tuple[str, ...]
    texts: tuple[TextHash, ...]
    done: bool = False


def _source(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("a source id is not a string")
    sid, slash, nid = value.partition("/")
    if not (slash and is_valid_id(sid) and is_valid_id(nid)):
        raise ValueError(f"bad source id {value!r}")
    return value


def _text(value: object) -> TextHash:
    if not isinstance(value, dict):
        raise ValueError("a text is not an object")
    size, head, digest = value.get("bytes"), value.get("head"), value.get("sha256")
    if type(size) is not int or size <= 0 or type(head) is not int or not 0 <= head < 2**32:
        raise ValueError("a text's bytes or head is not a positive int")
    if not isinstance(digest, str) or len(digest) != 64:
        raise ValueError("a text's sha256 is not 64 hex digits")
    return TextHash(size, head, digest)


def parse_forgotten(data: bytes) -> list[ForgetEntry]:
    """The entries of `forgotten.json`; `ValueError` naming the problem for anything else."""
    raw = json.loads(data)
    if not isinstance(raw, dict) or raw.get("version") != 1 or not isinstance(raw.get("entries"), list):
        raise ValueError("not a version 1 forgotten.json")
    entries = []
    for item in raw["entries"]:
        if not isinstance(item, dict) or not isinstance(item.get("at"), int | float):
            raise ValueError("an entry is not an object with a time")
        entries.append(
            ForgetEntry(
                float(item["at"]),
                tuple(_source(s) for s in item.get("sources", [])),
                tuple(_text(t) for t in item.get("texts", [])),
                item.get("done") is True,
            )
        )
    return entries


def render_forgotten(entries: list[ForgetEntry]) -> bytes:
    body = {
        "version": 1,
        "entries": [
            {
                "at": e.at,
                "done": e.done,
                "sources": list(e.sources),
                "texts": [{"bytes": t.size, "head": t.head, "sha256": t.sha256} for t in e.texts],
            }
            for e in entries
        ],
    }
    return json.dumps(body, indent=1, sort_keys=True).encode() + b"\n"
