"""File skipping is sound: a file is left out only when its statistics prove that no row of it
satisfies the filter. Random files (written by pyarrow, their statistics taken from the footer
as every workbench writer takes them) and random filters, each answer checked by evaluating the
filter on the file's rows; and the statistics other writers leave (truncated text, times cut to
milliseconds, none at all) read as loosely as they must be."""

from __future__ import annotations

import datetime as dt
import io
import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.core.delta.data_files import DataFile, WrittenFile, footer_stats
from workbench.core.delta.skipping import skip_files
from workbench.core.filters.duck import filter_rows
from workbench.core.filters.table_filter import table_filter

SCHEMA = pa.schema(
    [
        ("i", pa.int64()),
        ("f", pa.float64()),
        ("s", pa.string()),
        ("b", pa.bool_()),
        ("t", pa.timestamp("us", "UTC")),
    ]
)
PREFIX = "x" * 40  # past the 32 characters writers may keep of a text bound
FLOATS = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.5, -2.5, 7.0]
TEXTS = ["", "a", "ab", "b", "é", PREFIX + "1", PREFIX + "2", PREFIX]
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

ints = st.one_of(st.none(), st.integers(-5, 5))
floats = st.one_of(st.none(), st.sampled_from(FLOATS))
texts = st.one_of(st.none(), st.sampled_from(TEXTS))
bools = st.one_of(st.none(), st.booleans())
times = st.one_of(
    st.none(), st.integers(0, 5).map(lambda k: EPOCH + dt.timedelta(microseconds=k * 700))
)


def _sql_float(v: float) -> str:
    return f"CAST('{v}' AS DOUBLE)" if not math.isfinite(v) else repr(v)


def _sql_time(v: dt.datetime) -> str:
    return f"TIMESTAMPTZ '{v.isoformat(sep=' ')}'"


OPS = ["=", "<>", "<", "<=", ">", ">="]


@st.composite
def atoms(draw) -> str:
    kind = draw(st.sampled_from(["i", "f", "s", "b", "t", "null", "in", "like", "nan"]))
    op = draw(st.sampled_from(OPS))
    if kind == "i":
        return f"i {op} {draw(st.integers(-6, 6))}"
    if kind == "f":
        return f"f {op} {_sql_float(draw(st.sampled_from(FLOATS)))}"
    if kind == "s":
        text = draw(st.sampled_from(TEXTS)).replace("'", "''")
        return f"s {op} '{text}'"
    if kind == "b":
        return draw(st.sampled_from(["b", "NOT b", "b = false"]))
    if kind == "t":
        near = draw(st.integers(0, 5)) * 700 + draw(st.sampled_from([-1, 0, 1, 350]))
        return f"t {op} {_sql_time(EPOCH + dt.timedelta(microseconds=near))}"
    if kind == "null":
        column = draw(st.sampled_from(["i", "f", "s", "b", "t"]))
        return f"{column} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == "in":
        values = draw(st.lists(st.one_of(st.none(), st.integers(-6, 6)), min_size=1, max_size=3))
        listed = ", ".join("NULL" if v is None else str(v) for v in values)
        return f"i {draw(st.sampled_from(['', 'NOT ']))}IN ({listed})"
    if kind == "like":
        return f"s LIKE '{draw(st.sampled_from(['a', 'x', PREFIX, 'é']))}%'"
    return "isnan(f)"


@st.composite
def conditions(draw, depth: int = 2) -> str:
    if depth == 0 or draw(st.booleans()):
        return draw(atoms())
    left, right = draw(conditions(depth=depth - 1)), draw(conditions(depth=depth - 1))
    shape = draw(st.sampled_from(["({} AND {})", "({} OR {})", "NOT ({})"]))
    return shape.format(left, right) if shape.count("{}") == 2 else shape.format(left)


def _written(table: pa.Table) -> DataFile:
    """A file of ``table`` as the log describes it: footer statistics, as JSON."""
    collected: list = []
    sink = io.BytesIO()
    pq.write_table(table, sink, metadata_collector=collected)
    stats = footer_stats(collected[0])
    return DataFile.from_written(WrittenFile("/t/part.parquet", len(sink.getvalue()), stats), "/t")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(ints, floats, texts, bools, times), min_size=1, max_size=12),
    text=conditions(),
)
def test_a_skipped_file_holds_no_row_the_filter_keeps(rows, text):
    table = pa.Table.from_arrays(
        [pa.array([r[k] for r in rows], f.type) for k, f in enumerate(SCHEMA)], schema=SCHEMA
    )
    made = table_filter(text, SCHEMA, "t")
    kept = skip_files([_written(table)], made.predicate, SCHEMA).kept
    if not kept:
        matched = filter_rows(table, made)
        assert matched.num_rows == 0, f"{text} skipped a file holding {matched.to_pylist()}"


def _file(stats: dict, rows: int = 10) -> DataFile:
    stats = {"numRecords": rows, **stats}
    return DataFile.from_written(WrittenFile("/t/p.parquet", 100, json.dumps(stats)), "/t")


def _kept(stats: dict, text: str, schema: pa.Schema = SCHEMA) -> bool:
    made = table_filter(text, schema, "t")
    return bool(skip_files([_file(stats)], made.predicate, schema).kept)


def test_bounds_prove_what_they_can():
    stats = {
        "minValues": {"i": 10, "s": "b"},
        "maxValues": {"i": 20, "s": "d"},
        "nullCount": {"i": 0},
    }
    assert not _kept(stats, "i = 5") and not _kept(stats, "i > 20") and not _kept(stats, "i < 10")
    assert _kept(stats, "i = 15") and _kept(stats, "i >= 20") and _kept(stats, "i <> 15")
    assert not _kept(stats, "i IN (1, 2, 30)") and _kept(stats, "i IN (1, 12)")
    assert not _kept(stats, "i IS NULL") and _kept(stats, "i IS NOT NULL")
    assert not _kept(stats, "NOT (i >= 10)") and not _kept(stats, "i = 5 OR i = 25")
    assert not _kept(stats, "s LIKE 'a%'") and not _kept(stats, "s LIKE 'e%'")
    assert _kept(stats, "s LIKE 'c%'") and _kept(stats, "lower(s) = 'a'")
    assert not _kept(stats, "i = 5 AND lower(s) = 'a'")  # one part proves it
    assert _kept(stats, "i = 5 OR lower(s) = 'a'")  # the other part proves nothing
    assert not _kept(stats, "i = NULL") and not _kept(stats, "i NOT IN (1, NULL)")


def test_a_column_without_statistics_is_never_skipped_on():
    assert _kept({}, "i = 5") and _kept({}, "i IS NULL") and _kept({}, "i IS NOT NULL")
    # a column added after the file was written: no bounds, no null count
    assert _kept({"minValues": {"s": "a"}, "maxValues": {"s": "a"}}, "i = 5")


def test_all_null_columns_match_only_is_null():
    nulls = {"nullCount": {"i": 10}}
    assert (
        not _kept(nulls, "i = 5")
        and not _kept(nulls, "i <> 5")
        and not _kept(nulls, "i IS NOT NULL")
    )
    assert _kept(nulls, "i IS NULL")


def test_long_text_bounds_may_be_truncated():
    cut = PREFIX[:32]  # what a writer that truncates keeps of PREFIX + "9"
    stats = {"minValues": {"s": cut}, "maxValues": {"s": cut}}
    assert _kept(stats, f"s = '{PREFIX}9'")  # the maximum is no upper bound
    assert not _kept(stats, "s = 'a'")  # the minimum still is a lower bound


def test_times_cut_to_milliseconds_still_hold_their_rows():
    stats = {
        "minValues": {"t": "2026-01-01T00:00:00.000Z"},
        "maxValues": {"t": "2026-01-01T00:00:00.001Z"},
    }
    assert _kept(stats, "t = TIMESTAMPTZ '2026-01-01 00:00:00.001999+00'")
    assert not _kept(stats, "t = TIMESTAMPTZ '2026-01-01 00:00:00.002001+00'")
    assert not _kept(stats, "t < TIMESTAMPTZ '2025-12-31 23:59:59+00'")


def test_nan_may_be_above_any_float_bound():
    stats = {"minValues": {"f": 1.0}, "maxValues": {"f": 2.0}}
    assert _kept(stats, "f > 5") and _kept(stats, "f <> 1.5") and _kept(stats, "isnan(f)")
    assert not _kept(stats, "f = 5") and not _kept(stats, "f < 0")


def test_decimal_bounds_are_exact_or_unknown():
    narrow = pa.schema([("d", pa.decimal128(10, 2))])
    wide = pa.schema([("d", pa.decimal128(38, 2))])
    stats = {"minValues": {"d": 1.1}, "maxValues": {"d": 1.1}}
    assert not _kept(stats, "d = 1.2", narrow) and _kept(stats, "d = 1.10", narrow)
    assert _kept(stats, "d = 1.2", wide)  # a double cannot hold 38 digits: no bound


def test_struct_fields_skip_by_nested_statistics():
    schema = pa.schema([("p", pa.struct([("x", pa.int32())]))])
    stats = {"minValues": {"p": {"x": 1}}, "maxValues": {"p": {"x": 3}}}
    assert not _kept(stats, "p.x = 7", schema) and _kept(stats, "p.x = 2", schema)
    flat = {"minValues": {"p.x": 1}, "maxValues": {"p.x": 3}}  # as deltalake flattens them
    assert not _kept(flat, "p.x = 7", schema)
