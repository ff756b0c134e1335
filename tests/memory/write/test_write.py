"""The memory write (DESIGN §3–§4) on real files: records, batches, archive → install → mark."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pytest

from dagmem import FileSessionStore
from dagmem.cli._errors import EXIT_FAILED, EXIT_OK
from dagmem.cli._write import exit_status
from dagmem.memory import faults
from dagmem.memory.durable import ensure_workspace_id
from dagmem.memory.format import MARKER_KEY
from dagmem.memory.outcomes import ReasonCode, WriteFailure
from dagmem.memory.policy import with_marker
from dagmem.memory.store import FakeClock
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import (
    BatchInput,
    Edits,
    ExtractiveDistiller,
    TopicReader,
    mark_nodes,
    records_of,
    write_batch,
    write_session,
)
from dagmem.memory.writing import write_home
from dagmem.sim import check_home
from dagmem.sim._crashload import create_workspace_id


class Recording(ExtractiveDistiller):
    """The default distiller, remembering every batch it was offered."""

    def __init__(self) -> None:
        self.offered: list[list[str]] = []

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        self.offered.append([r.node_id for r in batch.records])
        return super().distill(batch, topics)


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = FileSessionStore(root, clock=FakeClock())
        self.workspace = Workspace(root / "memory")

    def reopen(self) -> Home:
        self.workspace.close()
        return Home(self.root)

    def session(
        self, sid: str, *, boundary: bool = True, distiller: Any = None, threshold: int = 16_000
    ) -> Any:
        return write_session(
            self.store,
            self.workspace,
            sid,
            boundary=boundary,
            distiller=distiller or ExtractiveDistiller(),
            threshold=threshold,
            retry_delay=0.0,
        )

    def check(self, drained: bool = True) -> None:
        report = check_home(self.store, self.root / "memory", self.workspace.workspace_id, drained=drained)
        assert report.violations == []

    def archive_bytes(self, sid: str) -> bytes:
        return (self.root / "memory" / "sources" / f"{sid}.md").read_bytes()

    def txlog(self) -> list[dict[str, Any]]:
        path = self.root / "memory" / ".dagmem" / "txlog.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def consumed(self) -> list[str]:
        return [s for line in self.txlog() for s in line["consumed"]]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


def say(
    store: FileSessionStore, sid: str, n: int, prefix: str, predecessor: Any = None, **kw: Any
) -> list[str]:
    """Append n alternating user/assistant turns; returns their ids."""
    ids: list[str] = []
    for i in range(1, n + 1):
        role = "user" if i % 2 else "assistant"
        text = f"{prefix}{i}: {'tell me about' if role == 'user' else 'here is'} {prefix} topic number {i}"
        if ids or predecessor is not None:
            kw["predecessor"] = ids[-1] if ids else predecessor
        ids.append(store.append(sid, role, text, node_id=f"{prefix}{i}", **kw).id)
        kw.pop("predecessor", None)
    return ids


# -- the seed cases of written-marker (the bug this design exists to fix) ----------------------------------


def test_branches_forked_after_the_trunk_was_written_offer_all_their_turns(home: Home) -> None:
    trunk = say(home.store, "s", 9, "m")
    distiller = Recording()
    assert home.session("s", distiller=distiller).records == 9
    assert distiller.offered == [trunk]
    a = say(home.store, "s", 5, "a", predecessor="m3")
    b = say(home.store, "s", 11, "b", predecessor="m3")
    distiller.offered.clear()
    result = home.session("s", distiller=distiller)
    # Every turn of each branch is offered (5 and 11, not 0 and 2); m1..m3 are not offered again.
    assert sorted(map(sorted, distiller.offered)) == sorted([sorted(a), sorted(b)])
    assert result.records == 16
    consumed = home.consumed()
    assert len(consumed) == len(set(consumed)) == 9 + 5 + 11
    archive = home.archive_bytes("s").decode()
    for node_id in ("m1", "m2", "m3"):
        assert archive.count(f"<!-- source-id: s/{node_id} -->") == 1
    home.check()


def test_forced_write_of_head_and_sibling_consumes_the_shared_prefix_once(home: Home) -> None:
    say(home.store, "s", 6, "m")
    say(home.store, "s", 4, "x", predecessor="m2")
    home.store.set_head("s", "m6")  # the fork's appends moved the head to it: back to the trunk
    distiller = Recording()
    home.session("s", distiller=distiller)
    # The head branch first (m1..m6), then the sibling's own turns only.
    assert distiller.offered == [[f"m{i}" for i in range(1, 7)], ["x1", "x2", "x3", "x4"]]
    assert sorted(home.consumed()) == sorted(
        f"s/{i}" for i in [*(f"m{i}" for i in range(1, 7)), "x1", "x2", "x3", "x4"]
    )
    home.check()


# -- records and batches --------------------------------------------------------------------------------


def test_only_records_are_written_and_marked(home: Home) -> None:
    s = home.store
    s.append("s", "user", "what is the weather in Lisbon?", node_id="u1")
    s.append("s", "tool", "weather(lisbon) -> 21C", node_id="t1")
    s.append("s", "system", "be brief", node_id="sy")
    s.append("s", "assistant", "   \n ", node_id="blank")
    s.append("s", "assistant", "scheduled check-in", node_id="rt", metadata={"display": "runtime"})
    s.append("s", "assistant", "It is sunny and 21C in Lisbon.", node_id="a1")
    home.session("s")
    assert home.consumed() == ["s/u1", "s/a1"]
    nodes = s.load("s").nodes
    assert {nid for nid, n in nodes.items() if MARKER_KEY in n.metadata} == {"u1", "a1"}
    home.check()


def test_per_turn_rule_writes_only_complete_batches(home: Home) -> None:
    say(home.store, "s", 10, "m")  # 11 and 10 tokens, alternating
    distiller = Recording()
    result = home.session("s", boundary=False, threshold=40, distiller=distiller)
    # Two batches reached the threshold (42 tokens each); the last two turns (21) stay owed, no failure.
    assert distiller.offered == [["m1", "m2", "m3", "m4"], ["m5", "m6", "m7", "m8"]]
    assert result.outcome == "written"
    assert result.pending == 2
    home.check(drained=False)
    home.session("s", boundary=True, threshold=40, distiller=distiller)
    assert distiller.offered[-1] == ["m9", "m10"]
    home.check()


def test_a_huge_record_is_a_batch_by_itself(home: Home) -> None:
    s = home.store
    s.append("s", "user", "short question", node_id="q")
    s.append("s", "assistant", "word " * 200, node_id="huge")
    s.append("s", "user", "thanks", node_id="t")
    distiller = Recording()
    home.session("s", distiller=distiller, threshold=50)
    assert distiller.offered == [["q"], ["huge"], ["t"]]


def test_a_foreign_workspace_marker_is_kept_as_a_list(home: Home) -> None:
    home.store.append("s", "user", "hello there, planning a trip", node_id="u1")
    # Another workspace's writer marked it (a caller's append may not set the marker key).
    home.store.merge_node_metadata("s", {"u1": {MARKER_KEY: "w-0000000000000000"}})
    home.session("s")
    value = home.store.load("s").nodes["u1"].metadata[MARKER_KEY]
    assert value == sorted(["w-0000000000000000", home.workspace.workspace_id])
    assert with_marker({MARKER_KEY: value}, home.workspace.workspace_id) == {MARKER_KEY: value}


# -- the order and the failures ---------------------------------------------------------------------------


def test_archive_then_install_then_mark(home: Home) -> None:
    say(home.store, "s", 4, "m")
    sites: list[str] = []
    with faults.armed(sites.append):
        home.session("s")
    first = {
        kind: next(i for i, site in enumerate(sites) if site.startswith(kind))
        for kind in ("archive:", "txlog:", "install:", "mark:")
    }
    assert first["archive:"] < first["txlog:"] < first["install:"] < first["mark:"]


class Raising:
    name = "raising"

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        raise RuntimeError("model exploded")


class Forging:
    """Cites a source that is not in its batch: the edit must be rejected."""

    name = "forging"

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        edits = dict(ExtractiveDistiller().distill(batch, topics))
        path, text = next(iter(edits.items()))
        assert text is not None
        edits[path] = text.replace(f"../sources/{batch.session_id}.md", "../sources/elsewhere.md")
        return edits


class Unchanged:
    """Returns the files exactly as they are."""

    name = "unchanged"

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        return {"topics/notes.md": topics.read("topics/notes.md")}


@pytest.mark.parametrize(
    ("distiller", "code"),
    [
        (Raising(), ReasonCode.DISTILLER_FAILED),
        (Forging(), ReasonCode.INVALID_TOPIC_FORMAT),
        (Unchanged(), ReasonCode.WRITER_NO_PROGRESS),
    ],
)
def test_edits_a_distiller_cannot_make_installable_are_refused_and_the_batch_is_filed_plainly(
    home: Home, distiller: Any, code: ReasonCode, caplog: pytest.LogCaptureFixture
) -> None:
    ids = say(home.store, "s", 4, "m")
    result = home.session("s", distiller=distiller)
    assert (result.outcome, result.pending) == ("written", 0)
    # Nothing the distiller made is installed: every turn is quoted in `topics/notes.md`, and only there.
    assert sorted(p.name for p in (home.root / "memory" / "topics").iterdir()) == ["index.md", "notes.md"]
    notes = (home.root / "memory" / "topics" / "notes.md").read_text()
    assert "elsewhere" not in notes
    assert home.consumed() == [f"s/{i}" for i in ids]
    assert all(MARKER_KEY in n.metadata for n in home.store.load("s").nodes.values())
    assert home.workspace.status().last_outcome == "success"
    (warning,) = [r.getMessage() for r in caplog.records if "filed as plain" in r.getMessage()]
    assert str(code) in warning
    home.check()


def test_a_topic_changed_during_distilling_is_a_retryable_concurrent_update(home: Home) -> None:
    ids = say(home.store, "s", 2, "m")
    records = records_of("s", home.store.read_nodes("s", ids))

    class Racing(ExtractiveDistiller):
        def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
            edits = super().distill(batch, topics)
            for path in edits:  # another writer creates the file meanwhile
                (home.root / "memory" / path).write_text("# Taken\n")
            return edits

    with pytest.raises(WriteFailure) as caught:
        write_batch(home.workspace, "s", records, Racing())
    assert caught.value.code is ReasonCode.CONCURRENT_UPDATE
    assert caught.value.retryable
    assert home.consumed() == []


def test_two_writers_that_distilled_the_same_batch_commit_it_once(home: Home) -> None:
    ids = say(home.store, "s", 4, "m")
    records = records_of("s", home.store.read_nodes("s", ids))
    other = Workspace(home.root / "memory")  # a second process, in effect
    first = write_batch(home.workspace, "s", records, ExtractiveDistiller())
    second = write_batch(other, "s", records, ExtractiveDistiller())
    assert first.tx is not None
    assert second.tx is None  # it found the records consumed: it only marks
    assert second.node_ids == tuple(ids)
    assert len(home.txlog()) == 1
    mark_nodes(home.store, "s", second.node_ids, home.workspace.workspace_id)
    home.check()


def test_write_home_refuses_an_invalid_session_and_writes_the_others(home: Home) -> None:
    say(home.store, "good", 4, "m")
    say(home.store, "bad", 2, "m")
    broken = home.store.path("bad", "history/0000/000002-a-m2.json")
    broken.write_text("{ not json")
    results = write_home(home.root, force=True)
    by_session = {r.session: r for r in results}
    assert by_session["good"].outcome == "written"
    assert by_session["bad"].outcome == "invalid"
    assert by_session["bad"].reason_code is ReasonCode.INVALID_INPUT
    assert "'bad'" in (by_session["bad"].detail or "")
    assert str(broken) in (by_session["bad"].detail or "")
    assert not (home.root / "memory" / "sources" / "bad.md").exists()
    assert exit_status(results) == EXIT_FAILED
    assert exit_status([by_session["good"]]) == EXIT_OK


def test_distilling_the_same_batch_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    outputs = []
    for name in ("one", "two"):
        home = Home(tmp_path / name)
        home.workspace = Workspace(home.root / "memory", workspace_id="w-0123456789abcdef")
        say(home.store, "s", 6, "m")
        home.session("s")
        outputs.append(
            {
                p.name: p.read_bytes()
                for p in sorted((home.root / "memory").rglob("*.md"))
                if "sources" in p.parts or "topics" in p.parts
            }
        )
    assert outputs[0] == outputs[1]


# -- the workspace id -------------------------------------------------------------------------------------


def test_concurrent_first_use_creates_one_workspace_id(tmp_path: Path) -> None:
    path = tmp_path / "workspace-id"
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2 + 8)
    queue = context.Queue()
    processes = [
        context.Process(target=create_workspace_id, args=(str(path), barrier, queue)) for _ in range(2)
    ]
    for process in processes:
        process.start()
    found: list[str] = []
    lock = threading.Lock()

    def thread() -> None:
        barrier.wait(timeout=60)
        value = ensure_workspace_id(path)
        with lock:
            found.append(value)

    threads = [threading.Thread(target=thread) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    found.extend(queue.get(timeout=60) for _ in processes)
    for process in processes:
        process.join(timeout=60)
    assert len(found) == 10
    assert len(set(found)) == 1
    assert path.read_text().strip() == found[0]
    assert [p.name for p in tmp_path.iterdir()] == ["workspace-id"]  # no temp file left behind
