"""What a hook injects: the core block (and the topic index) when a session starts, and a
`<memory-context>` block for each prompt, branch-aware and within a token budget. Read-only: no lock, and
a home with no memory yet gives nothing (never creates one). The read side loads only here, so a hook
that only queues a sync never imports it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..memory.durable import read_below
from ..memory.format import CORE_FILE, CORE_MASTER, TOPIC_INDEX, HomePaths, count_tokens
from ..memory.recall import QUOTED, render_context, render_sections

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..memory.checkout import Checkout, GitReader
    from ..memory.currency import SessionShape
    from ..memory.recall import Found, Line
    from ..memory.write import BriefLine

__all__ = ["DEFAULT_BUDGET", "TOPIC_INDEX", "prompt_context", "start_context"]

DEFAULT_BUDGET = 3000  # tokens (cl100k_base) of one injected block: the 2,000-token core and a few hits
# Characters of one injected block, at most, whatever its budget: Claude Code keeps a hook's output in
# the model's context only up to 10,000 characters (longer, the model gets a 2,000-character preview and
# a file's path instead), so a block stays under it with room for the host's own wrapping.
HOST_CHARS = 9_500
# Characters of a prompt's recalled hits, at most (its core, when given, comes on top): each prompt's block
# stays in the transcript, so what recall adds is kept to the few passages that answer.
PROMPT_CHARS = 3000
# Characters of passages shared out over the hits, where the query's words are (`find_hits`'s
# `spread_chars`): with each hit's date, labels and evidence, about `PROMPT_CHARS` in all.
PROMPT_PASSAGES = 2000
_QUOTE_OPEN, _QUOTE_CLOSE = f"<{QUOTED} ", f"</{QUOTED}>"  # a quotation's own lines, in a start's block


def _read(memory: Path, name: str) -> str:
    data = read_below(memory, name)  # never through a symlink
    return "" if data is None else data.decode("utf-8", "replace")


def start_context(
    home: Path,
    budget: int = DEFAULT_BUDGET,
    *,
    session: str | None = None,
    cwd: str | None = None,
    code_check: bool = True,
) -> str | None:
    """What a session starts with, as one block within `budget` tokens (and `HOST_CHARS`): the core facts, the project's
    brief (its conventions, open threads, where the last session ended, commands, fixes, what did not
    work, decisions, files; newest first) and the topics (newest first), as plain text. With `session`
    (a start after that session's compaction), what the brief holds of that session comes first: what
    the compaction took from the transcript. With `cwd` in a git worktree, an entry said on a git branch
    not merged into its HEAD is labelled with its branch and comes after the reader's own, and with
    `code_check` each `File` entry is checked against the worktree: one whose file is gone is left out,
    one whose file no longer holds what the edit wrote is labelled. None when memory holds nothing."""
    memory = HomePaths(home).memory
    if not memory.is_dir():
        return None
    core = _read(memory, CORE_FILE)
    sid = _session_id(session)
    brief = _brief_sections(home, sid, _checkout_of(cwd), code=code_check)
    mine, topics = _topic_lines(home, _read(memory, TOPIC_INDEX), sid)
    # After a compaction: what the brief and the topics hold of this session first (what it took).
    sections = [*brief[:1], (_THIS_SESSION_TOPICS, mine), *brief[1:], ("Topics", topics)]
    block = render_sections(sections, core)
    if block.count("\n") < 2:  # nothing between the tags
        return None
    return _within(block, budget)


# The brief's sections in the order a session's start gives them (what the budget cuts comes last).
_SECTIONS = (
    ("Convention", "The person's conventions"),
    ("Open", "Open threads"),
    ("Where it ended", "Where the last sessions ended"),
    ("Command", "Commands (build, test, run)"),
    ("Fix", "Problems and their fixes"),
    ("Did not work", "What did not work"),
    ("Decision", "Decisions"),
    ("File", "Files changed"),
)
# Entries a section gives at most, newest first: a long project's brief never crowds the others out.
_PER_SECTION = {
    "Convention": 15,
    "Open": 4,
    "Where it ended": 4,
    "Command": 12,
    "Fix": 8,
    "Did not work": 6,
    "Decision": 8,
    "File": 16,
}
_THIS_SESSION = 30  # entries of the compacted session given first, at most
_THIS_SESSION_TOPICS = "What this session said before the compaction"


def _session_id(session: str | None) -> str | None:
    if session is None:
        return None
    from ..memory.adopt import to_id

    return to_id(session)


def _brief_sections(
    home: Path, sid: str | None, checkout: Checkout | None = None, *, code: bool = True
) -> list[tuple[str, list[Line]]]:
    from ..memory.shapes import shapes_for
    from ..memory.write import current_brief

    memory = HomePaths(home).memory
    with shapes_for(home) as shapes:
        lines = current_brief(memory, shapes.current)
    if checkout is not None:
        lines = _on_the_checkout(memory, lines, checkout, code=code)
    out: list[tuple[str, list[Line]]] = []
    if sid is not None:
        mine = [line for line in lines if sid in line.sessions]
        mine = mine[:_THIS_SESSION]
        out.append(("Before the compaction (this session)", [_line(x, labelled=True) for x in mine]))
        lines = [line for line in lines if sid not in line.sessions]
    said: list[str] = []  # what the lines given so far say: a line inside one of them says nothing new
    for section, heading in _SECTIONS:
        chosen: list[BriefLine] = []
        for line in (line for line in lines if line.section == section):
            words = " ".join(line.text.casefold().split())
            if len(chosen) < _PER_SECTION.get(section, 40) and not any(words in other for other in said):
                chosen.append(line)
                said.append(words)
        out.append((heading, [_line(x, labelled=False) for x in chosen]))
    return out


_FILES_CHECKED = 16  # `File` entries checked against the code at a session's start, at most (newest first)
_CITES_READ = 4  # records of one entry whose git context is read (its newest)


def _checkout_of(cwd: str | None) -> Checkout | None:
    from ..memory.checkout import read_checkout

    return read_checkout(cwd) if cwd else None


def _on_the_checkout(
    memory: Path, lines: list[BriefLine], checkout: Checkout, *, code: bool
) -> list[BriefLine]:
    """The brief's lines for a reader at `checkout`: an entry said on a git branch not merged into its
    HEAD (or in another repository) labelled so and moved after the reader's own (each section keeps
    its order), and with `code` each `File` entry of the reader's own checked against its worktree (the
    newest `_FILES_CHECKED`): left out when its file is gone, labelled when the file no longer holds what
    the newest edit it cites wrote there. Per entry: its newest records' heads (their git contexts, read
    at the offsets the workspace's index keeps), and for a file, a stat and a small read."""
    import dataclasses

    from ..memory.checkout import GitReader, check, load_facts
    from ..memory.recall import cited_contexts, git_label_text

    reader = GitReader(checkout, load_facts(memory).repo(checkout.repo))
    own: list[BriefLine] = []
    elsewhere: list[BriefLine] = []
    checked = 0
    contexts = cited_contexts(memory, [line.cites[-_CITES_READ:] for line in lines])
    for line, records in zip(lines, contexts, strict=True):
        label = reader.label(records)
        if label is not None and not label.merged:
            elsewhere.append(dataclasses.replace(line, text=f"({git_label_text(label)}) {line.text}"))
            continue
        mine = [g for g, _ in records if g.repo == checkout.repo and g.path]
        if not code or line.section != "File" or not mine or checked >= _FILES_CHECKED:
            own.append(line)
            continue
        checked += 1
        last = mine[-1]  # citation order is time order: the newest edit the entry cites
        assert last.path is not None
        verdict = check(checkout.root, last.path, last.cited)
        if verdict.state == "changed":
            label_text = f"(the code changed since {verdict.since}: {verdict.path} no longer holds it) "
            own.append(dataclasses.replace(line, text=label_text + line.text))
        elif verdict.state == "holds":
            own.append(line)
    if reader.stale:
        _ask_refresh(memory.parent, checkout.root)
    return own + elsewhere


_TABLE_RULE = re.compile(r"\|?(?:\s*:?-{3,}:?\s*\|)+(?:\s*:?-{3,}:?\s*)?")  # a Markdown table's `|---|---|`


def _line(line: BriefLine, *, labelled: bool) -> Line:
    # Plain text: a summary's bold marks and its tables' rules say nothing to a model and cost the budget.
    plain = _TABLE_RULE.sub("", line.text.replace("**", ""))
    text = f"{line.section}: {plain}" if labelled else plain
    if line.block:  # the entry's id in the brief, whose footnotes cite the turns and runs it was read from
        text += f" [{line.block.rpartition('#')[2]}]"
    # A line that quotes a tool's output (a command's error line) is material, not an instruction.
    return (line.date, text, "tool" if line.quotes_tool else None)


def prompt_context(
    home: Path,
    prompt: str,
    *,
    session: str | None,
    tips: Sequence[str] = (),
    k: int = 8,
    budget: int = DEFAULT_BUDGET,
    with_core: bool = True,
    cwd: str | None = None,
    code_check: bool = True,
) -> str | None:
    """The `<memory-context>` block for `prompt` (core first), ranked relative to the reader's branch:
    `session` is the host's session and `tips` the host's candidates for its tip, node ids newest first
    (each host reads them from its own transcript): the first the session stores is the tip, else the
    session's head. None when nothing matches.
    `with_core=False`: the core facts are left out, and so are hits of the core master (a host that got
    them at the session's start, where they stay, would otherwise be given them again at every prompt).
    `cwd`: where the reader works; in a git worktree, hits are labelled and ranked by git branch (as by
    conversation branch), and with `code_check` each hit citing an edit's file is checked against it."""
    memory = HomePaths(home).memory
    if not memory.is_dir() or not prompt.strip():
        return None
    # The search loads numpy, the embedding model and the index: here, not for a session's start.
    from ..memory.adopt import to_id
    from ..memory.recall import MAX_QUERY_CHARS, RecallIndex, RecallQuery, find_hits, reader_for
    from ..memory.shapes import shapes_for

    query = prompt.encode("utf-8", "replace").decode("utf-8")[:MAX_QUERY_CHARS]  # lone surrogates go
    # The reader's own session is read once, for its tip and for the search: the shape cache's rows
    # while they are current (read-only: it creates nothing), else its files.
    with shapes_for(home) as shapes:
        sid = to_id(session) if session is not None else None
        own = (shapes.current(sid) or shapes.fresh(sid)) if sid is not None else None

        def mine(sid: str) -> SessionShape | None:
            return own if own is not None and sid == own.session_id else None

        session_id, tip = _branch(own, tips)
        reader = reader_for(shapes.for_reader(session_id, tip, mine), session_id, tip)
        checkout = git_reader(memory, cwd)
        hits = find_hits(
            RecallIndex.open(memory),
            RecallQuery(query, k=k),
            reader=reader,
            spread_chars=PROMPT_PASSAGES,
            checkout=checkout,
        )
    if checkout is not None:
        if code_check:
            hits = checked(hits, checkout)
        if checkout.stale:
            _ask_refresh(memory.parent, cwd)
    core = _read(memory, CORE_FILE) if with_core else ""
    if not with_core:
        hits = [hit for hit in hits if hit.topic != CORE_MASTER]
    if not hits and not core.strip():
        return None
    room = PROMPT_CHARS + len(render_context([], core))
    while True:
        block = render_context(hits, core)
        if not hits or (len(block) <= room and _fits(block, budget)):
            return _within(block, budget)
        hits = hits[:-1]  # the least relevant hit goes first


def git_reader(memory: Path, cwd: str | None) -> GitReader | None:
    """The reader at the git checkout `cwd` lies in, with its repository's merge facts (read from the
    cache; never a `git` run here), None outside any worktree."""
    from ..memory.checkout import GitReader, load_facts, read_checkout

    found = read_checkout(cwd) if cwd else None
    if found is None:
        return None
    return GitReader(found, load_facts(memory).repo(found.repo))


def checked(hits: list[Found], checkout: GitReader) -> list[Found]:
    """`hits`, each citing an edit's file labelled when the reader's worktree no longer holds it."""
    import dataclasses

    from ..memory.recall import code_checks

    verdicts = code_checks(hits, checkout.checkout.repo, checkout.checkout.root)
    return [
        dataclasses.replace(h, code=v) if v is not None else h for h, v in zip(hits, verdicts, strict=True)
    ]


def _ask_refresh(home: Path, cwd: str | None) -> None:
    """A merge was decided without an exact fact (a commit since the last refresh): the worker is asked to
    run `git` for the facts (detached: this prompt does not wait), so the next prompt has them."""
    from ._queue import GIT_JOB, enqueue, start_worker

    if cwd:
        enqueue(home, GIT_JOB, cwd)
        start_worker(home)


_TOPIC_CLAIMS = 2  # a topic's newest current blocks a session's start quotes
_CLAIM_CHARS = 240  # of each quoted claim


def _topic_lines(home: Path, text: str, sid: str | None = None) -> tuple[list[Line], list[Line]]:
    """The topics as true now (only topics with a current block; a branch the conversation left since
    their last write is left out, as from the core), newest first, each as a model reads it: its title
    and what its newest current blocks say, no link or Markdown escape (a claim read from a tool's output
    quoted as such). With `sid` (a start after that session's compaction), the topics with blocks of that
    session come apart, first, each by what its blocks of that session say. A file that is no index
    written by dagmem (one placed by hand) is given as it is, a line each."""
    # The topic models load here, for a session's start, not for every prompt.
    from ..memory.format import Block, TopicFormatError, newest_first, parse_topic_index, uninert
    from ..memory.text import clip

    try:
        index = parse_topic_index(text)
    except TopicFormatError:
        return [], [(None, line.strip(), None) for line in text.splitlines() if line.strip()]
    if not index.entries:
        return [], []
    from ..memory.shapes import shapes_for
    from ..memory.write import current_topics

    memory = HomePaths(home).memory
    with shapes_for(home) as shapes:
        found = current_topics(memory, index, shapes.current)
    topics = {entry.path: (entry, blocks) for entry, blocks in found}
    # Lines only, counted by the block's own budget (`_within`): fewer entries than the file's never
    # outgrow it, and not counting tokens here keeps tiktoken out of a session's start.
    # Newest first, and within a day the larger topics first (a day's topics in path order would be an
    # alphabetical list of one project's work).
    entries = [entry for entry, _ in topics.values()]
    ordered = sorted(newest_first(entries), key=lambda e: (e.last or "", e.blocks), reverse=True)

    def line(title: str, date: str | None, blocks: list[Block]) -> Line:
        newest = blocks[-_TOPIC_CLAIMS:][::-1]
        said = " · ".join(clip(uninert(block.claim), _CLAIM_CHARS) for block in newest)
        quoted = any(s.label.startswith("tool ") for b in newest for c in b.citations for s in c.sources)
        return (date, f"{uninert(title)}: {said}", "tool" if quoted else None)

    mine: list[Line] = []
    lines: list[Line] = []
    for entry in ordered:
        blocks = topics[entry.path][1]
        said_here = [b for b in blocks if any(s.session_id == sid for c in b.citations for s in c.sources)]
        if said_here:
            mine.append(line(entry.title, max(c.date for b in said_here for c in b.citations), said_here))
        else:
            lines.append(line(entry.title, entry.last, blocks))
    if index.left_out:
        lines.append((None, f"({index.left_out} more topics left out.)", None))
    return mine, lines


def _branch(own: SessionShape | None, tips: Sequence[str]) -> tuple[str | None, str | None]:
    """(the reader's session, its tip): the first of the host's `tips` the session stores, else its head;
    (None, None) for a session not imported yet (none of memory can be from it)."""
    if own is None:
        return None, None
    stored = own.predecessors
    return own.session_id, next((n for n in tips if n in stored), own.head)


def _fits(block: str, budget: int) -> bool:
    # A token is at least one byte: a block of no more bytes than the budget fits without counting.
    return len(block) <= HOST_CHARS and (len(block.encode()) <= budget or count_tokens(block) <= budget)


def _within(block: str, budget: int) -> str:
    """A block over the budget (a core alone larger than it) cut after its longest run of whole lines
    that fits, still closed: a quotation the cut falls inside is closed, a heading left with no line
    under it goes."""
    if _fits(block, budget):
        return block
    lines = block.split("\n")
    head, body, close = lines[0], lines[1:-1], lines[-1]

    def cut(n: int) -> str:
        kept = body[:n]
        while kept and (kept[-1].startswith("## ") or kept[-1].startswith(_QUOTE_OPEN)):
            kept = kept[:-1]
        opened = next((ln for ln in reversed(kept) if ln.startswith((_QUOTE_OPEN, _QUOTE_CLOSE))), "")
        return "\n".join([head, *kept, *([_QUOTE_CLOSE] if opened.startswith(_QUOTE_OPEN) else []), close])

    low, high = 0, len(body)  # the most lines that fit, by halves: O(log lines) counts of the block
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if _fits(cut(middle), budget) else (low, middle - 1)
    return cut(low)
