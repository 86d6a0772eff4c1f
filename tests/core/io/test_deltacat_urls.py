"""DeltaCAT's URL calls and history columns on real catalogs: DeltaCatUrl, put/get of catalogs
and namespaces, recursive listing, what copy returns, and dc.transactions()' summary columns."""

from __future__ import annotations

import pandas as pd
import pytest

import workbench as dc
from workbench.exceptions import InvalidUrlError


@pytest.fixture
def two(tmp_path):
    dc.init(
        catalogs={
            "one": dc.Catalog(dc.CatalogProperties(str(tmp_path / "one"))),
            "two": dc.Catalog(dc.CatalogProperties(str(tmp_path / "two"))),
        },
        default="one",
    )


def test_a_deltacat_url_is_the_url_string_with_its_parts():
    url = dc.DeltaCatUrl("dc://lake/sales/orders")
    assert url == "dc://lake/sales/orders" and url.url == "dc://lake/sales/orders"
    assert (url.catalog_name, url.namespace, url.table) == ("lake", "sales", "orders")
    assert dc.DeltaCatUrl("dc://lake").namespace is None
    with pytest.raises(InvalidUrlError):
        dc.DeltaCatUrl("s3://bucket/x")


def test_put_registers_a_catalog_and_creates_a_namespace(two, tmp_path):
    catalog = dc.put(dc.DeltaCatUrl("dc://three"), root=str(tmp_path / "three"))
    assert isinstance(catalog, dc.Catalog) and dc.get("dc://three") is catalog
    assert [n.name for n in dc.list("dc://three")] == ["default"]
    made = dc.put("dc://three/inbox")
    assert made == dc.Namespace("inbox", "three") == dc.get("dc://three/inbox")
    with pytest.raises(InvalidUrlError, match="cannot take data"):
        dc.put("dc://three/inbox", pd.DataFrame({"id": [1]}))
    with pytest.raises(InvalidUrlError, match="needs the data"):
        dc.put("dc://three/inbox/t")
    with pytest.raises(InvalidUrlError, match="wildcard"):
        dc.get("dc://three/*")


def test_recursive_listing_gives_namespaces_then_tables(two):
    dc.put("dc://one/empty")
    dc.write(pd.DataFrame({"id": [1]}), "b", "sales", auto_create_namespace=True)
    dc.write(pd.DataFrame({"id": [1]}), "a", "sales")
    listed = dc.list("dc://one", recursive=True)
    assert [(type(o).__name__, o.name) for o in listed] == [
        ("Namespace", "default"),
        ("Namespace", "empty"),
        ("Namespace", "sales"),
        ("Table", "a"),
        ("Table", "b"),
    ]
    assert listed[3].table_name == "a" and isinstance(listed[3], dc.TableRef)
    assert [type(o).__name__ for o in dc.list("dc://one")] == ["Namespace"] * 3


def test_copy_returns_what_it_made(two):
    dc.write(pd.DataFrame({"id": [1, 2]}), "t", "sales", auto_create_namespace=True)
    copied = dc.copy("dc://one/sales", "dc://two/sales")
    assert copied == dc.Namespace("sales", "two")
    assert dc.list("dc://two/sales") == []
    table = dc.copy("dc://one/sales/t", "dc://two/sales/t")
    assert table == dc.Table("t", "sales", "two")
    assert dc.read("t", "sales", "two", read_as="pandas")["id"].tolist() == [1, 2]
    everything = dc.copy("dc://one/*", "dc://two")
    assert [o.name for o in everything] == ["default", "sales"]


def test_history_has_deltacats_summary_columns(catalog):
    with dc.transaction(commit_message="two tables"):
        dc.write(pd.DataFrame({"id": [1]}), "a", "x", auto_create_namespace=True)
        dc.write(pd.DataFrame({"id": [1]}), "b", "y", auto_create_namespace=True)
        dc.write(pd.DataFrame({"id": [2]}), "a", "x")
    latest = dc.transactions(read_as=dc.DatasetType.PANDAS).iloc[0]
    assert latest["state"] == "SUCCESS" and latest["status"] == "COMMITTED"
    assert latest["operation_count"] == len(latest["operations"]) == 4  # 2 namespaces, 2 tables
    assert latest["operation_types"] == ",".join(dict.fromkeys(latest["operations"]))
    assert (latest["namespace_count"], latest["table_count"]) == (2, 2)
