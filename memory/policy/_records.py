"""What counts as a record (DESIGN §3) and what a workspace's marker on a node means (DESIGN §2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..format import EVIDENCE_KEY, EVIDENCE_TOOL, FORGOTTEN_KEY, MARKER_KEY, Node, Role

__all__ = ["drop_marker", "is_marked", "is_record", "is_record_node", "with_marker"]

_RECORD_ROLES = (Role.USER, Role.ASSISTANT)


def is_record(role: Role | str, content: str, metadata: Mapping[str, Any]) -> bool:
    """User and assistant turns with non-blank text, and tool evidence (a tool row whose metadata says
    `"evidence": "tool"`: a call with its result, as an importer or a host keeps it). Other tool rows,
    system rows, runtime-scheduled turns and rewound nodes are not records: they neither stop a walk nor
    get marked; nor is a forgotten node (`dagmem forget` left its tombstone), ever again. A tool row
    written before tool evidence existed has no such key: a home written then owes what it owed."""
    return (
        (role in _RECORD_ROLES or (role == Role.TOOL and metadata.get(EVIDENCE_KEY) == EVIDENCE_TOOL))
        and bool(content.strip())
        and metadata.get("display") != "runtime"
        and not metadata.get("rewound")
        and metadata.get(FORGOTTEN_KEY) is None
    )


def is_record_node(node: Node) -> bool:
    return is_record(node.role, node.content, node.metadata)


def is_marked(metadata: Mapping[str, Any], workspace_id: str) -> bool:
    """Marked for this workspace: the value is its id, or a list that contains it. Another workspace's
    mark counts as unmarked here."""
    value = metadata.get(MARKER_KEY)
    if isinstance(value, str):
        return value == workspace_id
    if isinstance(value, list):
        return workspace_id in value
    return False


def with_marker(metadata: Mapping[str, Any], workspace_id: str) -> dict[str, Any]:
    """`metadata` with this workspace's mark added; another workspace's mark is kept (the value becomes
    the sorted list of both), never erased."""
    updated = dict(metadata)
    value = metadata.get(MARKER_KEY)
    if value is None or value == workspace_id:
        updated[MARKER_KEY] = workspace_id
    elif isinstance(value, str):
        updated[MARKER_KEY] = sorted({value, workspace_id})
    elif isinstance(value, list):
        updated[MARKER_KEY] = sorted({*(str(v) for v in value), workspace_id})
    else:  # a junk value: keep nothing of it but our own mark (it marked nobody)
        updated[MARKER_KEY] = workspace_id
    return updated


def drop_marker(metadata: dict[str, Any], workspace_id: str) -> dict[str, Any]:
    """`metadata` without this workspace's mark (another workspace's mark stays)."""
    updated = dict(metadata)
    value = updated.get(MARKER_KEY)
    if value == workspace_id:
        del updated[MARKER_KEY]
    elif isinstance(value, list) and workspace_id in value:
        rest = [v for v in value if v != workspace_id]
        if len(rest) == 1:
            updated[MARKER_KEY] = rest[0]
        elif rest:
            updated[MARKER_KEY] = rest
        else:
            del updated[MARKER_KEY]
    return updated
