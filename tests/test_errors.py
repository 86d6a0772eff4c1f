"""Bad input raises a typed WorkbenchError with a fix and leaves every catalog file as it was."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from workbench.exceptions import (
    CatalogNotFoundError,
    InvalidArgumentError,
    InvalidNameError,
    MergeKeyError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    SchemaValidationError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableValidationError,
    TableVersionNotFoundError,
    UnsupportedDatasetError,
    WorkbenchError,
)

KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("name", pa.string())),
    ]
)


@pytest.fixture
def seeded(catalog):
    """A catalog holding a keyed table and a plain table."""
    dc.write(pd.DataFrame({"id": [1, 2], "name": ["a", "b"]}), "keyed", schema=KEYED)
    dc.write(pd.DataFrame({"id": [1, 2], "name": ["a", "b"]}), "plain")
    dc.create_table("files")
    return catalog


BAD_CALLS = {
    "create existing": (
        lambda: dc.write(pd.DataFrame({"id": [3]}), "plain", mode="create"),
        TableAlreadyExistsError,
    ),
    "merge without keys": (
        lambda: dc.write(pd.DataFrame({"id": [3]}), "plain", mode="merge"),
        MergeKeyError,
    ),
    "delete without keys": (
        lambda: dc.write(pd.DataFrame({"id": [3]}), "plain", mode="delete"),
        MergeKeyError,
    ),
    "merge missing key column": (
        lambda: dc.write(pd.DataFrame({"name": ["x"]}), "keyed", mode="merge"),
        MergeKeyError,
    ),
    "null merge key": (
        lambda: dc.write(
            pa.table({"id": pa.array([None, 5], pa.int64()), "name": ["x", "y"]}), "keyed"
        ),
        MergeKeyError,
    ),
    "duplicate merge key": (
        lambda: dc.write(pd.DataFrame({"id": [5, 5], "name": ["x", "y"]}), "keyed"),
        MergeKeyError,
    ),
    "add to keyed table": (
        lambda: dc.write(pd.DataFrame({"id": [9], "name": ["z"]}), "keyed", mode="add"),
        TableValidationError,
    ),
    "incompatible type": (
        lambda: dc.write(pd.DataFrame({"id": [3], "name": [4.5]}), "plain"),
        SchemaValidationError,
    ),
    "lossy cast in merge": (
        lambda: dc.write(pd.DataFrame({"id": [3.5], "name": ["x"]}), "keyed"),
        SchemaValidationError,
    ),
    "new key column": (
        lambda: dc.write(
            pd.DataFrame({"id": [3], "name": ["x"]}),
            "keyed",
            schema=dc.Schema.of([dc.Field.of(pa.field("name", pa.string()), is_merge_key=True)]),
        ),
        SchemaValidationError,
    ),
    "decimal256": (
        lambda: dc.write(
            pa.table({"p": pa.array([Decimal("1.50")], pa.decimal256(10, 2))}), "prices"
        ),
        TableValidationError,
    ),
    "uint64": (
        lambda: dc.write(pa.table({"u": pa.array([1], pa.uint64())}), "unsigned"),
        SchemaValidationError,
    ),
    "unsupported input": (lambda: dc.write(object(), "things"), UnsupportedDatasetError),
    "3-d numpy": (lambda: dc.write(np.zeros((2, 2, 2)), "cube"), UnsupportedDatasetError),
    "path traversal table": (lambda: dc.write(pd.DataFrame({"a": [1]}), "../x"), InvalidNameError),
    "slash in namespace": (
        lambda: dc.write(pd.DataFrame({"a": [1]}), "t", namespace="a/b"),
        InvalidNameError,
    ),
    "reserved name": (lambda: dc.create_namespace("_workbench"), InvalidNameError),
    "missing namespace": (
        lambda: dc.write(pd.DataFrame({"a": [1]}), "t", namespace="nowhere"),
        NamespaceNotFoundError,
    ),
    "unknown catalog": (lambda: dc.read("plain", catalog="prod"), CatalogNotFoundError),
    "unknown table": (lambda: dc.read("missing"), TableNotFoundError),
    "delete from missing table": (
        lambda: dc.write(pd.DataFrame({"id": [1]}), "missing", mode="delete"),
        TableNotFoundError,
    ),
    "drop missing table": (lambda: dc.drop_table("missing"), TableNotFoundError),
    "unknown version": (lambda: dc.read("plain", version=7), TableVersionNotFoundError),
    "unknown column": (lambda: dc.read("plain", columns=["nope"]), InvalidArgumentError),
    "unknown mode": (
        lambda: dc.write(pd.DataFrame({"id": [1]}), "plain", mode="upsert"),
        InvalidArgumentError,
    ),
    "unknown dedupe": (
        lambda: dc.write(pd.DataFrame({"id": [1]}), "keyed", dedupe="random"),
        InvalidArgumentError,
    ),
    "unknown read type": (lambda: dc.read("plain", read_as="excel"), InvalidArgumentError),
    "create table twice": (lambda: dc.create_table("plain"), TableAlreadyExistsError),
    "merge into schemaless": (
        lambda: dc.write(pd.DataFrame({"a": [1]}), "files", mode="merge"),
        TableValidationError,
    ),
    "drop non-empty namespace": (lambda: dc.drop_namespace("default"), NamespaceNotEmptyError),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_raises_typed_error_and_changes_nothing(seeded, case):
    call, error = BAD_CALLS[case]
    before = tree_digest(seeded.root)
    with pytest.raises(error) as raised:
        call()
    assert isinstance(raised.value, WorkbenchError)
    assert len(str(raised.value)) > 40, "messages say what was wrong and how to fix it"
    assert tree_digest(seeded.root) == before


def test_disabled_and_manual_evolution_block_undeclared_changes(catalog):
    for mode in (dc.SchemaEvolutionMode.DISABLED, dc.SchemaEvolutionMode.MANUAL):
        name = f"strict_{mode.value}"
        dc.write(
            pd.DataFrame({"id": [1]}),
            name,
            table_properties={dc.TableProperty.SCHEMA_EVOLUTION_MODE: mode},
        )
        before = tree_digest(catalog.root)
        with pytest.raises(SchemaValidationError, match="evolution mode"):
            dc.write(pd.DataFrame({"id": [2], "extra": ["x"]}), name)
        assert tree_digest(catalog.root) == before
    declared = dc.Schema.of([pa.field("id", pa.int64()), pa.field("extra", pa.string())])
    dc.write(pd.DataFrame({"id": [2], "extra": ["x"]}), "strict_manual", schema=declared)
    assert dc.get_table("strict_manual").schema.names == ["id", "extra"]


def disk_full(*args, **kwargs):
    """A storage fault that a local disk cannot be made to produce on demand."""
    raise OSError("disk full")


def test_failed_storage_commit_restores_table(catalog, monkeypatch):
    """A fault inside deltalake's merge (injected: it cannot be produced otherwise) rolls back."""
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("score", pa.int32())),
        ]
    )
    dc.write(
        pa.table({"id": [1, 2], "score": pa.array([5, 6], pa.int32())}), "keyed", schema=schema
    )
    before = dc.read("keyed", read_as=dc.DatasetType.PYARROW)
    import deltalake.table

    monkeypatch.setattr(deltalake.table.TableMerger, "execute", disk_full)
    with pytest.raises(dc.WriteFailedError, match="restored to version 0"):
        # int64 scores widen the int32 column (a rewrite commit); the merge after it then fails.
        dc.write(pa.table({"id": [1], "score": pa.array([2**40], pa.int64())}), "keyed")
    monkeypatch.undo()
    assert dc.read("keyed", read_as=dc.DatasetType.PYARROW).equals(before)
    assert dc.get_table("keyed").schema.field("score").type == pa.int32()


def test_failed_create_leaves_no_table_or_namespace(catalog, monkeypatch):
    import deltalake

    monkeypatch.setattr(deltalake, "write_deltalake", disk_full)
    with pytest.raises(dc.WriteFailedError, match="not created"):
        dc.write(pd.DataFrame({"id": [1]}), "t", namespace="fresh", auto_create_namespace=True)
    monkeypatch.undo()
    assert not dc.namespace_exists("fresh")
