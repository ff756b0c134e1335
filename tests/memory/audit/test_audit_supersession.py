"""The oracle's supersession checks (DESIGN §12), on a real home whose topic files a person or a tool
edited: a superseded line naming a block that does not exist is `supersession_missing`, a chain of
successors that comes back on itself is `supersession_cycle`; `dagmem verify` reports both (text and
`--json`, exit 1) and passes a home whose chains all end. A partly superseded line naming a missing block
is `supersession_missing` too; it is never a link of a cycle."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.cli._errors import EXIT_FAILED, EXIT_OK
from dagmem.memory.audit import check_home
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import Block, Supersession, Topic, make_block, render_topic
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import records_of
from dagmem.tests._cli import dagmem_run

A, B = "topics/a.md", "topics/b.md"


class Home:
    """Two archived turns, and topic files written here by hand, citing them (as a tool could)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = FileSessionStore(root)
        ids = [self.store.append("s", role, f"{role} said a thing").id for role in ("user", "assistant")]
        self.sources = [f"s/{node_id}" for node_id in ids]
        with Workspace(root / "memory") as workspace:
            workspace.archive("s", records_of("s", self.store.read_nodes("s", ids)))
        (root / "memory" / "topics").mkdir(exist_ok=True)

    def blocks(self, path: str, *claims: str) -> list[Block]:
        taken: set[str] = set()
        return [
            make_block(path, claim, [("2026-11-01", [("user", s) for s in self.sources])], taken)
            for claim in claims
        ]

    def write(self, path: str, *blocks: Block) -> None:
        (self.root / "memory" / path).write_text(render_topic(Topic(path, blocks)))

    def violations(self) -> list[tuple[str, str, str]]:
        workspace_id = read_workspace_id(self.root / "memory" / ".dagmem" / "workspace-id")
        report = check_home(self.store, self.root / "memory", workspace_id)
        return [(v.kind, v.subject, v.detail) for v in report.violations]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


def by(block: Block, successor: Block | str, path: str, reason: str = "update") -> Block:
    bid = successor if isinstance(successor, str) else successor.id
    return dataclasses.replace(block, superseded=Supersession(bid, path, "2026-11-20", reason))  # type: ignore[arg-type]


def where(path: str, block: Block | str) -> str:
    return f"{path}#{block if isinstance(block, str) else block.id}"


def test_chains_within_and_across_files_are_no_violation(home: Home) -> None:
    a1, a2 = home.blocks(A, "Paris.", "Berlin.")
    (b1,) = home.blocks(B, "Rome.")
    home.write(A, by(a1, a2, A), by(a2, b1, B, "retraction"))
    home.write(B, b1)
    assert home.violations() == []
    done = dagmem_run("verify", "--home", str(home.root))
    assert (done.returncode, done.stdout.strip().splitlines()[-1]) == (EXIT_OK, "ok")


def test_a_successor_that_does_not_exist_is_supersession_missing(home: Home) -> None:
    a1, a2 = home.blocks(A, "Paris.", "Berlin.")
    home.write(A, by(a1, "b-00000000", A), by(a2, a1, "topics/nowhere.md"))
    assert home.violations() == [
        (
            "supersession_missing",
            where(A, a1),
            f"superseded by {where(A, 'b-00000000')}, which does not exist",
        ),
        (
            "supersession_missing",
            where(A, a2),
            f"superseded by topics/nowhere.md#{a1.id}, which does not exist",
        ),
    ]
    text = dagmem_run("verify", "--home", str(home.root))
    assert text.returncode == EXIT_FAILED
    assert (
        f"VIOLATION supersession_missing: {where(A, a1)} (superseded by {where(A, 'b-00000000')}"
        in text.stdout
    )
    assert text.stdout.strip().endswith("2 violations")
    report = json.loads(dagmem_run("verify", "--json", "--home", str(home.root)).stdout)
    assert not report["ok"]
    assert [(v["kind"], v["subject"]) for v in report["violations"]] == [
        ("supersession_missing", where(A, a1)),
        ("supersession_missing", where(A, a2)),
    ]


def test_a_cycle_across_files_is_one_supersession_cycle(home: Home) -> None:
    (a1,) = home.blocks(A, "Paris.")
    (b1,) = home.blocks(B, "Berlin.")
    home.write(A, by(a1, b1, B))
    home.write(B, by(b1, a1, A))
    expected = ("supersession_cycle", where(A, a1), f"{where(A, a1)} -> {where(B, b1)} -> {where(A, a1)}")
    assert home.violations() == [expected]
    done = dagmem_run("verify", "--json", "--home", str(home.root))
    assert done.returncode == EXIT_FAILED
    assert json.loads(done.stdout)["violations"] == [
        dict(zip(("kind", "subject", "detail"), expected, strict=True))
    ]


def test_a_block_superseded_by_itself_is_a_cycle_of_one(home: Home) -> None:
    (a1,) = home.blocks(A, "Paris.")
    home.write(A, by(a1, a1, A))
    assert home.violations() == [("supersession_cycle", where(A, a1), "superseded by itself")]


def test_a_chain_into_a_cycle_reports_the_cycle_once_and_not_the_chain(home: Home) -> None:
    a1, a2, a3 = home.blocks(A, "Paris.", "Berlin.", "Rome.")
    home.write(A, by(a1, a2, A), by(a2, a3, A), by(a3, a2, A))
    kinds = home.violations()
    assert [(kind, subject) for kind, subject, _ in kinds] == [
        ("supersession_cycle", where(A, min(a2.id, a3.id)))
    ]


def test_a_successor_in_an_unreadable_file_is_reported_once_as_that_file(home: Home) -> None:
    (a1,) = home.blocks(A, "Paris.")
    (b1,) = home.blocks(B, "Berlin.")
    home.write(A, by(a1, b1, B))
    (home.root / "memory" / B).write_text("not a topic file\n")
    assert [kind for kind, _, _ in home.violations()] == ["topic-unreadable"]


# --- the partly superseded line -----------------------------------------------------------------------------


def partly_by(block: Block, successor: Block | str, path: str) -> Block:
    bid = successor if isinstance(successor, str) else successor.id
    return dataclasses.replace(block, partly=Supersession(bid, path, "2026-11-20", "update"))


def test_a_partly_successor_that_does_not_exist_is_supersession_missing(home: Home) -> None:
    a1, a2 = home.blocks(A, "Paris and nurse.", "Berlin.")
    home.write(A, partly_by(a1, "b-00000000", A), partly_by(a2, a1, "topics/nowhere.md"))
    assert home.violations() == [
        (
            "supersession_missing",
            where(A, a1),
            f"partly superseded by {where(A, 'b-00000000')}, which does not exist",
        ),
        (
            "supersession_missing",
            where(A, a2),
            f"partly superseded by topics/nowhere.md#{a1.id}, which does not exist",
        ),
    ]
    text = dagmem_run("verify", "--home", str(home.root))
    assert text.returncode == EXIT_FAILED
    assert (
        f"VIOLATION supersession_missing: {where(A, a1)} (partly superseded by {where(A, 'b-00000000')}"
        in text.stdout
    )


def test_partly_lines_that_name_each_other_are_no_cycle(home: Home) -> None:
    (a1,) = home.blocks(A, "Paris and nurse.")
    (b1,) = home.blocks(B, "Berlin.")
    home.write(A, partly_by(a1, b1, B))
    home.write(B, by(partly_by(b1, a1, A), a1, A))  # superseded by a1 too: a chain of one, ending at a1
    assert home.violations() == []
    done = dagmem_run("verify", "--home", str(home.root))
    assert (done.returncode, done.stdout.strip().splitlines()[-1]) == (EXIT_OK, "ok")
