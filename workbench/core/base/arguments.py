"""Checks of the public API's arguments (numbers, flags, text, row filters), so a wrong type or
sign fails clearly, up front."""

from __future__ import annotations

import math
import numbers
from datetime import timedelta
from enum import Enum
from typing import Any, TypeVar

from workbench.core.base.errors import InvalidArgumentError, WorkbenchError

E = TypeVar("E", bound=Enum)


def whole_number(name: str, value: Any, minimum: int = 0) -> int:
    """``value`` as an int of at least ``minimum``; bools, floats and strings are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentError(
            f"{name}={value!r} must be a whole number (int) of at least {minimum}, not "
            f"{type(value).__name__}; e.g. {name}={max(minimum, 10)}."
        )
    if value < minimum:
        raise InvalidArgumentError(
            f"{name}={value} is below {minimum}; pass a whole number of at least {minimum}, "
            f"e.g. {name}={max(minimum, 10)}."
        )
    return int(value)


def optional_whole_number(name: str, value: Any, minimum: int = 0) -> int | None:
    """Like ``whole_number``, with None meaning "not given"."""
    return None if value is None else whole_number(name, value, minimum)


def seconds(name: str, value: Any) -> float:
    """A non-negative, finite duration given as a ``timedelta`` or a number of seconds."""
    if isinstance(value, timedelta):
        total = value.total_seconds()
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        total = float(value)
    else:
        raise InvalidArgumentError(
            f"{name}={value!r} must be a datetime.timedelta or a number of seconds, not "
            f"{type(value).__name__}; e.g. {name}=timedelta(days=7)."
        )
    if not math.isfinite(total) or total < 0:
        raise InvalidArgumentError(
            f"{name}={value!r} must be a finite, non-negative duration, e.g. "
            f"{name}=timedelta(days=7)."
        )
    return total


def flag(name: str, value: Any) -> bool:
    """A yes/no argument: only ``True`` or ``False`` (a string like 'no' would read as yes)."""
    if not isinstance(value, bool):
        raise InvalidArgumentError(
            f"{name}={value!r} must be True or False, not {type(value).__name__}."
        )
    return value


def text(name: str, value: Any, optional: bool = True) -> str | None:
    """A string argument (None allowed when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(
            f"{name}={value!r} must be a string, not {type(value).__name__}."
        )
    return value


def row_filter(name: str, value: Any) -> Any:
    """A row filter: None or a pyarrow expression (e.g. ``pc.field("kind") == "image"``)."""
    if value is None:
        return None
    import pyarrow.dataset as pads

    if not isinstance(value, pads.Expression):
        raise InvalidArgumentError(
            f"{name}={value!r} must be a pyarrow expression, e.g. "
            f"{name}=pyarrow.compute.field('lang') == 'en'."
        )
    return value


def row_filter_on(name: str, value: Any, schema: Any, table: str) -> None:
    """Check that a row filter (see ``row_filter``) names columns of ``schema`` (a pyarrow
    schema of ``table``'s rows) and is true or false for each row."""
    if value is None:
        return
    import pyarrow as pa

    try:
        schema.empty_table().filter(value)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        reason = str(e).splitlines()[0]
        raise InvalidArgumentError(
            f"{name}={value} cannot choose rows of {table!r} ({reason}); write a condition on "
            f"its columns {schema.names}, e.g. {name}=pyarrow.compute.field('{schema.names[0]}')"
            ".is_valid()."
        ) from None


def choice(
    kind: type[E], value: Any, what: str, error: type[WorkbenchError] = InvalidArgumentError
) -> E:
    """``value`` as a member of the enum ``kind``: the member, or its name or value in any case
    (the one rule every enum argument follows; an enum's own aliases work too). Anything else
    raises ``error`` naming ``what`` (e.g. ``read_as``) and the choices."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        wanted = value.strip().lower()
        for member in kind:
            if wanted in (member.name.lower(), str(member.value).lower()):
                return member
    try:
        return kind(value)
    except (ValueError, TypeError):
        raise error(
            f"{what}={value!r} is not a dc.{kind.__name__}; use one of "
            f"{', '.join(m.name for m in kind)}."
        ) from None
