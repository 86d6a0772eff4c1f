"""DeltaCAT write semantics on real Delta tables: CHRONO, keyed-mode errors, REPLACE with
repeated keys, numpy rows by position, and whole-number floats back into integer columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from workbench.exceptions import (
    KeyedTableModeError,
    MergeKeyError,
    SchemaValidationError,
    TableValidationError,
)

PEOPLE = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("name", pa.string())),
        dc.Field.of(pa.field("age", pa.int32())),
    ]
)


def rows(table: str) -> list[dict]:
    return dc.read(table, read_as=dc.DatasetType.PYARROW).sort_by("id").to_pylist()


def test_chrono_adds_rows_in_write_order(catalog):
    dc.write(pd.DataFrame({"id": [2, 1]}), "events")
    result = dc.write(pd.DataFrame({"id": [0]}), "events", mode=dc.TableWriteMode.CHRONO)
    assert (result.mode, result.rows_added) == ("chrono", 1)
    assert dc.read("events", read_as="pandas")["id"].tolist() == [2, 1, 0]
    assert dc.transactions(read_as="pyarrow").column("operations")[0].as_py() == ["WRITE_CHRONO"]


@pytest.mark.parametrize("mode", ["ADD", "APPEND", "CHRONO"])
def test_row_adding_modes_refuse_keyed_tables_with_both_error_types(catalog, mode):
    dc.write(pd.DataFrame({"id": [1], "name": ["a"], "age": [3]}), "t", schema=PEOPLE)
    before = tree_digest(catalog.root)
    with pytest.raises(
        KeyedTableModeError, match=f"{mode} mode cannot be used with tables that have merge keys"
    ) as e:
        dc.write(pd.DataFrame({"id": [1]}), "t", mode=dc.TableWriteMode[mode])
    assert isinstance(e.value, TableValidationError) and isinstance(e.value, SchemaValidationError)
    assert tree_digest(catalog.root) == before


def test_replace_keeps_the_last_row_of_a_repeated_key_but_merge_refuses(catalog):
    dc.write(pd.DataFrame({"id": [1], "name": ["a"], "age": [3]}), "t", schema=PEOPLE)
    repeated = pd.DataFrame({"id": [4, 5, 4], "name": ["d", "e", "D"], "age": [1, 2, 3]})
    with pytest.raises(MergeKeyError, match="repeat a merge key"):
        dc.write(repeated, "t", mode=dc.TableWriteMode.MERGE)
    dc.write(repeated, "t", mode=dc.TableWriteMode.REPLACE)
    assert rows("t") == [{"id": 4, "name": "D", "age": 3}, {"id": 5, "name": "e", "age": 2}]
    dc.write(repeated, "t", mode=dc.TableWriteMode.REPLACE, dedupe="first")
    assert rows("t")[0] == {"id": 4, "name": "d", "age": 1}


def test_numpy_rows_fill_the_tables_first_columns_in_order(catalog):
    dc.create_table("t", schema=PEOPLE)
    dc.write(np.array([[1, "a", 30], [2, "b", None]], dtype=object), "t", mode="merge")
    dc.write(np.array([[2, "B"]], dtype=object), "t", mode="merge")
    assert rows("t") == [{"id": 1, "name": "a", "age": 30}, {"id": 2, "name": "B", "age": None}]
    assert dc.get_table("t").schema.names == ["id", "name", "age"]  # no columns "0", "1", ...


def test_a_numpy_array_wider_than_the_table_is_refused(catalog):
    dc.create_table("t", schema=PEOPLE)
    before = tree_digest(catalog.root)
    with pytest.raises(SchemaValidationError, match=r"4 columns, but table 'default\.t' has 3"):
        dc.write(np.zeros((1, 4), dtype=np.int64), "t", mode="merge")
    assert tree_digest(catalog.root) == before


def test_whole_number_floats_go_back_into_an_integer_column(catalog):
    dc.write(pd.DataFrame({"id": [1, 2], "name": ["a", "b"], "age": [25, 30]}), "t", schema=PEOPLE)
    partial = pd.DataFrame({"id": [1, 3], "age": [26, None]})  # pandas: age becomes float64
    assert partial["age"].dtype == np.float64
    result = dc.write(partial, "t")
    assert result.schema_changes == ()
    assert dc.get_table("t").schema.field("age").type == pa.int32()
    assert [r["age"] for r in rows("t")] == [26, 30, None]


def test_floats_with_a_fraction_widen_the_column_as_before(catalog):
    dc.write(pd.DataFrame({"id": [1], "name": ["a"], "age": [25]}), "t", schema=PEOPLE)
    dc.write(pd.DataFrame({"id": [2], "age": [2.5]}), "t")
    assert dc.get_table("t").schema.field("age").type == pa.float64()
    assert [r["age"] for r in rows("t")] == [25.0, 2.5]


def test_a_write_result_is_also_a_one_item_list(catalog):
    result = dc.write(pd.DataFrame({"id": [1]}), "t")
    assert len(result) == 1 and result[0] is result and list(result) == [result]
