"""Bad input raises a typed WorkbenchError with a fix and leaves every catalog file as it was."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import fail_log_commits, tree_digest
from workbench.exceptions import (
    CatalogNotFoundError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidUrlError,
    MergeKeyError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    SchemaValidationError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableValidationError,
    TableVersionNotFoundError,
    TimeTravelError,
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
    "negative limit": (lambda: dc.read("plain", limit=-1), InvalidArgumentError),
    "limit as text": (lambda: dc.read("plain", limit="2"), InvalidArgumentError),
    "fractional limit": (lambda: dc.read("plain", limit=2.5), InvalidArgumentError),
    "boolean limit": (lambda: dc.read("plain", limit=True), InvalidArgumentError),
    "boolean version": (lambda: dc.read("plain", version=True), InvalidArgumentError),
    "negative version": (lambda: dc.read("plain", version=-1), InvalidArgumentError),
    "version as float": (lambda: dc.read("plain", version=0.0), InvalidArgumentError),
    "negative history limit": (lambda: dc.transactions(limit=-3), InvalidArgumentError),
    "negative retries": (
        lambda: dc.run_transaction(lambda: None, retries=-1),
        InvalidArgumentError,
    ),
    "retries as text": (
        lambda: dc.run_transaction(lambda: None, retries="3"),
        InvalidArgumentError,
    ),
    "negative retention": (lambda: dc.vacuum(retain=-1), InvalidArgumentError),
    "retention as text": (lambda: dc.vacuum(retain="7d"), InvalidArgumentError),
    "infinite retention": (lambda: dc.vacuum(retain=float("nan")), InvalidArgumentError),
    "replace keyed without key": (
        lambda: dc.write(pd.DataFrame({"name": ["x"]}), "keyed", mode="replace"),
        MergeKeyError,
    ),
    "duplicate pandas columns": (
        lambda: dc.write(pd.DataFrame([[1, 2]], columns=["a", "a"]), "dupes"),
        SchemaValidationError,
    ),
    "duplicate arrow columns": (
        lambda: dc.write(pa.Table.from_arrays([pa.array([1]), pa.array([2])], ["a", "a"]), "d"),
        SchemaValidationError,
    ),
    "duplicate columns into existing": (
        lambda: dc.write(
            pa.Table.from_arrays([pa.array([1]), pa.array([2])], ["id", "id"]), "plain"
        ),
        SchemaValidationError,
    ),
    "empty namespace": (
        lambda: dc.write(pd.DataFrame({"a": [1]}), "t", namespace=""),
        InvalidNameError,
    ),
    "name too long": (lambda: dc.write(pd.DataFrame({"a": [1]}), "x" * 256), InvalidNameError),
    "namespace too long": (lambda: dc.create_namespace("n" * 256), InvalidNameError),
    "tag too long": (lambda: dc.tag("t" * 247), InvalidNameError),
    "as_of in the future": (
        lambda: dc.read("plain", as_of=2**62),
        TimeTravelError,
    ),
    "as_of not a time": (lambda: dc.read("plain", as_of=3.5), TimeTravelError),
    "as_of unknown text": (lambda: dc.read("plain", as_of="yesterday"), TimeTravelError),
    "as_of at year 1": (lambda: dc.read("plain", as_of=datetime.min), TimeTravelError),
    "polars object column": (
        lambda: dc.write(pl.DataFrame({"o": pl.Series([object()], dtype=pl.Object)}), "o"),
        SchemaValidationError,
    ),
    "mixed object column": (
        lambda: dc.write(pd.DataFrame({"m": [1, "a"]}, dtype=object), "m"),
        SchemaValidationError,
    ),
    "complex numbers": (
        lambda: dc.write(pd.DataFrame({"c": [1 + 2j]}), "c"),
        SchemaValidationError,
    ),
    "multiindex columns": (
        lambda: dc.write(pd.DataFrame({("a", "b"): [1]}), "mi"),
        SchemaValidationError,
    ),
    "no columns": (lambda: dc.write(pd.DataFrame(index=range(3)), "empty"), SchemaValidationError),
    "names differing in case": (
        lambda: dc.write(pd.DataFrame({"Id": [1], "id": [2]}), "cases"),
        SchemaValidationError,
    ),
    "new column differing in case": (
        lambda: dc.write(pd.DataFrame({"id": [3], "NAME": ["x"]}), "plain"),
        SchemaValidationError,
    ),
    "negative decimal scale": (
        lambda: dc.write(pa.table({"d": pa.array([Decimal("100")], pa.decimal128(5, -2))}), "d"),
        SchemaValidationError,
    ),
    "period extension type": (
        lambda: dc.write(pd.DataFrame({"p": pd.period_range("2024-01", periods=2, freq="M")}), "p"),
        SchemaValidationError,
    ),
    "schema of ints": (
        lambda: dc.write(pd.DataFrame({"a": [1]}), "s", schema=[1, 2]),
        SchemaValidationError,
    ),
    "field of a string": (lambda: dc.Field.of("id"), SchemaValidationError),
    "default of the wrong type": (
        lambda: dc.Field.of(pa.field("x", pa.int64()), future_default="abc"),
        SchemaValidationError,
    ),
    "list merge key": (
        lambda: dc.Field.of(pa.field("x", pa.list_(pa.int64())), is_merge_key=True),
        SchemaValidationError,
    ),
    "untyped declared column": (
        lambda: dc.create_table("nulls", schema=pa.schema([("n", pa.null())])),
        SchemaValidationError,
    ),
    "properties not a dict": (
        lambda: dc.write(pd.DataFrame({"id": [3]}), "plain", table_properties="x"),
        InvalidArgumentError,
    ),
    "delta flag not a flag": (
        lambda: dc.write(
            pd.DataFrame({"a": [1]}), "p2", table_properties={"delta.appendOnly": "banana"}
        ),
        InvalidArgumentError,
    ),
    "supported readers not a list": (
        lambda: dc.write(
            pd.DataFrame({"a": [1]}),
            "p3",
            table_properties={dc.TableProperty.SUPPORTED_READER_TYPES: 5},
        ),
        InvalidArgumentError,
    ),
    "columns as a number": (lambda: dc.read("plain", columns=5), InvalidArgumentError),
    "a column twice": (lambda: dc.read("plain", columns=["id", "id"]), InvalidArgumentError),
    "history of a non-table": (lambda: dc.transactions(table=5), InvalidArgumentError),
    "dry_run as text": (lambda: dc.vacuum(dry_run="no"), InvalidArgumentError),
    "flag as text": (
        lambda: dc.write(pd.DataFrame({"a": [1]}), "t", namespace="x", auto_create_namespace="no"),
        InvalidArgumentError,
    ),
    "empty catalog name": (lambda: dc.read("plain", catalog=""), CatalogNotFoundError),
    "unknown output type": (
        lambda: dc.from_pyarrow(pa.table({"a": [1]}), "bogus"),
        InvalidArgumentError,
    ),
    "manifest without paths": (
        lambda: dc.from_manifest_table(pa.table({"a": [1]})),
        InvalidArgumentError,
    ),
    "delete with text keys": (
        lambda: dc.write(pd.DataFrame({"id": ["1"]}), "keyed", mode="delete"),
        SchemaValidationError,
    ),
    "copy a missing namespace": (
        lambda: dc.copy("dc://default/nope", "dc://default/copied"),
        NamespaceNotFoundError,
    ),
    "commit message not text": (
        lambda: dc.transaction(commit_message=5).__enter__(),
        InvalidArgumentError,
    ),
    "run no function": (lambda: dc.run_transaction(None), InvalidArgumentError),
    "sql not text": (lambda: dc.sql(None), InvalidArgumentError),
    "sql of two statements": (lambda: dc.sql("SELECT 1; SELECT 2"), InvalidArgumentError),
    "sql writing a file": (
        lambda: dc.sql("COPY (SELECT * FROM default.plain) TO 'stolen.csv'"),
        InvalidArgumentError,
    ),
    "sql reading a file": (
        lambda: dc.sql("SELECT * FROM read_text('/etc/hostname')"),
        InvalidArgumentError,
    ),
    "sql at a bad time": (lambda: dc.sql("SELECT 1 AS one", as_of="nonsense"), TimeTravelError),
    "sql on an unknown engine": (lambda: dc.sql("SELECT 1", engine="flink"), InvalidArgumentError),
    "sql of a missing table": (
        lambda: dc.sql("SELECT * FROM default.nope JOIN default.plain USING (a)"),
        TableNotFoundError,
    ),
    "sql of a missing table in a namespace": (
        lambda: dc.sql("select * from missing_ns.t"),
        TableNotFoundError,
    ),
    "url and data swapped": (
        lambda: dc.put(pd.DataFrame({"a": range(100)}), "dc://default/x/y"),
        InvalidUrlError,
    ),
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


def test_reads_of_a_vacuumed_version_say_so_through_every_path(catalog):
    """read, diff and sql of a version whose files dc.vacuum removed raise the same typed
    error (diff and sql reported a DuckDB IO error as a bad query before)."""
    dc.write(pd.DataFrame({"a": [1]}), "t")
    start = dc.transactions(read_as="pyarrow").column("end_time")[0].as_py()
    dc.write(pd.DataFrame({"a": [2]}), "t", mode="replace")
    dc.vacuum(retain=timedelta(0))
    for call in (
        lambda: dc.read("t", version=0, read_as="pandas"),
        lambda: dc.diff("t", before=0),
        lambda: dc.sql("SELECT * FROM default.t", as_of=start),
    ):
        with pytest.raises(TableVersionNotFoundError, match=r"dc\.vacuum removed"):
            call()


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


def test_a_storage_fault_at_the_commit_point_changes_nothing(catalog, monkeypatch):
    """A fault publishing the log entry (injected: a disk cannot be made to fail on demand)
    fails the write with a typed error and leaves every file of the catalog as it was."""

    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("score", pa.int32())),
        ]
    )
    dc.write(
        pa.table({"id": [1, 2], "score": pa.array([5, 6], pa.int32())}), "keyed", schema=schema
    )
    before = tree_digest(catalog.root)
    fail_log_commits(monkeypatch, OSError("disk full"))
    with pytest.raises(dc.WriteFailedError, match="disk full"):
        # int64 scores widen the int32 column (every row rewritten), then the merge
        dc.write(pa.table({"id": [1], "score": pa.array([2**40], pa.int64())}), "keyed")
    monkeypatch.undo()
    assert tree_digest(catalog.root) == before
    assert dc.get_table("keyed").schema.field("score").type == pa.int32()


def test_a_commit_that_landed_before_the_connection_failed_is_committed(catalog, monkeypatch):
    """An object store can store a put and then lose the reply: the stored commit decides."""
    from workbench.core.storage.store import Storage

    real = Storage.put_if_absent

    def lands_then_fails(self, key, data):
        written = real(self, key, data)
        if "transactions/_delta_log" in key:
            raise OSError("connection reset by peer")
        return written

    monkeypatch.setattr(Storage, "put_if_absent", lands_then_fails)
    dc.write(pa.table({"n": [1, 2]}), "t")
    monkeypatch.undo()
    assert dc.read("t", read_as=dc.DatasetType.PYARROW).num_rows == 2
    assert len(dc.transactions(read_as=dc.DatasetType.PYARROW)) == 1


def test_an_unknowable_commit_outcome_says_so_and_keeps_the_files(catalog, monkeypatch):
    """When the store fails the commit and then the check of it, the writer cannot know whether
    it committed: a typed error says so, and the files it may reference stay."""
    from workbench.core.storage.store import Storage

    real_put, real_get = Storage.put_if_absent, Storage.get

    def put_if_absent(self, key, data):
        if "transactions/_delta_log" in key:
            raise OSError("network unreachable")
        return real_put(self, key, data)

    def get(self, key):
        if "transactions/_delta_log" in key:
            raise OSError("network unreachable")
        return real_get(self, key)

    monkeypatch.setattr(Storage, "put_if_absent", put_if_absent)
    monkeypatch.setattr(Storage, "get", get)
    with pytest.raises(dc.CommitOutcomeUnknownError, match="cannot be told"):
        dc.write(pa.table({"n": [1, 2]}), "t")
    monkeypatch.undo()
    assert list(Path(catalog.root, "default", "t").glob("*.parquet")), "staged files are kept"
    assert not dc.table_exists("t")  # it did not land: the next writer finds the name free
    dc.write(pa.table({"n": [3]}), "t")
    assert dc.read("t", read_as=dc.DatasetType.PYARROW).column("n").to_pylist() == [3]


def test_failed_create_leaves_no_table_or_namespace(catalog, monkeypatch):
    import pyarrow.parquet

    monkeypatch.setattr(pyarrow.parquet.ParquetWriter, "write_table", disk_full)  # data files
    with pytest.raises(dc.WriteFailedError, match="not created"):
        dc.write(pd.DataFrame({"id": [1]}), "t", namespace="fresh", auto_create_namespace=True)
    monkeypatch.undo()
    assert not dc.namespace_exists("fresh")
    assert not Path(catalog.root, "fresh", "t").exists()


def test_names_at_the_length_limit_write_drop_and_come_back(catalog):
    longest = catalog.max_name_length
    assert longest == 255
    name, namespace = "t" * longest, "n" * longest
    frame = pd.DataFrame({"id": [1, 2], "name": ["a", "b"]})
    dc.write(frame, name, namespace=namespace, schema=KEYED, auto_create_namespace=True)
    dc.tag("g" * (longest - len(".json") - 4))  # the local store stages it as <name>#<n>
    before_drop = dc.transactions(read_as=dc.DatasetType.PYARROW).column("end_time")[0].as_py()
    for _ in range(2):  # drop and create again, twice
        dc.drop_table(name, namespace=namespace)
        assert not dc.table_exists(name, namespace=namespace)
        dc.write(frame, name, namespace=namespace, schema=KEYED)
    assert dc.read(name, namespace=namespace, read_as=dc.DatasetType.PYARROW).num_rows == 2
    old = dc.read(name, namespace=namespace, as_of=before_drop, read_as=dc.DatasetType.PYARROW)
    assert old.num_rows == 2
    dc.vacuum(retain=0)
    assert dc.list_tables(namespace) == [dc.TableRef(name, namespace, "default")]


def test_a_catalog_root_that_is_a_file_is_named_as_such(tmp_path):
    root = tmp_path / "not-a-folder"
    root.write_text("hello")
    with pytest.raises(dc.CatalogRootError, match="is a file, not a folder"):
        dc.init_local(root)
    folder = tmp_path / "became-a-file"
    dc.init_local(folder)
    folder.write_text("replaced by a file after init")
    for call in (
        lambda: dc.write(pd.DataFrame({"a": [1]}), "t"),
        dc.list_namespaces,
        lambda: dc.read("t"),
    ):
        with pytest.raises(dc.CatalogRootError):
            call()


READ_ONLY_SCRIPT = """
import os
import sys
import pandas as pd
import workbench as dc
dc.init_local(sys.argv[1])
expected = ["default"]  # every catalog has it, even one that cannot be written
populated = sys.argv[2] == "populated"
assert [n.name for n in dc.list_namespaces()] == expected
if populated:
    assert dc.read("t", read_as="pyarrow").num_rows == 2
    assert list(dc.tags()) == ["v1"]
    assert dc.transactions(read_as="pyarrow").num_rows == 1
writes = [lambda: dc.write(pd.DataFrame({"id": [3]}), "t"), lambda: dc.create_namespace("o")]
if populated:
    writes.append(lambda: dc.tag("v2"))
for write in writes:
    try:
        write()
    except dc.CatalogReadOnlyError as e:
        assert "read-only" in str(e), e
    else:
        raise AssertionError("a write to a read-only catalog succeeded")
print("checked", flush=True)
# Skip interpreter teardown: Arrow's dataset-scan threads can abort a process at exit
# ("terminate called without an active exception", apache/arrow#39862) after its work is done.
os._exit(0)
"""


@pytest.mark.parametrize("populated", [True, False])
def test_a_read_only_catalog_reads_and_refuses_writes_clearly(populated):
    folder = tempfile.mkdtemp()  # not under pytest's private tmp folder: another user reads it
    try:
        os.chmod(folder, 0o755)
        if populated:
            dc.init_local(folder)
            dc.write(pd.DataFrame({"id": [1, 2]}), "t")
            dc.tag("v1")
        before = tree_digest(folder)
        command = [sys.executable, "-c", READ_ONLY_SCRIPT, folder, "populated" if populated else ""]
        if os.geteuid() == 0:  # root ignores permissions: run as an unprivileged user
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        else:
            subprocess.run(["chmod", "-R", "a-w", folder], check=True)
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "checked" in done.stdout, done.stderr[-2000:]
        assert tree_digest(folder) == before
    finally:
        subprocess.run(["chmod", "-R", "u+w", folder], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def test_tagging_inside_a_past_view_is_refused(seeded):
    then = dc.transactions(read_as="pyarrow").column("end_time")[0].as_py()
    with (
        dc.transaction(as_of=then),
        pytest.raises(dc.TransactionError, match="reads the past"),
    ):
        dc.tag("then")


def test_an_empty_merge_or_delete_changes_nothing(seeded):
    before = tree_digest(seeded.root)
    empty = pa.table({"id": pa.array([], pa.int64()), "name": pa.array([], pa.string())})
    assert dc.write(empty, "keyed").rows_added == 0
    assert dc.write(empty.select(["id"]), "keyed", mode="delete").rows_removed == 0
    assert dc.read("keyed", read_as=dc.DatasetType.PYARROW).num_rows == 2
    assert dc.get_table("keyed").version == 0
    assert before == tree_digest(seeded.root)  # a write that changes nothing commits nothing


def test_append_only_tables_refuse_replace_with_the_reason(catalog):
    dc.write(pd.DataFrame({"id": [1, 2]}), "ao", table_properties={"delta.appendOnly": True})
    with pytest.raises(TableValidationError, match="append-only"):
        dc.write(pd.DataFrame({"id": [3]}), "ao", mode="replace")
    assert dc.read("ao", read_as=dc.DatasetType.PYARROW).column("id").to_pylist() == [1, 2]
