"""A session's layout as inline SVG. Every piece of record text goes through `html.escape`, so a turn that
says `</svg><script>` is drawn as those characters. All edges share one `<path>`, which keeps the file
small; each item is a `<g data-i>` the page's script listens on."""

from __future__ import annotations

from html import escape

from ..memory.format import GIT_KEY, git_context_of
from ._layout import Layout
from ._read import SessionView

__all__ = ["preview", "session_svg"]

ROW = 22  # px per row
LANE = 14  # px per lane
PAD = 12
LABEL_WIDTH = 760
PREVIEW = 64  # characters of a turn shown beside its node


def preview(text: str, limit: int = PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _x(lane: int) -> int:
    return PAD + lane * LANE


def _y(row: int) -> int:
    return PAD + row * ROW


def _edges(view: Layout) -> str:
    parts: list[str] = []
    for item in view.items:
        if item.parent is None:
            continue
        parent = view.items[item.parent]
        x1, y1, x2, y2 = _x(parent.lane), _y(parent.row), _x(item.lane), _y(item.row)
        if x1 == x2:
            parts.append(f"M{x1} {y1}V{y2}")
        else:
            mid = y1 + ROW // 2
            parts.append(f"M{x1} {y1}C{x1} {mid} {x2} {mid} {x2} {y1 + ROW}V{y2}")
    return "".join(parts)


def _label(session: SessionView, members: list[str], run: bool) -> str:
    if run:
        first, last = session.nodes[members[0]], session.nodes[members[-1]]
        records = sum(1 for m in members if session.states[m] != "other")
        # A range is claimed only when the run holds every seq of it (a damaged file can leave a gap).
        dense = last.seq - first.seq + 1 == len(members)
        span = f"seq {first.seq}–{last.seq}" if dense else f"from seq {first.seq} to {last.seq}"
        return escape(f"⋯ {len(members)} turns, {span}, {records} record{'' if records == 1 else 's'}")
    node = session.nodes[members[0]]
    return escape(f"{node.seq} {node.role}: {preview(node.content)}")


def _git_branch(session: SessionView, members: list[str]) -> str | None:
    """The git branch the item's last turn was said on (`metadata["git"]`), None when not known."""
    git = git_context_of(session.nodes[members[-1]].metadata.get(GIT_KEY))
    return None if git is None else git.branch


def session_svg(index: int, session: SessionView, view: Layout) -> str:
    """The `<svg>` of session number `index` on the page."""
    label_x = _x(view.lanes) + 8
    width = label_x + LABEL_WIDTH
    height = _y(len(view.items)) + PAD
    out = [
        f'<svg class="dag" data-s="{index}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(session.session_id)}">',
        f'<path class="edges" d="{_edges(view)}"/>',
    ]
    shown_branch: str | None = None  # the git branch last shown: a turn's branch is shown where it changes
    for number, item in enumerate(view.items):
        node_id = item.members[-1]
        classes = ["it", f"st-{item.state}"]
        badges: list[str] = []
        branch = _git_branch(session, item.members)
        if branch is not None and branch != shown_branch:
            badges.append(f"git {branch}")
            shown_branch = branch
        if item.run:
            classes.append("run")
        if all(m in session.left for m in item.members):
            classes.append("left")  # inside a branch the head left (an edited prompt, a retry)
            badges.append("left")
        if session.head in item.members:
            classes.append("head")
            badges.append("HEAD")
        if not session.children.get(node_id):
            classes.append("tip")
            badges.append("tip")
        if len(view.roots) > 1 and item.members[0] in view.roots:
            # A session with several roots (a sub-agent's sidechain beside the main line): each is named.
            classes.append("root")
            badges.append(f"root {view.roots.index(item.members[0]) + 1}/{len(view.roots)}")
        forks = len(session.children.get(node_id, ()))
        if forks > 1:
            classes.append("fork")
            badges.append(f"fork ×{forks}")
        x, y = _x(item.lane), _y(item.row)
        if item.run:
            shape = f'<rect x="{x - 5}" y="{y - 8}" width="10" height="16" rx="5"/>'
        else:
            shape = f'<circle cx="{x}" cy="{y}" r="5"/>'
        if "head" in classes:
            shape += f'<circle class="ring" cx="{x}" cy="{y}" r="9"/>'
        tags = "".join(f'<tspan class="badge b-{b.split()[0]}">{escape(b)} </tspan>' for b in badges)
        node_attr = "" if item.run else f' data-n="{escape(node_id)}"'
        out.append(
            f'<g class="{" ".join(classes)}" data-i="{number}"{node_attr} tabindex="0">{shape}'
            f'<text x="{label_x}" y="{y + 4}">{tags}{_label(session, item.members, item.run)}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)
