"""Query shapes, what the model says each must return, and how an answer is compared with it.

Answers are lists of tuples (rows, in the shape's column order) or a tuple of numbers
(aggregates). Rows compare as multisets, since only write-ordered reads promise an order."""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timezone
from typing import Any

from tests.conformance.model import Row, TableModel
from tests.conformance.tables import TableState

ALL = "all"
PROJECT = "project"  # two columns, not in schema order
FILTER = "filter"  # a filter on a column the query does not return
AGGREGATE = "aggregate"  # count(*), sum(n), count(s)
LIMIT = "limit"
JOIN = "join"  # with the partner table, on id
REPEATED = "repeated"  # the aggregate three times in a row
DIFF = "diff"  # rows added, removed and changed since the first point
FORMS = "forms"  # the filter's rows asked in each form of a query (its own WITH, FROM first...)
SHAPES = (ALL, PROJECT, FILTER, AGGREGATE, LIMIT, JOIN, REPEATED, DIFF, FORMS)

PROJECTED = ["s", "n"]
FILTERED = ["n", "s"]
JOINED = ["id", "n", "m"]
LIMIT_ROWS = 7
REPEATS = 3


def filter_bound(state: TableState) -> int:
    """The ``id < bound`` of the filter shape: about half the rows."""
    ids = sorted(r["id"] for r in state.rows)
    return ids[len(ids) // 2] if ids else 0


def expected(state: TableState, shape: str, partner: list[Row]) -> Any:
    """What the model says a query of ``shape`` over ``state`` returns."""
    rows = state.rows
    if shape == ALL:
        return [tuple(r[c] for c in state.columns) for r in rows]
    if shape == PROJECT:
        return [tuple(r[c] for c in PROJECTED) for r in rows]
    if shape in (FILTER, FORMS):  # each form of the query: the filter's rows
        bound = filter_bound(state)
        return [tuple(r[c] for c in FILTERED) for r in rows if r["id"] < bound]
    if shape in (AGGREGATE, REPEATED):
        return aggregate(rows)
    if shape == LIMIT:
        return [tuple(r[c] for c in state.columns) for r in rows]  # a subset is expected
    if shape == JOIN:
        m = {p["id"]: p["m"] for p in partner}
        return [(r["id"], r["n"], m[r["id"]]) for r in rows if r["id"] in m]
    if shape == DIFF:
        return changes(state.first, state.model)
    raise ValueError(shape)


def changes(before: TableModel, after: TableModel) -> tuple[int, int, int]:
    """Rows added, removed and changed (by key, in the columns both have) from one model to
    another; without keys, rows as multisets, none changed."""
    common = [c for c in after.columns if c in before.columns]
    old = [tuple(_value(r[c]) for c in common) for r in before.rows()]
    new = [tuple(_value(r[c]) for c in common) for r in after.rows()]
    if after.key is None:
        return (
            sum((Counter(new) - Counter(old)).values()),
            sum((Counter(old) - Counter(new)).values()),
            0,
        )
    at = [common.index(k) for k in after.keys]
    old_by = {tuple(r[i] for i in at): r for r in old}
    new_by = {tuple(r[i] for i in at): r for r in new}
    changed = sum(1 for k in old_by.keys() & new_by.keys() if old_by[k] != new_by[k])
    return len(new_by.keys() - old_by.keys()), len(old_by.keys() - new_by.keys()), changed


def aggregate(rows: list[Row]) -> tuple[int, int, int]:
    return (
        len(rows),
        sum(r["n"] for r in rows if r["n"] is not None),
        sum(r["s"] is not None for r in rows),
    )


_PLAIN = frozenset({int, bool, str, bytes, type(None)})


def _value(v: Any) -> Any:
    """One cell as plain Python, whichever library gave it: numpy scalars and arrays, pandas
    and numpy times, Spark rows unwrapped; NaN and NaT as null, floats rounded, times in UTC
    without a zone, lists as tuples, structs as sorted (name, value) tuples."""
    kind = type(v)
    if kind in _PLAIN:  # most cells: checked first, as the suite normalizes millions of them
        return v
    if kind is float:
        return None if math.isnan(v) else round(v, 9)
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, (str, bytes)) or v is None:
        return v
    if hasattr(v, "asDict"):  # a Spark Row (a struct)
        v = v.asDict(recursive=True)
    if isinstance(v, dict):
        return tuple(sorted((k, _value(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)) or getattr(v, "ndim", 0) > 0:
        return tuple(_value(x) for x in v)
    v = _time(v)
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float):
        return None if math.isnan(v) else round(v, 9)
    return v


def _time(v: Any) -> Any:
    """A pandas or numpy time as a ``datetime`` (null for NaT), an aware one in UTC without
    its zone (as Spark gives it, in its session's UTC); other values as they are."""
    import numpy as np
    import pandas as pd

    if isinstance(v, np.datetime64):
        v = pd.Timestamp(v)
    if v is pd.NaT or v is pd.NA:
        return None
    if isinstance(v, pd.Timestamp):
        v = v.to_pydatetime()
    if isinstance(v, datetime) and v.tzinfo is not None:
        v = v.astimezone(timezone.utc).replace(tzinfo=None)
    return v


def normal(rows: Any) -> Counter:
    return Counter(tuple(_value(v) for v in row) for row in rows)


def check(
    state: TableState, shape: str, answer: Any, partner: list[Row], ordered: bool = False
) -> None:
    """Assert ``answer`` is what the model says, with a message naming the difference;
    ``ordered``: a table without keys must come back in write order (a limit: its start)."""
    want = expected(state, shape, partner)
    if shape == FORMS:  # {form: rows}, each the filter's rows
        assert answer, "no query form was asked"
        want = normal(want)
        for form, rows in answer.items():
            _same_rows(want, normal(rows), f"{form}: ")
        return
    if ordered and not state.keyed and shape in (ALL, LIMIT):
        got = [tuple(_value(v) for v in row) for row in answer]
        first = [tuple(_value(v) for v in row) for row in want][: len(got)]
        assert got == first, "rows out of write order"
    if shape in (AGGREGATE, REPEATED, DIFF):
        answers = answer if shape == REPEATED else [answer]
        assert len(answers) == (REPEATS if shape == REPEATED else 1)
        for got in answers:
            assert tuple(_value(v) for v in got) == want, f"{shape} {got} != model {want}"
        return
    got = normal(answer)
    if shape == LIMIT:
        assert sum(got.values()) == min(LIMIT_ROWS, len(want)), f"{sum(got.values())} rows"
        extra = got - normal(want)
        assert not extra, f"rows not in the table: {list(extra)[:3]}"
        return
    _same_rows(normal(want), got)


def _same_rows(want: Counter, got: Counter, context: str = "") -> None:
    missing, extra = want - got, got - want
    assert not missing and not extra, (
        f"{context}{sum(missing.values())} row(s) missing, e.g. {list(missing)[:3]}; "
        f"{sum(extra.values())} row(s) extra, e.g. {list(extra)[:3]}"
    )
