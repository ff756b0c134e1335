"""`dagmem bench beam`: BEAM's chats and their probing questions, with each question's evidence as turns.

A chat (`<split>/<n>/chat.json`) is a list of batches; each batch's `turns` are lists of `{role, id,
content, time_anchor?, index?}`. A turn with a `time_anchor` ("March-03-2024") dates itself and the
turns after it; a batch (or a new date) starts a new session. A user turn ends with its plan position,
" ->-> 2,4" (`index`: batch and bullet of the plan the chat was generated from): a generator's mark, cut
from the text (memory and the baseline see the same text).

`probing_questions.json` (beside chat.json, or in `probing_questions/`) maps ten categories to questions.
Their evidence is given in several forms, tried in this order:

1. `source_chat_ids`: turn ids, as a list, nested lists, or a dict of lists (`original_info` /
   `updated_info`, `first_statement` / `second_statement`, `first_event` / `second_event`);
2. an `index` ("2,4"): the turns of that plan position;
3. `conversation_references` (or `conversation_reference`), each string one piece of evidence:
   "Batch 2, Turn 4" or "2,4" (a plan position), "Session 206: ...", "Sessions 160, 162", "chat_id: 58",
   "222, 228" (turn ids), or a quoted statement ("Information Update: The deadline was extended to July
   7"), matched to the turn holding the largest share of its words (at least `QUOTE_SHARE`; a leading
   "Label:" is dropped). "Turn 1: ..." counts a turn within some session, not an id, so only its words
   can map it.

A question none of these maps (abstention questions, which rest on a plan bullet the chat never states)
is counted, by category, and not asked. Each piece of evidence is a group of turns, any one of which
holds it; all@k needs every group. For knowledge_update and contradiction_resolution questions given as
two parts (two keys, or two references), the part said first is the older statement.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..memory.errors import InvalidInput

__all__ = ["CHECKOUT", "Chat", "Question", "Turn", "beam_root", "chat_dirs", "load_chat", "map_evidence"]

CHECKOUT = Path(__file__).resolve().parent.parent  # the checkout is the package
DEFAULT_EPOCH = 1_704_067_200.0  # 2024-01-01 UTC: the date of turns before a chat's first anchor
QUOTE_SHARE = 0.6
_INDEX_MARK = re.compile(r"\s*->->[^\n]{0,24}$")
_DATES = ("%B-%d-%Y", "%b-%d-%Y", "%B %d, %Y", "%b %d, %Y", "%Y-%m-%d", "%d %B %Y", "%B-%d-%y")
_PLAN = re.compile(r"batch\s*(\d+)\W{0,3}\s*(?:turn|bullet)\s*(\d+)", re.IGNORECASE)
_BARE_INDEX = re.compile(r"\s*(\d+),(\d+)\s*")
_IDS = re.compile(
    r"\s*(?:sessions?|chat[_ ]?ids?|ids?|messages?)?\s*[:#]?\s*(\d+(?:\s*(?:,|and|&)\s*\d+)*)\s*(?::(.*))?",
    re.IGNORECASE | re.DOTALL,
)
_LABELS = re.compile(r"^(?:(?:[A-Z][A-Za-z &/-]{0,60}|Turns? \d+(?:\s*(?:,|and)\s*\d+)*):\s*)+")


@dataclass(frozen=True)
class Turn:
    node: str  # t<id> (b<batch>-<n> for a turn without an id)
    source: int | None  # BEAM's id
    session: str
    role: str
    text: str
    when: float
    index: str | None  # the plan position, "batch,bullet"


@dataclass(frozen=True)
class Question:
    category: str
    text: str
    groups: tuple[frozenset[str], ...]  # the evidence: node ids, one group per piece (any of its turns)
    form: str  # ids / index / references / quotes / none
    old: frozenset[str] | None = None  # knowledge_update, contradiction_resolution: the older statement
    new: frozenset[str] | None = None
    # Given by ids and by references both: do the turns the references map to meet the ids' turns?
    agrees: bool | None = None


@dataclass(frozen=True)
class Chat:
    name: str  # <split>-<n>
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def beam_root(data: Path | None, env: Mapping[str, str] | None = None) -> Path:
    """`--data`, else `$DAGMEM_BEAM`, else `shared/data/beam-dev` beside the checkout."""
    env = os.environ if env is None else env
    if data is None and env.get("DAGMEM_BEAM"):
        data = Path(env["DAGMEM_BEAM"])
    if data is None:
        data = CHECKOUT.parent / "shared" / "data" / "beam-dev"
    if not data.is_dir():
        raise InvalidInput(
            f"dagmem bench beam needs BEAM's chats: --data DIR (or $DAGMEM_BEAM); {data} is not a directory"
        )
    return data


def chat_dirs(root: Path) -> list[Path]:
    """Every directory under `root` (itself included) holding a chat.json, in split and number order."""

    def key(path: Path) -> tuple[Any, ...]:
        return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.relative_to(root).parts)

    found = sorted({p.parent for p in root.rglob("chat.json")}, key=key)
    if not found:
        raise InvalidInput(f"--data {root}: no chat.json under it (BEAM's layout: <split>/<n>/chat.json)")
    return found


def load_chat(directory: Path, root: Path) -> Chat:
    name = "-".join(directory.relative_to(root).parts) or directory.name
    name = re.sub(r"[^A-Za-z0-9_-]", "-", name) or "chat"
    batches = _json(directory / "chat.json")
    if not isinstance(batches, list):
        raise InvalidInput(f"{directory / 'chat.json'}: expected a list of batches")
    turns = _turns(batches, name)
    probing = next((p for p in (directory / "probing_questions.json",
                                directory / "probing_questions" / "probing_questions.json") if p.exists()), None)  # fmt: skip
    raw = _json(probing) if probing is not None else {}
    questions = []
    for category, entries in raw.items() if isinstance(raw, dict) else ():
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and entry.get("question"):
                questions.append(map_evidence(str(category), entry, turns))
    return Chat(name, tuple(turns), tuple(questions))


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path}: not a readable JSON file: {exc}") from None


def _date(text: object) -> float | None:
    for form in _DATES:
        try:
            return datetime.strptime(str(text).strip(), form).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    return None


def _turns(batches: Sequence[Any], name: str) -> list[Turn]:
    out: list[Turn] = []
    when, sessions, day = DEFAULT_EPOCH, 0, None
    for number, batch in enumerate(batches, 1):
        if not isinstance(batch, dict):
            continue
        anchor = _date(batch.get("time_anchor")) if batch.get("time_anchor") else None
        when = anchor if anchor is not None else when
        new_batch = True
        position = 0
        for group in batch.get("turns") or []:
            for turn in group if isinstance(group, list) else [group]:
                position += 1
                dated = _date(turn.get("time_anchor")) if turn.get("time_anchor") else None
                when = dated if dated is not None else when
                text = _INDEX_MARK.sub("", str(turn.get("content") or "")).strip()
                if not text:
                    continue
                if new_batch or (dated is not None and dated != day):
                    sessions += 1
                    day, new_batch = when, False
                ident = turn.get("id")
                source = ident if isinstance(ident, int) and not isinstance(ident, bool) else None
                role = str(turn.get("role") or "user")
                out.append(Turn(
                    node=f"t{source}" if source is not None else f"b{number}-{position}",
                    source=source, session=f"{name}-{sessions:02d}", role=role if role in ("user", "assistant") else "user",
                    text=text, when=when, index=str(turn["index"]) if turn.get("index") else None,
                ))  # fmt: skip
    return out


# -- evidence --------------------------------------------------------------------------------------------


def _flat(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        return [int(v) for v in re.findall(r"\d+", value)]
    if isinstance(value, list | tuple):
        return [i for v in value for i in _flat(v)]
    if isinstance(value, dict):
        return [i for v in value.values() for i in _flat(v)]
    return []


class _Turns:
    """A chat's turns as the evidence forms name them: by id, by plan position, by words."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        from ..memory.recall import analyse

        self.analyse = analyse
        self.turns = turns
        self.by_id = {t.source: t.node for t in turns if t.source is not None}
        self.position = {t.node: i for i, t in enumerate(turns)}
        self.by_index: dict[str, list[str]] = {}
        for t in turns:
            if t.index:
                self.by_index.setdefault(t.index.replace(" ", ""), []).append(t.node)
        self._words: list[set[str]] | None = None

    def ids(self, ids: Iterable[int]) -> list[frozenset[str]]:
        nodes = dict.fromkeys(self.by_id[i] for i in ids if i in self.by_id)
        return [frozenset({n}) for n in nodes]

    def index(self, batch: str, bullet: str) -> list[frozenset[str]]:
        nodes = self.by_index.get(f"{int(batch)},{int(bullet)}")
        return [frozenset(nodes)] if nodes else []

    def words(self) -> list[set[str]]:
        if self._words is None:
            self._words = [set(self.analyse(t.text)) for t in self.turns]
        return self._words

    def quote(self, text: str) -> list[frozenset[str]]:
        """The turn holding the largest share of the statement's words (the user's, on a tie), if that
        share is at least `QUOTE_SHARE`."""
        words = set(self.analyse(_LABELS.sub("", text)))
        if len(words) < 4:
            return []
        shares = [len(words & have) / len(words) for have in self.words()]
        best = max(shares, default=0.0)
        if best < QUOTE_SHARE:
            return []
        tied = [t for t, share in zip(self.turns, shares, strict=True) if share >= best - 1e-9]
        users = [t for t in tied if t.role == "user"]
        return [frozenset(t.node for t in users or tied)]

    def reference(self, text: str) -> tuple[list[frozenset[str]], str]:
        """One reference string's evidence and its form (see the module's list)."""
        plan = _PLAN.search(text) or _BARE_INDEX.fullmatch(text)
        if plan is not None and self.index(plan[1], plan[2]):
            return self.index(plan[1], plan[2]), "index"
        ids = _IDS.fullmatch(text)
        if ids is not None and not re.match(r"\s*turn", text, re.IGNORECASE):
            found = self.ids(int(i) for i in re.findall(r"\d+", ids[1]))
            # An id whose turn does not hold its description is no evidence (nor is its paraphrase a quote).
            return (
                (found, "references")
                if found and self._described(found, ids[2] or "")
                else ([], "references")
            )
        return self.quote(text), "quotes"

    def _described(self, found: list[frozenset[str]], description: str) -> bool:
        """Whether the turns an id reference names hold at least half of the words of its description
        ("Session 206: Never attended workshops"): "Session 1" is sometimes an id, sometimes an ordinal."""
        words = set(self.analyse(description))
        if not words:
            return True
        have = set().union(*(self.words()[self.position[n]] for group in found for n in group))
        return len(words & have) * 2 >= len(words)


def map_evidence(category: str, entry: Mapping[str, Any], turns: Sequence[Turn] | _Turns) -> Question:
    """The question `entry` of `category` with its evidence as groups of node ids (none: unmapped)."""
    chat = turns if isinstance(turns, _Turns) else _Turns(turns)
    parts, form = _parts(entry, chat)
    groups = tuple(dict.fromkeys(g for part in parts for g in part))
    agrees = None
    if form == "ids":
        referenced, _ = _references(entry, chat)
        seen = frozenset().union(*(g for part in referenced for g in part))
        agrees = bool(seen & frozenset().union(*groups)) if seen else None
    old = new = None
    mapped = [frozenset().union(*part) for part in parts if part]
    two = len(mapped) == 2 and not mapped[0] & mapped[1]
    if category in ("knowledge_update", "contradiction_resolution") and two:
        old, new = sorted(mapped, key=lambda nodes: min(chat.position[n] for n in nodes))
    return Question(category, str(entry["question"]), groups, form if groups else "none", old, new, agrees)


def _parts(entry: Mapping[str, Any], chat: _Turns) -> tuple[list[list[frozenset[str]]], str]:
    """The evidence of a question, one list of groups per part it names, and the form that gave it."""
    source = entry.get("source_chat_ids")
    if isinstance(source, dict):
        parts = [chat.ids(_flat(v)) for v in source.values()]
    else:
        parts = [chat.ids(_flat(source))]
    if any(parts):
        return parts, "ids"
    raw = entry.get("index")
    indexes = raw if isinstance(raw, list) else [raw] if raw else []
    matches = [_BARE_INDEX.fullmatch(str(i).replace(" ", "")) for i in indexes]
    parts = [chat.index(m[1], m[2]) for m in matches if m is not None]
    if any(parts):
        return parts, "index"
    return _references(entry, chat)


def _references(entry: Mapping[str, Any], chat: _Turns) -> tuple[list[list[frozenset[str]]], str]:
    refs = entry.get("conversation_references", entry.get("conversation_reference"))
    refs = [refs] if isinstance(refs, str) else refs if isinstance(refs, list) else []
    parts, forms = [], set()
    for ref in refs:
        found, how = chat.reference(str(ref))
        parts.append(found)
        if found:
            forms.add(how)
    return parts, "+".join(sorted(forms)) or "none"
