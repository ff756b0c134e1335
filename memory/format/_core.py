"""The always-injected core block: `memory/core.md`, rendered from the master `topics/core.md` (DESIGN §2).

The master is an ordinary topic file. The rendering keeps the title, then whole blocks in file order, each
with its definition lines, as long as the **whole rendered text** (title and separators included) stays
within the token budget. A block that does not fit is skipped and the later ones are still considered, so a
small late block is not starved by a big one before it. `core.md` lives one directory above the topics, so
source links become `sources/...` and block links `topics/<slug>.md#^b-...`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InvalidInput
from ._tokens import count_tokens
from ._topic_model import Block, render_block
from ._topic_parse import parse_topic

__all__ = ["CORE_BUDGET", "CoreRender", "plan_core", "render_core"]

CORE_BUDGET = 2000
# How many tokens joining two texts can save at most, generously: the join "\n" + "\n" merges into one.
_JOIN_SLACK = 16


@dataclass(frozen=True)
class CoreRender:
    """What a rendering kept and skipped (block ids, file order), and the tokens of `text`."""

    text: str
    tokens: int
    kept: tuple[str, ...]
    skipped: tuple[str, ...]


def plan_core(
    master_text: str,
    *,
    budget: int = CORE_BUDGET,
    path: str = "topics/core.md",
    keep: Callable[[Block], bool] | None = None,
) -> CoreRender:
    """Render the master `master_text` (raises TopicFormatError if it is not a valid topic file).

    `keep` says which blocks may be shown at all (the writer keeps the current ones: a superseded or left
    fact never reaches the core); the others are skipped before the budget is spent. If even the title
    line is over budget, the text is empty and every block is skipped.
    """
    if budget < 0:
        raise InvalidInput(f"core budget must be >= 0, not {budget}")
    topic = parse_topic(master_text, path)
    text = f"# {topic.title}\n"
    tokens = count_tokens(text)
    if tokens > budget:
        return CoreRender("", 0, (), tuple(block.id for block in topic.blocks))
    kept: list[str] = []
    skipped: list[str] = []
    for block in topic.blocks:
        if keep is not None and not keep(block):
            skipped.append(block.id)
            continue
        piece = f"\n{render_block(block, base='topics/')}\n"
        # Token counts need not add up across a join (the "\n\n" there is one token, not two), so the sum
        # only rules out blocks that are clearly too big; what is kept is measured as the whole text. The
        # pre-check keeps a long master at O(its size) instead of O(blocks x budget).
        if tokens + count_tokens(piece) > budget + _JOIN_SLACK:
            skipped.append(block.id)
            continue
        candidate = text + piece
        size = count_tokens(candidate)
        if size <= budget:
            text, tokens = candidate, size
            kept.append(block.id)
        else:
            skipped.append(block.id)
    return CoreRender(text, tokens, tuple(kept), tuple(skipped))


def render_core(
    master_text: str, *, budget: int = CORE_BUDGET, keep: Callable[[Block], bool] | None = None
) -> str:
    """The bytes of `memory/core.md` (as text) for the master `topics/core.md` text."""
    return plan_core(master_text, budget=budget, keep=keep).text
