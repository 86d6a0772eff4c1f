"""Property tests: random write sequences give the same table as a plain-Python model of them."""

from __future__ import annotations

import tempfile

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as dc

KEYS = st.integers(min_value=0, max_value=12)
COLUMNS = ("a", "b", "c")


@st.composite
def batches(draw):
    """A batch of rows with unique keys and a random subset of the value columns."""
    keys = draw(st.lists(KEYS, min_size=1, max_size=6, unique=True))
    columns = draw(st.sets(st.sampled_from(COLUMNS), max_size=3))
    data = {"id": keys}
    for column in sorted(columns):
        if column == "b":
            data[column] = draw(
                st.lists(st.text("xyz", max_size=3), min_size=len(keys), max_size=len(keys))
            )
        else:
            data[column] = draw(
                st.lists(st.integers(-50, 50), min_size=len(keys), max_size=len(keys))
            )
    return data


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("merge"), batches()),
        st.tuples(st.just("delete"), st.lists(KEYS, min_size=1, max_size=4, unique=True)),
        st.tuples(st.just("replace"), batches()),
    ),
    min_size=1,
    max_size=6,
)


def to_arrow(data: dict) -> pa.Table:
    types = {"id": pa.int64(), "a": pa.int64(), "b": pa.string(), "c": pa.int64()}
    return pa.table({k: pa.array(v, types[k]) for k, v in data.items()})


def apply_to_model(model: dict, seen: set, op: str, payload) -> None:
    """The reference semantics: upsert provided columns, delete by key, replace all rows."""
    if op == "delete":
        for key in payload:
            model.pop(key, None)
        return
    columns = [c for c in payload if c != "id"]
    seen.update(columns)
    if op == "replace":
        model.clear()
    for i, key in enumerate(payload["id"]):
        row = model.setdefault(key, {})
        row.update({c: payload[c][i] for c in columns})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=batches(), operations=OPERATIONS)
def test_keyed_table_matches_model(first, operations):
    with tempfile.TemporaryDirectory() as root:
        dc.init_local(root)
        schema = dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)])
        model: dict = {}
        seen: set = set()
        dc.write(to_arrow(first), "t", schema=schema)
        apply_to_model(model, seen, "merge", first)
        for op, payload in operations:
            if op == "delete":
                dc.write(pa.table({"id": pa.array(payload, pa.int64())}), "t", mode="delete")
            else:
                dc.write(to_arrow(payload), "t", mode=op)
            apply_to_model(model, seen, op, payload)
        got = dc.read("t", read_as=dc.DatasetType.PYARROW).sort_by("id").to_pylist()
        expected = [
            {"id": key, **{c: model[key].get(c) for c in sorted(seen)}} for key in sorted(model)
        ]
        assert [{k: row[k] for k in ["id", *sorted(seen)]} for row in got] == expected
        assert set(dc.get_table("t").schema.names) == {"id", *seen}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    operations=st.lists(
        st.tuples(
            st.sampled_from(["add", "append", "replace"]),
            st.lists(st.integers(0, 99), min_size=1, max_size=5),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_unkeyed_table_keeps_write_order(operations):
    with tempfile.TemporaryDirectory() as root:
        dc.init_local(root)
        model: list[int] = []
        for op, values in operations:
            mode = op if dc.table_exists("log") else "create"
            dc.write(pa.table({"v": pa.array(values, pa.int64())}), "log", mode=mode)
            model = list(values) if op == "replace" else [*model, *values]
        assert dc.read("log", read_as=dc.DatasetType.PYARROW).column("v").to_pylist() == model


NULLABLE = {"n": "Int64", "f": "Float64", "flag": "boolean", "s": "string"}
NULLABLE_VALUES = {
    "n": st.one_of(st.none(), st.integers(-(2**62), 2**62)),
    "f": st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)),
    "flag": st.one_of(st.none(), st.booleans()),
    "s": st.one_of(st.none(), st.text("abc", max_size=3)),
}


@st.composite
def nullable_frames(draw, all_columns: bool = False):
    """A pandas frame of unique keys and nullable extension-dtype columns with nulls."""
    import pandas as pd

    keys = draw(st.lists(KEYS, min_size=1, max_size=6, unique=True))
    names = sorted(NULLABLE)
    chosen = names if all_columns else sorted(draw(st.sets(st.sampled_from(names))))
    data = {"id": pd.array(keys, dtype="int64")}
    for column in chosen:
        values = draw(st.lists(NULLABLE_VALUES[column], min_size=len(keys), max_size=len(keys)))
        data[column] = pd.array(values, dtype=NULLABLE[column])
    return pd.DataFrame(data)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=nullable_frames(all_columns=True),
    operations=st.lists(
        st.one_of(
            st.tuples(st.just("merge"), nullable_frames()),
            st.tuples(st.just("delete"), st.lists(KEYS, min_size=1, max_size=4, unique=True)),
            st.tuples(st.just("replace"), nullable_frames(all_columns=True)),
        ),
        max_size=5,
    ),
)
def test_pandas_extension_dtypes_and_nulls_match_model(first, operations):
    """Nullable pandas columns keep their dtype and exact values through every keyed mode."""
    import pandas as pd

    with tempfile.TemporaryDirectory() as root:
        dc.init_local(root)
        schema = dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)])
        model: dict = {}
        dc.write(first, "t", schema=schema)
        for row in first.to_dict("records"):
            model[row["id"]] = row
        for op, payload in operations:
            if op == "delete":
                dc.write(pd.DataFrame({"id": payload}), "t", mode="delete")
                for key in payload:
                    model.pop(key, None)
                continue
            dc.write(payload, "t", mode=op)
            if op == "replace":
                model.clear()
            for row in payload.to_dict("records"):
                model.setdefault(row["id"], {column: pd.NA for column in NULLABLE}).update(row)
        got = dc.read("t", read_as=dc.DatasetType.PANDAS)
        assert {c: str(got[c].dtype) for c in NULLABLE} == NULLABLE
        got = got.sort_values("id", ignore_index=True)
        rows = [model[key] for key in sorted(model)]
        expected = pd.DataFrame(  # column by column: a frame of records would pass through floats
            {
                "id": pd.array([r["id"] for r in rows], dtype="int64"),
                **{c: pd.array([r[c] for r in rows], dtype=t) for c, t in NULLABLE.items()},
            }
        )
        pd.testing.assert_frame_equal(got[expected.columns], expected)
