"""The log's time statistics become the text pyarrow's cast spells (what skipping and merges
compare), without pyarrow's compute functions, for every unit, with and without a zone."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.delta.snapshot import _plain_values

# the range Python's datetime spans (years 1 to 9999), in seconds since the epoch
FIRST, LAST = -62_135_596_800, 253_402_300_799
SCALE = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
INT64 = (-(2**63) + 1, 2**63 - 1)


@st.composite
def time_columns(draw) -> pa.ChunkedArray:
    unit = draw(st.sampled_from(sorted(SCALE)))
    zone = draw(st.sampled_from([None, "UTC"]))
    low, high = max(FIRST * SCALE[unit], INT64[0]), min(LAST * SCALE[unit], INT64[1])
    ticks = st.one_of(st.none(), st.integers(low, high), st.sampled_from([0, -1, 1, low, high]))
    chunks = draw(st.lists(st.lists(ticks, max_size=6), min_size=1, max_size=3))
    kind = pa.timestamp(unit, tz=zone)
    return pa.chunked_array([pa.array(c, pa.int64()).view(kind) for c in chunks], kind)


@settings(max_examples=300, deadline=None)
@given(time_columns())
def test_times_are_spelt_as_pyarrows_cast_spells_them(column):
    assert _plain_values(column) == column.cast(pa.string()).to_pylist()


def test_a_time_in_another_zone_is_spelt_in_that_zone():
    column = pa.chunked_array([pa.array([0, None], pa.timestamp("us", tz="America/New_York"))])
    assert _plain_values(column) == ["1969-12-31 19:00:00.000000-0500", None]


def test_other_statistics_are_python_values():
    column = pa.chunked_array([pa.array([1, None]), pa.array([3])])
    assert _plain_values(column) == [1, None, 3]
