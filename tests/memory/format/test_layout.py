"""The layout of a home is spelled once (`WorkspacePaths` / `HomePaths`), and the stage rule once (`Stages`)."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import pytest

import dagmem
from dagmem.memory import faults
from dagmem.memory.durable import Installer, Stages, TxLog
from dagmem.memory.format import CORE_FILE, CORE_MASTER, HomePaths, WorkspacePaths
from dagmem.memory.workspace import Workspace
from dagmem.tests._source import package_sources

PACKAGE = Path(dagmem.__file__).resolve().parent
LAYOUT = PACKAGE / "memory" / "format" / "_layout.py"
# The layout's own file names: spelled nowhere in the package but the layout module.
NAMES = (
    "txlog.jsonl",
    "workspace-id",
    "status.json",
    "runtime.json",
    "runtime.lock",
    "index.sqlite3",
    "shapes.sqlite3",
)


def test_workspace_paths_are_the_documented_layout(tmp_path: Path) -> None:
    root = tmp_path / "home" / "memory"
    paths = WorkspacePaths(root)
    state = root / ".dagmem"
    assert paths.root == root
    assert paths.sources == root / "sources"
    assert paths.source("s1") == root / "sources" / "s1.md"
    assert WorkspacePaths.source_relpath("s1") == "sources/s1.md"
    assert paths.topics == root / "topics"
    assert paths.core_master == root / "topics" / "core.md"
    assert paths.core == root / "core.md"
    assert (CORE_FILE, CORE_MASTER) == ("core.md", "topics/core.md")
    assert paths.state == state
    assert paths.txlog == state / "txlog.jsonl"
    assert paths.workspace_id == state / "workspace-id"
    assert paths.lock == state / "lock"
    assert paths.serving_lock == state / "runtime.lock"
    assert paths.status == state / "status.json"
    assert paths.index == state / "index.sqlite3"
    assert paths.shapes == state / "shapes.sqlite3"
    assert paths.runtime == state / "runtime.json"
    assert paths.stage_root == state / "stage"
    assert paths.stage("00000001-abcdef12") == state / "stage" / "00000001-abcdef12"
    assert paths.recall == state / "recall"
    assert WorkspacePaths.of(str(root)) == paths
    with pytest.raises(AttributeError):
        paths.root = tmp_path  # type: ignore[misc]  # frozen: a layout is a value


def test_home_paths(tmp_path: Path) -> None:
    home = HomePaths(tmp_path)
    assert home.sessions == tmp_path / "sessions"
    assert home.session("s1") == tmp_path / "sessions" / "s1"
    assert home.memory == tmp_path / "memory"
    assert home.workspace == WorkspacePaths(tmp_path / "memory")


def test_a_workspace_writes_exactly_the_layout(tmp_path: Path) -> None:
    """The on-disk format is unchanged: a new workspace creates the files the layout names."""
    paths = WorkspacePaths(tmp_path / "memory")
    with Workspace(paths.root, fsync=False):
        pass
    for directory in (paths.sources, paths.topics, paths.state):
        assert directory.is_dir()
    for path in (paths.workspace_id, paths.index, paths.lock):
        assert path.is_file(), path


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant of a module but its docstrings and prose (help and error messages, which
    may name a file to the user): a constant with no whitespace is a name or a piece of a path."""
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and not any(c.isspace() for c in node.value)
    ]


def test_the_layouts_file_names_are_spelled_only_in_the_layout() -> None:
    offenders: list[str] = []
    for path in package_sources():
        relative = path.relative_to(PACKAGE)
        if path == LAYOUT:
            continue
        for line, value in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.extend(f"{relative}:{line}: {name}" for name in NAMES if name in value)
    assert offenders == [], "\n".join(offenders)
    # The check sees what it looks for: the layout module itself spells every name.
    spelled = " ".join(value for _line, value in _strings(ast.parse(LAYOUT.read_text(encoding="utf-8"))))
    assert all(name in spelled for name in NAMES)


def test_a_committed_stage_is_read_only_with_its_committed_bytes(tmp_path: Path) -> None:
    stages = Stages(WorkspacePaths(tmp_path).stage_root)
    data = b"# T\n"
    digest = hashlib.sha256(data).hexdigest()
    assert stages.read_committed("tx1", "topics/t.md", digest) is None  # no stage
    assert not stages.pending("tx1")
    stages.file("tx1", "topics/t.md").parent.mkdir(parents=True)
    stages.file("tx1", "topics/t.md").write_bytes(data)
    assert stages.pending("tx1")
    assert stages.read_committed("tx1", "topics/t.md", digest) == data
    assert stages.read_committed("tx1", "topics/t.md", hashlib.sha256(b"other").hexdigest()) is None
    assert stages.read_committed("tx1", "topics/t.md", None) is None  # committed as deleted
    (tmp_path / "elsewhere.md").write_bytes(data)
    link = stages.file("tx1", "topics/link.md")
    link.symlink_to(tmp_path / "elsewhere.md")
    assert stages.read_committed("tx1", "topics/link.md", digest) is None  # never through a link


def test_the_installer_stages_where_the_reader_reads(tmp_path: Path) -> None:
    """A writer dead after its commit point leaves a stage the reader's rule reads (and recovery installs)."""
    paths = WorkspacePaths(tmp_path)
    paths.state.mkdir(parents=True)
    installer = Installer(paths.root, paths.stage_root, TxLog(paths.txlog, fsync=False), fsync=False)

    def hook(site: str) -> None:
        if site == "install:rename":
            raise faults.InjectedCrash(site)

    data = b"# T\n"
    with faults.armed(hook), pytest.raises(faults.InjectedCrash):
        installer.commit("s1", ["s1/u0"], {"topics/t.md": data}, at=1.0)
    record = installer.txlog.last()
    assert record is not None
    assert not (paths.root / "topics" / "t.md").exists()
    assert (
        Stages(paths.stage_root).read_committed(record.tx, "topics/t.md", record.files["topics/t.md"]) == data
    )
    assert installer.recover().rolled_forward == [record.tx]
    assert (paths.root / "topics" / "t.md").read_bytes() == data
    assert not Stages(paths.stage_root).pending(record.tx)
