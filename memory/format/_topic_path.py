"""The one rule for a topic file's name: `topics/<slug>.md`, a slug `[a-z0-9][a-z0-9-]{0,63}`.

Every layer (the write pass, the LLM wire, the MCP tools, the page, block links inside claims) asks
here, so a path one of them writes is a path every other reads. The distiller's slugs (`lisbon`, a
word's parts `lisbon--2`, hashed `t-<hex>`) are all of this form."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["TOPIC_SLUG_PATTERN", "is_topic_path", "is_topic_slug"]

TOPIC_SLUG_PATTERN: Final = r"[a-z0-9][a-z0-9-]{0,63}"
_SLUG: Final = re.compile(TOPIC_SLUG_PATTERN)
_PATH: Final = re.compile(rf"topics/{TOPIC_SLUG_PATTERN}\.md")


def is_topic_slug(slug: str) -> bool:
    """True when `slug` may name a topic file (`topics/<slug>.md`)."""
    return _SLUG.fullmatch(slug) is not None


def is_topic_path(relpath: str) -> bool:
    """True when `relpath` (relative to the memory directory) is a topic file's path."""
    return _PATH.fullmatch(relpath) is not None
