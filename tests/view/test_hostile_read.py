"""Reading a home that was planted (issue 31): a topic file, `core.md` or `topics/` itself symlinked to a
file outside the home is never served (by `dagmem mcp`, `dagmem core`, `dagmem view`), and `dagmem view
--out` never writes through a hard link or symlink that is already there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.writing import write_home

SECRET = "root:x:0:0:TOP-SECRET-LINE:/root:/bin/bash"


def dagmem(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dagmem", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A written home, and a secret file beside it (outside the home)."""
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    store.append(
        "s", "user", "Hi, my name is Ana. I prefer trains. Plan a trip to Porto in May?", node_id="u1"
    )
    store.append("s", "assistant", "Porto in May: the Ribeira and the port cellars.", node_id="a1")
    assert all(r.outcome == "written" for r in write_home(home, force=True))
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    return home


def plant_links(home: Path) -> None:
    memory = home / "memory"
    secret = home.parent / "secret.txt"
    (memory / "core.md").unlink(missing_ok=True)
    (memory / "core.md").symlink_to(secret)
    (memory / "topics" / "leak.md").symlink_to(secret)


# -- `dagmem view --out` ---------------------------------------------------------------------------------


def test_view_out_never_writes_through_a_hard_link_into_the_archive(home: Path, tmp_path: Path) -> None:
    archive = home / "memory" / "sources" / "s.md"
    before = archive.read_bytes()
    out = tmp_path / "page.html"
    os.link(archive, out)
    run = dagmem("view", "--out", str(out), home=home)
    assert run.returncode == 0, run.stderr
    assert archive.read_bytes() == before
    assert out.read_text().lstrip().lower().startswith("<!doctype html")
    assert os.stat(out).st_ino != os.stat(archive).st_ino
    verify = dagmem("verify", "--strict", home=home)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_view_out_replaces_a_symlink_and_leaves_what_it_named(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me\n")
    out = tmp_path / "page.html"
    out.symlink_to(target)
    run = dagmem("view", "--out", str(out), home=home)
    assert run.returncode == 0, run.stderr
    assert target.read_text() == "keep me\n"
    assert not out.is_symlink()
    assert "<html" in out.read_text().lower()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temp file left


# -- symlinked topic files and core.md -------------------------------------------------------------------


def test_dagmem_core_refuses_a_symlinked_core_md(home: Path) -> None:
    plant_links(home)
    run = dagmem("core", home=home)
    assert run.returncode == 2
    assert "TOP-SECRET" not in run.stdout + run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert "symbolic link" in run.stderr
    as_json = dagmem("core", "--json", home=home)
    assert as_json.returncode == 2
    assert set(json.loads(as_json.stdout)) == {"error", "code"}
    assert "TOP-SECRET" not in as_json.stdout


def test_dagmem_view_shows_no_symlinked_topic_or_core(home: Path) -> None:
    plant_links(home)
    run = dagmem("view", "--out", "-", home=home)
    assert run.returncode == 0, run.stderr
    assert "TOP-SECRET" not in run.stdout
    assert "Porto" in run.stdout  # the real topics are still shown


def test_dagmem_view_shows_nothing_of_a_symlinked_topics_directory(home: Path, tmp_path: Path) -> None:
    # Someone else's notes in topic form: the page would show them, were the link followed.
    topics = home / "memory" / "topics"
    elsewhere = tmp_path / "notes"
    elsewhere.mkdir()
    for path in topics.glob("*.md"):
        (elsewhere / path.name).write_text(path.read_text().replace("Porto", "Privatesecretword"))
    shown = dagmem("view", "--out", "-", home=home)
    topics.rename(tmp_path / "real-topics")
    topics.symlink_to(elsewhere)
    run = dagmem("view", "--out", "-", home=home)
    assert run.returncode == 0, run.stderr
    assert "Porto" in shown.stdout  # the topics are on the page when they are real files
    assert "Privatesecretword" not in run.stdout


# -- the same through the MCP server ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_mcp_serves_no_symlinked_topic_or_core(home: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.shared.exceptions import MCPError

    plant_links(home)
    env = {
        k: os.environ[k] for k in ("PYTHONPATH", "TIKTOKEN_CACHE_DIR", "DAGMEM_CACHE_DIR") if k in os.environ
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dagmem", "mcp", "--home", str(home)], env=env
    )
    async with Client(params, read_timeout_seconds=60) as client:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert uris
        assert "memory://topics/leak" not in uris
        with pytest.raises(MCPError):
            await client.read_resource("memory://topics/leak")
        for uri in uris:  # the real topics are still served
            text = (await client.read_resource(uri)).contents[0].text  # type: ignore[union-attr]
            assert "TOP-SECRET" not in text
        core = await client.call_tool("core", {})
        assert "TOP-SECRET" not in json.dumps(core.model_dump(mode="json"))
