"""Consolidation (issue 12): `dagmem reorganise` and the runtime's `reorganise_at` merge duplicate blocks in
one transaction through the workspace's installer and txlog, carry every citation, report the files they
changed, and commit nothing when nothing changes; `dagmem verify --strict` passes after each."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from dagmem import FileSessionStore, MemorySessionStore, Runtime
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import Topic, make_block, parse_topic, render_topic
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import BatchInput, Edits, ExtractiveDistiller, TopicReader, reorganise, write_session
from dagmem.sim import check_home
from dagmem.tests._cli import dagmem_run

pytestmark = pytest.mark.anyio


class Duplicating:
    """The distiller as it was before issue 12: one new block per record, even a word-for-word copy."""

    name = "duplicating"

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        edits: dict[str, str | None] = {}
        for record in batch.records:
            path = "topics/core.md" if "my name" in record.content.lower() else "topics/trip.md"
            current = edits.get(path) or topics.read(path)
            topic = parse_topic(current, path) if current else Topic("Core" if "core" in path else "Trip", ())
            taken = {b.id for b in topic.blocks} | {c.id for b in topic.blocks for c in b.citations}
            label = f"{record.role} {record.session_id}/{record.node_id}"
            block = make_block(
                path, f"Said: {record.content}", [("2025-06-01", [(label, record.source_id)])], taken
            )
            edits[path] = render_topic(Topic(topic.title, (*topic.blocks, block)))
        return edits


def sources(home: Path) -> dict[str, set[tuple[str, str]]]:
    out = {}
    for p in sorted(t for t in (home / "memory" / "topics").glob("*.md") if t.name != "index.md"):
        rel = f"topics/{p.name}"
        out[rel] = {
            (s.session_id, s.anchor)
            for b in parse_topic(p.read_text(), rel).blocks
            for c in b.citations
            for s in c.sources
        }
    return out


def claims(home: Path, path: str = "topics/trip.md") -> list[str]:
    return [b.claim for b in parse_topic((home / "memory" / path).read_text(), path).blocks]


def txlog(home: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (home / "memory" / ".dagmem" / "txlog.jsonl").read_text().splitlines()]


def dagmem(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args, "--home", str(home))


def duplicated_home(home: Path) -> None:
    """Two sessions, and a fork in one, that said the same things: word-for-word duplicate blocks."""
    store = FileSessionStore(home)
    for sid in ("a", "b"):
        u = store.append(sid, "user", "Hi, my name is Ana.").id
        x = store.append(sid, "user", "The trip goes to Porto.", predecessor=u).id
        store.append(sid, "user", "The trip goes to Porto.", predecessor=u)  # a retry: a sibling of x
        store.append(sid, "assistant", "Porto it is.", predecessor=x)
    with Workspace(home / "memory", fsync=False) as ws:
        for sid in ("a", "b"):
            write_session(store, ws, sid, boundary=True, distiller=Duplicating())


def test_dagmem_reorganise_merges_identical_blocks_in_one_transaction(tmp_path: Path) -> None:
    duplicated_home(tmp_path)
    assert claims(tmp_path).count("Said: The trip goes to Porto.") == 4
    before_sources = sources(tmp_path)
    lines = len(txlog(tmp_path))
    result = dagmem("reorganise", "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["changed"] == ["core.md", "topics/core.md", "topics/trip.md"]
    assert (
        report["merged"] == 3 + 1 + 1
    )  # three copies of the Porto claim, one of "Porto it is.", one of the name
    assert claims(tmp_path) == ["Said: The trip goes to Porto.", "Said: Porto it is."]
    assert claims(tmp_path, "topics/core.md") == ["Said: Hi, my name is Ana."]
    assert sources(tmp_path) == before_sources  # every citation carried
    (porto,) = [
        b
        for b in parse_topic((tmp_path / "memory/topics/trip.md").read_text(), "t").blocks
        if "Porto." in b.claim
    ]
    assert len({s.anchor for c in porto.citations for s in c.sources}) == 4
    log = txlog(tmp_path)
    assert len(log) == lines + 1
    assert (log[-1]["tx"], log[-1]["consumed"], log[-1]["session"]) == (report["tx"], [], "")
    # The edits it reports, and the topic index the same transaction rewrote from them.
    assert sorted(log[-1]["files"]) == sorted([*report["changed"], "topics/index.md"])
    assert "Hi, my name is Ana." in (tmp_path / "memory" / "core.md").read_text()
    strict = dagmem("verify", "--strict", home=tmp_path)
    assert strict.returncode == 0, strict.stdout
    # Again: nothing to merge, nothing committed, every byte as it was.
    snapshot = {p: p.read_bytes() for p in (tmp_path / "memory").rglob("*.md")}
    again = dagmem("reorganise", home=tmp_path)
    assert again.returncode == 0
    assert (
        again.stdout.strip()
        == "nothing to reorganise: no duplicate blocks, nothing superseded, no file changed"
    )
    assert len(txlog(tmp_path)) == lines + 1
    assert {p: p.read_bytes() for p in (tmp_path / "memory").rglob("*.md")} == snapshot


def test_writes_after_a_reorganisation_and_a_reopened_index_agree(tmp_path: Path) -> None:
    duplicated_home(tmp_path)
    (tmp_path / "memory" / ".dagmem" / "index.sqlite3").unlink()  # rebuilt from the txlog with the new line
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        assert reorganise(ws).tx is not None
    store = FileSessionStore(tmp_path)
    store.append("a", "user", "And the trip goes on to Lisbon.", predecessor=store.head("a"))
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        assert write_session(store, ws, "a", boundary=True, distiller=ExtractiveDistiller()).records == 1
    workspace_id = read_workspace_id(tmp_path / "memory" / ".dagmem" / "workspace-id")
    report = check_home(
        FileSessionStore(tmp_path, read_only=True), tmp_path / "memory", workspace_id, drained=True
    )
    assert report.violations == []


def test_a_block_another_claim_links_to_is_never_folded_away(tmp_path: Path) -> None:
    duplicated_home(tmp_path)
    trip = (tmp_path / "memory" / "topics" / "trip.md").read_text()
    copies = [
        b for b in parse_topic(trip, "topics/trip.md").blocks if b.claim == "Said: The trip goes to Porto."
    ]
    linker = "topics/links.md"
    source = copies[0].citations[0].sources[0]
    text = (
        f"# Links\n\nSee [the second copy](trip.md#^{copies[1].id}). [^c-0000000000] ^b-00000000\n"
        f"[^c-0000000000]: Time: `2025-06-01`; Sources: [x](../sources/{source.session_id}.md#{source.anchor})\n"
    )
    (tmp_path / "memory" / linker).write_text(text)
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        result = reorganise(ws)
    ids = [
        b.id for b in parse_topic((tmp_path / "memory/topics/trip.md").read_text(), "topics/trip.md").blocks
    ]
    assert copies[1].id in ids  # still there for its link
    assert copies[0].id in ids
    assert (
        result.merged == 2 + 1 + 1
    )  # two copies of the Porto claim (not the linked one), "Porto it is.", the name


@pytest.mark.virtual_time
async def test_the_runtime_reorganises_on_its_schedule_in_virtual_time(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    store = MemorySessionStore()
    async with Runtime.open(
        tmp_path,
        distiller=Duplicating(),
        store=store,
        offload=False,
        reorganise_at=3600.0,
        trace=lambda k, f: events.append((k, f)),
    ) as rt:
        for sid in ("a", "b"):
            await rt.append(sid, "user", "The trip goes to Porto.")
            await rt.end_session(sid)
        await rt.flush(force=True)
        assert claims(tmp_path).count("Said: The trip goes to Porto.") == 2
        start = anyio.current_time()
        await anyio.sleep(3599.0)
        assert [k for k, _ in events if k == "reorganised"] == []  # not before its time
        await anyio.sleep(2.0)
        done = [f for k, f in events if k == "reorganised"]
        assert done[0]["files"] == ["topics/trip.md"]
        assert claims(tmp_path) == ["Said: The trip goes to Porto."]
        await anyio.sleep(3600.0)
        later = [f for k, f in events if k == "reorganised"]
        assert later[1] == {"tx": None, "files": [], "merged": 0}  # the next pass finds nothing
        assert anyio.current_time() - start >= 7200.0


def test_reorganise_needs_a_workspace_and_creates_nothing(tmp_path: Path) -> None:
    result = dagmem("reorganise", home=tmp_path / "nowhere")
    assert result.returncode == 2
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "home").mkdir()
    empty = dagmem("reorganise", "--json", home=tmp_path / "home")
    assert empty.returncode == 2
    assert json.loads(empty.stdout)["code"] == "INVALID_INPUT"
    assert not (tmp_path / "home" / "memory").exists()


class Unmarked:
    """A distiller of before currency: each user turn a core block of its own words, nothing superseded."""

    name = "unmarked"

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        path = "topics/core.md"
        current = topics.read(path)
        topic = parse_topic(current, path) if current else Topic("Core", ())
        taken = {b.id for b in topic.blocks} | {c.id for b in topic.blocks for c in b.citations}
        blocks = list(topic.blocks)
        for record in batch.records:
            label = f"{record.role} {record.session_id}/{record.node_id}"
            claim = f"User: “{record.content}”"
            blocks.append(make_block(path, claim, [("2025-06-01", [(label, record.source_id)])], taken))
        return {path: render_topic(Topic(topic.title, tuple(blocks)))}


def test_dagmem_reorganise_supersedes_by_the_rules_but_never_between_alternatives(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    root = store.append("s", "user", "I live in Paris.", node_id="u0").id
    store.append("s", "user", "Update: I moved to Berlin.", node_id="u1", predecessor=root)
    store.append("s", "user", "I work as a nurse.", node_id="v0")  # a second root: a side branch
    store.append("s", "user", "Actually I work as a teacher.", node_id="x1", predecessor="v0")
    store.append("s", "user", "Actually I work as a pilot.", node_id="y1", predecessor="v0")  # edited prompt
    store.set_head("s", "u1")
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        write_session(store, ws, "s", boundary=True, distiller=Unmarked())
    result = dagmem("reorganise", "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["superseded"] == 2
    assert report["changed"] == ["core.md", "topics/core.md"]
    core = {b.claim: b for b in parse_topic((tmp_path / "memory/topics/core.md").read_text(), "c").blocks}
    paris, nurse = core["User: “I live in Paris.”"], core["User: “I work as a nurse.”"]
    assert paris.superseded is not None
    assert (paris.superseded.by, paris.superseded.reason) == (
        core["User: “Update: I moved to Berlin.”"].id,
        "update",
    )
    assert nurse.superseded is not None  # by the later of the two alternatives on its path…
    teacher, pilot = (
        core["User: “Actually I work as a teacher.”"],
        core["User: “Actually I work as a pilot.”"],
    )
    assert teacher.superseded is None
    assert pilot.superseded is None  # …and never the one alternative by the other
    assert nurse.superseded.by in {teacher.id, pilot.id}
    assert nurse.superseded.reason == "retraction"
    strict = dagmem("verify", "--strict", home=tmp_path)
    assert strict.returncode == 0, strict.stdout
    again = dagmem("reorganise", "--json", home=tmp_path)
    assert json.loads(again.stdout)["tx"] is None  # nothing more to do: nothing committed
