"""What this package remembers between calls, let go of at once: parsed topics and blocks, the blocks
already validated, token counts. Each cache is bounded; this is for a process that is done with one
workspace and goes on to another (the simulator, between homes), so it starts the next one empty."""

from __future__ import annotations

from . import _tokens, _topic_index, _topic_parse, _topic_validate

__all__ = ["clear_caches"]


def clear_caches() -> None:
    _topic_parse._parse_topic_cached.cache_clear()
    _topic_parse._parse_chunk.cache_clear()
    _topic_validate._block_ok.cache_clear()
    _topic_index._bracket_safe.cache_clear()
    _tokens.forget_counts()
