"""The report templates' charts on real Arrow columns: binned data, edge values, and reasons."""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa
import pytest

from workbench.reports import charts


def _bars(figure) -> tuple[list, list]:
    trace = figure.data[0]
    return list(trace.x), list(trace.y)


def test_text_and_flags_chart_their_most_common_values():
    labels, counts = _bars(charts.distribution(pa.array(["cat", "dog", "cat", None]), "t"))
    assert labels == ["cat", "dog"] and counts == [2, 1]  # nulls are left out
    flags = pa.array([True, False, True]).dictionary_encode()
    assert _bars(charts.distribution(pa.array([True, False, True]), "t"))[1] == [2, 1]
    assert _bars(charts.distribution(flags, "t"))[1] == [2, 1]  # dictionaries are decoded
    words = pa.array(["b", "a", "b"]).dictionary_encode()
    assert _bars(charts.distribution(words, "t")) == (["b", "a"], [2, 1])


def test_numbers_and_times_are_binned_not_embedded_value_by_value():
    values = pa.chunked_array([list(range(10_000)), [None, 5]])
    middles, counts = _bars(charts.distribution(values, "n"))
    assert len(counts) == charts.BINS and sum(counts) == 10_001
    assert middles[0] < middles[-1] < 10_000
    one = charts.distribution(pa.array([7, 7, 7]), "n")
    assert _bars(one)[1] == [3]  # one value: one bar, no numpy error
    close = pa.array([1_790_000_000_000_000_000 + i for i in (0, 1, 2)], pa.timestamp("ns"))
    assert sum(_bars(charts.distribution(close, "t"))[1]) == 3  # ns apart, near 2026
    days = pa.array([datetime(2026, 1, d).date() for d in (1, 2, 2, 3)])
    times, counts = _bars(charts.distribution(days, "d"))
    assert sum(counts) == 4 and str(times[0]).startswith("2026-01-01")


@pytest.mark.parametrize(
    ("column", "reason"),
    [
        (pa.array([None, None], pa.int64()), "no values"),
        (pa.array([f"id-{i}" for i in range(50)]), "distinct"),
        (pa.array([b"x", b"y"]), "not charted"),
        (pa.array([[1, 2]], pa.list_(pa.int64())), "not charted"),
    ],
)
def test_columns_without_a_chart_say_why(column, reason):
    assert reason in charts.distribution(column, "c")


def test_embedding_map_places_each_labelled_vector():
    vectors = pa.array([[1.0, 0.0, 0.0], None, [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    figure = charts.embedding_map(vectors, ["a", "gone", "b", "c"], "emb")
    assert list(figure.data[0].hovertext) == ["a", "b", "c"]  # the null row and its label left out
    assert "3 dimensions" in figure.layout.title.text
    assert "too few" in charts.embedding_map(vectors.slice(0, 2), None, "emb")
