"""A home built by hand, without the writer, for the tests of currency's reading side (recall, the command
line, MCP): three sessions in the store and their archives, and topic files in which Paris is superseded
by Berlin and a conference city was said on both branches of an edited prompt (Lisbon, then the user
edited the prompt to Kyoto: the Lisbon branch is left)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from dagmem import FileSessionStore, Hit
from dagmem.memory.format import (
    HEADER,
    ArchiveRecord,
    Block,
    Supersession,
    Topic,
    inert,
    make_block,
    parse_topic,
    render_frame,
    render_topic,
)
from dagmem.memory.recall import RecallIndex, RecallQuery, reader_for, search
from dagmem.memory.shapes import shapes_for

__all__ = ["HOME", "MOVED", "TRIP", "HandHome"]

HOME, TRIP = "topics/home.md", "topics/conference.md"
MOVED = "2026-11-20"


class HandHome:
    """The home at `root` (see the module's doc); its block ids and node ids as attributes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        store = FileSessionStore(root, fsync=False)
        self.paris = store.append("s1", "user", "I live in Paris, in a flat near the Paris canal.").id
        self.berlin = store.append("s2", "user", "Update: I moved to Berlin, I live in Berlin now.").id
        store.append("s3", "user", "Which city hosts the conference this year?")
        asked = store.append("s3", "assistant", "It is open: the conference city can be Lisbon or Kyoto.").id
        self.lisbon = store.append("s3", "user", "The conference city is Lisbon, book the Lisbon hall.").id
        # The prompt edited: a second user turn under the same reply, and the head moves onto it.
        self.kyoto = store.append(
            "s3", "user", "The conference city is Kyoto, book the Kyoto hall.", predecessor=asked
        ).id
        assert store.head("s3") == self.kyoto
        self.memory = root / "memory"
        (self.memory / "sources").mkdir(parents=True)
        (self.memory / "topics").mkdir()
        self.text: dict[str, str] = {}
        for sid in ("s1", "s2", "s3"):
            snapshot = store.load(sid)
            frames = b"".join(
                render_frame(ArchiveRecord(sid, n.id, str(n.role), n.seq, n.created_at, n.content))
                for n in sorted(snapshot.nodes.values(), key=lambda n: n.seq)
            )
            (self.memory / "sources" / f"{sid}.md").write_bytes(HEADER + frames)
            self.text.update({f"{sid}/{n.id}": n.content for n in snapshot.nodes.values()})
        taken: set[str] = set()
        berlin = self.block(HOME, "s2", self.berlin, "2026-11-20", taken)
        paris = dataclasses.replace(
            self.block(HOME, "s1", self.paris, "2026-11-01", taken),
            superseded=Supersession(berlin.id, HOME, MOVED, "update"),
        )
        self.paris_id, self.berlin_id = paris.id, berlin.id
        self.write(HOME, "Home", paris, berlin)
        lisbon = self.block(TRIP, "s3", self.lisbon, "2026-11-25", taken)
        kyoto = self.block(TRIP, "s3", self.kyoto, "2026-11-25", taken)
        self.lisbon_id, self.kyoto_id = lisbon.id, kyoto.id
        self.write(TRIP, "Conference", lisbon, kyoto)

    def block(self, path: str, sid: str, node: str, date: str, taken: set[str]) -> Block:
        claim = "User: " + inert(self.text[f"{sid}/{node}"])
        return make_block(path, claim, [(date, [(f"user {sid}/{node}", f"{sid}/{node}")])], taken)

    def write(self, path: str, title: str, *blocks: Block) -> None:
        text = render_topic(Topic(title, blocks))
        assert parse_topic(text, path).blocks == blocks  # the superseded line round-trips
        (self.memory / path).write_text(text, encoding="utf-8")

    def recall(
        self, query: str, session: str | None = None, tip: str | None = None, **asked: Any
    ) -> list[Hit]:
        with shapes_for(self.root) as shapes:
            reader = reader_for(shapes.reading_from(session), session, tip)
            return search(RecallIndex.open(self.memory), RecallQuery(query, k=5, **asked), reader=reader)
