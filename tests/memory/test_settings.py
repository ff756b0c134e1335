"""One home for the knobs' defaults and for the check of a number of seconds: every layer agrees."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import pytest

from dagmem import Runtime
from dagmem.actors import RuntimeConfig
from dagmem.cli._main import _parser
from dagmem.cluster import connect
from dagmem.memory.errors import InvalidInput
from dagmem.memory.policy import SessionPlanner
from dagmem.memory.settings import DEFAULTS, Settings, check_seconds
from dagmem.memory.write import write_pass, write_session
from dagmem.memory.writing import write_home


def _default(function: object, name: str) -> object:
    return inspect.signature(function).parameters[name].default  # type: ignore[arg-type]


def test_every_layer_takes_its_defaults_from_settings() -> None:
    config = RuntimeConfig()
    for name in ("token_threshold", "idle_after", "abandon_after"):
        assert getattr(config, name) == getattr(DEFAULTS, name)
        assert _default(Runtime.open, name) == getattr(DEFAULTS, name)
        assert _default(connect, name) == getattr(DEFAULTS, name)
    for function in (write_home, write_pass, write_session):
        assert _default(function, "threshold") == DEFAULTS.token_threshold
    assert _default(write_home, "idle_after") == DEFAULTS.idle_after
    assert _default(write_pass, "idle_after") == DEFAULTS.idle_after
    assert _default(SessionPlanner, "threshold") == DEFAULTS.token_threshold
    assert _default(SessionPlanner, "abandon_after") == DEFAULTS.abandon_after
    for command in (["write"], ["mcp"]):
        args = _parser().parse_args(command)
        assert (args.threshold, args.idle_after) == (DEFAULTS.token_threshold, DEFAULTS.idle_after)


def _refusal(call: object) -> str:
    with pytest.raises(InvalidInput) as error:
        call()  # type: ignore[operator]
    return str(error.value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0, "5", True])
def test_a_number_of_seconds_is_checked_one_way(bad: object, tmp_path: Path) -> None:
    expected = _refusal(lambda: check_seconds("idle_after", bad, zero_ok=True))
    assert _refusal(lambda: write_home(tmp_path, idle_after=bad)) == expected  # type: ignore[arg-type]
    abandon = expected.replace("idle_after", "abandon_after")
    assert _refusal(lambda: RuntimeConfig(abandon_after=bad)) == abandon  # type: ignore[arg-type]
    assert _refusal(lambda: Settings(abandon_after=bad)) == abandon  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())  # refused before anything is opened


def test_zero_idle_after_is_only_for_the_write_pass() -> None:
    with pytest.raises(InvalidInput, match="above 0"):
        RuntimeConfig(idle_after=0)
    with pytest.raises(InvalidInput, match="above 0"):
        Settings(idle_after=0)
    assert check_seconds("idle_after", 0, zero_ok=True) == 0.0
