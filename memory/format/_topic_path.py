"""The one rule for a topic file's name: `topics/<slug>.md`, a slug `[a-z0-9][a-z0-9-]{0,63}`.

Every layer (the write pass, the LLM wire, the MCP tools, the page, block links inside claims) asks
here, so a path one of them writes is a path every other reads. The distiller's slugs (`lisbon`, a
word's parts `lisbon--2`, hashed `t-<hex>`) are all of this form.

One name of that form is reserved: `topics/index.md` is the topic index (the map of the topics, derived
by every install), never a topic file."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["TOPIC_INDEX", "TOPIC_INDEX_SLUG", "TOPIC_SLUG_PATTERN", "is_topic_path", "is_topic_slug"]

TOPIC_SLUG_PATTERN: Final = r"[a-z0-9][a-z0-9-]{0,63}"
_SLUG: Final = re.compile(TOPIC_SLUG_PATTERN)
_PATH: Final = re.compile(rf"topics/{TOPIC_SLUG_PATTERN}\.md")
TOPIC_INDEX_SLUG: Final = "index"
TOPIC_INDEX: Final = f"topics/{TOPIC_INDEX_SLUG}.md"  # relative to the workspace root


def is_topic_slug(slug: str) -> bool:
    """True when `slug` may name a topic file (`topics/<slug>.md`; never the reserved `index`)."""
    return _SLUG.fullmatch(slug) is not None and slug != TOPIC_INDEX_SLUG


def is_topic_path(relpath: str) -> bool:
    """True when `relpath` (relative to the memory directory) is a topic file's path (the topic index,
    `topics/index.md`, is not one)."""
    return _PATH.fullmatch(relpath) is not None and relpath != TOPIC_INDEX
