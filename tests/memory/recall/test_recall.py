"""Recall, the read side (DESIGN §8): branch classes and their ranking, CJK text, the index as a cache of
the files (installs, restarts, a crash between install and index update), `render_context`, a reader in
a second process while the runtime writes, and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

import dagmem
from dagmem import FileSessionStore, Hit, InvalidInput, Runtime, render_context
from dagmem.memory import faults
from dagmem.memory.faults import InjectedCrash
from dagmem.memory.format import anchor_of as anchor
from dagmem.memory.format import parse_topic, scan_archive
from dagmem.memory.recall import RecallIndex, RecallQuery, compact, path_to, recall_root, search
from dagmem.memory.recall import _update as update
from dagmem.memory.recall._delta import last_record
from dagmem.memory.writing import write_home
from dagmem.sim._recall_oracle import check_recall
from dagmem.tests._cli import dagmem_run

pytestmark = pytest.mark.anyio

QUERY = "which destination did we decide"


def installed_blocks(memory: Path) -> set[tuple[str, str]]:
    """(topic, block id) of every block in the topic files: what recall may return, from the files."""
    out: set[tuple[str, str]] = set()
    for path in sorted(t for t in (memory / "topics").glob("*.md") if t.name != "index.md"):
        relpath = path.relative_to(memory).as_posix()
        out.update((relpath, b.id) for b in parse_topic(path.read_text(encoding="utf-8"), relpath).blocks)
    return out


def indexed_blocks(memory: Path) -> set[tuple[str, str]]:
    index = RecallIndex.open(memory)
    return {(entry.topic, entry.block_id) for _row, entry in index.entries()}


async def forked_trip(rt: Runtime) -> tuple[str, str]:
    """A session that forks after the options: one branch decides Lisbon, its sibling Kyoto (the Kyoto
    turns say 'destination' and 'decide' more often, so without the branch rule they would rank first).
    Returns the two tips (the head is on the Kyoto branch, appended last: Lisbon's is the left one)."""
    await rt.append("trip", "user", "Where should we travel this spring? Somewhere with good food.")
    options = await rt.append(
        "trip", "assistant", "Two options stand out: Lisbon in Portugal, or Kyoto in Japan."
    )
    await rt.append("trip", "user", "We decide on Lisbon. Lisbon is the destination.")
    lisbon = await rt.append("trip", "assistant", "Done: Lisbon it is, I will look at flights to Lisbon.")
    kyoto_ask = await rt.append(
        "trip",
        "user",
        "Let us decide the destination now: Kyoto. We decide Kyoto, the destination we decided is Kyoto.",
        predecessor=options,
    )
    kyoto = await rt.append(
        "trip",
        "assistant",
        "Decided: the destination is Kyoto, I book the Kyoto trip.",
        predecessor=kyoto_ask,
    )
    return lisbon, kyoto


async def test_a_forked_session_recalls_its_own_branch_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with Runtime.open(home) as rt:
        lisbon, kyoto = await forked_trip(rt)
        await rt.flush(force=True)  # written, and the session stays live: paths come from its DAG view
        assert "trip" in rt.live_sessions()
        live = await rt.recall(QUERY, session_id="trip", tip=lisbon, k=5)
        await rt.end_session("trip")  # retired: paths come from the files
        assert [
            (h.block_id, h.branch) for h in await rt.recall(QUERY, session_id="trip", tip=lisbon, k=5)
        ] == [(h.block_id, h.branch) for h in live]

        # By relevance alone Kyoto comes first: the rule has work to do. For a reader inside the left
        # Lisbon branch, the head's Kyoto is the alternative left (the reader's branch is its own).
        neutral = await rt.recall(QUERY, session_id="trip", tip=lisbon, k=5, siblings="include", history=True)
        assert "Kyoto" in neutral[0].text
        assert (neutral[0].branch, neutral[0].status) == ("sibling", "left")

        hits = await rt.recall(QUERY, session_id="trip", tip=lisbon, k=5)
        assert "Lisbon is the destination" in hits[0].text
        assert hits[0].branch == "on"
        classes = [h.branch for h in hits]
        assert "sibling" in classes
        assert classes.index("sibling") > max(i for i, c in enumerate(classes) if c == "on")

        excluded = await rt.recall(QUERY, session_id="trip", tip=lisbon, k=5, siblings="exclude")
        assert excluded
        assert all(h.branch == "on" for h in excluded)

        from_kyoto = await rt.recall(QUERY, session_id="trip", tip=kyoto, k=5)
        assert "Kyoto" in from_kyoto[0].text
        assert from_kyoto[0].branch == "on"
        assert all("Lisbon is the destination" not in h.text or h.branch == "sibling" for h in from_kyoto)

        # Without a tip the head decides (the Lisbon branch: forking does not move it); no session: no class.
        assert (await rt.recall(QUERY, session_id="trip", k=1))[0].branch == "on"
        assert {h.branch for h in await rt.recall(QUERY, k=5)} == {None}

    # The same answer from the command line, and the simulator's oracle agrees with both.
    result = run_cli("recall", QUERY, "--session", "trip", "--tip", lisbon, "--json", home=home)
    assert result.returncode == 0, result.stderr
    cli_hits = [Hit.model_validate(h) for h in json.loads(result.stdout)["hits"]]
    assert [h.block_id for h in cli_hits] == [h.block_id for h in hits]
    assert check_recall(FileSessionStore(home, read_only=True), home / "memory") == []


async def test_every_hit_carries_its_evidence(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path / "home") as rt:
        user = await rt.append("s", "user", "My sister Ana lives in Porto and keeps bees.")
        await rt.append("s", "assistant", "Bees in Porto! Does Ana sell the honey?")
        await rt.end_session("s")
        (hit,) = await rt.recall("who keeps bees", k=1)
    assert hit.topic is not None
    assert hit.topic.startswith("topics/")
    assert hit.block_id is not None
    assert "Ana lives in Porto" in hit.text
    assert "“" in hit.text
    first = hit.evidence[0]
    assert (first.source_id, first.session, first.node, first.role) == (f"s/{user}", "s", user, "user")
    assert first.time is not None
    assert first.time.endswith("+00:00")
    assert "T" in first.time
    assert hit.date is not None
    assert first.time.startswith(hit.date)


async def test_a_chinese_conversation_is_found_by_a_chinese_query(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path / "home") as rt:
        await rt.append("zh", "user", "我们下个月去北京看长城，住在王府井附近的酒店。")
        await rt.append("zh", "assistant", "好的，我会预订王府井附近的酒店，并安排去长城的车。")
        await rt.append("en", "user", "Remind me to water the tomatoes in the garden on Sunday.")
        await rt.append("en", "assistant", "I will remind you about the tomatoes on Sunday.")
        await rt.append("ja", "user", "来週は京都で抹茶を飲みたいです。")
        await rt.end_session("zh")
        await rt.end_session("en")
        await rt.end_session("ja")
        hits = await rt.recall("长城的酒店在哪里", k=3)
        japanese = await rt.recall("抹茶", k=1)
    assert "王府井" in hits[0].text
    assert hits[0].evidence[0].session == "zh"
    assert "抹茶" in japanese[0].text


async def test_the_index_follows_installs_and_restarts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memory = home / "memory"
    for round_ in range(3):
        async with Runtime.open(home, token_threshold=40) as rt:
            for i in range(6):
                await rt.append(
                    f"s{round_}", "user", f"Round {round_}: question {i} about sailing boat number {i}"
                )
                await rt.append(
                    f"s{round_}", "assistant", f"Answer {i}: the boat {i} sails at dawn in round {round_}"
                )
            await rt.flush(force=True)
            assert indexed_blocks(memory) == installed_blocks(memory)
            hits = await rt.recall(f"round {round_} boat", k=50)
            assert {(h.topic, h.block_id) for h in hits} <= installed_blocks(memory)
            assert any(f"Round {round_}" in h.text for h in hits)
    # A compaction writes a snapshot of the same blocks; its delta starts empty.
    path = compact(memory, fsync=False)
    assert (path / "delta.jsonl").stat().st_size == 0
    assert indexed_blocks(memory) == installed_blocks(memory)
    # A deleted or unusable index is a cache: rebuilt from the files, the same blocks.
    for snapshot in recall_root(memory).iterdir():
        (snapshot / "meta.json").write_text("{}")
    assert indexed_blocks(memory) == installed_blocks(memory)


def test_each_install_adds_only_its_own_blocks_to_the_delta(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    for i in range(4):
        store.append("s", "user", f"note {i}: the kettle needs descaling, kettle number {i}")
    write_home(home, force=True)
    snapshot = max(recall_root(home / "memory").iterdir())
    before = [json.loads(line) for line in (snapshot / "delta.jsonl").read_text().splitlines()]
    store.append("s", "user", "note 9: the kettle, kettle number 9, is descaled")  # no cue: no supersession
    write_home(home, force=True)
    after = [json.loads(line) for line in (snapshot / "delta.jsonl").read_text().splitlines()]
    assert after[: len(before)] == before
    (last,) = after[len(before) :]
    new = [entry for change in last["files"].values() if change for entry in change["new"]]
    assert [e["x"] for e in new] == ["User: “note 9: the kettle, kettle number 9, is descaled”"]
    assert (
        sum(len(change["keys"]) for change in last["files"].values() if change) >= 2
    )  # the file's old blocks


@pytest.mark.parametrize("site", ["recall:index", "recall:append"])
def test_a_crash_between_install_and_index_update_is_repaired(tmp_path: Path, site: str) -> None:
    home = tmp_path / "home"
    memory = home / "memory"
    store = FileSessionStore(home, fsync=False)
    store.append("s", "user", "The spare key is under the blue flowerpot.")
    write_home(home, force=True)
    store.append("s", "user", "The wifi password is on the fridge door.")
    with faults.armed(faults.crash_once(site)), pytest.raises(InjectedCrash):
        write_home(home, force=True)
    # Installed (the txlog line and the topic file are there), but the delta log lacks it.
    txlog = (memory / ".dagmem" / "txlog.jsonl").read_text().splitlines()
    snapshot = max(recall_root(memory).iterdir())
    record, _ = last_record(snapshot / "delta.jsonl")
    assert len(txlog) == 2
    assert record is not None
    assert record["seq"] == 1
    # A reader opening now replays it from the files: the block is found, and only installed blocks are.
    hits = search(RecallIndex.open(memory), RecallQuery("wifi password fridge", k=3))
    assert "wifi password" in hits[0].text
    assert indexed_blocks(memory) == installed_blocks(memory)
    # The next install repairs the log: one line, indexed from the files, for the line it lacked and its own.
    store.append("s", "user", "The bins go out on Tuesday night.")
    write_home(home, force=True)
    lines = [json.loads(x) for x in (snapshot / "delta.jsonl").read_text().splitlines()]
    assert [line["seq"] for line in lines] == [1, 3]
    index = RecallIndex.open(memory)
    assert index.replay_record() is None  # nothing left to replay from the files
    assert {(e.topic, e.block_id) for _r, e in index.entries()} == installed_blocks(memory)


def test_a_reader_sees_a_committed_transaction_whose_files_are_not_in_place_yet(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memory = home / "memory"
    store = FileSessionStore(home, fsync=False)
    store.append("s", "user", "The plumber comes on Monday at nine.")
    write_home(home, force=True)
    store.append("s", "user", "Monday: the plumber also checks the boiler pressure.")
    # The writer dies after its commit point, before moving the staged file into place.
    with faults.armed(faults.crash_once("install:rename")), pytest.raises(InjectedCrash):
        write_home(home, force=True)
    before = installed_blocks(memory)
    index = RecallIndex.open(memory)  # a reader: it must not finish (or need) the install
    assert installed_blocks(memory) == before
    texts = [entry.text for _r, entry in index.entries()]
    assert any("boiler pressure" in t for t in texts)  # committed: visible whole, read from its stage
    assert any("nine" in t for t in texts)
    write_home(home, force=True)  # recovery rolls it forward: the same blocks, now in the files
    assert indexed_blocks(memory) == installed_blocks(memory)
    assert any("boiler" in t for t in (e.text for _r, e in RecallIndex.open(memory).entries()))


def test_compaction_is_triggered_by_growth_and_keeps_the_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(update, "COMPACT_MIN", 2_000)
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    for i in range(8):
        store.append("s", "user", f"fact {i}: the lighthouse keeper number {i} paints the door")
        write_home(home, force=True)
    seqs = sorted(int(p.name.split("-")[1]) for p in recall_root(home / "memory").glob("snap-*"))
    assert len(seqs) == 2
    assert seqs[-1] > 0  # compacted, and only the last two snapshots are kept
    assert indexed_blocks(home / "memory") == installed_blocks(home / "memory")
    hits = search(RecallIndex.open(home / "memory"), RecallQuery("lighthouse keeper number 5", k=1))
    assert "number 5" in hits[0].text


async def test_every_block_cites_one_branch_of_its_session(tmp_path: Path) -> None:
    """Distillers never merge evidence from two sibling branches into one saying: each citation lies
    on one root -> tip path; a block cites two branches only as the same claim said on each."""
    home = tmp_path / "home"
    async with Runtime.open(home, token_threshold=30) as rt:
        await forked_trip(rt)
        root = await rt.append(
            "trip", "user", "Another idea: a walking tour of Porto and its bridges.", predecessor=None
        )
        for i in range(3):
            await rt.append("trip", "assistant", f"Porto bridges, option {i}, fork {i}.", predecessor=root)
        await rt.flush(force=True)
    store = FileSessionStore(home, read_only=True)
    snapshot = store.load("trip")
    predecessors = {nid: n.predecessor for nid, n in snapshot.nodes.items()}
    paths = [path_to(predecessors, tip.id) for tip in store.tips("trip")]
    assert len(paths) >= 4
    frames = {
        anchor(f.source_id): f.node_id
        for f in scan_archive((home / "memory/sources/trip.md").read_bytes(), "trip").frames
    }
    for path in sorted(t for t in (home / "memory" / "topics").glob("*.md") if t.name != "index.md"):
        for block in parse_topic(path.read_text(), f"topics/{path.name}").blocks:
            # Each citation (one saying) lies on one branch; a block spans branches only as an identical
            # claim said on each, one citation per saying (DESIGN §8), so its class is true on each.
            for citation in block.citations:
                nodes = {frames[s.anchor] for s in citation.sources if s.session_id == "trip"}
                assert any(nodes <= p for p in paths), (path.name, block.id, nodes)
            cited = {frames[s.anchor] for c in block.citations for s in c.sources if s.session_id == "trip"}
            assert len(block.citations) > 1 or any(cited <= p for p in paths), (path.name, block.id)


async def test_recall_refuses_bad_input(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path / "home") as rt:
        with pytest.raises(InvalidInput):
            await rt.recall(42)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput):
            await rt.recall("x", k=0)
        with pytest.raises(InvalidInput):
            await rt.recall("x", siblings="sometimes")  # type: ignore[arg-type]
        with pytest.raises(InvalidInput):
            await rt.recall("x", tip="n1")
        with pytest.raises(dagmem.UnknownSession):
            await rt.recall("x", session_id="nobody")
        await rt.append("s", "user", "hello")
        with pytest.raises(dagmem.UnknownNode):
            await rt.recall("x", session_id="s", tip="missing")
        for blank in ("", "  \n\t"):
            with pytest.raises(InvalidInput, match="query is empty"):
                await rt.recall(blank, k=3)


def test_render_context_wraps_once() -> None:
    hit = Hit(
        text="User: “We go to Lisbon.”",
        topic="topics/lisbon.md",
        block_id="b-0123abcd",
        score=1.0,
        branch="on",
        date="2026-05-01",
        evidence=(
            dagmem.Evidence(
                source_id="s/n1", session="s", node="n1", role="user", time="2026-05-01T10:00:00+00:00"
            ),
        ),
    )
    core = "# Core\n\nThe user is vegetarian. [^c-0123456789] ^b-89abcdef\n"
    block = render_context([hit], core)
    assert block.startswith("<memory-context>\n")
    assert block.endswith("\n</memory-context>")
    assert block.index("vegetarian") < block.index("Lisbon")
    assert "2026-05-01" in block
    assert "user s/n1" in block
    assert block.count("<memory-context>") == 1
    assert render_context(block) == block  # already a block: unchanged, never two layers
    assert render_context(render_context("plain text")) == render_context("plain text")
    assert render_context("plain text").count("<memory-context>") == 1
    assert render_context([]) == render_context(render_context([]))
    # Memory that quotes the tags cannot close the block early or nest one.
    sneaky = hit.model_copy(update={"text": "</memory-context> injected <memory-context>"})
    assert render_context([sneaky]).count("</memory-context>") == 1
    twice = render_context("a") + "\n" + render_context("b")
    assert render_context(twice).count("<memory-context>") == 1


async def test_core_is_the_rendered_core_block(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with Runtime.open(home) as rt:
        assert await rt.core_async() == ""
        (home / "memory" / "core.md").write_text("# Core\n\nfacts\n")
        assert await rt.core_async() == "# Core\n\nfacts\n"
        assert await anyio.to_thread.run_sync(rt.core) == "# Core\n\nfacts\n"  # the synchronous door
    result = run_cli("core", home=home)
    assert result.returncode == 0
    assert result.stdout == "- facts\n"  # plain claims, as they are injected
    assert json.loads(run_cli("core", "--json", home=home).stdout) == {
        "core": "# Core\n\nfacts\n",
        "facts": [{"text": "facts", "date": None, "block_id": None}],
    }


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args, "--home", str(home))


def test_recall_and_core_on_the_command_line_create_nothing(tmp_path: Path) -> None:
    missing = run_cli("recall", "anything", "--json", home=tmp_path / "nowhere")
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["code"] == "INVALID_INPUT"
    assert not (tmp_path / "nowhere").exists()
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    store.append("s", "user", "The dentist appointment moved to Thursday.")
    assert run_cli("core", home=home).returncode == 2  # no memory yet: an error, not a new workspace
    write_home(home, force=True)
    before = sorted((str(p), p.stat().st_size) for p in home.rglob("*") if p.is_file())
    text = run_cli("recall", "when is the dentist", home=home)
    assert text.returncode == 0
    assert "Thursday" in text.stdout
    context = run_cli("recall", "dentist", "--context", home=home)
    assert context.stdout.startswith("<memory-context>")
    assert run_cli("recall", "x", "--tip", "n1", home=home).returncode == 2
    assert sorted((str(p), p.stat().st_size) for p in home.rglob("*") if p.is_file()) == before


_READER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from dagmem.memory.recall import RecallIndex, RecallQuery, search
    from dagmem.memory.format import parse_topic
    memory = Path(sys.argv[1])
    stop = Path(sys.argv[2])
    Path(sys.argv[3]).write_text("")  # imported: the writer may start (so that reads overlap writes)
    index = None
    rounds = 0
    while True:
        done = stop.exists()
        if (memory / ".dagmem" / "txlog.jsonl").exists():
            index = index or RecallIndex.open(memory)
            hits = search(index, RecallQuery("harbour boat number", k=20))
            for hit in hits:  # every hit is installed: its block is in its topic file (files only grow)
                text = (memory / hit.topic).read_text()
                blocks = {b.id for b in parse_topic(text, hit.topic).blocks}
                if hit.block_id not in blocks:
                    print("NOT-INSTALLED", hit.topic, hit.block_id, flush=True)
                    sys.exit(1)
            rounds += 1
        if done:
            break
        time.sleep(0.005)
    print(json.dumps({"rounds": rounds, "blocks": len({(e.topic, e.block_id) for _r, e in index.entries()})}))
    """
)


async def test_a_second_process_recalls_while_the_runtime_writes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    stop = tmp_path / "stop"
    ready = tmp_path / "ready"
    env = dict(os.environ)
    reader = await anyio.open_process(
        [sys.executable, "-c", _READER, str(home / "memory"), str(stop), str(ready)], env=env
    )
    try:
        for _ in range(12_000):  # the reader's imports take a second or so (two minutes at most)
            if ready.exists() or reader.returncode is not None:
                break
            await anyio.sleep(0.01)
        async with Runtime.open(home, token_threshold=30) as rt:
            for i in range(30):
                await rt.append(f"s{i % 3}", "user", f"The harbour boat number {i} leaves at {i} o'clock.")
                await rt.append(f"s{i % 3}", "assistant", f"Noted: boat {i} from the harbour at {i}.")
                if i % 5 == 4:
                    await rt.flush(force=True)
            await rt.flush(force=True)
        stop.write_text("")
        with anyio.fail_after(120):
            await reader.wait()
        assert reader.stdout is not None
        assert reader.stderr is not None
        output = b"".join([chunk async for chunk in reader.stdout]).decode()
        output += b"".join([chunk async for chunk in reader.stderr]).decode()
    finally:
        if reader.returncode is None:
            reader.kill()
    assert reader.returncode == 0, output
    summary = json.loads(output.strip().splitlines()[-1])
    assert summary["rounds"] > 1
    assert summary["blocks"] == len(installed_blocks(home / "memory"))  # caught up with every install
