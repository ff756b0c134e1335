"""What the `dagmem bench` benchmarks share: the command wrapper, the scratch directory, order statistics,
cProfile digests, report tables and the seeded text the turns are made of.

Private to `dagmem.sim.bench_*`; nothing here measures anything by itself.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

from ..memory.write import NUMERIC_ATTRIBUTES

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

Progress = Callable[[str], None]

# -- the command and its scratch directory --------------------------------------------------------------


def cli(
    args: argparse.Namespace,
    measure: Callable[[bool, Progress], dict[str, Any]],
    print_report: Callable[[dict[str, Any]], None],
    *,
    elapsed: bool = False,
) -> int:
    """The body of `dagmem bench NAME [--quick] [--json]`: `measure(quick, progress)` with progress lines on
    stderr (after the seconds since the start if `elapsed`), then the report, or with `--json` the result as
    one JSON object. Report only: the exit status is 0 whatever the figures."""
    from .._console import console

    quick = bool(getattr(args, "quick", False))
    as_json = bool(getattr(args, "json", False))
    err = console(stderr=True)
    started = time.perf_counter()

    def progress(message: str) -> None:
        clock = f"{time.perf_counter() - started:6.1f} s  " if elapsed else ""
        err.print(f"[dim]{clock}{message}[/dim]")

    result = measure(quick, progress)
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)
    return 0


@contextmanager
def scratch(name: str, parent: Path | None) -> Iterator[Path]:
    """A fresh temporary directory `dagmem-bench-NAME-*` (under `parent`, else `TMPDIR`), removed after."""
    path = Path(tempfile.mkdtemp(prefix=f"dagmem-bench-{name}-", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- statistics and cProfile ----------------------------------------------------------------------------


def fresh_process_env(**extra: str) -> dict[str, str]:
    """The environment of a fresh process a cold-start figure times: this one's, but with bytecode cached
    as an installed dagmem has it (`PYTHONDONTWRITEBYTECODE` would make every run compile every dagmem
    module from source again, a cost no installed hook pays)."""
    env = {**os.environ, **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def quantile(ordered: Sequence[float], q: float) -> float:
    """Nearest rank over sorted values: the smallest value with at least q of the values at or below it."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def ratio(large: float, small: float) -> float:
    """`large / small` to three decimals (infinite if `small` is not positive)."""
    return round(large / small, 3) if small > 0 else math.inf


def profile_functions(profiler: cProfile.Profile, count: int) -> dict[str, tuple[float, float]]:
    """`dir/file:qualname` (a built-in: `~:name`) -> (cumulative ms, self ms) per one of `count` operations."""
    out: dict[str, tuple[float, float]] = {}
    for entry in profiler.getstats():
        code = entry.code
        if isinstance(code, CodeType):
            key = f"{'/'.join(Path(code.co_filename).parts[-3:])}:{code.co_qualname}"
        else:
            key = f"~:{code}"
        cum, own = out.get(key, (0.0, 0.0))
        out[key] = (cum + entry.totaltime * 1e3 / count, own + entry.inlinetime * 1e3 / count)
    return out


def growth(
    large: Mapping[str, Sequence[float]], small: Mapping[str, Sequence[float]], *, top: int, digits: int
) -> list[dict[str, Any]]:
    """The `top` functions whose self time grew the most from `small` to `large` ((cumulative, self) ms by
    function, as `profile_functions` gives them): where a growing operation spends its extra time."""
    rows: list[dict[str, Any]] = []
    for key in sorted(large.keys() | small.keys()):
        cum_l, own_l = large.get(key, (0.0, 0.0))
        cum_s, own_s = small.get(key, (0.0, 0.0))
        rows.append(
            {
                "function": key,
                "self_ms_small": round(own_s, digits),
                "self_ms_large": round(own_l, digits),
                "cum_ms_small": round(cum_s, digits),
                "cum_ms_large": round(cum_l, digits),
            }
        )
    rows.sort(key=lambda r: r["self_ms_large"] - r["self_ms_small"], reverse=True)
    return rows[:top]


# -- the printed report ---------------------------------------------------------------------------------


def report_console(width: int) -> Console:
    """The console a report prints to: the terminal's width, or whole lines when not a terminal (`width`
    is kept for the callers: rich wrapped piped output at it)."""
    from .._console import console

    return console()


def table(title: str, *columns: str, left: int = 1) -> Table:
    """A report table: the first `left` columns are labels (left-aligned), the others figures (right)."""
    from rich.table import Table

    out = Table(title=title)
    for number, column in enumerate(columns):
        out.add_column(column, justify="left" if number < left else "right")
    return out


def print_growth(console: Console, heading: str, rows: Sequence[Mapping[str, Any]], indent: int = 2) -> None:
    """`heading`, then one line per row of `growth`, indented under it."""
    console.print(" " * indent + heading)
    for row in rows:
        console.print(
            f"{' ' * (indent + 2)}{row['function']}: self {row['self_ms_small']:.3f} → "
            f"{row['self_ms_large']:.3f} ms, cumulative {row['cum_ms_small']:.3f} → {row['cum_ms_large']:.3f} ms"
        )


# -- seeded text ----------------------------------------------------------------------------------------

_VOCABULARY = (
    "the a an of to in on for with and but or so because while after before when if then this that "
    "these those it its we you they I my your our their memory session branch agent user assistant "
    "tool message context window token summary topic archive workspace fork merge rewind head tip node "
    "file commit tree shard history crash restart fsync rename directory disk write read append load "
    "snapshot replay seed trace deterministic virtual clock timeout retry budget latency throughput "
    "question answer reason plan step result error warning note idea draft review test check fix bug "
    "feature release version config option default value list table chart report figure number ratio "
    "morning evening yesterday tomorrow week month year meeting travel dinner project garden book music "
    "could would should might must will can may please thanks sure maybe exactly indeed perhaps really "
    "quickly slowly carefully together separately again still already almost never always often"
)
#: Everyday chat words, each once, in a fixed order (seeded choices pick by position: never reorder).
WORDS = tuple(_VOCABULARY.split())
#: `WORDS` without "topic": the filler of turns that are about a made-up topic word.
# Filler never says something about the user ("I live ...", "my job ..."): such a sentence is a core fact,
# and a benchmark's writes would then touch topics/core.md too.
# (Compared case-folded: "I" is one of the words, and "I always ..." is a core fact.) Nor a quantity word
# ("budget"): beside a random number it states a quantity, a later turn's other number would supersede it,
# and a write would touch the older turn's topic file.
FILLER = tuple(
    word
    for word in WORDS
    if word.casefold() not in ("topic", "i", "my", "call") and word not in NUMERIC_ATTRIBUTES
)
#: Syllables of made-up topic words (a benchmark may use a prefix of them: a smaller alphabet).
SYLLABLES = (
    *("ba", "ce", "di", "fo", "gu", "ka", "le", "mo", "nu", "pi"),
    *("ra", "se", "ti", "vo", "zu", "bri", "cla", "dro", "fle", "gno"),
)


def topic_words(count: int, rng: random.Random, syllables: Sequence[str] = SYLLABLES) -> list[str]:
    """`count` distinct made-up words of four `syllables` (no stopword, not in `WORDS`)."""
    combos = len(syllables) ** 4
    if count > combos:
        raise ValueError(f"at most {combos:,} topic words")
    return [
        "".join(syllables[(number // len(syllables) ** k) % len(syllables)] for k in range(4))
        for number in rng.sample(range(combos), count)
    ]


def topic_text(rng: random.Random, topic: str, mentions: int, *, numbers: bool) -> str:
    """A chat turn of 150-400 characters of `FILLER` words (each at most once) with `topic` in it `mentions`
    times (and, if `numbers`, up to two numbers), cut into sentences of 5-14 words."""
    target = rng.randint(150, 400)
    pool = rng.sample(FILLER, len(FILLER))
    words: list[str] = []
    length = 0
    while length < target and pool:
        word = pool.pop()
        words.append(word)
        length += len(word) + 1
    for _ in range(mentions):
        words.insert(rng.randrange(len(words) + 1), topic)
    if numbers:
        for _ in range(rng.randint(0, 2)):
            words.insert(rng.randrange(len(words) + 1), str(rng.randint(2, 99_999)))
    sentences: list[str] = []
    start = 0
    while start < len(words):
        size = rng.randint(5, 14)
        sentence = " ".join(words[start : start + size])
        sentences.append(sentence[0].upper() + sentence[1:] + rng.choice(".....?!"))
        start += size
    return " ".join(sentences)
