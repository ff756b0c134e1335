"""What the models of files share: a time field, and a pydantic `ValidationError` as one line naming the
field (for messages that name a file)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, ValidationError

from ._limits import time_problem

__all__ = ["EpochSeconds", "validation_problem"]


def _a_time(value: float) -> float:
    problem = time_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


# A time in a file (epoch seconds): a number, never `true` or a string, finite and within years 1 to 9999.
EpochSeconds = Annotated[float, Field(strict=True), AfterValidator(_a_time)]


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
