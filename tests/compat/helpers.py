"""Shared data and small utilities for the DeltaCAT compatibility tests.

Enum members, exception classes and dataset types are looked up by name when a test runs, so a
name workbench lacks fails that one test (AttributeError) instead of breaking collection.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

import workbench as dc

# Content types DeltaCAT calls schemaless (they carry no schema of their own).
SCHEMALESS_CONTENT_TYPES = ["CSV", "TSV", "PSV", "UNESCAPED_TSV", "JSON"]
SCHEMA_CONTENT_TYPES = ["PARQUET", "ORC", "FEATHER", "AVRO"]


def member(enum: str, name: str) -> Any:
    """``dc.<enum>.<name>``, e.g. ``member("TableWriteMode", "CHRONO")``."""
    return getattr(getattr(dc, enum), name)


def mode(name: str) -> Any:
    return member("TableWriteMode", name)


def ctype(name: str) -> Any:
    return member("ContentType", name)


def dtype(name: str) -> Any:
    return member("DatasetType", name)


def prop(name: str) -> Any:
    return member("TableProperty", name)


def error(name: str) -> type[BaseException]:
    """An exception class of ``dc.exceptions`` (DeltaCAT: ``deltacat.exceptions``)."""
    return getattr(dc.exceptions, name)


def copy_on_write() -> dict:
    """DeltaCAT's COPY_ON_WRITE_TABLE_PROPERTIES."""
    return {prop("READ_OPTIMIZATION_LEVEL"): member("TableReadOptimizationLevel", "MAX")}


def basic_schema(merge_key: bool = False) -> Any:
    """id int64, name string, age int32, city string; ``id`` the merge key if asked."""
    return dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=merge_key),
            dc.Field.of(pa.field("name", pa.string())),
            dc.Field.of(pa.field("age", pa.int32())),
            dc.Field.of(pa.field("city", pa.string())),
        ]
    )


def simple_merge_schema() -> Any:
    return dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("name", pa.string())),
        ]
    )


def people() -> pd.DataFrame:
    """DeltaCAT's create_test_data(): five people, ids 1-5."""
    return pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5],
            "name": ["Alice", "Bob", "Charlie", "Dave", "Eve"],
            "age": [25, 30, 35, 40, 45],
            "city": ["NYC", "LA", "Chicago", "Houston", "Phoenix"],
        }
    )


def people_upsert() -> pd.DataFrame:
    """DeltaCAT's create_overlapping_upsert_data(): ids 3 and 4 updated, 6 and 7 new."""
    return pd.DataFrame(
        {
            "id": [3, 4, 6, 7],
            "name": ["Charlie_Updated", "Dave_Updated", "Frank", "Grace"],
            "age": [36, 41, 50, 55],
            "city": ["Chicago_New", "Houston_New", "Boston", "Seattle"],
        }
    )


def initial() -> pd.DataFrame:
    return pd.DataFrame({"id": [1, 2], "name": ["Alice", "Bob"]})


def additional() -> pd.DataFrame:
    return pd.DataFrame({"id": [3, 4], "name": ["Charlie", "David"]})


def merge_data() -> pd.DataFrame:
    return pd.DataFrame({"id": [1, 3], "name": ["Alice_Updated", "Charlie_New"]})


def five_rows() -> pa.Table:
    """The id/name/value/category table of DeltaCAT's dataset-type and content-type tests."""
    return pa.table(
        {
            "id": [1, 2, 3, 4, 5],
            "name": ["Alice", "Bob", "Charlie", "David", "Eve"],
            "value": [10.1, 20.2, 30.3, 40.4, 50.5],
            "category": ["A", "B", "A", "C", "B"],
        }
    )


def frame(data: Any, **to_pandas: Any) -> pd.DataFrame:
    """Any dataset as pandas (through ``dc.to_pandas``, as DeltaCAT's tests do)."""
    if isinstance(data, pd.DataFrame):
        return data
    return dc.to_pandas(data, **to_pandas)


def rows_by_id(data: Any, columns: tuple[str, ...] = ("name", "age", "city")) -> dict:
    """{int(id): (column values...)} of a dataset; ages are compared as ints."""
    df = frame(data)
    out = {}
    for _, row in df.iterrows():
        values = []
        for c in columns:
            v = row[c]
            values.append(int(v) if c == "age" and pd.notna(v) else v)
        out[int(row["id"])] = tuple(values)
    return out


def write_in(cat, data, table, write_mode="CREATE", namespace="test_namespace", **kwargs):
    """DeltaCAT's write_to_table into catalog ``cat``, creating the namespace as needed
    (``write_mode=None``: no mode given)."""
    return dc.write_to_table(
        data=data,
        table=table,
        namespace=namespace,
        catalog=cat,
        auto_create_namespace=True,
        **({"mode": mode(write_mode)} if write_mode else {}),
        **kwargs,
    )


def read_in(cat, table, namespace="test_namespace", **kwargs):
    """DeltaCAT's read_table from catalog ``cat``."""
    return dc.read_table(table=table, namespace=namespace, catalog=cat, **kwargs)
