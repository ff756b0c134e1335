"""The topic index is installed in the same transaction as the topics it describes, and a backfill is
crash-safe (the crash suite's method: a hook dies at the N-th `faults.hit`, N = 1, 2, ... until a run
completes; a new process opens the home and runs again).

After any death and the next open's recovery, `topics/index.md` says exactly what the topic files say
(a death between stage and commit leaves the old topics and the old index; one after the commit point
rolls both forward); after the redo every record is cited once, and the oracle is clean."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory import faults
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import parse_topic, render_topic_index, summarise_bytes
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import ExtractiveDistiller, backfill, write_pass
from dagmem.sim import check_home
from dagmem.tests.crash.test_crash import CrashAt, restarted
from dagmem.tests.memory.write.test_backfill import migrated_home


def index_from_topics(home: Path) -> str | None:
    """The index the topic files on disk call for (every one summarised afresh)."""
    topics = home / "memory" / "topics"
    summaries = [
        summarise_bytes(f"topics/{p.name}", p.read_bytes())
        for p in sorted(topics.glob("*.md"))
        if p.name != "index.md"
    ]
    return render_topic_index([s for s in summaries if s is not None])


def index_on_disk(home: Path) -> str | None:
    path = home / "memory" / "topics" / "index.md"
    return path.read_text("utf-8") if path.exists() else None


def citations(home: Path) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for path in sorted((home / "memory" / "topics").glob("*.md")):
        if path.name != "index.md":
            topic = parse_topic(path.read_text("utf-8"), f"topics/{path.name}")
            counts.update(
                (s.session_id, s.anchor) for b in topic.blocks for c in b.citations for s in c.sources
            )
    return counts


def oracle_clean(home: Path) -> None:
    wsid = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    report = check_home(FileSessionStore(home), home / "memory", wsid, drained=True)
    assert report.violations == []
    assert report.uncited == []


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with one write done and two more turns owed (a new topic, and one more for an old one)."""
    home = tmp_path_factory.mktemp("index-home")
    store = FileSessionStore(home)
    first = store.append("s", "user", "We fly to Lisbon on May 3.")
    second = store.append("s", "assistant", "Lisbon in May is mild; pack light layers.", predecessor=first.id)
    write_pass(home, force=True)
    third = store.append("s", "user", "Which tram goes to Belém from Lisbon?", predecessor=second.id)
    store.append("s", "assistant", "Tram 15 runs along the river to Belém.", predecessor=third.id)
    return home


def test_the_index_moves_with_its_topics_whatever_instant_the_write_dies(
    written: Path, tmp_path: Path
) -> None:
    before = index_on_disk(written)
    assert before is not None
    assert before == index_from_topics(written)
    n = 0
    outcomes: set[str] = set()
    while True:
        n += 1
        run = tmp_path / f"run-{n}"
        shutil.copytree(written, run)
        hook = CrashAt(n)
        try:
            with restarted(), faults.armed(hook):
                write_pass(run, force=True)
            died = False
        except faults.InjectedCrash:
            died = True
        with restarted():
            Workspace(run / "memory").close()  # a new process opens it: recovery
        # Never half a transaction: the index on disk is the one its topic files call for.
        assert index_on_disk(run) == index_from_topics(run), (n, hook.site)
        outcomes.add("old" if index_on_disk(run) == before else "new")
        with restarted():
            write_pass(run, force=True)  # the redo
        assert index_on_disk(run) == index_from_topics(run), (n, hook.site)
        assert index_on_disk(run) != before
        assert max(citations(run).values()) == 1, (n, hook.site)
        oracle_clean(run)
        shutil.rmtree(run)
        if not died:
            break
    assert n > 5
    assert outcomes == {"old", "new"}  # deaths before the commit point and after it were both met


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("backfill-home")
    migrated_home(home)
    return home


def _backfill(home: Path) -> int:
    with Workspace(home / "memory") as workspace:
        return backfill(workspace, ExtractiveDistiller(), threshold=10).records


def test_a_backfill_redone_after_a_crash_at_every_fault_site_cites_each_record_once(
    migrated: Path, tmp_path: Path
) -> None:
    n = 0
    while True:
        n += 1
        run = tmp_path / f"run-{n}"
        shutil.copytree(migrated, run)
        hook = CrashAt(n)
        try:
            with restarted(), faults.armed(hook):
                _backfill(run)
            died = False
        except faults.InjectedCrash:
            died = True
        with restarted():
            _backfill(run)  # the redo: takes up what is still uncited
            assert _backfill(run) == 0  # and once more: nothing left, nothing cited twice
        counts = citations(run)
        assert len(counts) == 4, (n, hook.site, counts)
        assert set(counts.values()) == {1}, (n, hook.site, counts)
        assert index_on_disk(run) == index_from_topics(run), (n, hook.site)
        oracle_clean(run)
        shutil.rmtree(run)
        if not died:
            break
    assert n > 5  # it passes the install's fault sites (stage, txlog, moves), batch after batch
