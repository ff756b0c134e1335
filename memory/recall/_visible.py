"""Which blocks a reader may be shown: the hold queue's files only when asked (`held=True`), rejected
items never, and under a scope only blocks whose every cited record is in it (a claim may quote any of
them). A predicate over index entries, applied as the hits are picked (what a scope lets a reader read
of the files themselves: `_scoped`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..format import REJECTED_TOPIC, is_held_topic
from ._entries import Entry

if TYPE_CHECKING:
    from ..trust import Scope

__all__ = ["Visible", "visible"]

Visible = Callable[[Entry], bool]


def visible(*, held: bool = False, scope: Scope | None = None) -> Visible:
    def keep(entry: Entry) -> bool:
        if entry.topic == REJECTED_TOPIC or (is_held_topic(entry.topic) and not held):
            return False
        if scope is None:
            return True
        return scope.allows_evidence((s.session, s.effective_origin) for s in entry.sources)

    return keep
