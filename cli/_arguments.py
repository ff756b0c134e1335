"""The types of the command line's numeric options: a bad value is named by argparse, exit 2."""

from __future__ import annotations

import argparse

from ..memory.errors import DagmemError

__all__ = ["add_knobs", "count", "positive_int", "rate", "seconds"]


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def positive_int(text: str) -> int:
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def count(text: str) -> int:
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def rate(text: str) -> float:
    value = _number(text)
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"a probability from 0 to 1, not {text}")
    return value


def seconds(text: str) -> float:
    from ..memory.settings import check_seconds  # here: a command without a knob builds no `Settings`

    value = _number(text)
    try:
        return check_seconds("the value", value, zero_ok=False)
    except DagmemError:  # the one check of a number of seconds; argparse names the option
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {text}") from None


def add_knobs(parser: argparse.ArgumentParser) -> None:
    """`--threshold` and `--idle-after`, for the commands that run the writer (their defaults: Settings)."""
    from ..memory.settings import DEFAULTS

    parser.add_argument(
        "--threshold",
        type=positive_int,
        default=DEFAULTS.token_threshold,
        help=f"batch size in tokens (default {DEFAULTS.token_threshold})",
    )
    parser.add_argument(
        "--idle-after",
        type=seconds,
        default=DEFAULTS.idle_after,
        help=f"seconds of quiet that end a session (default {DEFAULTS.idle_after:g})",
    )
