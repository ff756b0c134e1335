"""Settings of the LLM distiller: environment variables `DAGMEM_LLM_*` over a file `<home>/llm.toml`.

    # <home>/llm.toml (every key optional; the environment wins)
    base_url = "http://127.0.0.1:8080/v1"     # DAGMEM_LLM_BASE_URL
    model = "qwen2.5-7b-instruct"             # DAGMEM_LLM_MODEL
    api_key = "..."                           # DAGMEM_LLM_API_KEY (a local server may need none)
    timeout = 120                             # seconds for a whole answer (DAGMEM_LLM_TIMEOUT, at most a day)
    connect_timeout = 10                      # DAGMEM_LLM_CONNECT_TIMEOUT (at most a day)
    max_output_tokens = 4096                  # the answer's budget per call (DAGMEM_LLM_MAX_OUTPUT_TOKENS)
    max_input_tokens = 32000                  # the prompt's budget per call (DAGMEM_LLM_MAX_INPUT_TOKENS)

Arguments given in code win over both. pydantic-settings reads and validates all three; the key is a `SecretStr`, so no repr, log line or error shows
it. Missing `base_url` or `model` is one clear `LLMConfigError` (an `InvalidInput`), and so is every setting
that could never work (an infinite timeout, a URL without a host or with port 99999, a key that cannot be an
HTTP header): refused when loaded, not a write that fails (or is retried) for ever.

A request has `timeout` seconds for the whole answer, headers and body; a model call (an answer and its one
repair round) has twice that.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import httpx
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from ..errors import InvalidInput

__all__ = ["CONFIG_FILE", "LLMConfigError", "LLMSettings", "load_llm_settings"]

CONFIG_FILE = "llm.toml"
MAX_TIMEOUT = 86_400.0  # seconds: a longer wait is no timeout at all


class LLMConfigError(InvalidInput):
    """The LLM distiller is not configured, or configured wrongly (one line, never the key)."""


class LLMSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DAGMEM_LLM_", extra="forbid", frozen=True)

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout: float = Field(120.0, gt=0, le=MAX_TIMEOUT, allow_inf_nan=False)
    connect_timeout: float = Field(10.0, gt=0, le=MAX_TIMEOUT, allow_inf_nan=False)
    max_output_tokens: int = Field(4096, ge=64)
    max_input_tokens: int = Field(32_000, ge=1_000)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if any(ch.isspace() or not ch.isprintable() for ch in value):
            raise ValueError("the URL holds a space or a control character")
        try:
            url = httpx.URL(value)
        except httpx.InvalidURL:
            raise ValueError("not a URL") from None
        if url.scheme not in ("http", "https"):
            raise ValueError("the URL must start with http:// or https://")
        if not url.host:
            raise ValueError("the URL has no host")
        if url.port is not None and not 1 <= url.port <= 65_535:
            raise ValueError(f"port {url.port} is not 1 to 65535")
        return value

    @field_validator("api_key")
    @classmethod
    def _key(cls, value: SecretStr | None) -> SecretStr | None:
        # It goes in an HTTP header: printable ASCII only. The message never shows it.
        if value is not None and not all("!" <= ch <= "~" for ch in value.get_secret_value()):
            raise ValueError("the key must be printable ASCII without spaces")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Arguments over the environment over the home's file.
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))


def load_llm_settings(home: Path | None, **values: Any) -> LLMSettings:
    """The settings for a home: `values` (a host's or a test's), then the environment, then
    `<home>/llm.toml`. Raises `LLMConfigError` when the result cannot reach a model."""
    path = None if home is None else Path(home) / CONFIG_FILE

    class _Home(LLMSettings):
        model_config = SettingsConfigDict(toml_file=path if path is not None and path.is_file() else None)

    where = f"{path} or DAGMEM_LLM_*" if path is not None else "DAGMEM_LLM_*"
    try:
        settings: LLMSettings = _Home(**values)
    except ValidationError as exc:
        # Field names and pydantic's or our own reasons: never the input (it may be the key).
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '?'}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors(include_input=False, include_url=False)
        )
        raise LLMConfigError(f"invalid LLM distiller setting {problems} ({where})") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LLMConfigError(f"{path}: not a readable TOML file ({type(exc).__name__})") from None
    missing = [name for name in ("base_url", "model") if not getattr(settings, name)]
    if missing:
        names = " and ".join(f"DAGMEM_LLM_{name.upper()}" for name in missing)
        file_hint = f" (or {' and '.join(missing)} in {path})" if path is not None else ""
        raise LLMConfigError(f"the openai distiller needs {names}{file_hint}")
    return settings
