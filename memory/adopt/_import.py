"""`dagmem import FORMAT PATH...` (DESIGN §10): the formats, the files each path stands for, and the
`Importer` that reads them (incrementally) into nodes to append; `import_into_store` appends them through a
`SessionStore` (`StoreSink`, a run of one session's nodes at a time; the follow loop, `follow`, through a
running runtime instead)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..checkout import Whereabouts
from ..errors import InvalidInput
from ..format import check_id
from ..store import SessionStore
from ._claude_code import ClaudeCodeParser, claude_code_files
from ._codex import CodexParser, codex_session_id
from ._entries import BadLine, Entry, Problem, shown_path, to_id
from ._mapper import Planned, SessionMapper
from ._openai import OpenAIParser
from ._pi import PiParser, pi_session_id
from ._readers import ArrayReader, JsonlReader, Reader
from ._sink import ImportReport, SourceClock, StoreSink

__all__ = [
    "FORMATS",
    "Format",
    "ImportReport",
    "Importer",
    "SourceClock",
    "StoreSink",
    "import_into_store",
]


class FileParser(Protocol):
    session: str | None

    def parse(self, value: Any, line: int) -> list[Entry]: ...


@dataclass(frozen=True)
class Format:
    name: str
    files: Callable[[Path], list[Path]]
    reader: Callable[[Path], Reader]
    parser: Callable[[], FileParser]
    default_session: Callable[[Path], str]


def _jsonl_files(path: Path) -> list[Path]:
    return sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]


def _claude_session(path: Path) -> str:
    return path.parent.parent.name if path.parent.name == "subagents" else path.stem


FORMATS: dict[str, Format] = {
    "claude-code": Format("claude-code", claude_code_files, JsonlReader, ClaudeCodeParser, _claude_session),
    "pi": Format("pi", _jsonl_files, JsonlReader, PiParser, pi_session_id),
    "codex": Format("codex", _jsonl_files, JsonlReader, CodexParser, codex_session_id),
    "openai": Format(
        "openai",
        lambda p: sorted(p.rglob("*.json")) if p.is_dir() else [p],
        ArrayReader,
        OpenAIParser,
        lambda p: p.stem,
    ),
}


@dataclass
class _Source:
    path: Path
    reader: Reader
    parser: FileParser
    default_session: str
    mtime: float
    restarts: int = 0
    lines: int = 0  # lines (or messages) read
    values: int = 0  # of them, those that are JSON
    turns: int = 0  # entries the parser found a turn in: zero of many lines means another format
    name: str = ""  # the path as shown (`shown_path`), made once: every node's metadata names it

    def __post_init__(self) -> None:
        self.name = shown_path(self.path)


class Importer:
    """Reads the files of `paths` in one format; `poll` returns the nodes of what is new since the last
    poll. Files that appear under a directory (or as a new sub-agent file) are picked up by later polls."""

    def __init__(self, fmt: str, paths: Sequence[Path], *, session: str | None = None) -> None:
        if fmt not in FORMATS:
            raise InvalidInput(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
        self.format = FORMATS[fmt]
        self.session = None if session is None else check_id(session, "--session")
        self.paths = list(paths)
        for path in self.paths:
            if not path.exists():
                raise InvalidInput(f"{path}: no such file or directory")
        self.sources: dict[Path, _Source] = {}
        self.mappers: dict[str, SessionMapper] = {}
        self.where = Whereabouts()  # each directory's worktree looked up once per import
        self.spawns: dict[str, str] = {}  # sub-agent id -> "<sid>/<node>" of the line that spawned it
        self.problems: list[Problem] = []
        self.discover()

    def discover(self) -> None:
        for path in self.paths:
            for file in self.format.files(path):
                if file in self.sources or not file.is_file():
                    continue
                self.sources[file] = _Source(
                    file,
                    self.format.reader(file),
                    self.format.parser(),
                    self.format.default_session(file),
                    file.stat().st_mtime,
                )

    def poll(self, *, final: bool) -> list[Planned]:
        return [planned for nodes in self.poll_files(final=final) for planned in nodes]

    def poll_files(self, *, final: bool) -> Iterator[list[Planned]]:
        """`poll` a file at a time: each file's new nodes once it is read (an import appends them before
        it reads the next file, so a year of sessions is never in memory at once)."""
        for source in list(self.sources.values()):
            out: list[Planned] = []
            items = source.reader.read(final=final)
            if source.reader.restarts != source.restarts:
                # Read again from the start: a fresh parser derives the same keys (the mappers skip
                # those they have), where one that carried on would chain them after the old end.
                source.restarts = source.reader.restarts
                source.parser = self.format.parser()
            for item in items:
                source.lines += 1
                if isinstance(item, Problem):
                    self.problems.append(Problem(source.name, item.line, item.reason))
                    continue
                source.values += 1
                entries = self._parse(source, item.value, item.line)
                for entry in entries:
                    source.turns += entry.turn is not None
                    planned = self._map(source, entry)
                    if isinstance(planned, Problem):
                        self.problems.append(planned)
                    elif planned is not None:
                        out.append(planned)
            yield out

    def _parse(self, source: _Source, value: Any, line: int) -> list[Entry]:
        """The entries of one line; a line of a shape its parser did not foresee (a field of another
        type, nesting too deep to walk) is reported with its place and skipped, never ends the import."""
        try:
            return source.parser.parse(value, line)
        except BadLine as bad:
            self.problems.append(Problem(source.name, line, f"{bad}; skipped"))
            return bad.entries
        except RecursionError:
            self.problems.append(Problem(source.name, line, "nested too deep; skipped"))
        except Exception as exc:  # untrusted JSON: any surprise is this line's, not the import's
            reason = f"an unexpected shape ({type(exc).__name__}: {exc}); skipped"
            self.problems.append(Problem(source.name, line, reason))
        return []

    def format_problems(self) -> list[Problem]:
        """One per file with JSON lines none of which is a turn of this format (a file of another)."""
        reason = f"no line of it looked like the {self.format.name} format; is it another?"
        return [Problem(name, 0, reason) for name in self.unrecognised(parsed=True)]

    def unrecognised(self, *, parsed: bool = False) -> list[str]:
        """The files read with lines in them none of which is a turn of this format, nor a line its parser
        knows as the format's (`known`, where a format has lines that are no turns: Claude Code's
        summaries); `parsed`: only those with JSON lines, the others' lines being reported one by one."""
        return [
            s.name
            for s in self.sources.values()
            if s.lines and not s.turns and not getattr(s.parser, "known", 0) and (s.values or not parsed)
        ]

    def _map(self, source: _Source, entry: Entry) -> Planned | Problem | None:
        sid = self.session or to_id(entry.session or source.parser.session or source.default_session)
        mapper = self.mappers.get(sid)
        if mapper is None:
            mapper = self.mappers[sid] = SessionMapper(sid, self.format.name, self.where)
        if entry.spawns is not None and entry.turn is not None:
            self.spawns.setdefault(entry.spawns, f"{sid}/{to_id(entry.key)}")
        agent = entry.agent
        if agent is not None and sid != to_id(source.default_session):
            # A sub-agent's transcript that is a session of its own: its main line, spawned from the
            # line that started it (when that line was read already: the main transcript comes first).
            entry = dataclasses.replace(entry, moves_head=True)
            parent = self.spawns.get(agent)
            if mapper.spawned_from is None and parent is not None and not parent.startswith(f"{sid}/"):
                mapper.spawned_from = parent
        return mapper.map(entry, source.name, source.mtime)

    def heads(self) -> dict[str, str]:
        return {sid: m.head for sid, m in self.mappers.items() if m.head is not None}


def import_into_store(
    importer: Importer,
    store: SessionStore,
    clock: SourceClock,
    *,
    on_file: Callable[[], None] | None = None,
    flush_every: int = 1000,
) -> ImportReport:
    """Read every file to its end and append what the sessions do not have yet, a file at a time (each
    file's nodes appended before the next is read; `on_file` after each); heads follow the source.
    Durable together every `flush_every` files written and at the end (`SessionStore.bulk`)."""
    report = ImportReport(files=len(importer.sources))
    sink = StoreSink(store, clock, report)
    # No fsync per node, and meta.json once per flush: the transcript stays where it is and a rerun adds
    # only what is missing, so a crash costs a rerun; the store flushes every N files and at the end.
    with store.bulk(flush_every=flush_every):
        for nodes in importer.poll_files(final=True):
            for run in _session_runs(nodes):
                sink.append_run(run)
            if on_file is not None:
                on_file()
        for sid, count in report.sessions.items():
            if count.present and not count.added and sink.known(sid) is not None:
                store.catch_up(sid)  # a rerun after a crash before its meta.json was written: finish it
        for sid, head in importer.heads().items():
            target = sink.head_to_set(sid, head)
            if target is not None:
                store.set_head(sid, target)
            report.count(sid).head = sink.head(sid)
    for sid, mapper in importer.mappers.items():
        report.count(sid).orphans = mapper.orphans
    report.problems[:0] = importer.problems
    report.problems.extend(importer.format_problems())
    return report


def _session_runs(nodes: list[Planned]) -> Iterator[list[Planned]]:
    """The nodes in runs of one session each, in order (a file's nodes are mostly one run)."""
    start = 0
    for i in range(1, len(nodes) + 1):
        if i == len(nodes) or nodes[i].session != nodes[start].session:
            yield nodes[start:i]
            start = i
