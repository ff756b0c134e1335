"""The command line as a user meets it: sessions and branches listed and shown, node ids by any unique
prefix (CLI and MCP), plurals, messages for empty results, output not hard-wrapped when piped."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.cli import main

UUIDS = {
    "u1": "3f2a9c4e-0000-4000-8000-000000000001",
    "a1": "3f2a9c4e-0000-4000-8000-000000000002",
    "u2": "7b1d0000-0000-4000-8000-000000000003",
    "a2": "7b1d1111-0000-4000-8000-000000000004",
    "u2b": "c0ffee00-0000-4000-8000-000000000005",
}


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    """A session as an importer leaves it: UUID node ids, a fork, the head on the first branch."""
    home = tmp_path / "home"
    store = FileSessionStore(home)
    ids = UUIDS
    store.append("chat", "user", "plan a trip to Lisbon with the children", node_id=ids["u1"])
    store.append("chat", "assistant", "Lisbon is hilly: bring a carrier", node_id=ids["a1"])
    store.append("chat", "user", "what about Sintra?", node_id=ids["u2"])
    store.append("chat", "assistant", "Sintra is a day trip by train from Rossio station", node_id=ids["a2"])
    store.append(
        "chat", "user", "and Porto instead, is it any flatter?", predecessor=ids["a1"], node_id=ids["u2b"]
    )
    store.set_head("chat", ids["a2"])
    store.append("solo", "user", "one turn only")
    return home


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# -- class 1: sessions, show, prefixes -------------------------------------------------------------------


def test_sessions_lists_nodes_head_tips_with_their_first_words_and_debt(
    imported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_digest(imported)
    status, out, err = run(capsys, "sessions", "--home", str(imported), "--json")
    assert status == 0, err
    listed = json.loads(out)
    chat, solo = listed["sessions"]
    assert chat["id"] == "chat"
    assert chat["nodes"] == 5
    assert chat["head"] == UUIDS["a2"]
    assert chat["owed"] == 5  # five user and assistant turns, nothing written yet
    tips = {tip["id"]: tip for tip in chat["tips"]}
    assert set(tips) == {UUIDS["a2"], UUIDS["u2b"]}
    assert tips[UUIDS["a2"]]["head"] is True
    assert tips[UUIDS["u2b"]]["words"].startswith("and Porto instead")
    assert solo["nodes"] == 1
    assert set(chat) == {"id", "nodes", "head", "tips", "owed", "problem"}
    status, out, _ = run(capsys, "sessions", "--home", str(imported))
    assert status == 0
    assert "chat: 5 nodes" in out
    assert "solo: 1 node," in out  # not "1 nodes"
    assert "1 tip," in out
    assert "and Porto instead" in out
    assert tree_digest(imported) == before  # read-only


def test_show_prints_a_branch_by_a_unique_prefix_of_its_tip(
    imported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_digest(imported)
    status, out, err = run(capsys, "show", "chat", "--home", str(imported), "--tip", "c0ff")
    assert status == 0, err
    assert "Lisbon is hilly" in out
    assert "and Porto instead" in out
    assert "Sintra" not in out  # the other branch
    status, out, _ = run(capsys, "show", "chat", "--home", str(imported), "--json")
    shown = json.loads(out)
    assert shown["tip"] == UUIDS["a2"]  # the head by default
    assert [n["id"] for n in shown["nodes"]] == [UUIDS[k] for k in ("u1", "a1", "u2", "a2")]
    assert tree_digest(imported) == before


def test_an_ambiguous_prefix_is_one_line_naming_how_many_match(
    imported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_digest(imported)
    status, out, err = run(capsys, "show", "chat", "--home", str(imported), "--tip", "3f2a")
    assert status == 2
    assert err.count("\n") == 1
    assert "matches 2 nodes" in err
    status, out, _ = run(capsys, "show", "chat", "--home", str(imported), "--tip", "7b1d", "--json")
    assert status == 2
    assert "matches 2 nodes" in json.loads(out)["error"]
    status, _, err = run(capsys, "show", "chat", "--home", str(imported), "--tip", "ffff")
    assert status == 2
    assert "has no node 'ffff'" in err
    status, _, err = run(capsys, "show", "nosuch", "--home", str(imported))
    assert status == 2
    assert err.startswith("error: ")
    assert tree_digest(imported) == before


def test_recall_tip_takes_a_prefix(imported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["write", "--force", "--home", str(imported)]) == 0
    capsys.readouterr()
    status, out, err = run(
        capsys,
        "recall",
        "Porto flatter",
        "--home",
        str(imported),
        "--session",
        "chat",
        "--tip",
        "c0ffee",
        "--json",
    )
    assert status == 0, err
    hits = json.loads(out)["hits"]
    assert hits
    status, _, err = run(
        capsys, "recall", "Porto", "--home", str(imported), "--session", "chat", "--tip", "3f2a9c4e"
    )
    assert status == 2
    assert "matches 2 nodes" in err


def test_sessions_and_show_of_a_missing_home_create_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["sessions"], ["show", "chat"]):
        status, _, err = run(capsys, *argv, "--home", str(tmp_path / "nowhere"))
        assert status == 2
        assert "no such directory" in err
    assert not (tmp_path / "nowhere").exists()


# -- class 4: what people read ------------------------------------------------------------------------


def test_counts_of_one_are_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    FileSessionStore(home).append("only", "user", "a single turn about the trip to Lisbon")
    status, out, err = run(capsys, "write", "--force", "--home", str(home))
    assert status == 0, err
    assert "1 session:" in out
    assert "in 1 batch" in out
    assert "1 record " in out
    assert "1 sessions" not in out
    assert "1 batches" not in out
    assert "1 records" not in out


def test_an_empty_core_says_so_on_stderr_and_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    (home / "memory").mkdir(parents=True)
    status, out, err = run(capsys, "core", "--home", str(home))
    assert status == 0
    assert out == ""
    assert "no core block yet" in err
    assert err.count("\n") == 1
    status, out, _ = run(capsys, "core", "--home", str(home), "--json")
    assert json.loads(out) == {"core": "", "facts": []}


def test_piped_output_is_not_wrapped_at_80_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failed session's line names a file: piped (capsys is no terminal), it stays one line, whole."""
    home = tmp_path / ("a-directory-with-a-long-name-" * 3) / "home"
    store = FileSessionStore(home)
    for i in range(3):
        store.append("broken", "user", f"turn {i}")
    node_file = next((home / "sessions" / "broken" / "history").rglob("*.json"))
    node_file.write_text("{ not json", encoding="utf-8")
    status, _, err = run(capsys, "write", "--force", "--home", str(home))
    assert status == 1
    (line,) = [line for line in err.splitlines() if line.startswith("broken:")]
    assert len(line) > 80
    assert str(node_file) in line


def test_open_without_a_browser_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", lambda url: False)  # what it answers with no display
    home = tmp_path / "home"
    FileSessionStore(home).append("s", "user", "hello")
    out = tmp_path / "page.html"
    status, _, err = run(capsys, "view", "--home", str(home), "--out", str(out), "--open")
    assert status == 0
    assert out.exists()
    assert "could not open a web browser" in err
    assert str(out) in err


def test_verbose_is_for_dagmem_not_for_the_libraries_below_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    home = tmp_path / "home"
    FileSessionStore(home).append("s", "user", "hello")
    script = (
        "import logging, sys\n"
        "from dagmem.cli import main\n"
        "status = main(['status', '-vv', '--home', sys.argv[1]])\n"
        "for name in ('httpx', 'httpcore', 'mcp.server', 'ray', 'asyncio'):\n"
        "    logging.getLogger(name).debug('third-party debug line')\n"
        "    logging.getLogger(name).info('third-party info line')\n"
        "logging.getLogger('dagmem.test').debug('our debug line')\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(home)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "our debug line" in done.stderr
    assert "third-party" not in done.stderr


def test_rays_sigterm_warning_is_not_shown(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("ray")
    import logging

    import dagmem.cluster

    class FakeClient:
        async def describe(self) -> list[dict[str, object]]:
            return []

        async def close(self) -> None:
            pass

    async def connect(*args: object, **kwargs: object) -> FakeClient:
        # What ray.init logs when `connect` starts it off the main thread.
        logging.getLogger("ray._private.worker").warning(
            "SIGTERM handler is not set because current thread is not the main thread."
        )
        return FakeClient()

    monkeypatch.setattr(dagmem.cluster, "connect", connect)
    with caplog.at_level(logging.WARNING):
        status, out, err = run(capsys, "cluster", "status")
    assert status == 0, err
    assert "no homes are served" in out
    assert "SIGTERM" not in err
    assert not [r for r in caplog.records if "SIGTERM" in r.getMessage()]
