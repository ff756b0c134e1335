"""The types of the command line's numeric options: a bad value is named by argparse, exit 2."""

from __future__ import annotations

import argparse

from ..memory.errors import DagmemError
from ..memory.settings import check_seconds

__all__ = ["count", "positive_int", "rate", "seconds"]


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"a probability from 0 to 1, not {text}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    try:
        return check_seconds("the value", value, zero_ok=False)
    except DagmemError:  # the one check of a number of seconds; argparse names the option
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {text}") from None
