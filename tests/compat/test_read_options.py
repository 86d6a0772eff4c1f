"""Reads: every dataset type, reader keyword arguments, file path columns, column selection,
schema evolution across files, lazy Parquet files.

Ports DeltaCAT 2.0 (deltacat/tests/catalog/test_default_catalog_impl.py): ``TestReadTableMain``
(test_daft_distributed_read_sanity, test_daft_distributed_read_multiple_deltas) and
``TestDatasetTypes`` (test_comprehensive_storage_types_local_catalog,
test_custom_kwargs_comprehensive_local_storage, test_custom_kwargs_comprehensive_content_types,
test_custom_kwargs_comprehensive_distributed_storage, test_file_path_column_with_column_selection,
test_daft_schema_evolution_with_missing_columns, test_schema_evolution_dataset_and_table_types,
test_pyarrow_parquet_lazy_materialization and ..._multiple_writes).

Not ported: the RAY_DATASET cases (Ray start-up cost) and the ``stream_position`` of the
deltas that writes return (stream positions are out of scope; see REPORT.md).
"""

from __future__ import annotations

import daft
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as papq
import pytest

import workbench as dc
from tests.compat.helpers import (
    SCHEMA_CONTENT_TYPES,
    ctype,
    dtype,
    five_rows,
    prop,
    read_in,
    write_in,
)

pytestmark = pytest.mark.compat

NS = "test_namespace"


_write, _read = write_in, read_in


def _pk_rows(start, letters):
    return pa.table({"pk": list(range(start, start + len(letters))), "value": list(letters)})


@pytest.mark.parametrize("deltas", [1, 2], ids=["sanity", "multiple_deltas"])
def test_daft_distributed_read(cat, deltas):
    """DeltaCAT's test_daft_distributed_read_sanity and ..._multiple_deltas: one delta per
    write, and the default (Daft) read sees every row."""
    ns, table = "catalog_read_table_namespace", f"test_read_table_{deltas}"
    assert len(_write(cat, _pk_rows(1, "abcdef"), table, namespace=ns)) == 1
    if deltas == 2:
        assert len(_write(cat, _pk_rows(7, "ghijkl"), table, "APPEND", namespace=ns)) == 1
    df = _read(cat, table, namespace=ns)
    assert df.count_rows() == 6 * deltas
    assert df.column_names == ["pk", "value"]


def test_comprehensive_storage_types_local_catalog(cat):
    _write(cat, five_rows(), "comprehensive_test_table")
    local = dc.DatasetType.local()
    assert dtype("PYARROW_PARQUET") in local
    for read_as in local:
        result = _read(cat, "comprehensive_test_table", read_as=read_as)
        assert dc.dataset_length(result) == 5, read_as
        if read_as.name == "PYARROW":
            assert isinstance(result, pa.Table) and len(result.column_names) == 4
        elif read_as.name == "PANDAS":
            assert isinstance(result, pd.DataFrame) and len(result.columns) == 4
        elif read_as.name == "POLARS":
            assert isinstance(result, pl.DataFrame) and result.shape == (5, 4)
        elif read_as.name == "NUMPY":
            assert isinstance(result, np.ndarray) and result.shape[1] == 4
    # DeltaCAT reads every distributed type; RAY_DATASET is left out here (Ray start-up cost).
    assert _read(cat, "comprehensive_test_table", read_as=dtype("DAFT")) is not None


@pytest.mark.parametrize(
    "reader, kwargs",
    [
        ("PYARROW", {"pre_buffer": True, "use_pandas_metadata": True}),
        ("PYARROW_PARQUET", {"pre_buffer": True}),
        ("PANDAS", {"use_pandas_metadata": True}),
        ("POLARS", {"use_pyarrow": True}),
        ("NUMPY", {"use_pandas_metadata": True}),
    ],
)
def test_custom_kwargs_comprehensive_local_storage(cat, reader, kwargs):
    """Reader keyword arguments pass through; ``file_path_column`` adds a fifth column
    (the PYARROW_PARQUET read ignores it)."""
    _write(cat, five_rows(), "kwargs_comprehensive_test_table")
    result = _read(
        cat,
        "kwargs_comprehensive_test_table",
        read_as=dtype(reader),
        file_path_column="_source_path",
        **kwargs,
    )
    assert dc.dataset_length(result) == 5
    if reader == "PYARROW":
        assert isinstance(result, pa.Table)
        assert len(result.column_names) == 5 and "_source_path" in result.column_names
    elif reader == "PANDAS":
        assert isinstance(result, pd.DataFrame)
        assert len(result.columns) == 5 and "_source_path" in result.columns
    elif reader == "POLARS":
        assert isinstance(result, pl.DataFrame)
        assert result.shape[1] == 5 and "_source_path" in result.columns
    elif reader == "NUMPY":
        assert isinstance(result, np.ndarray) and result.shape[1] == 5


# (content type, reader, reader kwargs mixed with DeltaCAT's own kwargs that must be dropped).
KWARG_CASES = [
    ("PARQUET", "PYARROW", {"pre_buffer": True, "use_pandas_metadata": True, "entry_params": None}),
    ("PARQUET", "PYARROW_PARQUET", {"pre_buffer": True, "file_reader_kwargs_provider": None}),
    ("PARQUET", "PANDAS", {"use_pandas_metadata": True, "column_names": None}),
    ("PARQUET", "POLARS", {"use_pyarrow": True, "include_columns": None}),
    ("PARQUET", "NUMPY", {"use_pandas_metadata": True, "ray_options_provider": None}),
    ("PARQUET", "DAFT", {"io_config": None, "ray_init_options": None}),
    ("FEATHER", "PYARROW", {"columns": ["id", "name"], "max_parallelism": 2}),
    ("FEATHER", "PANDAS", {"columns": ["id", "name"], "manifest": None}),
    ("FEATHER", "POLARS", {"columns": ["id", "name"], "use_pyarrow": True}),
    ("ORC", "PYARROW", {"columns": ["id", "name"], "ray_options_provider": None}),
    ("ORC", "PANDAS", {"columns": ["id", "name"], "file_reader_kwargs_provider": None}),
    ("CSV", "PYARROW", {"sep": ",", "header": None, "distributed_dataset_type": None}),
    ("CSV", "PANDAS", {"sep": ",", "header": None, "column_names": None}),
    ("CSV", "POLARS", {"separator": ",", "has_header": False, "include_columns": None}),
    ("CSV", "DAFT", {"has_header": False, "io_config": None}),
    ("JSON", "PYARROW", {"lines": True, "file_reader_kwargs_provider": None}),
    ("JSON", "PANDAS", {"lines": True, "max_parallelism": 1}),
    ("JSON", "DAFT", {"io_config": None, "ray_init_options": None}),
    ("AVRO", "PYARROW", {"columns": ["id", "name"], "manifest": None}),
    ("AVRO", "PANDAS", {"columns": ["id", "name"], "entry_params": None}),
]
RESULT_TYPES = {
    "PYARROW": pa.Table,
    "PANDAS": pd.DataFrame,
    "POLARS": pl.DataFrame,
    "NUMPY": np.ndarray,
    "DAFT": daft.DataFrame,
}


@pytest.mark.parametrize("content_type, reader, kwargs", KWARG_CASES)
def test_custom_kwargs_comprehensive_content_types(cat, content_type, reader, kwargs):
    """No keyword argument may make the read fail with a TypeError or an "unexpected keyword
    argument" error. As in DeltaCAT, other read errors are tolerated; the result type is checked
    when the read succeeds. (The RAY_DATASET case is not ported.)"""
    table = f"kwargs_test_table_{ctype(content_type).value}".replace("/", "_")
    schemaless = {} if content_type in SCHEMA_CONTENT_TYPES else {"schema": None}
    _write(
        cat,
        pa.table(
            {"id": [1, 2, 3], "name": ["Alice", "Bob", "Charlie"], "value": [10.1, 20.2, 30.3]}
        ),
        table,
        content_type=ctype(content_type),
        table_properties={prop("SUPPORTED_READER_TYPES"): None},
        **schemaless,
    )
    try:
        result = _read(cat, table, read_as=dtype(reader), table_version_schema=None, **kwargs)
    except TypeError as e:
        pytest.fail(f"keyword arguments were not filtered: {e}")
    except Exception as e:
        if "unexpected keyword argument" in str(e):
            pytest.fail(f"keyword arguments were not filtered: {e}")
        return
    assert result is not None
    if content_type not in SCHEMA_CONTENT_TYPES:
        return
    if reader == "PYARROW_PARQUET":
        files = result if isinstance(result, list) else [result]
        assert all(isinstance(f, papq.ParquetFile) for f in files)
        return
    assert isinstance(result, RESULT_TYPES[reader])
    assert dc.dataset_length(result) > 0


def test_custom_kwargs_comprehensive_distributed_storage(cat):
    """The DAFT case: engine options pass through and ``file_path_column`` names each row's
    file. (The four RAY_DATASET cases are not ported.)"""
    _write(
        cat,
        five_rows(),
        "kwargs_distributed_test_table",
        content_type=ctype("PARQUET"),
        table_properties={prop("SUPPORTED_READER_TYPES"): [dtype("DAFT")]},
    )
    result = _read(
        cat,
        "kwargs_distributed_test_table",
        read_as=dtype("DAFT"),
        io_config=None,
        ray_init_options={"num_cpus": 1},
        file_path_column="_source_file_path",
    )
    assert isinstance(result, daft.DataFrame)
    assert "_source_file_path" in result.column_names
    paths = result.limit(3).collect().to_pydict()["_source_file_path"]
    assert all(p is not None and len(str(p)) > 0 for p in paths)
    assert any("/" in str(p) for p in paths)


@pytest.mark.parametrize(
    "reader, columns, path_column",
    [
        ("PYARROW", ["id", "name"], "_file_source"),
        ("PYARROW", ["id", "name", "_file_source"], "_file_source"),  # listed explicitly too
        ("PANDAS", ["value", "category"], "_source_file"),
        ("DAFT", ["name", "value"], "daft_source"),
    ],
)
def test_file_path_column_with_column_selection(cat, reader, columns, path_column):
    """The path column is present whether or not ``columns`` lists it. (The RAY_DATASET case is
    not ported.)"""
    rows = pa.table(
        {
            "id": [1, 2, 3],
            "name": ["Alice", "Bob", "Charlie"],
            "value": [10.1, 20.2, 30.3],
            "category": ["A", "B", "A"],
            "extra_col": ["x", "y", "z"],
        }
    )
    _write(cat, rows, "file_path_column_test_table")
    result = _read(
        cat,
        "file_path_column_test_table",
        columns=columns,
        file_path_column=path_column,
        read_as=dtype(reader),
    )
    got = set(result.columns) if reader == "PANDAS" else set(result.column_names)
    assert got == set(columns) | {path_column}


def _experiment(name, step, loss, **extra):
    return {"experiment_name": name, "global_step": step, "loss": loss, **extra}


def _runs(cat, table, with_batch_size):
    """Baseline rows, then APPENDs that add ``learning_rate`` (and ``batch_size``)."""
    dc.create_namespace(NS, catalog=cat)
    now = pd.Timestamp.now()
    baseline = [
        _experiment("baseline", 1, 2.5, timestamp=now),
        _experiment("baseline", 2, 2.3, timestamp=now),
    ]
    _write(cat, pa.Table.from_pandas(pd.DataFrame(baseline)), table, None)
    step1 = _experiment("higher_lr", 1, 3.5, learning_rate=5e-4, timestamp=now)
    _write(cat, pa.Table.from_pandas(pd.DataFrame([step1])), table, "APPEND")
    if with_batch_size:
        step2 = _experiment("higher_lr", 2, 3.2, learning_rate=5e-4, batch_size=64, timestamp=now)
        _write(cat, pa.Table.from_pandas(pd.DataFrame([step2])), table, "APPEND")


def test_daft_schema_evolution_with_missing_columns(cat):
    _runs(cat, "schema_evolution_test", with_batch_size=True)
    rows = _read(cat, "schema_evolution_test").collect().to_pandas()
    assert len(rows) == 4
    assert set(rows["experiment_name"]) == {"baseline", "higher_lr"}
    assert set(rows.columns) == {
        "experiment_name",
        "global_step",
        "loss",
        "timestamp",
        "learning_rate",
        "batch_size",
    }
    baseline = rows[rows["experiment_name"] == "baseline"]
    higher = rows[rows["experiment_name"] == "higher_lr"]
    assert baseline["learning_rate"].isna().all() and baseline["batch_size"].isna().all()
    assert (higher["learning_rate"] == 0.0005).all()
    assert higher[higher["global_step"] == 1]["batch_size"].isna().iloc[0]
    assert higher[higher["global_step"] == 2]["batch_size"].iloc[0] == 64


@pytest.mark.parametrize(
    "reader, table_type",
    [
        ("PYARROW", None),
        ("DAFT", "PYARROW"),
        ("PANDAS", None),
        ("DAFT", "PANDAS"),
        ("DAFT", None),
    ],
)
def test_schema_evolution_dataset_and_table_types(cat, reader, table_type):
    """(The three RAY_DATASET cases are not ported.)"""
    _runs(cat, "schema_evolution_test", with_batch_size=False)
    extra = {"table_type": dtype(table_type)} if table_type else {}
    result = _read(cat, "schema_evolution_test", read_as=dtype(reader), **extra)
    rows = dc.to_pandas(result)
    assert dc.dataset_length(result) == 3
    assert set(rows["experiment_name"]) == {"baseline", "higher_lr"}
    assert {"experiment_name", "global_step", "loss", "timestamp"} <= set(rows.columns)
    if "learning_rate" in rows.columns:
        assert rows[rows["experiment_name"] == "baseline"]["learning_rate"].isna().all()
        assert rows[rows["experiment_name"] == "higher_lr"]["learning_rate"].notna().all()


def test_pyarrow_parquet_lazy_materialization(cat):
    """One file: PYARROW_PARQUET gives a single lazy ParquetFile, and ignores file_path_column."""
    _write(cat, five_rows(), "lazy_materialization_table")
    columns = {"id", "name", "value", "category"}
    for extra in ({}, {"file_path_column": "_source_path"}):
        lazy = _read(cat, "lazy_materialization_table", read_as=dtype("PYARROW_PARQUET"), **extra)
        assert isinstance(lazy, papq.ParquetFile)
        assert lazy.metadata.num_rows == 5
        assert {f.name for f in lazy.schema_arrow} == columns
    materialized = lazy.read()
    assert isinstance(materialized, pa.Table)
    assert materialized.num_rows == 5 and set(materialized.column_names) == columns
    assert isinstance(_read(cat, "lazy_materialization_table", read_as=dtype("PYARROW")), pa.Table)


def test_pyarrow_parquet_lazy_materialization_multiple_writes(cat):
    table = "multi_write_lazy_table"
    first, second = (
        five_rows().slice(0, 3),
        pa.table(
            {
                "id": [4, 5, 6],
                "name": ["David", "Eve", "Frank"],
                "value": [40.4, 50.5, 60.6],
                "category": ["C", "B", "C"],
            }
        ),
    )
    _write(cat, first, table)
    _write(cat, second, table, "APPEND")
    for extra in ({}, {"file_path_column": "_source_path"}):
        files = _read(cat, table, read_as=dtype("PYARROW_PARQUET"), **extra)
        assert all(isinstance(f, papq.ParquetFile) for f in files)
        assert sum(dc.dataset_length(f) for f in files) == 6
    rows = _read(cat, table, read_as=dtype("PYARROW"), file_path_column="_source_path")
    assert isinstance(rows, pa.Table) and rows.num_rows == 6
    assert {"id", "name", "value", "category", "_source_path"} <= set(rows.column_names)
    assert set(rows.column("id").to_pylist()) == {1, 2, 3, 4, 5, 6}
