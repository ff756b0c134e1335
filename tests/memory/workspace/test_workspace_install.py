"""`Workspace.install` is the one install: it commits the transaction, records it in the index, and only
then calls the `on_install` hook the workspace was opened with; recall's writer is an object its owner
holds (no module-level state), and every opener for writing hands one to the workspace."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from dagmem import FileSessionStore
from dagmem.memory.format import ArchiveRecord
from dagmem.memory.recall import RecallIndex, RecallUpdater, recall_root
from dagmem.memory.recall import _update as update
from dagmem.memory.workspace import TxInstalled, Workspace
from dagmem.memory.write import reorganise
from dagmem.memory.writing import write_home
from dagmem.tests.memory.write.test_reorganise import duplicated_home


def test_install_commits_and_indexes_before_it_calls_the_hook(tmp_path: Path) -> None:
    seen: list[tuple[TxInstalled, dict[str, str], bytes | None]] = []
    memory = tmp_path / "memory"

    def hook(installed: TxInstalled) -> None:
        # At the hook, the transaction is in the txlog, in place, and the index knows what it consumed.
        seen.append((installed, workspace.consumed(["s/n1"]), workspace.read_bytes("topics/a.md")))

    record = ArchiveRecord("s", "n1", "user", 0, 1.0, "hello")
    with Workspace(memory, fsync=False, on_install=hook) as workspace:
        workspace.archive("s", [record])
        with workspace.lock():
            tx = workspace.install("s", ["s/n1"], {"topics/a.md": b"# A\n"}, records=[record])
    [(installed, consumed, data)] = seen
    assert installed.record == tx
    assert installed.root == memory
    # Read before the commit when not given: every file it touched, the topic index it rewrote too.
    assert installed.before == {"topics/a.md": None, "topics/index.md": None}
    assert installed.records == [record]
    assert consumed == {"s/n1": tx.tx}
    assert data == b"# A\n"
    line = (memory / ".dagmem" / "txlog.jsonl").read_bytes()[installed.start : installed.end]
    assert json.loads(line)["tx"] == tx.tx


def test_a_workspace_without_a_hook_installs_all_the_same(tmp_path: Path) -> None:
    with Workspace(tmp_path / "memory", fsync=False) as workspace, workspace.lock():
        tx = workspace.install("", [], {"topics/a.md": b"# A\n"})
        assert workspace.txlog.last() == tx
    assert not recall_root(tmp_path / "memory").exists()  # nothing above the workspace ran


def test_recall_keeps_no_module_level_mutable_state() -> None:
    tree = ast.parse(Path(update.__file__).read_text(encoding="utf-8"))
    mutable = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
    found = [
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and "__all__" not in ast.unparse(node)
        and (
            isinstance(node.value, mutable)
            or (
                isinstance(node.value, ast.Call)
                and ast.unparse(node.value.func) in {"dict", "threading.Lock"}
            )
        )
    ]
    assert found == []


def test_each_updater_holds_only_what_it_wrote(tmp_path: Path) -> None:
    homes = [tmp_path / "a", tmp_path / "b"]
    updaters = [RecallUpdater(), RecallUpdater()]
    for home, updater, text in zip(homes, updaters, ["the red door", "the blue boat"], strict=True):
        FileSessionStore(home, fsync=False).append("s", "user", f"remember {text} by the harbour")
        write_home(home, force=True, recall=updater)
    for home, updater in zip(homes, updaters, strict=True):
        assert updater.snapshot is not None
        assert updater.snapshot.is_relative_to(home)
    held = updaters[0].held
    assert held is not None
    assert [e.text for _r, e in held.entries()] == [
        e.text for _r, e in RecallIndex.open(homes[0] / "memory").entries()
    ]
    # Another pass without it starts from the files, as a new process does; this one's hold is untouched.
    FileSessionStore(homes[0], fsync=False).append("s", "user", "and the green gate")
    write_home(homes[0], force=True)
    assert updaters[0].held is held


def test_a_reorganisation_indexes_its_install_for_recall(tmp_path: Path) -> None:
    duplicated_home(tmp_path)
    updater = RecallUpdater()
    with Workspace(tmp_path / "memory", fsync=False, on_install=updater) as workspace:
        result = reorganise(workspace)
    assert result.tx is not None
    assert updater.held is not None
    assert updater.held.tx == result.tx  # the hook ran for the reorganisation's transaction
    index = RecallIndex.open(tmp_path / "memory")
    assert index.tx == result.tx
    assert index.replay_record() is None  # its line is in the delta: nothing read from the files
