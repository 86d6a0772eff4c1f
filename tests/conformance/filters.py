"""Filter shapes: conditions a read keeps rows by, each in the forms read paths take (SQL text,
as ``filter=`` takes it and DuckDB runs it; Spark's SQL where it differs; a pyarrow expression;
Daft's, Spark's, Ray's and polars' own expressions where natural), beside what the model says:
SQL's meaning in plain Python. A comparison with a null holds for no row, NaN equals NaN and
is above every number, and zero equals negative zero.

The cases are made per state: values are picked from the state's own rows, and a case runs
only where the state has its columns. Every answer is the whole rows a case keeps."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.conformance.model import Row
from tests.conformance.tables import TableState

FILTERS = "filters"  # the shape: every case of the state, each checked against the model


@dataclass(frozen=True)
class Case:
    """One condition in every form it is written in; ``holds`` is the model's answer."""

    name: str
    needs: tuple[str, ...]
    sql: str
    holds: Callable[[Row], bool]
    arrow: Callable[[], Any] | None = None
    daft: Callable[[], Any] | None = None
    spark: Callable[[], Any] | None = None
    ray: Callable[[], Any] | None = None
    polars: Callable[[], Any] | None = None
    # SQL of other dialects where it differs ("spark", "daft", "delta_scan"); None: none
    dialects: dict[str, str | None] = field(default_factory=dict)

    def text(self, dialect: str = "duckdb") -> str | None:
        """The case's SQL in ``dialect`` (Spark quotes with backticks), None if it has none."""
        if dialect in self.dialects:
            return self.dialects[dialect]
        return self.sql.replace('"', "`") if dialect == "spark" else self.sql


def _key(v: Any) -> Any:
    """SQL's order of a value: NaN above every number, zero equal to negative zero."""
    if isinstance(v, float):
        return (1, 0.0) if math.isnan(v) else (0, v + 0.0)
    return (0, v)


def cmp(a: Any, op: str, b: Any) -> bool:
    """``a op b`` as a filter keeps it: False when either side is null."""
    if a is None or b is None:
        return False
    x, y = _key(a), _key(b)
    return {
        "=": x == y,
        "<>": x != y,
        "<": x < y,
        "<=": x <= y,
        ">": x > y,
        ">=": x >= y,
    }[op]


def _ids(state: TableState) -> list[int]:
    return sorted(r["id"] for r in state.rows if r.get("id") is not None)


def cases_for(state: TableState) -> list[Case]:
    """The cases that apply to ``state`` (it has every column they need)."""
    return [c for c in _all_cases(state) if set(c.needs) <= set(state.columns)]


def _all_cases(state: TableState) -> list[Case]:
    ids = _ids(state) or [7]
    point, low, high = ids[len(ids) // 2], ids[len(ids) * 3 // 10], ids[len(ids) * 4 // 10]
    some = ids[:: max(len(ids) // 3, 1)][:3]
    return [
        *_generic(point, low, high, some),
        *_later_column(),
        *_typed(state),
        *_long_text(state),
    ]


def _generic(point: int, low: int, high: int, some: list[int]) -> list[Case]:
    import pyarrow as pa
    import pyarrow.compute as pc

    listed = ", ".join(str(i) for i in [*some, 123456789])
    return [
        Case(
            "point",
            ("id",),
            f"id = {point}",
            lambda r: cmp(r["id"], "=", point),
            arrow=lambda: pc.field("id") == point,
            daft=lambda: _daft_col("id") == point,
            spark=lambda: _spark_col("id") == point,
            ray=lambda: _ray_col("id") == point,
            polars=lambda: _polars_col("id") == point,
        ),
        Case(
            "none",
            ("id",),
            "id = -1",
            lambda r: cmp(r["id"], "=", -1),
            arrow=lambda: pc.field("id") == -1,
            daft=lambda: _daft_col("id") == -1,
        ),
        Case(
            "range",
            ("id",),
            f"id >= {low} AND id < {high}",
            lambda r: cmp(r["id"], ">=", low) and cmp(r["id"], "<", high),
            arrow=lambda: (pc.field("id") >= low) & (pc.field("id") < high),
            daft=lambda: (_daft_col("id") >= low) & (_daft_col("id") < high),
            spark=lambda: (_spark_col("id") >= low) & (_spark_col("id") < high),
            ray=lambda: (_ray_col("id") >= low) & (_ray_col("id") < high),
            polars=lambda: (_polars_col("id") >= low) & (_polars_col("id") < high),
        ),
        Case(
            "in",
            ("id",),
            f"id IN ({listed})",
            lambda r: r["id"] in {*some, 123456789},
            arrow=lambda: pc.field("id").isin([*some, 123456789]),
            daft=lambda: _daft_col("id").is_in([*some, 123456789]),
            spark=lambda: _spark_col("id").isin([*some, 123456789]),
            ray=lambda: _ray_col("id").is_in([*some, 123456789]),
        ),
        Case(
            "not_in",
            ("id",),
            f"id NOT IN ({listed})",
            lambda r: r["id"] is not None and r["id"] not in {*some, 123456789},
            arrow=lambda: ~pc.field("id").isin([*some, 123456789]),
        ),
        Case(
            "or_not",
            ("id", "n"),
            f"NOT (id < {point}) OR n > 950",
            lambda r: cmp(r["id"], ">=", point) or cmp(r["n"], ">", 950),
            arrow=lambda: ~(pc.field("id") < point) | (pc.field("n") > 950),
            daft=lambda: ~(_daft_col("id") < point) | (_daft_col("n") > 950),
            spark=lambda: ~(_spark_col("id") < point) | (_spark_col("n") > 950),
        ),
        Case(
            "null",
            ("s",),
            "s IS NULL",
            lambda r: r["s"] is None,
            arrow=lambda: pc.field("s").is_null(),
            daft=lambda: _daft_col("s").is_null(),
            spark=lambda: _spark_col("s").isNull(),
            ray=lambda: _ray_col("s").is_null(),
        ),
        Case(
            "not_null_and",
            ("s", "n"),
            "s IS NOT NULL AND n < 100",
            lambda r: r["s"] is not None and cmp(r["n"], "<", 100),
            arrow=lambda: pc.field("s").is_valid() & (pc.field("n") < 100),
        ),
        Case(
            "text",
            ("s",),
            "s = 's7'",
            lambda r: r["s"] == "s7",
            arrow=lambda: pc.field("s") == "s7",
            daft=lambda: _daft_col("s") == "s7",
            spark=lambda: _spark_col("s") == "s7",
            polars=lambda: _polars_col("s") == "s7",
        ),
        Case(
            "like",
            ("s",),
            "s LIKE 's1%'",
            lambda r: r["s"] is not None and r["s"].startswith("s1"),
            arrow=lambda: pc.starts_with(pc.field("s"), "s1"),
        ),
        Case(
            "cast",
            ("n",),
            "CAST(n AS VARCHAR) = '7'",
            lambda r: r["n"] is not None and str(r["n"]) == "7",
            arrow=lambda: pc.field("n").cast(pa.string()) == "7",
            dialects={"spark": "CAST(n AS STRING) = '7'"},
        ),
        Case(
            "between",
            ("n",),
            "n BETWEEN 10 AND 20",
            lambda r: cmp(r["n"], ">=", 10) and cmp(r["n"], "<=", 20),
            arrow=lambda: (pc.field("n") >= 10) & (pc.field("n") <= 20),
        ),
    ]


def _later_column() -> list[Case]:
    """A column added by a later write: old files have no statistics (and no values) for it."""
    import pyarrow.compute as pc

    return [
        Case(
            "later_null",
            ("x",),
            "x IS NULL",
            lambda r: r["x"] is None,
            arrow=lambda: pc.field("x").is_null(),
            daft=lambda: _daft_col("x").is_null(),
            spark=lambda: _spark_col("x").isNull(),
        ),
        Case(
            "later_range",
            ("x",),
            "x > 10",
            lambda r: cmp(r["x"], ">", 10.0),
            arrow=lambda: pc.field("x") > 10,
            daft=lambda: _daft_col("x") > 10.0,
        ),
    ]


def _typed(state: TableState) -> list[Case]:
    """Conditions on the many-types table's columns (times with and without a zone, decimals,
    NaN, booleans, dates, unsigned ints, unicode, a struct field)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    zoned = dt.datetime(2024, 3, 10, tzinfo=dt.timezone.utc)
    naive = dt.datetime(2024, 3, 2)
    day = dt.date(2024, 2, 29)
    return [
        Case(
            "zoned_time",
            ("at utc",),
            "\"at utc\" >= TIMESTAMPTZ '2024-03-10 00:00:00+00'",
            lambda r: cmp(r["at utc"], ">=", zoned),
            arrow=lambda: pc.field("at utc") >= pa.scalar(zoned, pa.timestamp("us", "UTC")),
            daft=lambda: _daft_col("at utc") >= zoned,
            spark=lambda: _spark_col("at utc") >= zoned,
            dialects={"spark": "`at utc` >= TIMESTAMP '2024-03-10 00:00:00+00:00'", "daft": None},
        ),
        Case(
            "naive_time",
            ("order",),
            "\"order\" < TIMESTAMP '2024-03-02 00:00:00'",
            lambda r: cmp(r["order"], "<", naive),
            arrow=lambda: pc.field("order") < pa.scalar(naive, pa.timestamp("us")),
            dialects={"spark": "`order` < TIMESTAMP_NTZ '2024-03-02 00:00:00'", "daft": None},
        ),
        Case(
            "decimal",
            ("select",),
            '"select" >= 100.5',
            lambda r: cmp(r["select"], ">=", decimal.Decimal("100.5")),
            arrow=lambda: pc.field("select") >= pa.scalar(decimal.Decimal("100.5")),
        ),
        Case(
            "decimal_point",
            ("select",),
            '"select" = 12.001',
            lambda r: cmp(r["select"], "=", decimal.Decimal("12.001")),
        ),
        Case(
            "above_one",  # NaN and infinity above it
            ("f",),
            "f > 1",
            lambda r: cmp(r["f"], ">", 1.0),
            arrow=lambda: pc.field("f") > 1.0,
            daft=lambda: _daft_col("f") > 1.0,
            spark=lambda: _spark_col("f") > 1.0,
        ),
        Case(
            "nan",
            ("f",),
            "isnan(f)",
            lambda r: r["f"] is not None and math.isnan(r["f"]),
            arrow=lambda: pc.field("f").is_nan(),
            dialects={"daft": "is_nan(f)"},
        ),
        Case(
            "zero",  # negative zero too
            ("f",),
            "f = 0",
            lambda r: cmp(r["f"], "=", 0.0),
            arrow=lambda: pc.field("f") == 0.0,
            # Daft's own SQL and expressions order floats totally (-0.0 before 0.0)
            dialects={"daft": "f >= -0.0 AND f <= 0.0"},
        ),
        Case(
            "flag",
            ("flag",),
            "flag",
            lambda r: r["flag"] is True,
            arrow=lambda: pc.field("flag"),
        ),
        Case(
            "not_flag",
            ("flag",),
            "NOT flag",
            lambda r: r["flag"] is False,
            arrow=lambda: ~pc.field("flag"),
        ),
        Case(
            "date",
            ("a.b",),
            "\"a.b\" = DATE '2024-02-29'",
            lambda r: r["a.b"] == day,
            arrow=lambda: pc.field("a.b") == pa.scalar(day),
            dialects={"delta_scan": None},  # its kernel takes a.b for a struct field
        ),
        Case(
            "unsigned",
            ("u8",),
            "u8 IN (7, 14, 255)",
            lambda r: r["u8"] in (7, 14, 255),
            arrow=lambda: pc.field("u8").isin([7, 14, 255]),
        ),
        Case(
            "unicode",
            ("Ünï",),
            "\"Ünï\" = '' OR \"Ünï\" LIKE 'ü1%'",
            lambda r: r["Ünï"] is not None and (r["Ünï"] == "" or r["Ünï"].startswith("ü1")),
        ),
        Case(
            "struct_field",
            ("struct",),
            '"struct".a = 5',
            lambda r: r["struct"] is not None and cmp(r["struct"]["a"], "=", 5),
            arrow=lambda: pc.field("struct", "a") == 5,
            dialects={"spark": "`struct`.a = 5"},
        ),
    ]


LONG = "a-very-long-common-prefix-that-outlasts-statistics-"  # past 32 characters


def _long_text(state: TableState) -> list[Case]:
    """Conditions on long text, whose maximum a writer may truncate."""
    import pyarrow.compute as pc

    return [
        Case(
            "long_text",
            ("words",),
            f"words = '{LONG}0042'",
            lambda r: r["words"] == f"{LONG}0042",
            arrow=lambda: pc.field("words") == f"{LONG}0042",
        ),
        Case(
            "long_text_above",
            ("words",),
            f"words > '{LONG}0090'",
            lambda r: cmp(r["words"], ">", f"{LONG}0090"),
        ),
    ]


def model_rows(state: TableState, case: Case) -> list[tuple]:
    return [tuple(r[c] for c in state.columns) for r in state.rows if case.holds(r)]


def _daft_col(name: str) -> Any:
    from daft import col

    return col(name)


def _spark_col(name: str) -> Any:
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _ray_col(name: str) -> Any:
    from ray.data.expressions import col

    return col(name)


def _polars_col(name: str) -> Any:
    import polars as pl

    return pl.col(name)


def check_filters(
    state: TableState, answer: dict[str, list], ordered: bool, required: list[Case]
) -> None:
    """Each case's rows (``name`` or ``name:form``) are the model's, as multisets (``ordered``:
    a table without keys in write order); every ``required`` case was answered."""
    from tests.conformance.shapes import normal

    cases = {c.name: c for c in cases_for(state)}
    missing = {c.name for c in required} - set(answer)
    assert not missing, f"cases not run: {sorted(missing)}"
    for key, got in answer.items():
        case = cases[key.split(":")[0]]
        want = model_rows(state, case)
        if ordered and not state.keyed:
            assert _plain(got) == _plain(want), f"{key}: rows differ or out of write order"
            continue
        want_rows, got_rows = normal(want), normal(got)
        lost, extra = want_rows - got_rows, got_rows - want_rows
        assert not lost and not extra, (
            f"{key} ({case.sql}): {sum(lost.values())} row(s) missing, e.g. {list(lost)[:2]}; "
            f"{sum(extra.values())} extra, e.g. {list(extra)[:2]}"
        )


def _plain(rows: list) -> list:
    from tests.conformance.shapes import _value

    return [tuple(_value(v) for v in row) for row in rows]
