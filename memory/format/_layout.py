"""The on-disk layout of a home, pure: where each file of the format lives (DESIGN §2).

    <home>/sessions/<sid>/...            the session store
    <home>/memory/                       the workspace root
        sources/<sid>.md                 the evidence archive of one session
        topics/<slug>.md                 topic files; topics/core.md is the core block's master
        topics/index.md                  the topic index, derived by every install (no topic file)
        core.md                          the rendered core block
        .dagmem/                         the writer's state
            txlog.jsonl                  the transaction log (the commit point)
            workspace-id                 the workspace's identity
            lock, runtime.lock           the workspace lock and the serving lock
            status.json                  the writer's status (reporting only)
            index.sqlite3                the writer's index (a cache of the files)
            shapes.sqlite3               each session's DAG shape for currency (a cache of the sessions)
            stage/<tx>/<relpath>         a transaction's staged files
            recall/                      the recall index's snapshots (a cache)
            runtime.json                 a position-cursor system's cursors (only in a home being adopted)
            forgotten.json               what `dagmem forget` removed: source ids and hashes, never text

Every layer builds its paths here, so the layout is spelled once. Nothing here touches the disk: a
`WorkspacePaths` is just names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "BRIEF_SLUG",
    "BRIEF_TOPIC",
    "CORE_FILE",
    "CORE_MASTER",
    "HELD_TOPIC",
    "REJECTED_TOPIC",
    "SOURCES_DIR",
    "TOPICS_DIR",
    "HomePaths",
    "WorkspacePaths",
    "held_file_of",
    "is_brief_path",
    "is_held_topic",
    "page_of_held",
]

SESSIONS_DIR: Final = "sessions"
MEMORY_DIR: Final = "memory"
SOURCES_DIR: Final = "sources"
TOPICS_DIR: Final = "topics"
CORE_FILE: Final = "core.md"  # relative to the workspace root
CORE_MASTER: Final = f"{TOPICS_DIR}/core.md"  # relative to the workspace root
# Candidate core facts held for review (their evidence was not typed by the person), and those the person
# rejected: topic files like any other (so every record stays cited), that recall leaves out by default.
HELD_TOPIC: Final = f"{TOPICS_DIR}/held.md"
REJECTED_TOPIC: Final = f"{TOPICS_DIR}/rejected.md"
# The project's brief (what a project established: commands, conventions, decisions, fixes, files, open
# threads), written by its own rules only, continued in `brief--2.md`, ... as any page rolls over.
BRIEF_SLUG: Final = "brief"
BRIEF_TOPIC: Final = f"{TOPICS_DIR}/{BRIEF_SLUG}.md"


def is_brief_path(relpath: str) -> bool:
    """`topics/brief.md` or one of its parts (`topics/brief--2.md`, ...)."""
    name = relpath.removeprefix(f"{TOPICS_DIR}/")
    return name == f"{BRIEF_SLUG}.md" or (name.startswith(f"{BRIEF_SLUG}--") and name.endswith(".md"))


# A page's blocks held for review (an instruction in text the person did not type) wait in
# `topics/held--<slug>.md`, so approving one knows its page: no subject's slug holds "--" (a part is
# `<slug>--<n>`, and "held" is reserved), so no page is ever named so.
_HELD_PAGE: Final = f"{TOPICS_DIR}/held--"


def is_held_topic(relpath: str) -> bool:
    """The hold queue's files: `topics/held.md` (candidate core facts) and `topics/held--<slug>.md`."""
    return relpath == HELD_TOPIC or relpath.startswith(_HELD_PAGE)


def held_file_of(page: str) -> str:
    """Where a block of the topic file `page` waits while it is held."""
    return HELD_TOPIC if page == CORE_MASTER else _HELD_PAGE + page.removeprefix(f"{TOPICS_DIR}/")


def page_of_held(held: str) -> str:
    """The topic file a block of the hold queue's file `held` goes to when it is approved."""
    return CORE_MASTER if held == HELD_TOPIC else f"{TOPICS_DIR}/" + held.removeprefix(_HELD_PAGE)


STATE_DIR: Final = ".dagmem"
TXLOG_FILE: Final = "txlog.jsonl"
WORKSPACE_ID_FILE: Final = "workspace-id"
LOCK_FILE: Final = "lock"
SERVING_LOCK_FILE: Final = "runtime.lock"
STATUS_FILE: Final = "status.json"
INDEX_FILE: Final = "index.sqlite3"
SHAPES_FILE: Final = "shapes.sqlite3"
SLOTS_FILE: Final = "slots.sqlite3"  # the slot index (memory/write/_slot_index.py): a derived cache
STAGE_DIR: Final = "stage"
RECALL_DIR: Final = "recall"
RUNTIME_FILE: Final = "runtime.json"
FORGOTTEN_FILE: Final = "forgotten.json"


@dataclass(frozen=True)
class WorkspacePaths:
    """Every path of the workspace rooted at `root` (a home's `memory/`)."""

    root: Path

    @classmethod
    def of(cls, root: Path | str) -> WorkspacePaths:
        return cls(Path(root))

    @property
    def sources(self) -> Path:
        return self.root / SOURCES_DIR

    def source(self, session_id: str) -> Path:
        """The evidence archive of session `session_id`."""
        return self.sources / f"{session_id}.md"

    @staticmethod
    def source_relpath(session_id: str) -> str:
        return f"{SOURCES_DIR}/{session_id}.md"

    @property
    def topics(self) -> Path:
        return self.root / TOPICS_DIR

    @property
    def core_master(self) -> Path:
        return self.root / CORE_MASTER

    @property
    def core(self) -> Path:
        return self.root / CORE_FILE

    @property
    def state(self) -> Path:
        return self.root / STATE_DIR

    @property
    def txlog(self) -> Path:
        return self.state / TXLOG_FILE

    @property
    def workspace_id(self) -> Path:
        return self.state / WORKSPACE_ID_FILE

    @property
    def lock(self) -> Path:
        return self.state / LOCK_FILE

    @property
    def serving_lock(self) -> Path:
        return self.state / SERVING_LOCK_FILE

    @property
    def status(self) -> Path:
        return self.state / STATUS_FILE

    @property
    def index(self) -> Path:
        return self.state / INDEX_FILE

    @property
    def shapes(self) -> Path:
        return self.state / SHAPES_FILE

    @property
    def slots(self) -> Path:
        return self.state / SLOTS_FILE

    @property
    def stage_root(self) -> Path:
        return self.state / STAGE_DIR

    def stage(self, tx: str) -> Path:
        """The stage of transaction `tx`."""
        return self.stage_root / tx

    @property
    def recall(self) -> Path:
        return self.state / RECALL_DIR

    @property
    def runtime(self) -> Path:
        """A position-cursor system's cursors, present only in a home being adopted (`dagmem migrate`)."""
        return self.state / RUNTIME_FILE

    @property
    def forgotten(self) -> Path:
        """`dagmem forget`'s journal and record: the source ids it removed and hashes of their texts."""
        return self.state / FORGOTTEN_FILE

    def directories(self) -> tuple[Path, ...]:
        """The workspace's directories, outermost first."""
        return (self.root, self.sources, self.topics, self.state, self.stage_root)

    def state_files(self) -> tuple[Path, ...]:
        """The state files that are regular files when present (never a symlink or a FIFO)."""
        return (
            self.txlog,
            self.lock,
            self.serving_lock,
            self.workspace_id,
            self.index,
            self.shapes,
            self.forgotten,
        )


@dataclass(frozen=True)
class HomePaths:
    """A home: its session store `sessions/` and its workspace `memory/`."""

    home: Path

    @classmethod
    def of(cls, home: Path | str) -> HomePaths:
        return cls(Path(home))

    @property
    def sessions(self) -> Path:
        return self.home / SESSIONS_DIR

    def session(self, session_id: str) -> Path:
        return self.sessions / session_id

    @property
    def memory(self) -> Path:
        return self.home / MEMORY_DIR

    @property
    def workspace(self) -> WorkspacePaths:
        return WorkspacePaths(self.memory)
