"""The clustering order on its own (no table): the Hilbert index is a curve through every cell
whose steps are unit steps, ranks tie equal values and put nulls first, and the order keeps
every row and spreads skewed and string columns as evenly as uniform numbers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.delta.clustering import clustered, clustering_order, hilbert_index


@pytest.mark.parametrize(("dimensions", "bits"), [(2, 1), (2, 5), (3, 3), (4, 2)])
def test_hilbert_index_visits_every_cell_once_in_unit_steps(dimensions, bits):
    cells = np.array(list(itertools.product(range(2**bits), repeat=dimensions)), np.uint64)
    index = hilbert_index([cells[:, d] for d in range(dimensions)], bits)
    assert sorted(index.tolist()) == list(range(2 ** (dimensions * bits)))
    walk = cells[np.argsort(index)].astype(np.int64)
    assert (np.abs(np.diff(walk, axis=0)).sum(axis=1) == 1).all(), "neighbours, never jumps"


def test_hilbert_index_takes_the_widest_cells():
    """Two dimensions of 32 bits fill the 64-bit index (the top cell is the last corner)."""
    top = np.array([2**32 - 1], np.uint64)
    low = np.array([0], np.uint64)
    assert hilbert_index([top, low], 32)[0] == 2**64 - 1
    assert hilbert_index([low, low], 32)[0] == 0


def test_one_column_is_a_sort_with_nulls_first_and_ties_in_order():
    data = pa.table({"k": ["b", None, "a", "b", None, "c"], "n": [0, 1, 2, 3, 4, 5]})
    out = clustered(data, ["k"])
    assert out.column("k").to_pylist() == [None, None, "a", "b", "b", "c"]
    assert out.column("n").to_pylist() == [1, 4, 2, 0, 3, 5], "equal values keep their order"


def test_floats_order_nans_last_and_every_orderable_type_clusters():
    data = pa.table(
        {
            "f": pa.array([2.0, float("nan"), -1.0, None]),
            "t": pa.array([3, 1, 2, None], pa.timestamp("us", "UTC")),
            "s": pa.array(["x", "y", None, "w"], pa.large_string()),
            "b": pa.array([True, False, None, True]),
        }
    )
    assert clustered(data, ["f"]).column("f").to_pylist()[:3] == [None, -1.0, 2.0]
    for pair in itertools.combinations(data.column_names, 2):
        assert sorted(clustering_order(data, list(pair)).tolist()) == [0, 1, 2, 3]


ROWS = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(-5, 5)), st.sampled_from(["a", "bb", "c", ""])),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, columns=st.sampled_from([["x"], ["y"], ["x", "y"], ["y", "x"]]))
def test_clustering_keeps_every_row(rows, columns):
    data = pa.table(
        {
            "x": pa.array([r[0] for r in rows], pa.int64()),
            "y": pa.array([r[1] for r in rows], pa.string()),
        }
    )
    out = clustered(data, columns)
    assert sorted(map(repr, out.to_pylist())) == sorted(map(repr, data.to_pylist()))


def test_two_columns_narrow_both_even_when_one_is_skewed():
    """Ranks spread a skewed column and a string column over the whole curve: cut into 256
    runs (files), a value that holds few rows is in few runs, in either column."""
    rng = np.random.default_rng(7)
    rows = 64 * 1024
    user = rng.zipf(1.2, rows) % 50_000  # a few heavy users, a long tail
    category = [f"category-{c:03d}" for c in rng.integers(0, 300, rows)]
    data = pa.table({"user": user, "category": category})
    order = clustering_order(data, ["user", "category"])
    runs = 256
    for name in ("user", "category"):
        values = np.asarray(data.column(name).to_pylist(), dtype=object)[order]
        chunks = np.array_split(values, runs)
        low = [min(c) for c in chunks]
        high = [max(c) for c in chunks]
        counts: dict = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        light = [v for v, n in counts.items() if n <= rows / runs][:300]
        spans = [sum(lo <= v <= hi for lo, hi in zip(low, high, strict=True)) for v in light]
        assert max(spans) <= math.ceil(0.1 * runs), name
