"""Entity expansion: a query that names an entity brings in the blocks of that entity's page.

A distiller may keep one topic file per person, place or thing (`topics/<entity>.md`, titled by its name,
continued in `<entity>--2.md`, ...). A question that names the entity ("what does Melanie like to do?")
often needs facts said in several conversations, in words that share little with the question: the page
holds them together. A query names a page when a run of one to three of its words, folded the way a topic
file is named (accents stripped, lower case, words joined by "-"), is the page's slug; the core and the
hold queue are no entity's page. The page's blocks join the candidates (the best `WIDTH` of them by the
coarse vectors, so a page of any size costs O(its blocks), never a scan of the index) and each gets
`BONUS` on its score.

On by default, with a bonus of 1/12 (`EXPAND`, `BONUS`), since the extractive distiller keeps a page per
speaker of a labelled chat (what each says about themselves: `write._speakers`). Measured on LoCoMo's
development conversations with those pages, all@1 / all@10 / multi-hop all@10: 0.396 / 0.714 / 0.246
off, 0.399 / 0.716 / 0.275 with 1/12, 0.396 / 0.716 / 0.275 with 1/8, 0.395 / 0.714 / 0.289 with 1/6
(only the query's capitalised words naming a page, 1/12: 0.397 / 0.714 / 0.275). Before those pages
it cost more than it gave, on pages named after a salient word and on subject pages alike: a multi-hop
question's evidence is rarely on the subject page it names, and the page's other blocks take the budget
(see the project's benchmark notes, docs/benchmarks.md).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from ..format import CORE_MASTER, HELD_TOPIC, is_topic_slug
from ..text import slug_of

if TYPE_CHECKING:
    from ._index import RecallIndex

__all__ = ["BONUS", "EXPAND", "entity_pages", "entity_rows"]

EXPAND: Final = True
BONUS: Final = 1.0 / 12.0  # half what a good conversational neighbour lends
_RUN: Final = 3  # words in an entity's name, at most
_PARTS: Final = 64  # continuation files of one page followed, at most
_NOT_ENTITIES: Final = frozenset({CORE_MASTER, HELD_TOPIC, "topics/rejected.md"})
_WORD: Final = re.compile(r"[^\W_]+")


def entity_pages(index: RecallIndex, query: str) -> list[str]:
    """The topic files (every part) of the entities `query` names, as the index holds them."""
    words = _WORD.findall(query)
    pages: list[str] = []
    for size in range(1, _RUN + 1):
        for start in range(len(words) - size + 1):
            slug = slug_of(words[start : start + size])
            if not is_topic_slug(slug):
                continue
            for part in range(1, _PARTS + 1):
                path = f"topics/{slug}.md" if part == 1 else f"topics/{slug}--{part}.md"
                if path in _NOT_ENTITIES or not index.has_topic(path):
                    break
                if path not in pages:
                    pages.append(path)
    return pages


def entity_rows(index: RecallIndex, query: str) -> npt.NDArray[np.int64]:
    """The live rows of the pages `query` names, sorted (empty when it names none)."""
    rows = sorted({row for path in entity_pages(index, query) for row in index.topic_rows(path)})
    return np.array(rows, dtype=np.int64)
