"""Distillers by name, as `Runtime.open(distiller="openai")` and `dagmem write --distiller NAME` take them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..errors import InvalidInput

if TYPE_CHECKING:  # the names alone (the command line's choices) load no distiller
    from ._distill import Distiller

__all__ = ["DISTILLERS", "distiller_named"]

DISTILLERS: Final = ("extractive", "openai")


def distiller_named(name: str, home: Path | str | None) -> Distiller:
    """The distiller called `name`; "openai" reads its settings (`DAGMEM_LLM_*`, `<home>/llm.toml`) now,
    so a missing base URL or model is one `InvalidInput` line before anything is written."""
    if name == "extractive":
        from ._distill import ExtractiveDistiller

        return ExtractiveDistiller()
    if name == "openai":
        # Imported here: httpx and pydantic-settings load only for the distiller that needs them.
        from ._llm import LLMDistiller
        from ._llm_config import load_llm_settings

        return LLMDistiller(load_llm_settings(None if home is None else Path(home)))
    raise InvalidInput(f"unknown distiller {name!r}: choose one of {', '.join(DISTILLERS)}")
