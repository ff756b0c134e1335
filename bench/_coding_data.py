"""`dagmem bench coding`: its data. The questions (`devsets/coding/*.json` in the checkout) and the
transcripts of each project they ask about, as sessions in the order they were held.

`ours/*` transcripts are in the checkout (`devsets/coding/ours/<name>/`); the others under the transcripts
root (`--data DIR`, else `$DAGMEM_TRANSCRIPTS`, else `<checkout>/../shared/data/transcripts`): a project
`P` is the folder `P/` there, one `<session>.jsonl` per session and its sub-agents in
`<session>/subagents/agent-*.jsonl`, as Claude Code lays them out.

The `*-unseen.json` files are read only here, by the benchmark: they are kept unseen by the people who
change memory's rules, and reported apart from the dev set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..memory.errors import InvalidInput
from ._coding_lines import parse

__all__ = [
    "DEVSETS",
    "OURS",
    "SETS",
    "Question",
    "Session",
    "first_timestamp",
    "load_questions",
    "sessions_of",
    "source_of",
    "transcripts_root",
]

DEVSETS = Path(__file__).resolve().parent.parent / "devsets" / "coding"  # the checkout is the package
OURS = ("ours/gocli", "ours/tsweb", "ours/rustlib")  # in the checkout: what `--quick` replays
SETS = ("dev", "unseen")
_FILES = ("spotter", "ccl")  # devsets/coding/<name>-<set>.json


@dataclass(frozen=True)
class Question:
    id: str
    set: str  # dev | unseen
    project: str
    kind: str
    where: str
    question: str
    answer: str
    keys: tuple[str, ...]
    evidence: tuple[tuple[str, int], ...]  # (file relative to its root, 1-based line)


@dataclass(frozen=True)
class Session:
    """One session of a project: its transcript and its sub-agents' files, and when it began."""

    id: str
    path: Path
    subagents: tuple[Path, ...]
    started: str  # the first line's timestamp ("" when none has one)


def load_questions(
    sets: Iterable[str], projects: Sequence[str] | None = None, devsets: Path = DEVSETS
) -> list[Question]:
    """The questions of `sets` (in file order), only those about `projects` when given."""
    out: list[Question] = []
    for name in sets:
        for stem in _FILES:
            path = devsets / f"{stem}-{name}.json"
            for item in json.loads(path.read_text(encoding="utf-8")):
                if projects is not None and item["project"] not in projects:
                    continue
                out.append(
                    Question(
                        id=str(item["id"]),
                        set=name,
                        project=str(item["project"]),
                        kind=str(item["kind"]),
                        where=str(item["where"]),
                        question=str(item["question"]),
                        answer=str(item.get("answer", "")),
                        keys=tuple(str(k) for k in item["keys"]),
                        evidence=tuple((str(e["file"]), int(e["line"])) for e in item.get("evidence", [])),
                    )
                )
    return out


def transcripts_root(data: Path | None, environ: dict[str, str] | None = None) -> Path:
    """Where the real transcripts are; one line naming `--data` when nowhere."""
    env = os.environ if environ is None else environ
    if data is None and env.get("DAGMEM_TRANSCRIPTS"):
        data = Path(env["DAGMEM_TRANSCRIPTS"])
    if data is None:
        beside = DEVSETS.parent.parent.parent / "shared" / "data" / "transcripts"
        if beside.is_dir():
            return beside
        raise InvalidInput(
            "dagmem bench coding needs the transcripts folder: --data DIR (or $DAGMEM_TRANSCRIPTS); "
            "--quick runs on the checkout's own transcripts alone"
        )
    if not data.is_dir():
        raise InvalidInput(f"--data {data}: not a directory of transcripts")
    return data


def source_of(file: str, root: Path | None) -> Path:
    """An evidence file's path: `ours/...` in the checkout, the others under the transcripts root."""
    if file.startswith("ours/") or root is None:
        return DEVSETS / file
    return root / file


def first_timestamp(path: Path) -> str:
    with path.open(encoding="utf-8") as f:
        for raw in f:
            line = parse(raw)
            if line is not None and isinstance(line.get("timestamp"), str):
                return str(line["timestamp"])
    return ""


def sessions_of(project: str, root: Path | None) -> list[Session]:
    """The project's sessions, oldest first (by their first timestamp, then name)."""
    folder = source_of(project, root)
    if not folder.is_dir():
        raise InvalidInput(f"no transcripts for {project} at {folder}")
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        agents = tuple(sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl")))
        out.append(Session(path.stem, path, agents, first_timestamp(path)))
    return sorted(out, key=lambda s: (s.started, s.path.name))
