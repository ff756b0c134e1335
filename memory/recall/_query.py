"""What recall accepts as a query: text (a `str` of valid Unicode, so no lone surrogate: it cannot be
encoded for the model, and a command line gets one from bytes that are not UTF-8) of bounded length (the
cost of a search grows with the query: an 8 MB one took 10 s), with something in it.

One rule for every way in (`Runtime.recall`, `search`, `dagmem recall`, the MCP `recall` tool): an empty
query, or one of whitespace only, is refused (`InvalidInput`; exit 2; `-32602`), never answered with no
hits: it asks nothing, so "nothing matches" would hide the caller's mistake (a template's variable left
empty). A host hook given an empty prompt injects nothing instead of asking."""

from __future__ import annotations

import re
from typing import Final

from ..errors import InvalidInput

__all__ = ["MAX_QUERY_CHARS", "check_query"]

MAX_QUERY_CHARS: Final = 16_384  # a few pages: any question, and a pasted prompt, at a few ms
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def check_query(query: object) -> str:
    """`query` if recall can take it; `InvalidInput` naming the problem (never quoting the query: text
    with a lone surrogate cannot even be printed) otherwise."""
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a string, not {type(query).__name__}")
    if not query.strip():
        raise InvalidInput("query is empty: recall needs some text to look for")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"query is {len(query):,} characters; recall takes at most {MAX_QUERY_CHARS:,} (shorten it)"
        )
    bad = _SURROGATE.search(query)
    if bad is not None:
        raise InvalidInput(
            f"query is not valid text: a lone surrogate (U+{ord(bad.group()):04X}) at character "
            f"{bad.start() + 1} (bytes that are not UTF-8?)"
        )
    return query
