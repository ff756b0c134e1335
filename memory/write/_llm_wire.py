"""The LLM distiller's wire contract (DESIGN §9), pure: the prompt it sends and the answer it accepts.

`render_prompt` builds the user message (BATCH, TOPICS, CORE and INDEX sections, one JSON object a line);
`parse_answer` reads the model's JSON object; `apply_answer` turns it into topic edits with the same
block rules as the extractive distiller (`TopicEdit`). Anything the contract does not allow raises
`InvalidAnswer`, whose `message` goes back to the model in the repair round and whose `kind` (a fixed
phrase, never model or provider text) is all a failure's detail ever says.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import DagmemError
from ..format import (
    TOPIC_INDEX,
    ArchiveRecord,
    Block,
    Topic,
    TopicFormatError,
    count_tokens,
    inert,
    is_topic_path,
    parse_topic,
    parse_topic_index,
)
from ._blocks import TopicEdit
from ._brief import BriefEntry, entry_key
from ._brief_keys import SECTIONS, Section
from ._core_facts import CORE_PATH, CORE_TITLE
from ._distill import RESERVED_TOPIC_SLUGS, TopicReader, _date, _label, file_brief
from ._supersede import Reason, choose, newest_date, off_path, statement

__all__ = [
    "DEDUP_FORMAT",
    "DEDUP_PROMPT",
    "RESPONSE_FORMAT",
    "SUPERSEDE_FORMAT",
    "SUPERSEDE_PROMPT",
    "SYSTEM_PROMPT",
    "Answer",
    "AnswerEdits",
    "InvalidAnswer",
    "apply_answer",
    "index_lines",
    "parse_answer",
    "parse_groups",
    "parse_pairs",
    "plain",
    "refs_of",
    "render_prompt",
    "repair_prompt",
    "scrub",
]

_BLOCK_ID: Final = re.compile(r"b-[0-9a-f]{8}")
MAX_CLAIM: Final = 2_000  # characters
_UNESCAPE: Final = re.compile(r"\\([!-/:-@\[-`{-~])")
_FENCE: Final = "```"
SCRUBBED: Final = "[redacted]"  # what a secret the model echoed becomes (before the answer is validated)

SYSTEM_PROMPT: Final = """\
You maintain the long-term memory of an assistant's conversations. You get a BATCH of new conversation \
records (one JSON object per line, each with a ref such as "r1"), then the TOPICS of memory they may \
belong to (each with its blocks: an id, a claim, its date and its status), then the CORE facts about the \
user, then the INDEX of the other topics, newest first.

Answer with one JSON object and nothing else:
{"topics": [{"path": "topics/<slug>.md", "title": "<title>", "blocks": [{"claim": "<text>", "refs": ["r1"], \
"replaces": null, "supersedes": null}]}], "core": [{"claim": "<text>", "refs": ["r2"], "replaces": null, \
"supersedes": null}], "brief": [{"section": "command", "text": "<text>", "refs": ["r3"]}]}

Rules:
- A claim is one self-contained statement worth remembering, in plain text (no markdown, no links), \
written about "the user" and "the assistant", with dates and names kept.
- refs lists the records a claim rests on; use only refs of this BATCH. Every record that says something \
worth keeping should be cited by some claim.
- A path is topics/ and a lowercase slug of letters, digits and hyphens, then .md. Put a claim into a \
topic shown in TOPICS when it fits, else into an INDEX topic it belongs to, otherwise into a new topic with \
a short title.
- "replaces": null adds a block; the id of a block shown (b-xxxxxxxx) rewrites that block, for a claim \
that updates, corrects or merges it (its evidence is kept). Never repeat a claim that is already there.
- "supersedes": the id of a shown block (b-xxxxxxxx) whose fact this claim makes no longer true: the \
user stated a newer value of the same fact (an update: "I moved to Berlin") or took it back (a \
retraction: "scratch that, I am not vegetarian"). The old block stays, marked superseded. Only for a \
claim resting on the user's own words, never on the assistant's alone; null otherwise, and null when \
the claim merely adds to the old one ("I now also like tea"). Each shown block has its date and status \
("current" or "superseded"); supersede only a current block.
- core holds only stable facts about the user (identity, lasting preferences, standing decisions); \
"replaces" and "supersedes" there name a CORE block. Leave core empty when there is none.
- brief holds what a project established, for the next working session, each entry one short plain \
sentence in a section: "convention" (an order or convention the user typed, in their words), "command" \
(a build, test, lint or run command that ran, with its outcome: "test: `mix test` passed, 87 tests"), \
"decision" (what was chosen, over what, why), "fix" (a problem and what fixed it), "failed" (what was \
tried and did not work), "file" (a file that changed and what for), "open" (work left open), "ended" \
(where the session ended). A newer entry about the same command, file or open work replaces the older \
one by itself. Leave brief empty when the batch establishes nothing of the kind.
"""


def _block_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["claim", "refs", "replaces", "supersedes"],
        "properties": {
            "claim": {"type": "string"},
            "refs": {"type": "array", "items": {"type": "string"}},
            "replaces": {"type": ["string", "null"]},
            "supersedes": {"type": ["string", "null"]},
        },
    }


RESPONSE_FORMAT: Final = {
    "type": "json_schema",
    "json_schema": {
        "name": "dagmem_edits",
        "strict": True,
        "schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["topics", "core", "brief"],
            "properties": {
                "topics": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["path", "title", "blocks"],
                        "properties": {
                            "path": {"type": "string"},
                            "title": {"type": "string"},
                            "blocks": {"type": "array", "items": _block_schema()},
                        },
                    },
                },
                "core": {"type": "array", "items": _block_schema()},
                "brief": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["section", "text", "refs"],
                        "properties": {
                            "section": {"type": "string", "enum": list(SECTIONS)},
                            "text": {"type": "string"},
                            "refs": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                },
            },
        },
    },
}


DEDUP_PROMPT: Final = """\
You consolidate one topic file of an assistant's long-term memory. You get its path, then its blocks, one \
JSON object per line: {"id": "b-xxxxxxxx", "claim": "<text>"}. Find blocks that state the same fact \
(repeated, or one saying all that another says). Answer with one JSON object and nothing else:
{"groups": [{"ids": ["b-...", "b-..."], "claim": "<one plain-text claim that says it all>"}]}
A group has two or more ids of this file; a block is in at most one group; blocks without a duplicate \
are left out; answer {"groups": []} when there are none.
"""

DEDUP_FORMAT: Final = {
    "type": "json_schema",
    "json_schema": {
        "name": "dagmem_duplicates",
        "strict": True,
        "schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["groups"],
            "properties": {
                "groups": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["ids", "claim"],
                        "properties": {
                            "ids": {"type": "array", "items": {"type": "string"}},
                            "claim": {"type": "string"},
                        },
                    },
                }
            },
        },
    },
}


SUPERSEDE_PROMPT: Final = """\
You review one topic file of an assistant's long-term memory for facts that are no longer true. You get its \
path, then its blocks, one JSON object per line: {"id": "b-xxxxxxxx", "claim": "<text>", "date": \
"YYYY-MM-DD", "status": "current"|"superseded"}. Find each current block whose fact a newer block makes no \
longer true: the user stated a newer value of the same fact (an update: "I moved to Berlin" after "I live in \
Paris") or took it back (a retraction: "I am not vegetarian" after "I am vegetarian"). Not when the newer \
block only adds to the older one, is about someone else, or is a question or a plan. Answer with one JSON \
object and nothing else:
{"supersessions": [{"old": "b-...", "new": "b-..."}]}
old and new are ids of this file; new is dated no earlier than old; answer {"supersessions": []} when \
there are none.
"""

SUPERSEDE_FORMAT: Final = {
    "type": "json_schema",
    "json_schema": {
        "name": "dagmem_supersessions",
        "strict": True,
        "schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["supersessions"],
            "properties": {
                "supersessions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["old", "new"],
                        "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                    },
                }
            },
        },
    },
}


class InvalidAnswer(DagmemError):
    """Internal: an answer the contract does not allow (it becomes a repair round, or MODEL_BAD_RESPONSE)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(kind)
        self.kind = kind  # a fixed phrase: safe for logs and failure details
        self.message = message  # for the model (may quote what it said)


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid")
    claim: str
    refs: list[str]
    replaces: str | None = None
    supersedes: str | None = None


class _Topic(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    title: str = ""
    blocks: list[_Block]


class _BriefItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    section: Section
    text: str
    refs: list[str]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    topics: list[_Topic]
    core: list[_Block] = Field(default_factory=list)
    brief: list[_BriefItem] = Field(default_factory=list)


def plain(claim: str) -> str:
    """A stored claim as the model should read it: without the backslashes that made it inert."""
    return _UNESCAPE.sub(r"\1", claim)


def _line(value: object) -> str:
    # One object, one line: json escapes \n and \r; U+2028, U+2029 and NEL are line breaks to some readers.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def refs_of(records: Sequence[ArchiveRecord]) -> dict[str, ArchiveRecord]:
    return {f"r{i}": record for i, record in enumerate(records, start=1)}


def batch_lines(records: Sequence[ArchiveRecord]) -> list[str]:
    return [
        _line({"ref": ref, "speaker": r.role, "time": _iso(r.created_at), "content": r.content})
        for ref, r in refs_of(records).items()
    ]


def _shown(block: Block) -> dict[str, str]:
    """A block as the model sees it: its id, claim, newest date, and whether it is still current."""
    status = "current" if block.superseded is None else "superseded"
    return {"id": block.id, "claim": plain(block.claim), "date": newest_date(block), "status": status}


def topic_line(path: str, topic: Topic) -> str:
    blocks = [_shown(b) for b in topic.blocks]
    return _line({"path": path, "title": plain(topic.title), "blocks": blocks})


def core_lines(core: Topic | None) -> list[str]:
    return [] if core is None else [_line(_shown(b)) for b in core.blocks]


def index_lines(text: str | None, *, skip: Sequence[str] = (), budget: int) -> list[str]:
    """The INDEX lines: one object per topic of the topic index `text` (newest first) that is not among
    `skip` (those shown in TOPICS), while they fit in `budget` tokens. No index (or one that does not
    read as one): none."""
    if not text:
        return []
    try:
        entries = parse_topic_index(text).entries
    except TopicFormatError:
        return []
    lines: list[str] = []
    used = 0
    for entry in entries:
        if entry.path in skip:
            continue
        line = _line(
            {
                "path": entry.path,
                "title": plain(entry.title),
                "description": plain(entry.description),
                "blocks": entry.blocks,
                "last": entry.last,
            }
        )
        tokens = count_tokens(line) + 1  # and its newline
        if used + tokens > budget:
            break  # newest first: the older ones are left out
        lines.append(line)
        used += tokens
    return lines


def render_prompt(
    batch: Sequence[str], topics: Sequence[str], core: Sequence[str], index: Sequence[str] = ()
) -> str:
    return "\n".join(["BATCH", *batch, "TOPICS", *topics, "CORE", *core, "INDEX", *index]) + "\n"


def repair_prompt(error: InvalidAnswer) -> str:
    return (
        f"Your answer was not accepted: {error.message}\n"
        "Answer again with the whole corrected JSON object, following the rules, and nothing else."
    )


def parse_answer(content: str | None, *, secrets: Sequence[str] = ()) -> Answer:
    """The answer object; `secrets` (the configured key) are scrubbed from it before it is validated."""
    try:
        return Answer.model_validate(_json(content, secrets))
    except ValidationError as exc:
        raise _schema_error(exc) from None


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ids: list[str]
    claim: str


class _Groups(BaseModel):
    model_config = ConfigDict(extra="forbid")
    groups: list[_Group]


def _unfenced(content: str) -> str:
    """The body of an answer wrapped in one markdown code fence (```json ... ```), else the answer. String
    operations, not a regex: a model stuck emitting newlines inside a fence made the old pattern cubic."""
    text = content.strip()
    if not text.startswith(_FENCE) or not text.endswith(_FENCE):
        return content
    opening = text.find("\n")
    if opening < 0 or text[len(_FENCE) : opening].strip() not in ("", "json"):
        return content
    body = text[opening + 1 : len(text) - len(_FENCE)]
    return body if "\n" in body[len(body.rstrip()) :] else content  # the closing fence on its own line


def scrub(value: Any, secrets: Sequence[str]) -> Any:
    """`value` (parsed JSON) with every secret in its strings replaced: a key the server echoed back never
    becomes memory, nor reaches a later model server in a prompt."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, SCRUBBED)
        return value
    if isinstance(value, list):
        return [scrub(item, secrets) for item in value]
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    return value


def _json(content: str | None, secrets: Sequence[str] = ()) -> Any:
    if content is None or not content.strip():
        raise InvalidAnswer("empty answer", "the answer was empty; it must be one JSON object")
    try:
        return scrub(json.loads(_unfenced(content)), secrets)
    except json.JSONDecodeError as exc:
        raise InvalidAnswer("not JSON", f"the answer is not valid JSON ({exc.msg} at {exc.pos})") from None
    except RecursionError:  # "[[[[...": deeper than the parser (or the scrub) goes
        raise InvalidAnswer("not JSON", "the answer nests too deeply to be the answer object") from None


def _schema_error(exc: ValidationError) -> InvalidAnswer:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'the object'}: {e['msg']}" for e in exc.errors()[:5]
    )
    return InvalidAnswer("not the answer schema", f"the JSON does not follow the schema: {problems}")


def parse_groups(
    content: str | None, block_ids: Sequence[str], *, secrets: Sequence[str] = ()
) -> list[tuple[list[str], str]]:
    """The duplicate groups of a consolidation answer, each checked against the file's block ids."""
    try:
        groups = _Groups.model_validate(_json(content, secrets)).groups
    except ValidationError as exc:
        raise _schema_error(exc) from None
    known = set(block_ids)
    seen: set[str] = set()
    out: list[tuple[list[str], str]] = []
    for g, group in enumerate(groups):
        ids = list(dict.fromkeys(group.ids))
        where = f"groups[{g}]"
        if len(ids) < 2:
            raise InvalidAnswer("group of one", f"{where}: a group needs two or more ids")
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise InvalidAnswer("unknown block", f"{where}: {unknown[0]!r} is not a block of this file")
        twice = [i for i in ids if i in seen]
        if twice:
            raise InvalidAnswer("block in two groups", f"{where}: {twice[0]} is already in another group")
        claim = " ".join(group.claim.split())
        if not claim or len(claim) > MAX_CLAIM:
            raise InvalidAnswer("bad claim", f"{where}: the claim must be 1 to {MAX_CLAIM} characters")
        seen.update(ids)
        out.append((ids, claim))
    return out


class _Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    old: str
    new: str


class _Pairs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    supersessions: list[_Pair]


def parse_pairs(
    content: str | None, block_ids: Sequence[str], *, secrets: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """The (old, new) pairs of a supersession review, each naming two different blocks of the file (the
    rules of the branch, the dates and cycles are the caller's to check)."""
    try:
        pairs = _Pairs.model_validate(_json(content, secrets)).supersessions
    except ValidationError as exc:
        raise _schema_error(exc) from None
    known = set(block_ids)
    out: list[tuple[str, str]] = []
    for n, pair in enumerate(pairs):
        where = f"supersessions[{n}]"
        unknown = [i for i in (pair.old, pair.new) if i not in known]
        if unknown:
            raise InvalidAnswer("unknown block", f"{where}: {unknown[0]!r} is not a block of this file")
        if pair.old == pair.new:
            raise InvalidAnswer("supersedes itself", f"{where}: a block cannot supersede itself")
        out.append((pair.old, pair.new))
    return out


@dataclass
class AnswerEdits:
    edits: dict[str, str]  # path -> new text, only files that changed
    cited: set[str]  # source ids some block cites


def apply_answer(
    answer: Answer,
    records: Sequence[ArchiveRecord],
    topics: TopicReader,
    *,
    session_id: str,
    on_path: Callable[[str], bool],
    open_part: Callable[[str, Mapping[str, TopicEdit]], str],
    shown: Sequence[str] = (),
) -> AnswerEdits:
    """The answer as topic edits. `on_path(anchor)`: does this session's record lie on the batch's path
    (§9's rule for `replaces` and `supersedes`)? `open_part(path, edits)`: the part of that topic that still
    has room for a new block, judged with the edits so far (topic files stay bounded per block, as the
    extractive distiller's do). `shown`: the topic files the prompt showed (with the core master, the
    files a `supersedes` may name a block of)."""
    refs = refs_of(records)
    files: dict[str, TopicEdit] = {}
    replaced: set[tuple[str, str]] = set()
    superseded: set[str] = set()
    cited: set[str] = set()
    holders: dict[str, str] | None = None  # block id -> the shown file holding it, read on first use

    def holder(block_id: str) -> str | None:
        nonlocal holders
        for path, edit in files.items():
            if edit.block(block_id) is not None:
                return path
        if holders is None:
            holders = {}
            for path in dict.fromkeys([*shown, CORE_PATH]):
                text = topics.read(path)
                try:
                    topic = parse_topic(text, path) if text is not None else None
                except TopicFormatError:
                    topic = None  # not shown either; the validator reports the file if an edit touches it
                holders.update({b.id: path for b in topic.blocks} if topic is not None else {})
        return holders.get(block_id)

    def supersede(
        where: str, new: Block, new_path: str, block: _Block, chosen: Sequence[ArchiveRecord]
    ) -> None:
        target = block.supersedes
        assert target is not None
        path = holder(target) if _BLOCK_ID.fullmatch(target) else None
        if path is None:
            raise InvalidAnswer(
                "supersedes an unknown block", f"{where}: supersedes {target!r}, which is not a shown block"
            )
        if target in (new.id, block.replaces):
            raise InvalidAnswer("supersedes itself", f"{where}: a block cannot supersede itself ({target})")
        users = [r for r in chosen if r.role == "user"]
        if not users:
            raise InvalidAnswer(
                "supersedes on the assistant's words",
                f"{where}: supersedes needs a ref to the user's own words; the assistant cannot supersede a fact",
            )
        if path not in files:
            files[path] = TopicEdit(path, topics.read(path), "")  # an existing file: its own title is kept
        edit = files[path]
        old = edit.block(target)
        assert old is not None
        if target in superseded or old.superseded is not None:
            raise InvalidAnswer(
                "supersedes a superseded block",
                f"{where}: {target} is already superseded; name a current block",
            )
        if off_path(old, session_id, on_path):
            raise InvalidAnswer(
                "supersedes another branch",
                f"{where}: {target} rests on another branch of this conversation (an alternative the user "
                "left, not an older value); set supersedes to null",
            )
        superseded.add(target)
        edit.supersede(target, new, new_path, _reason(old, users))

    def edit_of(path: str, title: str) -> TopicEdit:
        if path not in files:
            files[path] = TopicEdit(path, topics.read(path), title)
        return files[path]

    def place(where: str, path: str, title: str, block: _Block) -> None:
        claim = " ".join(block.claim.split())
        if not claim:
            raise InvalidAnswer("empty claim", f"{where}: the claim is empty")
        if len(claim) > MAX_CLAIM:
            raise InvalidAnswer("claim too long", f"{where}: a claim has at most {MAX_CLAIM} characters")
        if not block.refs:
            raise InvalidAnswer("claim without refs", f"{where}: refs is empty; cite the records it rests on")
        unknown = [ref for ref in block.refs if ref not in refs]
        if unknown:
            raise InvalidAnswer(
                "ref outside the batch",
                f"{where}: {unknown[0]!r} is not a ref of this BATCH (r1 to r{len(refs)})",
            )
        chosen = [r for ref, r in refs.items() if ref in set(block.refs)]
        groups = [(_date(chosen[-1].created_at), [(_label(r), r.source_id) for r in chosen])]
        text = inert(claim)
        edit = edit_of(path, title)
        placed: tuple[Block, str]
        if block.replaces is None:
            target = path if path == CORE_PATH else open_part(path, files)
            into = edit if target == path else edit_of(target, edit.title)
            placed = (into.add(text, groups), target)
        else:
            if not _BLOCK_ID.fullmatch(block.replaces) or edit.block(block.replaces) is None:
                raise InvalidAnswer(
                    "replaces an unknown block",
                    f"{where}: replaces {block.replaces!r}, which is not a block of {path}",
                )
            if (path, block.replaces) in replaced:
                raise InvalidAnswer("block replaced twice", f"{where}: {block.replaces} is replaced twice")
            replaced.add((path, block.replaces))
            old = edit.block(block.replaces)
            assert old is not None
            if all(on_path(s.anchor) for c in old.citations for s in c.sources if s.session_id == session_id):
                placed = (edit.replace(block.replaces, text, groups), path)
            else:  # its evidence lies on a sibling branch: §8 keeps the claims apart
                placed = (edit.add(text, groups), path)
        if block.supersedes is not None:
            supersede(where, placed[0], placed[1], block, chosen)
        cited.update(r.source_id for r in chosen)

    for t, topic in enumerate(answer.topics):
        if topic.path == TOPIC_INDEX:
            raise InvalidAnswer(
                "the topic index as a topic", f"topics[{t}]: {TOPIC_INDEX} is the index, never a topic"
            )
        if topic.path == CORE_PATH or topic.path[7:-3].split("--")[0] in RESERVED_TOPIC_SLUGS:
            raise InvalidAnswer("core facts as a topic", f"topics[{t}]: core facts go in the core field")
        if not is_topic_path(topic.path):
            raise InvalidAnswer(
                "bad topic path",
                f"topics[{t}]: path {topic.path!r} must be topics/<lowercase letters, digits, hyphens>.md",
            )
        title = inert(" ".join(topic.title.split())) or topic.path[7:-3]
        for b, block in enumerate(topic.blocks):
            place(f"topics[{t}].blocks[{b}]", topic.path, title, block)
    for b, block in enumerate(answer.core):
        place(f"core[{b}]", CORE_PATH, CORE_TITLE, block)
    entries: list[BriefEntry] = []
    for b, item in enumerate(answer.brief):
        where = f"brief[{b}]"
        text = " ".join(item.text.split())
        if not text or len(text) > MAX_CLAIM:
            raise InvalidAnswer("bad brief entry", f"{where}: the text must hold 1 to {MAX_CLAIM} characters")
        unknown = [ref for ref in item.refs if ref not in refs]
        if not item.refs or unknown:
            raise InvalidAnswer(
                "ref outside the batch", f"{where}: cite refs of this BATCH (r1 to r{len(refs)})"
            )
        chosen = tuple(r for ref, r in refs.items() if ref in set(item.refs))
        if item.section == "convention" and any(r.effective_origin != "user" for r in chosen):
            raise InvalidAnswer(
                "a convention not typed by the user",
                f"{where}: a convention cites only records the user typed (role user); use another section",
            )
        entries.append(BriefEntry(item.section, entry_key(item.section, text), text, chosen))
        cited.update(r.source_id for r in chosen)
    if entries:
        file_brief(entries, topics, files, session_id=session_id, on_path=on_path, aside=None)
    return AnswerEdits({path: e.render() for path, e in files.items() if e.changed}, cited)


def _reason(old: Block, users: Sequence[ArchiveRecord]) -> Reason:
    """Why the model's supersession holds: the deterministic rule's reason when it agrees, else the cue
    of the user's words ("scratch that": a retraction), else an update."""
    words = " ".join(r.content for r in users)
    picked = choose(words, [(old, True)])
    if picked is not None:
        return picked[1]
    return "retraction" if statement(words).cue == "retraction" else "update"
