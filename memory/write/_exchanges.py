"""Which turns of a batch make one block: a question and the reply that answers it, whichever speaker
asks; a turn and the reply to it; never across a session boundary.

Measured on LoCoMo (every block the verbatim text of its turns): pairing each user turn with the
assistant turns after it split an assistant's question from the user's answer (the commonest recall
miss) and glued a conversation's first turn to the previous one's farewell. Here a reply (a turn of the
other speaker) joins the block before it when that block's last turn asked a question, or when the block
is one turn so far; so a reply that asks keeps its answer too. A block holds at most `MAX_TURNS` turns
(measured: 2, 3, 4 and 6 recall within a point of each other; 4 keeps more questions with their answers).
A user turn that states a fact (a key of `_fact_keys`: where someone lives, their job, a quantity, ...)
never joins a block whose user turns state facts about someone else ("My sister Anna pays 1500 euros
rent." and "I drink green tea."): when one of the two gets a newer value, the block that says it can be
superseded whole without hiding the other. Turns about one subject (a question about Andrew's new job
and the answer) stay together. A silence of a session's length (`Settings.idle_after`, 30 minutes by default) between two turns ends
the block: a host or an importer that keeps several conversations' dates in one session gets blocks
that stay inside each conversation, as a live session does.

In a working session, a tool call's evidence joins the turn that made it (up to `MAX_TOOLS` calls), and
what is said after a result opens the next block, so a block is one step: what the agent said it would
do and what it ran. Narration never makes a block on its own (`memory.text.is_narration`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..format import ArchiveRecord
from ..settings import Settings
from ..text import is_narration
from ._fact_keys import keys_of

__all__ = ["MAX_TOOLS", "MAX_TURNS", "SESSION_GAP", "exchanges", "new_session"]

MAX_TURNS: Final = 4
MAX_TOOLS: Final = 4  # tool calls' evidence in one block
SESSION_GAP: Final = Settings().idle_after


def new_session(before: ArchiveRecord, after: ArchiveRecord) -> bool:
    """Do `before` and `after` (in that order) lie in two sessions of the conversation?"""
    return after.created_at - before.created_at >= SESSION_GAP


def _asks(record: ArchiveRecord) -> bool:
    return "?" in record.content


def exchanges(records: Sequence[ArchiveRecord]) -> list[list[ArchiveRecord]]:
    """The batch's records (oldest first) grouped into blocks, in order; every record in exactly one."""
    groups: list[list[ArchiveRecord]] = []
    for record in records:
        current = groups[-1] if groups else None
        if current is not None and _joins(current, record):
            current.append(record)
        else:
            groups.append([record])
    return _without_lone_narration(groups)


def _narration(record: ArchiveRecord) -> bool:
    return record.role == "assistant" and is_narration(record.content)


def _without_lone_narration(groups: list[list[ArchiveRecord]]) -> list[list[ArchiveRecord]]:
    """Narration ("Let me check the router:", "Perfect!") never makes a block on its own: such a block
    joins the block before it (the step it comments on), or the one after it when it opens the batch or a
    session."""
    out: list[list[ArchiveRecord]] = []
    pending: list[ArchiveRecord] = []  # lone narration waiting for the next block
    for group in groups:
        if all(_narration(r) for r in group):
            if out and not new_session(out[-1][-1], group[0]):
                out[-1].extend(group)
            else:
                pending.extend(group)
            continue
        joined = group
        if pending:
            if new_session(pending[-1], group[0]):
                out.append(pending)  # nothing of its session to join: it stays a block
            else:
                joined = [*pending, *group]
            pending = []
        out.append(joined)
    if pending:
        out.append(pending)
    return out


def _subjects(record: ArchiveRecord) -> frozenset[str]:
    """Whom a user turn states a fact about (the subjects of its fact keys: `user`, `maya`, ...)."""
    if record.role != "user":
        return frozenset()
    return frozenset(fact.key.partition("/")[0] for fact in keys_of(record.content))


def _joins(block: Sequence[ArchiveRecord], record: ArchiveRecord) -> bool:
    last = block[-1]
    if new_session(last, record):
        return False
    if record.role == "tool":
        # A tool call's evidence joins the turn that made it (the narration or request before it), a few
        # calls to a block: the step and what it did are found together.
        tools = sum(r.role == "tool" for r in block)
        return tools < MAX_TOOLS and len(block) < MAX_TURNS + MAX_TOOLS - 1
    if last.role == "tool":
        return False  # what is said after a tool's result opens the next step
    if len(block) >= MAX_TURNS or record.role == last.role:
        return False
    subjects = _subjects(record)
    if subjects and any(_subjects(r) - subjects for r in block):
        return False  # facts about another subject: a newer value of either then supersedes its block whole
    if _asks(last):
        return True  # the answer to the block's question
    return len(block) == 1  # the reply to a lone turn
