"""The brief: what a project established, read from a batch's turns and tool evidence by fixed rules.

A coding agent's next session needs what this one established more than what was said: how the project
is built, tested and run (the commands that ran, their last outcome and date), the person's conventions
(their standing orders, `user` origin only), decisions and their reasons, problems and their fixes, what
did not work, the files that changed and why, what is left open, and where the session ended. Each entry
is one block of `topics/brief.md` (and its parts) citing the records it was read from; an entry of the
same key said later supersedes the older one (a command's newer run, a session's newer open threads).

The rules (deterministic, offline; the words are `memory.text`'s):
- **Commands**: shell tool evidence whose command does something to the project (tests, builds, lints,
  runs, migrations, installs, commits), by the purpose its words name (`_PURPOSES`); looking around
  (`ls`, `cat`, `grep`, `git status`, …) is no command of the project. One entry per purpose and base
  command (the program and its subcommands: `uv run pytest`, `mix test`), the last run's command line,
  outcome, counts and date.
- **Fixes and what did not work**: a command that failed and later in the batch passed is a fix (the
  error line, the files edited between, the sentence that explained it); one that failed and never
  passed did not work (its error line and the explanation), as does a sentence saying so.
- **Conventions**: the person's own sentences that set how the work is done (`is_instruction`).
- **Decisions**: sentences of the person or the assistant that state a choice (`is_decision`), and the
  person's answers when the agent asked them (an `ask` tool's `question → answer` lines).
- **Files**: each file an edit changed, with the narration that said what for.
- **Open threads**: the batch's last to-do list with what is not done (or that all of it is), and the
  sentences of its last summary that leave work for later.
- **Where it ended**: the batch's last long assistant turn after the person's last prompt (a summary).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..format import ANSWERED, BRIEF_SLUG, ArchiveRecord, ToolEvidence, parse_tool_evidence
from ..text import (
    clip,
    is_cause,
    is_decision,
    is_failure_said,
    is_instruction,
    is_narration,
    is_open_thread,
    work_sentences,
)
from ._brief_keys import SECTIONS, Section, all_done, project_steps

__all__ = ["BRIEF_SLUG", "BRIEF_TITLE", "BriefEntry", "brief_entries", "entry_key"]

BRIEF_TITLE: Final = "Project brief"

_ENTRY_CHARS: Final = 360  # of an entry's words after its label
_ENDED_CHARS: Final = 800  # of a session's last summary: what it finished, the counts, what is left
_SUMMARY_CHARS: Final = 500  # a summary is at least this long
_PER_BATCH: Final = {"convention": 8, "decision": 6, "failed": 6, "file": 12, "fix": 6}

_ERROR_LINE: Final = re.compile(
    r"\b(?:error|errors|exception|traceback|failed|failure|failures|undefined|not found|cannot|can't|"
    r"unable|denied|refused|panic|fatal|invalid|missing|no such|expected|assert)\b",
    re.IGNORECASE,
)
_TODO: Final = re.compile(r"([☐◐☑])\s*([^;]+)")


@dataclass(frozen=True)
class BriefEntry:
    """One entry: its section, its key (a newer entry of the same key supersedes an older one), its words
    (plain text, after the section's label) and the records it cites, oldest first."""

    section: Section
    key: str
    text: str
    records: tuple[ArchiveRecord, ...]

    @property
    def claim_words(self) -> str:
        limit = _ENDED_CHARS if self.section == "ended" else _ENTRY_CHARS
        return f"{SECTIONS[self.section]}: {_cut(self.text, limit)}"


def entry_key(section: Section, text: str) -> str:
    """The key of an entry: the section and what the entry is about."""
    return f"{section}:{text}"


def _cut(text: str, limit: int) -> str:
    return clip(" ".join(text.split()), limit)


def _date(record: ArchiveRecord) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(record.created_at, UTC).strftime("%Y-%m-%d")


def _words_key(text: str) -> str:
    words = re.findall(r"\w+", text.casefold())
    return hashlib.sha256(" ".join(words).encode()).hexdigest()[:12]


# --- commands ------------------------------------------------------------------------------------------


def _error_line(evidence: ToolEvidence) -> str:
    for line in evidence.excerpt.split("\n"):
        if _ERROR_LINE.search(line) and not line.startswith("[…"):
            return _cut(line.strip(), 160)
    first = next((line for line in evidence.excerpt.split("\n") if line.strip()), "")
    return _cut(first.strip(), 160)


def _outcome(evidence: ToolEvidence) -> str:
    said = "passed" if evidence.ok else "failed"
    if evidence.exit not in (None, 0):
        said += f" (exit {evidence.exit})"
    if evidence.counts:
        said += ", " + "; ".join(evidence.counts[:2])
    return said


@dataclass
class _Run:
    record: ArchiveRecord
    evidence: ToolEvidence
    base: str
    purpose: str
    step: str  # the step as run, without the looking-around around it


# --- the batch -----------------------------------------------------------------------------------------


def brief_entries(records: Sequence[ArchiveRecord]) -> list[BriefEntry]:
    """The brief's entries of one batch (its records oldest first), in section order; none for a batch in
    which no tool ran (a chat: what it said is filed on its topics, and no project is being built)."""
    tools = [(n, r, parse_tool_evidence(r.content)) for n, r in enumerate(records) if r.role == "tool"]
    evidence = [(n, r, e) for n, r, e in tools if e is not None]
    if not evidence:
        return []  # no tool ran: a conversation, not a working session (its memory is its topics)
    out: list[BriefEntry] = []
    out += _commands(records, evidence)
    out += _conventions(records)
    out += _answered(evidence)
    out += _decisions(records)
    out += _files(records, evidence)
    out += _open(records, evidence)
    out += _ended(records)
    return out


def _commands(
    records: Sequence[ArchiveRecord], evidence: list[tuple[int, ArchiveRecord, ToolEvidence]]
) -> list[BriefEntry]:
    """The steps of the shell calls that do something to the project (`project_steps`: a `cd x && MIX_ENV=
    test mix ecto.migrate 2>&1 | tail` is `MIX_ENV=test mix ecto.migrate`), the last run of each purpose
    and base. Committing and pushing are how the work was kept, not how the project is built: no entry."""
    runs: list[tuple[int, _Run]] = []
    for n, record, found in evidence:
        if found.kind != "shell":
            continue
        for purpose, base, step in project_steps(found.input):
            if purpose != "commit":
                runs.append((n, _Run(record, found, base, purpose, step)))
    out: list[BriefEntry] = []
    last: dict[tuple[str, str], _Run] = {}
    forms: dict[tuple[str, str], Counter[str]] = {}
    for _, run in runs:
        last[(run.purpose, run.base)] = run
        forms.setdefault((run.purpose, run.base), Counter())[run.step] += 1
    for (purpose, base), run in last.items():
        # The form the project runs it in (its flags), the most frequent; the last run's outcome and date.
        usual = max(forms[(purpose, base)].items(), key=lambda item: (item[1], item[0] == run.step))[0]
        text = f"{purpose}: `{usual}` {_outcome(run.evidence)} on {_date(run.record)}"
        if usual != run.step:
            text += f" (last run as `{run.step}`)"
        out.append(BriefEntry("command", entry_key("command", f"{purpose}:{base}"), text, (run.record,)))
    out += _fixes(records, runs)
    return out


def _fixes(records: Sequence[ArchiveRecord], runs: list[tuple[int, _Run]]) -> list[BriefEntry]:
    """A failed run followed by a passing one of the same base command is a fix; a failed run never
    followed by one did not work. Each with its error line, and the sentence that explained it."""
    fixes: list[BriefEntry] = []
    failed: list[BriefEntry] = []
    for i, (n, run) in enumerate(runs):
        if run.evidence.ok:
            continue
        if any(not other.evidence.ok and other.base == run.base for _, other in runs[i + 1 : i + 2]):
            continue  # failed again next: the last failure of a streak speaks for it
        later = next(
            ((m, other) for m, other in runs[i + 1 :] if other.base == run.base and other.evidence.ok), None
        )
        why = _explained(records, n, later[0] if later is not None else len(records))
        error = _error_line(run.evidence)
        if later is not None:
            m, passed = later
            edited = _edited(records, n, m)
            text = f"`{run.step}` failed: {error}"
            if edited:
                text += f"; fixed by editing {', '.join(edited[:4])}"
            if why:
                text += f" ({why})"
            text += f"; then passed on {_date(passed.record)}"
            cited = (run.record, *([] if why is None else [_why_record(records, n, m)]), passed.record)
            fixes.append(
                BriefEntry("fix", entry_key("fix", f"{run.base}:{_words_key(error)}"), text, _once(cited))
            )
        else:
            text = f"`{run.step}` failed: {error}" + (f" ({why})" if why else "")
            cited = (run.record, *([] if why is None else [_why_record(records, n, len(records))]))
            failed.append(
                BriefEntry(
                    "failed", entry_key("failed", f"{run.base}:{_words_key(error)}"), text, _once(cited)
                )
            )
    for record in records:
        if record.role != "assistant" or is_narration(record.content):
            continue
        for sentence in work_sentences(record.content)[:40]:
            if is_failure_said(sentence) and not is_cause(sentence) and len(sentence) > 30:
                failed.append(
                    BriefEntry("failed", entry_key("failed", _words_key(sentence)), sentence, (record,))
                )
                break
    return fixes[: _PER_BATCH["fix"]] + failed[: _PER_BATCH["failed"]]


def _once(records: Sequence[ArchiveRecord | None]) -> tuple[ArchiveRecord, ...]:
    seen: dict[str, ArchiveRecord] = {}
    for record in records:
        if record is not None:
            seen.setdefault(record.source_id, record)
    return tuple(sorted(seen.values(), key=lambda r: (r.created_at, r.seq)))


def _explaining(records: Sequence[ArchiveRecord], start: int, end: int) -> tuple[ArchiveRecord, str] | None:
    for record in records[start + 1 : end]:
        if record.role != "assistant":
            continue
        for sentence in work_sentences(record.content)[:12]:
            if is_cause(sentence) and len(sentence) > 20:
                return record, _cut(sentence, 200)
    return None


def _explained(records: Sequence[ArchiveRecord], start: int, end: int) -> str | None:
    found = _explaining(records, start, end)
    return None if found is None else found[1]


def _why_record(records: Sequence[ArchiveRecord], start: int, end: int) -> ArchiveRecord | None:
    found = _explaining(records, start, end)
    return None if found is None else found[0]


def _edited(records: Sequence[ArchiveRecord], start: int, end: int) -> list[str]:
    paths: list[str] = []
    for record in records[start + 1 : end]:
        found = parse_tool_evidence(record.content) if record.role == "tool" else None
        if found is not None and found.kind == "edit" and found.ok and found.input not in paths:
            paths.append(found.input)
    return [f"`{p}`" for p in paths]


# --- what the person and the assistant said ------------------------------------------------------------


def _own(record: ArchiveRecord) -> bool:
    return record.role == "user" and record.effective_origin == "user"


def _conventions(records: Sequence[ArchiveRecord]) -> list[BriefEntry]:
    out: list[BriefEntry] = []
    for record in records:
        if not _own(record):
            continue
        for sentence in work_sentences(record.content)[:60]:
            if is_instruction(sentence) and len(sentence) >= 12:
                out.append(
                    BriefEntry(
                        "convention",
                        entry_key("convention", _words_key(sentence)),
                        f"“{sentence}”",
                        (record,),
                    )
                )
    return _distinct(out)[: _PER_BATCH["convention"]]


def _answered(evidence: list[tuple[int, ArchiveRecord, ToolEvidence]]) -> list[BriefEntry]:
    """What the person chose when the agent asked (an `ask` tool's result: `question → answer` lines): a
    decision in the person's words, quoted from the tool's record that relays them."""
    out: list[BriefEntry] = []
    for _, record, found in evidence:
        if found.kind != "ask" or not found.ok:
            continue
        for line in found.excerpt.split("\n"):
            question, arrow, answer = line.rpartition(f" {ANSWERED} ")
            if arrow and question.strip() and answer.strip():
                text = f"asked “{_cut(question.strip(), 200)}”, the person answered “{answer.strip()}”"
                out.append(
                    BriefEntry("decision", entry_key("decision", _words_key(question)), text, (record,))
                )
    return _distinct(out)[-_PER_BATCH["decision"] :]


def _decisions(records: Sequence[ArchiveRecord]) -> list[BriefEntry]:
    out: list[BriefEntry] = []
    for record in records:
        if record.role not in ("user", "assistant") or (record.role == "user" and not _own(record)):
            continue
        if record.role == "assistant" and is_narration(record.content):
            continue
        for sentence in work_sentences(record.content)[:60]:
            if is_decision(sentence) and len(sentence) >= 30:
                out.append(
                    BriefEntry("decision", entry_key("decision", _words_key(sentence)), sentence, (record,))
                )
    return _distinct(out)[-_PER_BATCH["decision"] :]


def _distinct(entries: list[BriefEntry]) -> list[BriefEntry]:
    seen: set[str] = set()
    out = []
    for entry in entries:
        if entry.key not in seen:
            seen.add(entry.key)
            out.append(entry)
    return out


def _files(
    records: Sequence[ArchiveRecord], evidence: list[tuple[int, ArchiveRecord, ToolEvidence]]
) -> list[BriefEntry]:
    edits: dict[str, list[tuple[int, ArchiveRecord]]] = {}
    for n, record, found in evidence:
        if found.kind == "edit" and found.ok and found.input:
            edits.setdefault(found.input, []).append((n, record))
    out: list[BriefEntry] = []
    for path, where in edits.items():
        first = where[0][0]
        said = _said_before(records, first)
        times = len(where)
        text = f"`{path}` edited" + (f" {times} times" if times > 1 else "") + f" on {_date(where[-1][1])}"
        cited = [r for _, r in where[-3:]]
        if said is not None:
            text += f": {said[1]}"
            cited.append(said[0])
        out.append(BriefEntry("file", entry_key("file", path), text, _once(cited)))
    return out[-_PER_BATCH["file"] :]


def _said_before(records: Sequence[ArchiveRecord], at: int) -> tuple[ArchiveRecord, str] | None:
    """The assistant's words just before record `at` (what it said it was about to do)."""
    for record in reversed(records[max(0, at - 3) : at]):
        if record.role == "assistant":
            said = work_sentences(record.content)
            if said:
                return record, _cut(said[-1].rstrip(":"), 160)
    return None


def _open(
    records: Sequence[ArchiveRecord], evidence: list[tuple[int, ArchiveRecord, ToolEvidence]]
) -> list[BriefEntry]:
    todo = next((record_found for record_found in reversed(evidence) if record_found[2].kind == "todo"), None)
    if not records:
        return []
    session = records[-1].session_id
    out: list[BriefEntry] = []
    if todo is not None:
        _, record, found = todo
        items = _TODO.findall(found.input)
        left = [text.strip() for mark, text in items if mark != "☑"]
        if items:
            text = "; ".join(f"☐ {t}" for t in left) if left else all_done(len(items))
            out.append(BriefEntry("open", entry_key("open", f"todo:{session}"), text, (record,)))
    last = _last_summary(records)
    if last is not None:
        threads = [s for s in work_sentences(last.content) if is_open_thread(s) and not s.endswith(":")]
        if threads:
            out.append(
                BriefEntry("open", entry_key("open", f"said:{session}"), " ".join(threads[:3]), (last,))
            )
    return out


def _last_summary(records: Sequence[ArchiveRecord]) -> ArchiveRecord | None:
    """The batch's last long assistant turn: what the agent said the work came to. None for a sub-agent's
    batch (its prompt is the agent's: a user turn of `assistant` origin), whose report is its parent's
    material, not where the session ended."""
    if any(r.role == "user" and r.effective_origin == "assistant" for r in records):
        return None
    for record in reversed(records):
        if (
            record.role == "assistant"
            and len(record.content) >= _SUMMARY_CHARS
            and not is_narration(record.content)
        ):
            return record
    return None


def _ended(records: Sequence[ArchiveRecord]) -> list[BriefEntry]:
    last = _last_summary(records)
    if last is None:
        return []
    head = " ".join(work_sentences(last.content)[:24])
    return [BriefEntry("ended", entry_key("ended", last.session_id), head, (last,))]
