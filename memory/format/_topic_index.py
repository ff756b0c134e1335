"""The topic index `topics/index.md`: one line per topic, the map a person, a hook and a model read first.

Each topic is summed up as a `TopicSummary` (its title, a one-line description: the words its current
claims are about, its block count and its latest citation date), taken from the topic file alone,
so an install re-summarises only the topics it touches. The index lists them newest first (then by
path), whole lines only, within a token budget (cl100k_base, like the core block); what does not fit is
counted in a closing line. The core master and the hold queue's files are not topics of the map (the
core is injected on its own; held and rejected facts are not memory to point at).

    # Topic index

    <!-- dagmem-topic-index:v1 -->
    - [Lisbon trip](lisbon.md) — flight, Alfama, trams · 3 blocks · 2024-05-01
    *2 more topics left out (the index is kept within 1000 tokens).*

`parse_topic_index` reads that back (the hook, the MCP resource, the page, the LLM wire and `verify`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from ._layout import CORE_MASTER, HELD_TOPIC, REJECTED_TOPIC, is_brief_path, is_held_topic
from ._tokens import count_tokens
from ._topic_model import Block, Topic, TopicFormatError
from ._topic_parse import parse_topic
from ._topic_path import TOPIC_INDEX, TOPIC_SLUG_PATTERN, is_topic_path

__all__ = [
    "TOPIC_INDEX_BUDGET",
    "TOPIC_INDEX_HEADER",
    "TopicIndex",
    "TopicSummary",
    "entry_line",
    "in_topic_index",
    "merge_newest",
    "newest_first",
    "parse_topic_index",
    "render_ordered",
    "render_topic_index",
    "summarise_bytes",
    "summarise_topic",
]

TOPIC_INDEX_BUDGET: Final = 1000  # tokens: with the 2,000-token core it fits a session's 3,000-token start
TOPIC_INDEX_HEADER: Final = "<!-- dagmem-topic-index:v1 -->"
_TITLE: Final = "# Topic index"
_DESCRIPTION_CHARS: Final = 100
_NOT_MAPPED: Final = frozenset({CORE_MASTER, HELD_TOPIC, REJECTED_TOPIC})
_ENTRY: Final = re.compile(
    r"- \[(?P<title>(?:\\.|[^\\\]])*)\]\((?P<slug>" + TOPIC_SLUG_PATTERN + r")\.md\)"
    r"(?: — (?P<description>.*))? · (?P<blocks>\d+) blocks?(?: · (?P<last>\d{4}-\d{2}-\d{2}))?"
)
_LEFT_OUT: Final = re.compile(
    r"\*(?P<n>\d+) more topics? left out \(the index is kept within \d+ tokens\)\.\*"
)


@dataclass(frozen=True)
class TopicSummary:
    path: str  # topics/<slug>.md
    title: str  # Markdown-inert: no bare `[` or `]`, no line break
    description: str  # the start of its first current claim, inert; "" for a topic with no block
    blocks: int
    last: str | None  # YYYY-MM-DD of its latest citation; None without one


@dataclass(frozen=True)
class TopicIndex:
    entries: tuple[TopicSummary, ...]
    left_out: int  # topics the budget left out


def in_topic_index(relpath: str) -> bool:
    """Whether the topic file `relpath` has a line in the index (the core, the hold queue and the brief are
    given on their own, not as topics)."""
    return (
        is_topic_path(relpath)
        and relpath not in _NOT_MAPPED
        and not is_brief_path(relpath)
        and not is_held_topic(relpath)
    )


@functools.lru_cache(maxsize=4096)
def _bracket_safe(text: str) -> str:
    """`text` on one line with every `[`, `]` escaped (an escape already there is kept), so that a title
    never closes the link it is written in; `—` and `·` need nothing: an entry is parsed from its end.
    Remembered: every install renders the index's newest entries again."""
    out: list[str] = []
    chars = iter(" ".join(text.split()))
    for char in chars:
        if char == "\\":
            out.append(char + next(chars, "\\"))
        elif char in "[]":
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def _shorten(claim: str) -> str:
    text = _bracket_safe(claim)
    if len(text) <= _DESCRIPTION_CHARS:
        return text
    cut = text.rfind(" ", 0, _DESCRIPTION_CHARS)
    head = text[: cut if cut > _DESCRIPTION_CHARS // 2 else _DESCRIPTION_CHARS]
    if (len(head) - len(head.rstrip("\\"))) % 2:  # never end inside an escape
        head = head[:-1]
    return head.rstrip() + " …"


def summarise_topic(
    relpath: str, topic: Topic, current: Callable[[Block], bool] | None = None
) -> TopicSummary:
    """`current`: which blocks are current (default: those not marked superseded); the description is
    the first current block's."""
    kept = [b for b in topic.blocks if (b.superseded is None if current is None else current(b))]
    candidates = kept or list(topic.blocks)
    dates = [citation.date for block in topic.blocks for citation in block.citations]
    title = _bracket_safe(topic.title) or relpath[len("topics/") : -len(".md")]
    return TopicSummary(
        relpath, title, _described(candidates, title), len(topic.blocks), max(dates) if dates else None
    )


def _described(blocks: list[Block], title: str) -> str:
    """What a topic holds, in a few words (`memory.text.keywords` of its current claims, its own name
    left out): the line a reader scans, not the first words of its first block."""
    from ..text import keywords

    words = keywords((b.claim for b in blocks), exclude=title.replace("\\", "").split())
    return _shorten(", ".join(words)) if words else ""


def summarise_bytes(relpath: str, data: bytes | None) -> TopicSummary | None:
    """The summary of a topic file's bytes; None when it is gone, is no topic of the map, or does not
    parse (`verify` reports such a file; the index leaves it out until it is mended)."""
    if data is None or not in_topic_index(relpath):
        return None
    try:
        return summarise_topic(relpath, parse_topic(data.decode("utf-8"), relpath))
    except (TopicFormatError, UnicodeDecodeError):
        return None


def entry_line(summary: TopicSummary) -> str:
    """One entry's line of the index (no newline), as `render_topic_index` writes it."""
    return _line(summary)


def _line(summary: TopicSummary) -> str:
    slug = summary.path[len("topics/") : -len(".md")]
    # Made safe again (it changes nothing of a summary `summarise_topic` made): a summary from elsewhere
    # must not break its line either.
    description = f" — {_bracket_safe(summary.description)}" if summary.description else ""
    count = f"{summary.blocks} block" + ("" if summary.blocks == 1 else "s")
    last = f" · {summary.last}" if summary.last else ""
    return f"- [{_bracket_safe(summary.title)}]({slug}.md){description} · {count}{last}"


def _left_out(count: int, budget: int) -> str:
    return f"*{count} more topic{'' if count == 1 else 's'} left out (the index is kept within {budget} tokens).*"


def newest_first(summaries: Iterable[TopicSummary]) -> list[TopicSummary]:
    """The index's order: by last date, newest first (undated last), then by path."""
    ordered = sorted(summaries, key=lambda s: s.path)
    ordered.sort(key=lambda s: s.last or "", reverse=True)  # stable: one day's topics stay in path order
    return ordered


def merge_newest(first: Iterable[TopicSummary], second: Iterable[TopicSummary]) -> Iterator[TopicSummary]:
    """Two runs in the index's order, merged (lazily) into one."""

    def before(a: TopicSummary, b: TopicSummary) -> bool:
        return (a.last or "", b.path) > (b.last or "", a.path)

    left, right = iter(first), iter(second)
    a, b = next(left, None), next(right, None)
    while a is not None or b is not None:
        if b is None or (a is not None and before(a, b)):
            assert a is not None
            yield a
            a = next(left, None)
        else:
            yield b
            b = next(right, None)


def render_topic_index(summaries: Iterable[TopicSummary], *, budget: int = TOPIC_INDEX_BUDGET) -> str | None:
    """The text of `topics/index.md` for these summaries (newest first, whole lines within `budget`
    tokens, the closing line included), or None when there is no topic to list (then no file)."""
    ordered = newest_first(summaries)
    return render_ordered(ordered, len(ordered), budget=budget)


def render_ordered(
    ordered: Iterable[TopicSummary], total: int, *, budget: int = TOPIC_INDEX_BUDGET
) -> str | None:
    """`render_topic_index` for summaries already in the index's order, `total` of them: read only as
    far as the budget goes (an install renders the index from the SQLite cache this way)."""
    if total <= 0:
        return None
    head = f"{_TITLE}\n\n{TOPIC_INDEX_HEADER}\n"
    lines: list[str] = []
    used = count_tokens(head) + count_tokens(_left_out(total, budget) + "\n")
    for summary in ordered:
        line = _line(summary) + "\n"
        tokens = count_tokens(line)
        if used + tokens > budget:
            break  # newest first: whole lines, and the rest counted
        lines.append(line)
        used += tokens
    text = head + "".join(lines)
    rest = total - len(lines)
    if rest:
        text += _left_out(rest, budget) + "\n"
    while count_tokens(text) > budget and lines:  # the sum of lines is close; the whole text decides
        lines.pop()
        rest += 1
        text = head + "".join(lines) + _left_out(rest, budget) + "\n"
    return text


def parse_topic_index(text: str) -> TopicIndex:
    """The entries of an index's text; `TopicFormatError` naming the line when it is not one."""
    lines = text.split("\n")
    if lines[:3] != [_TITLE, "", TOPIC_INDEX_HEADER] or lines[-1] != "":
        raise TopicFormatError(
            TOPIC_INDEX, 1, f"not a topic index (it starts with {_TITLE!r}, then {TOPIC_INDEX_HEADER!r})"
        )
    entries: list[TopicSummary] = []
    left_out = 0
    for number, line in enumerate(lines[3:-1], 4):
        match = _ENTRY.fullmatch(line)
        if match is not None and not left_out:
            entries.append(
                TopicSummary(
                    f"topics/{match['slug']}.md",
                    match["title"],
                    match["description"] or "",
                    int(match["blocks"]),
                    match["last"],
                )
            )
            continue
        closing = _LEFT_OUT.fullmatch(line)
        if closing is None or left_out or number != len(lines) - 1:
            raise TopicFormatError(TOPIC_INDEX, number, f"not an index line: {line[:80]!r}")
        left_out = int(closing["n"])
    return TopicIndex(tuple(entries), left_out)
