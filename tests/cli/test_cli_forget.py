"""`dagmem forget` and `dagmem verify --forgotten`: the acceptance (a fake secret pasted into a
conversation is found nowhere under the home afterwards, git included), the dry run, bad input, and a
runtime serving the home while another process forgets (no text written back from its stale view, its
slot index the file the forget left)."""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import dagmem
from dagmem.memory.format import anchor_of
from dagmem.tests._cli import dagmem_run
from dagmem.tests._forget_homes import open_deleted

SECRET = "sk-test-4f9a8b7c6d5e1a2b"


async def _conversation(home: Path, *, flush: bool = True) -> None:
    async with dagmem.Runtime.open(home, git=True) as rt:
        await rt.append("chat", "user", "My name is Dana and I deploy with the staging pipeline.")
        await rt.append("chat", "assistant", "Hi Dana, the staging pipeline is ready.")
        await rt.append("chat", "user", f"here is my api key {SECRET} for the pipeline")
        await rt.append("chat", "assistant", "Thanks, I will use that key for the pipeline deploy.")
        if flush:
            await rt.flush(force=True)


def _grep(home: Path) -> str:
    found = subprocess.run(["grep", "-rl", SECRET, str(home)], capture_output=True, text=True, check=False)
    return found.stdout


def test_a_pasted_secret_is_found_nowhere_after_forget_match_yes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    anyio.run(_conversation, home)
    assert _grep(home)  # it was written: node file, archive, topic, recall index
    dry = dagmem_run("forget", "--home", str(home), "--match", SECRET)
    assert dry.returncode == 0
    assert "would forget 1 turn" in dry.stdout
    assert "--yes" in dry.stdout
    assert _grep(home)  # the dry run changed nothing

    done = dagmem_run("forget", "--home", str(home), "--match", SECRET, "--yes")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "no copy left" in done.stdout
    assert _grep(home) == ""
    verify = dagmem_run("verify", "--home", str(home), "--forgotten", "--strict")
    assert verify.returncode == 0, verify.stdout
    fsck = subprocess.run(
        ["git", "-C", str(home / "sessions/chat"), "fsck", "--strict"], capture_output=True, check=False
    )
    assert fsck.returncode == 0
    # The git history holds no object with it either (loose or packed, decompressed).
    objects = subprocess.run(
        ["git", "-C", str(home / "sessions/chat"), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    )
    assert SECRET.encode() not in objects.stdout
    again = dagmem_run("forget", "--home", str(home), "--match", SECRET, "--yes", "--json")
    assert json.loads(again.stdout)["targets"] == []


def test_dry_run_json_and_bad_input(tmp_path: Path) -> None:
    home = tmp_path / "home"
    anyio.run(_conversation, home)
    plan = json.loads(dagmem_run("forget", "--home", str(home), "--session", "chat", "--json").stdout)
    assert plan["dry_run"] is True
    assert len(plan["targets"]) == 4
    assert plan["blocks"]
    for args in (["--node", "nochat"], ["--node", "chat/nope"], ["--session", "missing"], ["--match", ""]):
        bad = dagmem_run("forget", "--home", str(home), *args)
        assert bad.returncode == 2, (args, bad.stdout, bad.stderr)
        assert "Traceback" not in bad.stderr
    assert dagmem_run("forget", "--home", str(home), "--node", "chat/n1", "--regex").returncode == 2
    assert _grep(home)  # nothing was forgotten by any of them


@pytest.mark.anyio
async def test_a_serving_runtime_does_not_write_back_what_another_process_forgot(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with dagmem.Runtime.open(home, git=True) as rt:
        await rt.append("chat", "user", f"the key is {SECRET} keep it")
        await rt.append("chat", "assistant", "Understood, kept for the deploy.")
        # Not written yet (under the threshold): the runtime's view owes both turns.
        other = await anyio.run_process(
            [sys.executable, "-m", "dagmem", "forget", "--home", str(home), "--match", SECRET, "--yes"],
            check=False,
        )
        assert other.returncode == 0, other.stdout + other.stderr
        await rt.flush(force=True)
    assert _grep(home) == ""
    assert dagmem_run("verify", "--home", str(home), "--forgotten", "--strict").returncode == 0


@pytest.mark.anyio
async def test_a_serving_runtime_writes_on_in_the_slot_index_another_process_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The forget deletes the slot index under the serving runtime's writer, which holds it open: its next
    batch opens the file at the path (rebuilt from the topics), keeps its said times there, and holds no
    deleted file."""
    home = tmp_path / "home"
    slots = home / "memory" / ".dagmem" / "slots.sqlite3"
    async with dagmem.Runtime.open(home) as rt:
        await rt.append("chat", "user", f"I live in Lisbon and my api key is {SECRET} for the pipeline")
        await rt.append("chat", "assistant", "Lisbon, and the key, noted.")
        await rt.flush(force=True)
        assert slots.is_file()
        other = await anyio.run_process(
            [sys.executable, "-m", "dagmem", "forget", "--home", str(home), "--match", SECRET, "--yes"],
            check=False,
        )
        assert other.returncode == 0, other.stdout + other.stderr
        assert not slots.exists()
        with caplog.at_level(logging.INFO, logger="dagmem"):
            await rt.append("chat", "user", "I live in Porto now, we moved last week.")
            await rt.append("chat", "assistant", "Porto, how exciting.")
            await rt.flush(force=True)
        assert not [r for r in caplog.records if "slot index is unusable" in r.getMessage()]
        assert open_deleted("slots.sqlite3") == []
        with contextlib.closing(sqlite3.connect(slots)) as db:
            said = set(db.execute("SELECT session, anchor FROM said"))
        assert {("chat", anchor_of("chat/n3")), ("chat", anchor_of("chat/n4"))} <= said
    assert _grep(home) == ""


def test_a_damaged_forgotten_json_is_refused_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    anyio.run(_conversation, home)
    (home / "memory/.dagmem/forgotten.json").write_text("{not json")
    for args in (["forget", "--match", SECRET, "--yes"], ["verify", "--forgotten"]):
        refused = dagmem_run(*args, "--home", str(home))
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "forgotten.json" in refused.stderr
        assert "Traceback" not in refused.stderr
    assert _grep(home)  # nothing was forgotten


PET = "Maya"


async def _pet(home: Path) -> None:
    """A topic named after a pet's name said in one turn only (a name is what topics are named after)."""
    async with dagmem.Runtime.open(home, git=True) as rt:
        await rt.append("walks", "user", "Can you suggest a walk for the weekend?")
        await rt.append("walks", "assistant", "The coastal path is lovely this time of year.")
        await rt.end_session("walks")
        await rt.append("pets", "user", f"My dog {PET} loves the beach.")
        await rt.append("pets", "assistant", "Then the coastal path suits you both.")
        await rt.flush(force=True)


def _named_after(home: Path, name: str) -> list[str]:
    """Every place under the home where the topic named after `name` still shows (file, title, paths)."""
    slug = name.casefold()
    where = [str(p.relative_to(home)) for p in home.rglob(f"*{slug}*")]
    for path in home.rglob("*"):
        if ".git" in path.parts or not path.is_file():
            continue
        data = path.read_bytes()
        if (
            f"topics/{slug}.md".encode() in data
            or f"({slug}.md)".encode() in data
            or f"# {name}\n".encode() in data
        ):
            where.append(str(path.relative_to(home)))
    return where


@pytest.mark.parametrize("how", ["node", "session", "match"])
def test_forget_renames_the_topic_named_after_the_forgotten_text(tmp_path: Path, how: str) -> None:
    """`--node` and `--session` (the whole turn's text) and `--match` of a name under 8 bytes: the topic
    named after it (its file, its title, its index line, the txlog's paths, the recall index) is renamed,
    `forget` says no copy is left only then, `verify --forgotten` agrees, and a too-short `--match` says
    it cannot be scanned for on its own."""
    home = tmp_path / "home"
    anyio.run(_pet, home)
    assert (home / "memory" / "topics" / f"{PET.casefold()}.md").exists()
    node = next(
        f"pets/{item['id']}"
        for p in (home / "sessions" / "pets" / "history").rglob("*.json")
        if PET in (item := json.loads(p.read_text()))["content"]
    )
    args = {"node": ["--node", node], "session": ["--session", "pets"], "match": ["--match", PET]}[how]
    done = dagmem_run("forget", "--home", str(home), *args, "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no copy left" in done.stdout
    assert ("under 8 bytes" in done.stdout) == (how == "match")
    assert _named_after(home, PET) == []
    assert dagmem_run("verify", "--forgotten", "--home", str(home)).returncode == 0
