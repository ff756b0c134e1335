"""A pydantic `ValidationError` as one line naming the field, for messages that name a file."""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["validation_problem"]


def validation_problem(exc: ValidationError) -> str:
    """`<field>: <what is wrong>` for the first error (pydantic prints one paragraph per error, with a
    URL: several lines for one bad value), plus how many more there are."""
    errors = exc.errors(include_url=False)
    if not errors:
        return str(exc).splitlines()[0]
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    message = " ".join(str(first["msg"]).removeprefix("Value error, ").split())
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"
