"""Integer ``as_of`` values are nanoseconds since the epoch. A value in seconds,
milliseconds or microseconds (``int(time.time())`` is a common slip) lands before the catalog's
first transaction; every API taking ``as_of`` says so with a typed error instead of reporting
a table that exists as missing."""

from __future__ import annotations

import time
from datetime import datetime

import pandas as pd
import pytest

import workbench as dc

UNITS = {"seconds": 10**9, "milliseconds": 10**6, "microseconds": 10**3}
CALLS = {
    "read": lambda t: dc.read("t", as_of=t, read_as="pandas"),
    "get_table": lambda t: dc.get_table("t", as_of=t),
    "table_exists": lambda t: dc.table_exists("t", as_of=t),
    "list_tables": lambda t: dc.list_tables(as_of=t),
    "transaction": lambda t: dc.transaction(as_of=t).__enter__(),
    "transactions": lambda t: dc.transactions(as_of=t),
    "transactions since": lambda t: dc.transactions(since=t),
    "diff": lambda t: dc.diff("t", before=t),
    "show": lambda t: dc.show("t", as_of=t),
    "sql": lambda t: dc.sql("SELECT * FROM default.t", as_of=t),
}


@pytest.mark.parametrize("unit", sorted(UNITS))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_an_as_of_in_another_unit_is_a_typed_error_saying_so(catalog, unit, call):
    dc.write(pd.DataFrame({"id": [1]}), "t")
    slip = time.time_ns() // UNITS[unit]
    with pytest.raises(dc.AsOfUnitError) as raised:
        CALLS[call](slip)
    message = str(raised.value)
    assert "nanoseconds since the epoch" in message
    assert "before the catalog's first transaction" in message
    assert f"looks like {unit}" in message and f"{slip} * {UNITS[unit]}" in message
    assert isinstance(raised.value, dc.TimeTravelError)


def test_an_early_nanosecond_time_reads_the_empty_catalog_and_says_why(catalog):
    """DeltaCAT's semantics: a time before the first transaction shows an empty catalog."""
    dc.write(pd.DataFrame({"id": [1]}), "t")
    assert not dc.table_exists("t", as_of=1_000_000_000)
    with (
        dc.transaction(as_of=1_000_000_000),
        pytest.raises(dc.TableNotFoundError, match="Table does not exist") as raised,
    ):
        dc.read("t")
    assert "before the catalog's first transaction" in str(raised.value)
    with pytest.raises(dc.TableNotFoundError, match="nanoseconds since the epoch"):
        dc.get_table("t", as_of=1)
    for early in (datetime(2000, 1, 1), "2000-01-01T00:00"):  # no integer to explain
        with pytest.raises(dc.TableNotFoundError, match="before the catalog's first") as raised:
            dc.read("t", as_of=early)
        assert "integer" not in str(raised.value)
