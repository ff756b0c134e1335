"""Planted files inside a home (issue 17, cases 7 and 10): a FIFO is never opened (it would hang every
reader), and nothing is written through a symlink (it would land outside the home). Such a session is
reported invalid and refused, naming the path, and the other sessions proceed; such a workspace file or
directory is refused (`UnsafePath`, `WORKSPACE_INVALID`) before anything is written."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dagmem import FileSessionStore, Runtime, SessionInvalid
from dagmem.cli import main
from dagmem.memory.errors import UnsafePath
from dagmem.memory.writing import write_home

THRESHOLD = 20


def seed(home: Path) -> FileSessionStore:
    """Sessions a and b, two records each, enough for a batch."""
    store = FileSessionStore(home)
    for sid in ("a", "b"):
        store.append(sid, "user", f"what should I know about the trams of Lisbon, session {sid}?")
        store.append(sid, "assistant", f"line 28 climbs the hills of Lisbon, session {sid}")
    return FileSessionStore(home)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def move_out(path: Path, outside: Path) -> Path:
    """Move `path` out of the home and leave a symlink to it in its place; returns the target."""
    shutil.move(path, outside)
    os.symlink(outside, path)
    return outside


def results(home: Path) -> dict[str, tuple[str, str | None, str | None]]:
    return {
        r.session: (r.outcome, None if r.reason_code is None else str(r.reason_code), r.detail)
        for r in write_home(home, force=True, threshold=THRESHOLD)
    }


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    status = main([*args, "--json"])
    out = capsys.readouterr().out
    return status, json.loads(out)


# -- FIFOs (case 7) ----------------------------------------------------------------------------------------


@pytest.fixture(params=["history/0000/000003-u-n3.json", "meta.json"])
def fifo_home(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    seed(home)
    fifo = home / "sessions" / "b" / str(request.param)
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    return home, fifo


@pytest.mark.timeout(30, method="thread")  # a hang (a blocked open) fails, never stalls the run
def test_a_fifo_in_a_session_makes_it_invalid_and_never_hangs_the_write(fifo_home: tuple[Path, Path]) -> None:
    home, fifo = fifo_home
    found = results(home)
    assert found["a"][:2] == ("written", None)
    outcome, code, detail = found["b"]
    assert (outcome, code) == ("invalid", "INVALID_INPUT")
    assert detail is not None
    assert str(fifo) in detail
    assert "FIFO" in detail


@pytest.mark.timeout(30, method="thread")  # a hang (a blocked open) fails, never stalls the run
def test_status_and_verify_name_the_fifo_and_never_hang(
    fifo_home: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    home, fifo = fifo_home
    _status, report = cli(capsys, "status", "--home", str(home))
    sessions = report["sessions"]
    assert isinstance(sessions, dict)
    assert str(fifo) in str(sessions["b"])
    assert sessions["a"] == 2
    status, report = cli(capsys, "verify", "--home", str(home))
    assert status == 1
    assert any(v["subject"] == "b" and str(fifo) in v["detail"] for v in report["violations"])  # type: ignore[attr-defined]


@pytest.mark.anyio
@pytest.mark.timeout(30, method="thread")  # a hang (a blocked open) fails, never stalls the run
async def test_the_runtime_refuses_a_session_with_a_fifo_and_serves_the_others(
    fifo_home: tuple[Path, Path],
) -> None:
    home, _fifo = fifo_home
    async with Runtime.open(home, token_threshold=THRESHOLD) as rt:
        await rt.append("a", "user", "and the tiles?")
        with pytest.raises(SessionInvalid, match="FIFO"):
            await rt.append("b", "user", "and the tiles?")
        await rt.flush(force=True)
    assert FileSessionStore(home).load("a").problems == []


# -- symlinks in a session (case 10) ---------------------------------------------------------------------


@pytest.mark.parametrize("inside", ["", "history/0000", "history/0000/000002-a-n2.json", "meta.json"])
def test_a_symlink_in_a_session_makes_it_invalid_and_nothing_is_written_through_it(
    tmp_path: Path, inside: str
) -> None:
    home = tmp_path / "home"
    seed(home)
    link = home / "sessions" / "b" / inside if inside else home / "sessions" / "b"
    target = move_out(link, tmp_path / "outside")
    before = snapshot(target) if target.is_dir() else {"": target.read_bytes()}
    found = results(home)
    assert found["a"][:2] == ("written", None)
    outcome, code, detail = found["b"]
    assert (outcome, code) == ("invalid", "INVALID_INPUT")
    assert detail is not None
    assert str(link) in detail
    assert "symbolic link" in detail
    store = FileSessionStore(home)
    with pytest.raises(SessionInvalid, match="symbolic link"):
        store.merge_node_metadata("b", {"n2": {"k": 1}})  # a marker
    if not inside.endswith("n2.json"):  # an append reads no node file (it is O(1)): the others refuse it
        with pytest.raises(SessionInvalid, match="symbolic link"):
            store.append("b", "user", "one more")
    assert (snapshot(target) if target.is_dir() else {"": target.read_bytes()}) == before


@pytest.mark.anyio
async def test_the_runtime_refuses_a_symlinked_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seed(home)
    target = move_out(home / "sessions" / "b", tmp_path / "outside")
    before = snapshot(target)
    async with Runtime.open(home, token_threshold=THRESHOLD) as rt:
        with pytest.raises(SessionInvalid, match="symbolic link"):
            await rt.append("b", "user", "one more")
        await rt.append("a", "user", "one more")
        await rt.flush(force=True)
    assert snapshot(target) == before


# -- symlinks in the workspace (case 10) -----------------------------------------------------------------


@pytest.mark.parametrize("inside", ["sources", ".dagmem/txlog.jsonl", "topics", ".dagmem"])
def test_a_symlinked_workspace_path_is_refused_and_nothing_is_written(
    tmp_path: Path, inside: str, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    seed(home)
    write_home(home, force=True, threshold=THRESHOLD)  # a workspace with a txlog, archives and topics
    FileSessionStore(home).append("a", "user", "what about the ferries across the Tagus from Lisbon?")
    FileSessionStore(home).append("a", "assistant", "they leave from Cais do Sodre for Cacilhas, Lisbon")
    link = home / "memory" / inside
    target = move_out(link, tmp_path / "outside")
    before = snapshot(target) if target.is_dir() else {"": target.read_bytes()}
    sessions_before = snapshot(home / "sessions")
    with pytest.raises(UnsafePath, match="symbolic link") as raised:
        write_home(home, force=True, threshold=THRESHOLD)
    assert raised.value.path == link
    status, report = cli(capsys, "write", "--force", "--home", str(home))
    assert status == 2
    assert report["code"] == "WORKSPACE_INVALID"
    assert str(link) in str(report["error"])
    assert (snapshot(target) if target.is_dir() else {"": target.read_bytes()}) == before
    assert snapshot(home / "sessions") == sessions_before  # nothing marked either


def test_a_symlinked_archive_refuses_its_session_and_the_others_proceed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seed(home)
    (home / "memory" / "sources").mkdir(parents=True)
    target = tmp_path / "outside.md"
    target.write_bytes(b"")
    os.symlink(target, home / "memory" / "sources" / "b.md")
    found = results(home)
    assert found["a"][:2] == ("written", None)
    outcome, code, detail = found["b"]
    assert (outcome, code) == ("failed", "WORKSPACE_INVALID")
    assert detail is not None
    assert "sources/b.md" in detail
    assert "symbolic link" in detail
    assert target.read_bytes() == b""
    assert not any(n.metadata for n in FileSessionStore(home).load("b").nodes.values())


@pytest.mark.anyio
async def test_the_runtime_refuses_a_workspace_with_a_symlinked_txlog(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "memory" / ".dagmem").mkdir(parents=True)
    target = tmp_path / "outside.jsonl"
    target.write_bytes(b"")
    os.symlink(target, home / "memory" / ".dagmem" / "txlog.jsonl")
    with pytest.raises(UnsafePath, match=r"txlog\.jsonl is a symbolic link"):
        async with Runtime.open(home, token_threshold=THRESHOLD):
            pass
    assert target.read_bytes() == b""
