"""Standard JSON for what other tools read (Delta commits and their statistics, the catalog and
run logs, recorded parameters).

``json.dumps`` writes a non-finite float as a bare ``NaN`` or ``Infinity``, which only Python
reads back: one such value in a Delta commit breaks every later reader of that log (delta-rs,
Spark, DuckDB, polars). Here non-finite floats are written as the strings ``"NaN"``,
``"Infinity"`` and ``"-Infinity"`` instead, and ``float_of`` reads them back as floats.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

NON_FINITE_TEXT = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def finite_or_text(value: float) -> float | str:
    """A float as standard JSON can hold it: itself when finite, else its text."""
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def float_of(value: Any) -> Any:
    """A value ``finite_or_text`` wrote, back as the float it was (anything else unchanged)."""
    return NON_FINITE_TEXT[value] if isinstance(value, str) and value in NON_FINITE_TEXT else value


def standard_json(
    value: Any, *, sort_keys: bool = False, default: Callable[[Any], Any] | None = None
) -> str:
    """``value`` as standard JSON text, its non-finite floats as text (see the module)."""
    try:  # the common case: nothing to replace, so no walk over the value first
        return json.dumps(value, allow_nan=False, sort_keys=sort_keys, default=default)
    except ValueError:  # a non-finite float somewhere
        return json.dumps(_finite(value), allow_nan=False, sort_keys=sort_keys, default=default)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return finite_or_text(value)
    if isinstance(value, dict):
        return {_finite(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
