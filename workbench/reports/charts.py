"""Charts the report templates share: a column's values as one plotly bar chart, binned here so a
report carries at most a few dozen bars, never every value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import plotly.graph_objects as go
    import pyarrow as pa

BINS = 30
TOP_VALUES = 20
DISTINCT_SHARE = 0.9  # text columns with more distinct values than this share are ids or hashes


def distribution(column: pa.ChunkedArray | pa.Array, title: str) -> go.Figure | str:
    """A chart of a column's values (most common values for text and flags, a histogram for
    numbers and times), or a short reason it is not charted (empty, ids, nested, binary)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    values = pc.drop_null(column)
    if not len(values):
        return "no values"
    if pa.types.is_dictionary(kind):
        values, kind = values.cast(kind.value_type), kind.value_type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_boolean(kind):
        return _most_common(values.cast(pa.string()), title)
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return _histogram(values.cast(pa.float64()).to_numpy(), title, times=False)
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        return _histogram(values.cast(pa.timestamp("ns")).cast(pa.int64()).to_numpy(), title, True)
    return f"{kind} values are not charted"


def _most_common(values: Any, title: str) -> go.Figure | str:
    import pandas as pd
    import plotly.express as px

    counts = values.value_counts().to_pylist()
    if len(values) > 10 and len(counts) > DISTINCT_SHARE * len(values):
        return f"{len(counts)} distinct values in {len(values)} rows (ids or hashes): not charted"
    top = sorted(counts, key=lambda c: -c["counts"])[:TOP_VALUES]
    frame = pd.DataFrame({"value": [c["values"] for c in top], "rows": [c["counts"] for c in top]})
    return px.bar(frame, x="value", y="rows", title=title)


def _histogram(values: Any, title: str, times: bool) -> go.Figure:
    import numpy as np
    import pandas as pd
    import plotly.express as px

    low = values.min()
    offsets = (values - low).astype(np.float64)  # from the smallest: times in ns keep precision
    span = offsets.max()
    if span == 0:  # one value: one bar (numpy cannot split an empty range into bins)
        counts, edges = np.array([len(values)]), np.array([0.0, 0.0])
    else:
        counts, edges = np.histogram(offsets, bins=BINS, range=(0.0, span))
    middles = (edges[:-1] + edges[1:]) / 2
    x = pd.to_datetime(low + middles.astype(np.int64)) if times else low + middles
    frame = pd.DataFrame({"value": x, "rows": counts})
    return px.bar(frame, x="value", y="rows", title=title).update_layout(bargap=0)


def embedding_map(column: pa.ChunkedArray | pa.Array, labels: Any, title: str) -> go.Figure | str:
    """Vectors (e.g. text embeddings) as points on their first two principal components, each
    named by its label, or why not (fewer than three vectors)."""
    import numpy as np
    import plotly.express as px
    import pyarrow.compute as pc

    present = pc.is_valid(column)
    vectors = np.array(column.filter(present).to_pylist(), dtype=np.float64)
    if len(vectors) < 3:
        return f"{len(vectors)} vectors, too few to map"
    centred = vectors - vectors.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    points = centred @ axes[:2].T
    names = None if labels is None else np.asarray(labels, dtype=object)[present.to_numpy(False)]
    return px.scatter(
        x=points[:, 0],
        y=points[:, 1],
        hover_name=names,
        labels={"x": "component 1", "y": "component 2"},
        title=f"{title} ({vectors.shape[1]} dimensions, first two principal components)",
    )


def show(chart: go.Figure | str, name: str) -> None:
    """Display a chart in a notebook, or a line saying why column ``name`` has none."""
    from IPython.display import Markdown, display

    if isinstance(chart, str):
        display(Markdown(f"`{name}`: {chart}"))
    else:
        chart.show()
