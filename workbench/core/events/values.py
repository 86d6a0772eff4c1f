"""The values a run records, checked before they reach the run log: metric values and row
counts as the numbers the log's columns hold (NumPy's scalars too), and parameters as standard
JSON, so a value is stored as given or refused with a typed error, never dropped on the way."""

from __future__ import annotations

import datetime
import enum
import numbers
import uuid
from collections.abc import Mapping
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from workbench.core.base.arguments import whole_number
from workbench.core.base.errors import InvalidArgumentError
from workbench.core.base.json_text import standard_json

INT64_MAX = 2**63 - 1


def metric_value(name: str, value: Any) -> float:
    """``value`` as the float64 a metric stores (NaN and infinities included); a value that is
    not a number, or that a float64 cannot hold as given, is refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(
            f"log_metric({name!r}, {value!r}): a metric's value is a number (int or float, "
            f"NumPy's too), not {type(value).__name__}."
        )
    try:
        number = float(value)
    except OverflowError:
        raise InvalidArgumentError(
            f"log_metric({name!r}, ...): the value has {len(str(abs(int(value))))} digits, "
            "beyond what a metric holds (a float64, up to about 1.8e308); log a scaled value "
            "or its logarithm instead."
        ) from None
    if isinstance(value, numbers.Integral) and int(number) != int(value):
        raise InvalidArgumentError(
            f"log_metric({name!r}, {value}): a metric is stored as a float64, which would "
            f"round this whole number to {int(number)}; pass float(value) if that is fine."
        )
    return number


def row_count(name: str, value: Any) -> int | None:
    """A step's row count (None: not counted) as the int64 the log stores."""
    if value is None:
        return None
    count = whole_number(name, value)
    if count > INT64_MAX:
        raise InvalidArgumentError(
            f"{name}={count} is beyond the largest row count the run log stores ({INT64_MAX})."
        )
    return count


def parameters_json(parameters: Mapping[str, Any]) -> str:
    """A run's parameters as standard JSON: NumPy scalars and arrays as numbers and lists, sets
    as sorted lists, times as ISO 8601 text, non-finite floats as text; other objects as their
    text."""
    try:
        return standard_json(_plain(parameters, "parameters"), sort_keys=True)
    except RecursionError:
        raise InvalidArgumentError(
            "parameters hold themselves (a dict or list inside itself) or nest too deeply to "
            "record; pass a copy without the cycle."
        ) from None


def _plain(value: Any, where: str) -> Any:
    """``value`` as JSON's types (``where`` names it in errors)."""
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, Mapping):
        plain: dict[str, Any] = {}
        for key, item in value.items():
            text = key if isinstance(key, str) else standard_json(_plain(key, where))
            if text in plain:
                raise InvalidArgumentError(
                    f"{where} has two keys written {text!r} in JSON ({key!r} and another); "
                    "give them distinct names."
                )
            plain[text] = _plain(item, f"{where}[{key!r}]")
        return plain
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        items = [_plain(v, where) for v in value]
        return sorted(items, key=lambda v: standard_json(v, sort_keys=True))
    return _plain_scalar(value, where)


def _plain_scalar(value: Any, where: str) -> Any:
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, enum.Enum):
        return _plain(value.value, where)
    if isinstance(value, (PurePath, uuid.UUID, Decimal)):
        return str(value)
    if type(value).__module__ == "numpy":
        return _plain_numpy(value, where)
    if isinstance(value, numbers.Real):
        return float(value)
    return _text_of(value, where)


def _text_of(value: Any, where: str) -> str:
    """An object JSON has no type for, recorded as its text."""
    try:
        return str(value)
    except Exception as e:
        raise InvalidArgumentError(
            f"{where} is a {type(value).__name__} whose text cannot be made ({e}); pass its "
            "value as a string, number, list or dict."
        ) from e


def _plain_numpy(value: Any, where: str) -> Any:
    """A NumPy scalar or array: its Python value (an array as nested lists); times as text."""
    import numpy as np

    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else str(np.datetime_as_string(value))
    if isinstance(value, np.timedelta64):
        return None if np.isnat(value) else value / np.timedelta64(1, "s")
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _plain(value[()], where)
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.generic):
        return _plain(value.item(), where)
    return _text_of(value, where)
