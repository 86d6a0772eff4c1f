"""Time travel: read-only transactions ``as_of`` a past moment (nanoseconds since the epoch).

Ports DeltaCAT 2.0 ``TestTimeTravelTransactions`` (deltacat/tests/catalog/
test_default_catalog_impl.py), all six tests.
"""

from __future__ import annotations

import time

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.compat.helpers import dtype, error, mode, write_in

pytestmark = pytest.mark.compat

NS, TABLE = "time_travel_namespace", "time_travel_table"


@pytest.fixture
def cat(catalogs) -> str:
    return catalogs.add(namespace=NS)


def _write(cat, data, write_mode="CREATE", **kwargs):
    write_in(cat, data, TABLE, write_mode, NS, **kwargs)


def _read_in_transaction() -> pd.DataFrame:
    """Read with no catalog argument, as the open transaction's catalog."""
    rows = dc.read_table(table=TABLE, namespace=NS, read_as=dtype("PANDAS"))
    return rows.sort_values("id").reset_index(drop=True)


def _keyed(*others):
    fields = [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)]
    return dc.Schema.of(fields + [dc.Field.of(pa.field(n, t)) for n, t in others])


def test_basic_time_travel_functionality(cat):
    schema = _keyed(("name", pa.string()), ("status", pa.string()))
    start = pd.DataFrame(
        {
            "id": [1, 2, 3],
            "name": ["Alice", "Bob", "Charlie"],
            "status": ["active", "active", "inactive"],
        }
    )
    _write(cat, start, schema=schema)
    checkpoint = time.time_ns()
    time.sleep(0.1)
    _write(
        cat,
        pd.DataFrame({"id": [2, 4], "name": ["Bob", "Diana"], "status": ["premium", "active"]}),
        "MERGE",
    )
    now = dc.read_table(table=TABLE, namespace=NS, catalog=cat, read_as=dtype("PANDAS"))
    assert len(now) == 4
    assert now[now["id"] == 2]["status"].iloc[0] == "premium"
    assert (now["id"] == 4).any()
    with dc.transaction(catalog_name=cat, as_of=checkpoint):
        then = _read_in_transaction()
        assert len(then) == 3
        assert then[then["id"] == 2]["status"].iloc[0] == "active"
        assert not (then["id"] == 4).any()


def test_read_only_validation_prevents_writes(cat):
    _write(cat, pd.DataFrame({"id": [1, 2], "name": ["Alice", "Bob"]}))
    checkpoint = time.time_ns()
    with dc.transaction(catalog_name=cat, as_of=checkpoint):
        assert len(_read_in_transaction()) == 2
        with pytest.raises(
            RuntimeError, match=r"Cannot perform .* operation in a read-only historic transaction"
        ):
            dc.write_to_table(
                data=pd.DataFrame({"id": [3], "name": ["Charlie"]}),
                table=TABLE,
                namespace=NS,
                mode=mode("APPEND"),
                auto_create_namespace=True,
            )


def test_parameter_validation(cat):
    """Now and one second ago are both valid ``as_of`` values."""
    for as_of in (time.time_ns(), time.time_ns() - int(1e9)):
        with dc.transaction(catalog_name=cat, as_of=as_of) as txn:
            assert txn.read_only
            assert dc.list_namespaces(catalog=cat) is not None
            with pytest.raises(dc.HistoricTransactionError):
                dc.create_namespace("later", catalog=cat)


def test_mvcc_snapshot_isolation(cat):
    _write(
        cat, pd.DataFrame({"id": [1, 2], "value": [10, 20]}), schema=_keyed(("value", pa.int64()))
    )
    t1 = time.time_ns()
    time.sleep(0.1)
    _write(cat, pd.DataFrame({"id": [1], "value": [100]}), "MERGE")
    t3 = time.time_ns()
    time.sleep(0.1)
    _write(cat, pd.DataFrame({"id": [3], "value": [30]}), "MERGE")
    for as_of, value_of_1 in [(t1, 10), (t3, 100)]:
        with dc.transaction(catalog_name=cat, as_of=as_of):
            rows = _read_in_transaction()
            assert len(rows) == 2
            assert rows[rows["id"] == 1]["value"].iloc[0] == value_of_1
            assert not (rows["id"] == 3).any()


def test_transaction_context_manager_behavior(cat):
    _write(cat, pd.DataFrame({"id": [1], "value": [42]}))
    with dc.transaction(catalog_name=cat, as_of=time.time_ns()) as txn:
        assert txn is not None
        assert len(_read_in_transaction()) == 1


def test_edge_cases_and_error_conditions(cat):
    future = time.time_ns() + int(1e12)  # computed before the table exists
    _write(cat, pd.DataFrame({"id": [1], "value": [123]}))
    future_error = r"Historic timestamp .* cannot be set in the future"
    with (
        pytest.raises(ValueError, match=future_error),
        dc.transaction(catalog_name=cat, as_of=future),
    ):
        _read_in_transaction()
    with (
        dc.transaction(catalog_name=cat, as_of=1_000_000_000),  # 1970-01-01T00:00:01
        pytest.raises(error("TableNotFoundError"), match="Table does not exist"),
    ):
        _read_in_transaction()
