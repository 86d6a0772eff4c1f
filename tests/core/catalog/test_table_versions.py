"""Table versions: each is a Delta table of its own that other tools read, and the catalog
picks the current one (the newest ACTIVE version)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import workbench as dc
from tests.conftest import tree_digest


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids]})


def _ids(table: str, **kwargs) -> list[int]:
    data = dc.read(table, read_as=dc.DatasetType.PYARROW, **kwargs)
    return sorted(data.column("id").to_pylist())


@pytest.fixture
def versioned(catalog) -> str:
    """Table ``t`` with version 1 (rows 1, 2) and version 2 (rows 3, 4, 5)."""
    dc.write(_rows([1, 2]), "t")
    dc.write(_rows([3, 4, 5]), "t", table_version="2", mode="create")
    return "t"


def test_each_version_is_a_plain_delta_table_other_engines_read(versioned):
    v1, v2 = dc.get_table("t", table_version="1"), dc.get_table("t")
    assert (v1.version_name, v2.version_name) == ("1", "2")
    assert v2.uri.endswith("t/_versions/2")
    assert DeltaTable(v1.uri).to_pyarrow_table().num_rows == 2
    assert DeltaTable(v2.uri).to_pyarrow_table().num_rows == 3
    assert dc.delta_table("t").to_pyarrow_table().num_rows == 3
    assert _ids("t") == [3, 4, 5]
    assert _ids("t", table_version="1") == [1, 2]
    assert v2.table.latest_table_version == "2"
    assert v2.table.latest_active_table_version == "2"


def test_writes_without_a_version_go_to_the_current_one(versioned):
    dc.write(_rows([6]), "t", mode="append")
    dc.write(_rows([9]), "t", table_version="1", mode="append")
    assert _ids("t") == [3, 4, 5, 6]
    assert _ids("t", table_version="1") == [1, 2, 9]


def test_the_current_version_is_the_newest_active_one(versioned):
    dc.write(_rows([7]), "t", table_version="3", lifecycle_state=dc.LifecycleState.UNRELEASED)
    found = dc.get_table("t")
    assert found.version_name == "2"
    assert found.table.latest_table_version == "3"
    assert dc.get_table("t", table_version="3").table_version.state == dc.LifecycleState.UNRELEASED
    assert _ids("t") == [3, 4, 5]
    assert _ids("t", table_version="3") == [7]


def test_a_table_is_listed_once_and_dropped_with_every_version(versioned):
    assert [t.name for t in dc.list_tables()] == ["t"]
    assert dc.table_exists("t", table_version="2")
    assert not dc.table_exists("t", table_version="3")
    before = dc.transactions(read_as="pandas").iloc[0]["transaction_id"]
    dc.drop_table("t")
    assert not dc.table_exists("t")
    assert dc.list_tables() == []
    # time travel to before the drop still reads both versions from the moved folders
    assert _ids("t", as_of=before) == [3, 4, 5]
    assert _ids("t", table_version="1", as_of=before) == [1, 2]


def test_dropping_a_namespace_drops_every_version(catalog):
    dc.write(_rows([1]), "t", namespace="ns", auto_create_namespace=True)
    dc.write(_rows([2]), "t", namespace="ns", table_version="2")
    before = dc.transactions(read_as="pandas").iloc[0]["transaction_id"]
    dc.drop_namespace("ns", purge=True)
    assert not dc.namespace_exists("ns")
    assert _ids("t", namespace="ns", table_version="2", as_of=before) == [2]


def test_vacuum_keeps_the_files_of_later_versions(versioned):
    dc.write(_rows([1, 2]), "t", table_version="1", mode="replace")
    dc.vacuum(retain=0)
    assert _ids("t") == [3, 4, 5]
    assert _ids("t", table_version="1") == [1, 2]


def test_a_new_version_inherits_the_table_properties(catalog):
    manual = {dc.TableProperty.SCHEMA_EVOLUTION_MODE: dc.SchemaEvolutionMode.MANUAL}
    dc.write(_rows([1]), "t", table_properties=manual)
    dc.write(_rows([2]), "t", table_version="2")
    assert dc.get_table("t").table_version.properties == dc.get_table("t").table.properties
    mode = dc.get_table("t").table_version.read_table_property(
        dc.TableProperty.SCHEMA_EVOLUTION_MODE
    )
    assert mode == dc.SchemaEvolutionMode.MANUAL


def test_a_version_of_a_schemaless_table_can_have_a_schema(catalog):
    dc.write(_rows([1]), "files", schema=None)
    dc.write(_rows([2]), "files", table_version="2")
    assert dc.get_table("files", table_version="1").table_version.schema is None
    assert dc.get_table("files").table_version.schema.names == ["id", "name"]


@pytest.mark.parametrize("name", ["x", "1.", "v/2", "-1", "", "2 ", True, 2.0, "1" * 19])
def test_bad_version_names_are_refused_before_anything_changes(catalog, name):
    dc.write(_rows([1]), "t")
    before = tree_digest(catalog.root)
    with pytest.raises(dc.InvalidArgumentError, match="Invalid table version"):
        dc.write(_rows([2]), "t", table_version=name)
    with pytest.raises(dc.InvalidArgumentError, match="Invalid table version"):
        dc.read("t", table_version=name)
    assert tree_digest(catalog.root) == before


def test_versions_only_move_forward(versioned):
    with pytest.raises(dc.TableVersionAlreadyExistsError, match="only move forward"):
        dc.write(_rows([1]), "t", table_version="v.1", mode="create")
    dc.write(_rows([8]), "t", table_version="v.3", mode="create")
    assert dc.get_table("t").table.latest_table_version == "v.3"
    assert dc.table_exists("t", table_version=3) is False
    assert _ids("t") == [8]


def test_a_failed_first_write_of_a_version_creates_nothing(versioned, catalog):
    before = tree_digest(catalog.root)
    keyed = dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)])
    with pytest.raises(dc.MergeKeyError):
        dc.write(pa.table({"id": [1, 1]}), "t", table_version="3", schema=keyed, mode="create")
    assert not dc.table_exists("t", table_version="3")
    assert dc.get_table("t").table.latest_table_version == "2"
    assert tree_digest(catalog.root) == before


def test_a_version_created_in_an_aborted_transaction_does_not_exist(versioned):
    with pytest.raises(RuntimeError, match="stop"), dc.transaction():
        dc.write(_rows([9]), "t", table_version="3")
        assert _ids("t") == [9]  # the transaction sees its own new version
        raise RuntimeError("stop")
    assert not dc.table_exists("t", table_version="3")
    assert _ids("t") == [3, 4, 5]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lifecycle_state": "gone"},
        {"table_properties": {"workbench.lifecycleState": "active"}},
        {"table_version_properties": {"workbench.tableProperties": "{}"}},
    ],
)
def test_bad_version_arguments_are_typed_errors(catalog, kwargs):
    with pytest.raises(dc.InvalidArgumentError):
        dc.write(_rows([1]), "t", **kwargs)
    assert not dc.table_exists("t")


def test_create_table_makes_an_empty_version(versioned):
    info = dc.create_table("t", table_version="3", lifecycle_state="beta")
    assert info.version_name == "3" and info.row_count == 0
    assert info.table_version.state == dc.LifecycleState.BETA
    with pytest.raises(dc.TableVersionAlreadyExistsError, match="already exists"):
        dc.create_table("t", table_version="3")
    assert dc.create_table("t", table_version="3", fail_if_exists=False).version_name == "3"


def test_history_names_versions_and_filters_by_table(versioned):
    history = dc.transactions(read_as="pandas", table="t")
    assert len(history) == 2
    assert list(history.iloc[0]["tables"]) == ["default.t (version 2)"]
    record = dc.read_transaction(history.iloc[0]["transaction_id"])
    change = record.changes[0]
    assert (change["table_name"], change["table_version_name"]) == ("t", "2")
    assert "default.t (version 2)" in str(record)


def test_a_dropped_version_is_gone_for_every_call_but_time_travel(versioned):
    """DeltaCAT marks a version dropped by drop_table(table_version=) DELETED, which its docs
    define as physically deleted: get_table, read, write, table_exists and list agree."""
    before = dc.transactions(read_as="pyarrow").column("transaction_id")[0].as_py()
    dc.drop_table("t", table_version="2")
    assert not dc.table_exists("t", table_version="2")
    assert dc.table_exists("t") and [t.name for t in dc.list_tables()] == ["t"]
    info = dc.get_table("t")
    assert (info.version_name, info.version_names) == ("1", ("1",))
    assert info.table.latest_table_version == "1"
    assert _ids("t") == [1, 2]
    for call in (
        lambda: dc.get_table("t", table_version="2"),
        lambda: dc.read("t", table_version="2"),
        lambda: dc.write(_rows([8]), "t", table_version="2", mode="append"),
        lambda: dc.alter_table("t", table_version="2", lifecycle_state="active"),
        lambda: dc.drop_table("t", table_version="2"),
    ):
        with pytest.raises(dc.TableVersionNotFoundError, match="was dropped"):
            call()
    with pytest.raises(dc.TableVersionAlreadyExistsError, match="only move forward"):
        dc.write(_rows([8]), "t", table_version="2", mode="create")
    dc.write(_rows([8]), "t", table_version="3")
    assert dc.get_table("t").version_names == ("1", "3") and _ids("t") == [8]
    assert _ids("t", table_version="2", as_of=before) == [3, 4, 5]  # time travel keeps it
    with pytest.raises(dc.TableVersionNotFoundError, match="does not exist"):
        dc.drop_table("t", table_version="7")


def test_dropping_the_last_version_drops_the_table(versioned):
    dc.drop_table("t", table_version="1")
    with pytest.raises(dc.InvalidArgumentError, match="last version"):
        dc.alter_table("t", table_version="2", lifecycle_state="deleted")
    dc.drop_table("t", table_version="2")
    assert not dc.table_exists("t") and dc.list_tables() == []
    with pytest.raises(dc.TableNotFoundError):
        dc.get_table("t")
    dc.write(_rows([1]), "t")  # a new table
    assert dc.get_table("t").version_names == ("1",) and _ids("t") == [1]
