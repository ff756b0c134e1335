"""Text for the simulator's turns: synthetic by default, or real conversation text from a LoCoMo file.

The workload only says how long a turn is and gives it a seed; a content source renders it, the same
way every time. Synthetic text mixes common words with a few subjects per session (so the extractive
distiller groups turns into topics as it would a real conversation), numbers and punctuation.

`LocomoContent` reads a LoCoMo-format JSON file (a list of conversations, each with `conversation`
holding `session_<n>` lists of `{"speaker", "text", ...}` turns) from the path it is given, at run time:
the dataset's licence (CC BY-NC) keeps it out of this package. A simulated session follows one LoCoMo
dialogue turn by turn, from an offset chosen by its seed; a long turn joins consecutive ones.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any, Protocol

from ._workload import SessionScript, Step

__all__ = ["Content", "LocomoContent", "SyntheticContent", "load_content"]


class Content(Protocol):
    name: str

    def text(self, script: SessionScript, step: Step) -> str: ...


_COMMON = tuple(
    """the a an of to in on for with and but or so because while after before when if then this that these
    those it its we you they I my your our their is are was were be been have has had do does did can could
    would should might will may must not no yes maybe please thanks sure again still already almost never
    always often about around between into over under more most less some any every each other another such
    what which who how why where there here now today tomorrow yesterday week month year time way thing idea
    plan step result question answer reason note draft list option value number part point case example
    good better best bad new old first last next few many much little big small long short right wrong
    really quite very just also even only well think know want need like try make take give find tell ask
    look see feel seem keep let put run read write check fix change start stop finish move turn open close""".split()
)
_SUBJECTS = tuple(
    """lisbon garden violin python recipes sailing budget moving chess tea bikes pottery marathon tomatoes
    kayak quantum espresso mortgage wedding puppy kitten camping trains sourdough compost solar guitar piano
    painting knitting climbing skiing surfing tennis football basketball baseball cricket rugby hiking
    photography astronomy telescope volcano glacier desert jungle island harbour lighthouse castle museum
    library theatre opera ballet jazz poetry novel biography history philosophy economics statistics
    calculus geometry chemistry biology physics genetics vaccine allergy insomnia yoga meditation dentist
    pharmacy insurance taxes pension savings crypto stocks startup interview resume promotion salary
    commute apartment landlord renovation plumbing roofing flooring kitchen bathroom balcony furniture
    laundry groceries vegan barbecue pasta curry sushi dumplings tacos pancakes chocolate cheese wine
    cocktails brewery vineyard orchard beekeeping chickens goats horses aquarium reptiles parrots
    drones robotics arduino raspberry linux kubernetes database compiler rust haskell typescript
    spreadsheet invoice contract lawyer court election volunteer charity festival carnival birthday
    anniversary funeral graduation scholarship thesis seminar conference vacation passport visa airport
    luggage hostel roadtrip caravan ferry subway tram scooter motorcycle electric battery charger""".split()
)


class SyntheticContent:
    """Deterministic filler text: common words, the session's subjects, numbers, sentences."""

    name = "synthetic"

    def __init__(self) -> None:
        self._pools: dict[int, tuple[list[str], list[float]]] = {}

    def _pool(self, flavor: int) -> tuple[list[str], list[float]]:
        """The session's words and their cumulative weights: 83 % common words, 14 % its subjects,
        3 % numbers (`#`)."""
        found = self._pools.get(flavor)
        if found is None:
            rng = random.Random(flavor)
            subjects = rng.sample(_SUBJECTS, rng.randint(2, 6))
            words = [*_COMMON, *subjects, "#"]
            weights = [0.83 / len(_COMMON)] * len(_COMMON) + [0.14 / len(subjects)] * len(subjects) + [0.03]
            cumulative: list[float] = []
            total = 0.0
            for weight in weights:
                total += weight
                cumulative.append(total)
            if len(self._pools) > 4096:
                self._pools.clear()
            found = self._pools[flavor] = (words, cumulative)
        return found

    def text(self, script: SessionScript, step: Step) -> str:
        if step.role == "system":
            return "You are a helpful assistant. Keep answers short."
        rng = random.Random(step.text)
        words, cumulative = self._pool(script.flavor)
        count = max(2, round(step.tokens / 1.3))  # ≈ 1.3 cl100k tokens per English word
        drawn = rng.choices(words, cum_weights=cumulative, k=count)
        sentences: list[str] = []
        start = 0
        while start < count:
            end = min(count, start + rng.randint(6, 18))
            sentence = " ".join(str(rng.randint(2, 9999)) if w == "#" else w for w in drawn[start:end])
            sentences.append(sentence[:1].upper() + sentence[1:] + rng.choice(".....?!"))
            start = end
        return " ".join(sentences)


_SESSION_KEY = re.compile(r"session_(\d+)")


def _dialogues(data: Any) -> list[list[str]]:
    if not isinstance(data, list):
        raise ValueError("a LoCoMo file holds a JSON list of conversations")
    dialogues: list[list[str]] = []
    for sample in data:
        conversation = sample.get("conversation") if isinstance(sample, dict) else None
        if not isinstance(conversation, dict):
            continue
        keys = [k for k in conversation if _SESSION_KEY.fullmatch(k) and isinstance(conversation[k], list)]
        for key in sorted(keys, key=lambda k: int(k.split("_")[1])):
            turns: list[str] = []
            for turn in conversation[key]:
                if not isinstance(turn, dict) or not isinstance(turn.get("text"), str):
                    continue
                text = turn["text"].strip()
                caption = turn.get("blip_caption")
                if isinstance(caption, str) and caption.strip():
                    text = f"{text} [shares a photo: {caption.strip()}]".strip()
                if text:
                    turns.append(text)
            if turns:
                dialogues.append(turns)
    if not dialogues:
        raise ValueError("no dialogue turns found (expected conversation.session_<n> lists of turns)")
    return dialogues


class LocomoContent:
    """Real conversation text: each simulated session reads one LoCoMo dialogue, in order."""

    name = "locomo"

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.dialogues = _dialogues(json.loads(self.path.read_text(encoding="utf-8")))
        self.turns = sum(len(d) for d in self.dialogues)

    def text(self, script: SessionScript, step: Step) -> str:
        dialogue = self.dialogues[script.flavor % len(self.dialogues)]
        position = (script.flavor // len(self.dialogues) + int(step.node[1:])) % len(dialogue)
        if step.role == "system":
            return "You are a helpful assistant. Keep answers short."
        if step.tokens < 1000:
            return dialogue[position]
        # A long turn (a pasted document): consecutive turns joined, about as long as asked.
        parts: list[str] = []
        size = 0
        while size < step.tokens * 4:
            part = dialogue[(position + len(parts)) % len(dialogue)]
            parts.append(part)
            size += len(part) + 1
        return "\n".join(parts)


def load_content(path: Path | str | None) -> Content:
    return SyntheticContent() if path is None else LocomoContent(path)
