"""The page: one self-contained HTML file (inline CSS, JS and SVG; no network).

Records are hostile input. Text that the page draws is escaped here (`html.escape`); text the script shows
on a click travels as JSON inside `<script type="application/json">` with `<`, `>` and `&` written as
`\\u003c`-style escapes, so no record can close the script element, and the script puts it into the page
with `textContent` only, never as markup."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from importlib import resources
from typing import Any

from ..memory.adopt import shown_path
from ..memory.format import GIT_KEY, HELD_TOPIC, MARKER_KEY, REJECTED_TOPIC, Block, anchor_of, git_context_of
from ..memory.outcomes import RETRYABLE
from ..memory.recall import core_facts
from ._layout import Layout, layout
from ._read import HomeView, SessionView, TopicView
from ._svg import preview, session_svg

__all__ = ["MAX_TEXT", "PageStats", "plain_claim", "render_page"]

MAX_TEXT = 20_000  # characters of a drawn node's text (and of its frame) carried in the page
RUN_PREVIEW = 100  # characters of each collapsed node's text


@dataclass(frozen=True)
class PageStats:
    sessions: int
    nodes: int
    drawn: int  # rows drawn: nodes on their own and collapsed runs
    tips: int
    bytes: int


def _iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def _json_for_script(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


_UNESCAPE = re.compile(r"\\([\\\[\]()^<>`*_#|])")


def plain_claim(claim: str) -> str:
    """A claim as people read it: the backslash escapes that made record text inert (DESIGN §2) removed."""
    return _UNESCAPE.sub(r"\1", claim)


_STATE_LETTER = {"written": "w", "owed": "o", "stranded": "x", "other": "n"}
_ROLE_LETTER = {"user": "u", "assistant": "a", "tool": "t", "system": "s"}


def _node_json(session: SessionView, node_id: str, drawn: bool, previous: str | None) -> dict[str, Any]:
    """One node, compact (a 5,000-turn session carries 5,000 of these): keys are letters, and what the
    script can derive (the file path, a predecessor that is the previous node, one child) is left out."""
    node = session.nodes[node_id]
    limit = MAX_TEXT if drawn else RUN_PREVIEW
    text = node.content[:limit] if drawn else preview(node.content, limit)
    out: dict[str, Any] = {
        "i": node.id,
        "q": node.seq,
        "r": _ROLE_LETTER[node.role],
        "s": _STATE_LETTER[session.states[node_id]],
        "t": text,
        "at": node.created_at,
    }
    if session.states[node_id] in ("other", "owed"):
        out["w"] = session.reasons[node_id]  # the written and stranded explanations are the same for all
    if node.predecessor != previous:
        out["p"] = node.predecessor
    kids = len(session.children.get(node_id, ()))
    if kids != 1:
        out["k"] = kids
    if text != node.content:
        out["c"] = len(node.content)  # the text shown is cut: this is its full length
    marker = node.metadata.get(MARKER_KEY)
    if marker is not None and marker != session.workspace_id:
        out["m"] = marker
    git = git_context_of(node.metadata.get(GIT_KEY))
    if git is not None:  # where in git it was said: the branch beside the turn, the rest in its details
        out["g"] = {"b": git.branch, "c": git.commit, "r": git.repo, "f": git.path}
    frame = session.frames.get(node_id)
    if frame is not None:
        out["a"] = anchor_of(frame.source_id).removeprefix("src-")
        info: dict[str, Any] = {"o": frame.offset, "e": frame.end}
        lines = frame.content.count("\n") + 1
        if lines != 1:
            info["n"] = lines
        if drawn:
            info["x"] = (session.frame_text(node_id) or "")[:MAX_TEXT]
        out["f"] = info
    return out


def _session_json(session: SessionView, view: Layout | None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": session.session_id, "head": session.head, "items": [], "nodes": []}
    if view is None:
        return out
    position = {node_id: n for n, node_id in enumerate(view.order)}
    run_members = {m for item in view.items if item.run for m in item.members}
    out["nodes"] = [
        _node_json(session, node_id, node_id not in run_members, view.order[n - 1] if n else None)
        for n, node_id in enumerate(view.order)
    ]
    out["items"] = [[position[item.members[0]], len(item.members)] for item in view.items]
    return out


def _status_html(home: HomeView) -> str:
    status = home.status
    rows = [
        ("home", shown_path(home.home)),
        ("workspace", home.workspace_id or "(not created yet)"),
        ("last outcome", status.last_outcome or "(nothing written yet)"),
        ("last success", _iso(status.last_success_at) or "-"),
    ]
    failure = status.last_failure
    if failure is not None:
        retry = failure.retryable and failure.reason_code in RETRYABLE
        rows.append(
            (
                "last failure",
                f"{failure.reason_code} at {_iso(failure.at)} ({'will' if retry else 'will not'} be retried)",
            )
        )
    rows.append(("pending turns", str(sum(s.owed for s in home.sessions))))
    for session in home.sessions:
        if session.owed:
            rows.append((f"  {session.session_id}", str(session.owed)))
        elif not session.drawable:
            rows.append((f"  {session.session_id}", "invalid: " + "; ".join(session.problems[:1])))
    body = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="status">{body}</table>'


def _block_dom_id(path: str, block_id: str) -> str:
    return f"blk-{path.removeprefix('topics/').removesuffix('.md')}-{block_id}"


def _currency_html(home: HomeView, topic: TopicView, block: Block) -> tuple[list[str], str]:
    """The block's extra classes and its currency note: a superseded block is struck through, with a
    link to its successor; one whose evidence lies only on branches the head left is shaded."""
    status, _by = home.currency.get((topic.path, block.id), ("current", None))
    marked = block.superseded
    classes: list[str] = [status] if status != "current" else []
    note = ""
    if marked is not None:
        link = f'<a class="successor" href="#{escape(_block_dom_id(marked.topic, marked.by))}">{escape(marked.by)}</a>'
        still = "" if status == "superseded" else " (its successor's branch was left: still current)"
        note = (
            f'<p class="superseded-note">Superseded on <code>{escape(marked.date)}</code> by {link} '
            f"({escape(marked.reason)}){escape(still)}</p>"
        )
    if status == "left":
        note += (
            '<p class="left-note">Left: said only on a branch the conversation left (an edit or a retry)</p>'
        )
    return classes, note


def _block_html(home: HomeView, topic: TopicView, block: Block, dom_id: str) -> str:
    classes, note = _currency_html(home, topic, block)
    notes: list[str] = []
    for citation in block.citations:
        links = ", ".join(
            f'<a class="src" href="#{escape(s.anchor)}">{escape(s.label)}</a>' for s in citation.sources
        )
        notes.append(
            f'<li class="note"><span class="cid">[^{escape(citation.id)}]</span> Time: '
            f"<code>{escape(citation.date)}</code>; Sources: {links}</li>"
        )
    claim = escape(plain_claim(block.claim))
    if "superseded" in classes:
        claim = f"<del>{claim}</del>"
    return (
        f'<div class="{" ".join(["block", *classes])}" id="{escape(dom_id)}" data-topic="{escape(topic.path)}">'
        f'{note}<p class="claim">{claim} <span class="bid">^{escape(block.id)}</span></p>'
        f'<ol class="notes">{"".join(notes)}</ol></div>'
    )


def _index_html(home: HomeView, filtered: bool) -> str:
    """The topic index: one line per topic (newest first), each a link to its topic below; `filtered`:
    only the topics with a block citing the sessions shown (as the topics below)."""
    if home.index_error is not None:
        return f'<p class="problem">{escape(home.index_error)}</p>'
    if home.index is None or not home.index.entries:
        return '<p class="empty">No topic index (memory/topics/index.md) yet.</p>'
    shown = {
        topic.path
        for topic in home.topics
        if topic.topic is not None
        and any(
            s.session_id in home.shown for b in topic.topic.blocks for c in b.citations for s in c.sources
        )
    }
    items: list[str] = []
    for entry in home.index.entries:
        if filtered and entry.path not in shown:
            continue
        about = f" — {escape(plain_claim(entry.description))}" if entry.description else ""
        count = f"{entry.blocks} block" + ("" if entry.blocks == 1 else "s")
        last = f" · <code>{escape(entry.last)}</code>" if entry.last else ""
        items.append(
            f'<li data-topic="{escape(entry.path)}"><a href="#{escape(_topic_dom_id(entry.path))}">'
            f"{escape(plain_claim(entry.title))}</a>{about} · {count}{last}</li>"
        )
    rest = 0 if filtered else home.index.left_out
    more = f'<p class="left-out">{rest} more topic{"" if rest == 1 else "s"} left out.</p>' if rest else ""
    return f'<ul class="topic-index">{"".join(items)}</ul>{more}'


def _topic_dom_id(path: str) -> str:
    return f"topic-{path.removeprefix('topics/').removesuffix('.md')}"


def _topics_html(home: HomeView, filtered: bool) -> str:
    parts: list[str] = []
    for topic in home.topics:
        if topic.topic is None:
            parts.append(
                f'<section class="topic bad"><h3>{escape(topic.path)}</h3>'
                f'<p class="problem">{escape(topic.error or "unreadable")}</p></section>'
            )
            continue
        blocks = [
            _block_html(home, topic, block, _block_dom_id(topic.path, block.id))
            for block in topic.topic.blocks
            if not filtered or any(s.session_id in home.shown for c in block.citations for s in c.sources)
        ]
        if not blocks:
            continue
        queue = _QUEUES.get(topic.path)
        if queue is not None:  # not a topic: a queue of candidates, labelled as one, first
            kind, title, note = queue
            parts.insert(
                0,
                f'<section class="topic {kind}" id="{escape(_topic_dom_id(topic.path))}">'
                f"<h3>{escape(title)} <small>{escape(topic.path)}</small></h3>"
                f'<p class="queue-note">{note}</p>{"".join(blocks)}</section>',
            )
            continue
        parts.append(
            f'<section class="topic" id="{escape(_topic_dom_id(topic.path))}">'
            f"<h3>{escape(topic.topic.title)} <small>{escape(topic.path)}</small></h3>"
            f"{''.join(blocks)}</section>"
        )
    if not parts:
        return '<p class="empty">No topic blocks yet.</p>'
    return "".join(parts)


# The files under topics/ that are queues, not topics: (class, title, note).
_QUEUES = {
    HELD_TOPIC: (
        "held",
        "Held for review",
        "Candidate core facts awaiting <code>dagmem held</code>: their evidence was not typed by the person, "
        "so they are not in the core until approved (<code>dagmem held approve ID</code>, or "
        "<code>reject ID</code>).",
    ),
    REJECTED_TOPIC: (
        "rejected",
        "Rejected",
        "Candidates set aside by <code>dagmem held reject</code>: never in the core.",
    ),
}


def _core_html(core: str | None) -> str:
    """The core facts as people read them: each plain claim with its date (as `dagmem core` prints them
    and the hooks inject them), never core.md's Markdown footnotes, block ids and links."""
    if core is None:
        return '<p class="empty">No core block (memory/core.md) yet.</p>'
    facts = core_facts(core)
    if not facts:
        return '<p class="empty">No core facts yet.</p>'
    items = "".join(
        f"<li>{f'<code>{escape(fact.date)}</code> ' if fact.date else ''}{escape(fact.text)}</li>"
        for fact in facts
    )
    return f'<ul class="core">{items}</ul>'


def _session_html(index: int, session: SessionView, view: Layout | None) -> str:
    head = session.head or "none"
    summary = (
        f"{len(session.nodes)} nodes, {len(session.tips)} tips, {len(session.forks)} forks, "
        f"{session.owed} owed, head {head}" + (f", {len(view.items)} rows drawn" if view else "")
    )
    problems = [*session.problems, *([session.archive_problem] if session.archive_problem else [])]
    notes = "".join(f'<li class="problem">{escape(p)}</li>' for p in problems)
    picture = session_svg(index, session, view) if view is not None else ""
    return (
        f'<section class="session" id="session-{escape(session.session_id)}">'
        f"<h2>{escape(session.session_id)}</h2><p class='summary'>{escape(summary)}</p>"
        f"{f'<ul>{notes}</ul>' if notes else ''}<div class='scroll'>{picture}</div></section>"
    )


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def render_page(home: HomeView, *, filtered: bool = False) -> tuple[str, PageStats]:
    """The page's HTML and what it holds. `filtered`: only topic blocks citing the sessions shown."""
    views = [layout(s.nodes, s.children, s.states, s.head) if s.drawable else None for s in home.sessions]
    data = {
        "workspace": home.workspace_id,
        "why": {
            "w": f"written: marked for workspace {home.workspace_id}",
            "x": "stranded: unmarked, yet older than a marked record on every branch",
        },
        "sessions": [_session_json(s, v) for s, v in zip(home.sessions, views, strict=True)],
    }
    sessions_html = "".join(
        _session_html(n, s, v) for n, (s, v) in enumerate(zip(home.sessions, views, strict=True))
    )
    core = _core_html(home.core)
    title = f"dagmem · {shown_path(home.home)}"
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{escape(title)}</title><style>{_asset("page.css")}</style></head>
<body>
<header><h1>{escape(title)}</h1>
<p class="legend"><span class="key st-written"></span>written <span class="key st-owed"></span>owed
<span class="key st-stranded"></span>stranded <span class="key st-other"></span>not a record
(tool, system, runtime, rewound, forgotten) · <span class="ring-key"></span>head · a capsule is a collapsed run ·
<span class="left-key"></span>left (a branch the head left) · <del>superseded</del></p>
</header>
<div class="top"><section id="status"><h2>Status</h2>{_status_html(home)}</section>
<section id="core"><h2>Core block</h2>{core}</section></div>
<main><div id="sessions">{sessions_html or '<p class="empty">No sessions.</p>'}</div>
<aside><section id="details"><h2>Details</h2><p class="empty">Click a node.</p></section>
<section id="topic-index"><h2>Topic index</h2>{_index_html(home, filtered)}</section>
<section id="topics"><h2>Topics{" citing the sessions shown" if filtered else ""}</h2>{_topics_html(home, filtered)}</section></aside>
</main>
<script id="dagmem-data" type="application/json">{_json_for_script(data)}</script>
<script>{_asset("page.js")}</script>
</body></html>
"""
    # A name that is not UTF-8 (a home's or a host's file's, kept by Python as lone surrogates) would make
    # the page unwritable: such characters are replaced.
    page = page.encode("utf-8", "replace").decode("utf-8")
    stats = PageStats(
        sessions=len(home.sessions),
        nodes=sum(len(s.nodes) for s in home.sessions),
        drawn=sum(len(v.items) for v in views if v is not None),
        tips=sum(len(s.tips) for s in home.sessions if s.drawable),
        bytes=len(page.encode("utf-8")),
    )
    return page, stats
