"""``dc.table`` handles and ``dc.tables``: each method gives what the function it stands for
gives; ``"ns.t"`` is accepted wherever a table and a namespace are."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest


def _keyed() -> dc.Schema:
    return dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.string())]
    )


@pytest.fixture
def shop(catalog):
    dc.write(
        pd.DataFrame({"id": [1, 2, 3], "v": ["a", "b", "c"]}),
        "orders",
        "shop",
        schema=_keyed(),
        auto_create_namespace=True,
    )
    dc.write(pd.DataFrame({"id": [3, 4], "v": ["C", "d"]}), "orders", "shop", mode="merge")
    return catalog


def _same(left: pd.DataFrame, right: pd.DataFrame) -> None:
    key = list(left.columns)
    pd.testing.assert_frame_equal(
        left.sort_values(key).reset_index(drop=True), right.sort_values(key).reset_index(drop=True)
    )


def test_reads_match_the_functions(shop):
    handle = dc.table("shop.orders")
    assert (handle.name, handle.namespace, handle.catalog) == ("orders", "shop", "default")
    _same(handle.to_pandas(), dc.read("orders", "shop", read_as="pandas"))
    assert (
        handle.to_arrow()
        .sort_by("id")
        .equals(dc.read("orders", "shop", read_as="pyarrow").sort_by("id"))
    )
    _same(
        handle.read("pandas", columns=["id"], version=0),
        dc.read("orders", "shop", read_as="pandas", columns=["id"], version=0),
    )
    assert handle.info == dc.get_table("orders", "shop")
    pd.testing.assert_frame_equal(handle.history(), dc.transactions("pandas", table="shop.orders"))
    assert handle.diff(0) == dc.diff("orders", "shop", 0)


def test_addresses_are_equivalent(shop):
    by_url = dc.table("dc://default/shop/orders")
    assert by_url == dc.table("orders", "shop") == dc.table("shop.orders", catalog="default")
    assert dc.table("dc://default/shop/orders").qualified == "shop.orders"
    with pytest.raises(dc.InvalidUrlError):
        dc.table("dc://default/shop")
    with pytest.raises(dc.InvalidNameError, match="names namespace 'shop'"):
        dc.table("shop.orders", "other")
    with pytest.raises(dc.InvalidNameError):
        dc.table("a/../b")
    with pytest.raises(dc.CatalogNotFoundError):
        dc.table("shop.orders", catalog="nowhere")


def test_writes_match_the_functions(shop, new_catalog, tmp_path):
    handle = dc.table("shop.orders")
    result = handle.merge(pd.DataFrame({"id": [4, 5], "v": ["D", "e"]}))
    assert (result.mode, result.rows_added, result.rows_updated) == ("merge", 1, 1)
    handle.delete(pd.DataFrame({"id": [1]}))
    assert sorted(handle.to_pandas()["id"]) == [2, 3, 4, 5]
    handle.write(pd.DataFrame({"id": [9], "v": ["z"]}))  # auto: a merge
    assert sorted(handle.to_pandas()["id"]) == [2, 3, 4, 5, 9]
    # The same calls through the functions on a twin table give the same rows.
    twin = dc.table("shop.twin")
    twin.write(pd.DataFrame({"id": [1, 2, 3], "v": ["a", "b", "c"]}), schema=_keyed())
    dc.write(pd.DataFrame({"id": [3, 4], "v": ["C", "d"]}), "twin", "shop", mode="merge")
    dc.write(pd.DataFrame({"id": [4, 5], "v": ["D", "e"]}), "twin", "shop", mode="merge")
    dc.write(pd.DataFrame({"id": [1]}), "twin", "shop", mode="delete")
    dc.write(pd.DataFrame({"id": [9], "v": ["z"]}), "twin", "shop")
    _same(handle.to_pandas(), twin.to_pandas())
    assert handle.optimize()["numFilesAdded"] == 1
    assert handle.info.file_count == 1
    assert handle.optimize(cluster_by=["v"])["clusterBy"] == ["v"]
    assert handle.to_pandas()["v"].tolist() == sorted(handle.to_pandas()["v"])
    assert isinstance(handle.vacuum(dry_run=True), dc.VacuumResult)


def test_past_handles_read_then_and_refuse_writes(shop):
    first = dc.transactions("pyarrow", table="shop.orders").column("transaction_id")[-1]
    then = dc.table("shop.orders").at(first.as_py())
    assert sorted(then.to_pandas()["id"]) == [1, 2, 3]
    assert then.info.version == 0
    assert len(then.history()) == 1
    assert (then.diff(0).added, then.diff(0).changed) == (0, 0)
    assert (dc.table("shop.orders").diff(0).added, dc.table("shop.orders").diff(0).changed) == (
        1,
        1,
    )
    before = tree_digest(shop.root)
    for attempt in (
        lambda: then.write(pd.DataFrame({"id": [7], "v": ["x"]})),
        lambda: then.merge(pd.DataFrame({"id": [7], "v": ["x"]})),
        lambda: then.delete(pd.DataFrame({"id": [1]})),
        then.optimize,
        then.vacuum,
    ):
        with pytest.raises(dc.InvalidArgumentError, match="read-only"):
            attempt()
    assert tree_digest(shop.root) == before
    assert dc.table("shop.orders").to_pandas().shape[0] == 4


def test_branch_handles_read_and_write_their_branch(shop):
    dc.create_branch("exp")
    on_exp = dc.table("shop.orders").on("exp")
    on_exp.merge(pd.DataFrame({"id": [10], "v": ["new"]}))
    assert 10 in set(on_exp.to_pandas()["id"])
    assert 10 not in set(dc.table("shop.orders").to_pandas()["id"])
    with dc.branch("exp"):
        _same(on_exp.to_pandas(), dc.read("orders", "shop", read_as="pandas"))
    assert on_exp.info.branch == "exp"
    assert dc.current_branch() == "main"  # the handle's branch stays inside its calls
    with pytest.raises(dc.InvalidNameError):
        dc.table("shop.orders").on("bad/name")


def test_repr_html_shows_schema_keys_history_and_preview(shop):
    html = dc.table("shop.orders")._repr_html_()
    assert "shop.orders" in html and "merge key" in html.lower()
    assert "last 2 commits" in html and "first 4 of 4 rows" in html
    missing = dc.table("shop.nothing")._repr_html_()
    assert "TableNotFoundError" in missing  # shown, not raised
    assert "dc://default/shop/orders" in repr(dc.table("shop.orders"))


def test_repr_html_of_a_branch_says_so_and_shows_its_lines_commits(shop):
    import re

    dc.create_branch("exp")
    dc.write(pd.DataFrame({"id": [9], "v": ["after"]}), "orders", "shop")  # main, after the fork
    on_exp = dc.table("shop.orders", branch="exp")
    on_exp.write(pd.DataFrame({"id": [5], "v": ["e"]}))
    html = on_exp._repr_html_()
    assert "on branch <b>exp</b>" in html and "last 3 commits" in html
    lines = re.findall(r"<tr><td>(exp|main)</td>", html)
    assert lines == ["exp", "main", "main"]  # its own, then main's from before it started
    assert "first 5 of 5 rows" in html and ">after<" not in html
    with dc.branch("exp"):  # the session's branch, when the handle names none
        assert "on branch <b>exp</b>" in dc.table("shop.orders")._repr_html_()
    on_main = dc.table("shop.orders")._repr_html_()
    assert (
        "on branch" not in on_main
        and re.findall(r"<tr><td>(exp|main)</td>", on_main) == ["main"] * 3
    )
    past = dc.table("shop.orders").at(dc.transactions().to_pylist()[-1]["transaction_id"])
    assert " as of " in past._repr_html_()


def test_tables_maps_qualified_names_to_handles(shop, new_catalog, tmp_path):
    dc.write(pd.DataFrame({"x": [1]}), "t", auto_create_namespace=True)
    assert list(dc.tables) == ["default.t", "shop.orders"]
    assert len(dc.tables) == 2 and "shop.orders" in dc.tables
    assert dc.tables["shop.orders"] == dc.table("shop.orders")
    assert dc.tables._ipython_key_completions_() == ["default.t", "shop.orders"]
    with pytest.raises(KeyError):
        dc.tables["shop.none"]
    other = new_catalog(tmp_path / "other")
    dc.put_catalog("other", other)
    dc.write(pd.DataFrame({"x": [1]}), "u", "default", "other")
    assert list(dc.tables("other")) == ["default.u"]
    assert dc.tables("other")["default.u"].catalog == "other"


@pytest.mark.parametrize(
    "call",
    [
        lambda: dc.read("shop.orders", read_as="pandas").shape[0],
        lambda: dc.get_table("shop.orders").row_count,
        lambda: dc.table_exists("shop.orders"),
        lambda: dc.delta_table("shop.orders").version(),
        lambda: type(dc.diff("shop.orders", before=0)).__name__,
        lambda: dc.optimize("shop.orders")["numFilesAdded"],
        lambda: type(dc.show("shop.orders")).__name__,
        lambda: dc.lineage("shop.orders").num_rows,
        lambda: dc.alter_table("shop.orders", table_properties={}),
        lambda: dc.write(pd.DataFrame({"id": [8], "v": ["h"]}), "shop.orders").table.namespace,
    ],
)
def test_every_table_api_takes_namespace_dot_table(shop, call):
    call()  # raised InvalidNameError for "shop.orders" before


def test_dotted_names_create_tables_and_refuse_a_second_namespace(catalog):
    dc.write(pd.DataFrame({"x": [1]}), "sales.daily", auto_create_namespace=True)
    assert dc.table_exists("daily", "sales")
    dc.create_table("sales.weekly")
    assert [t.name for t in dc.list_tables("sales")] == ["daily", "weekly"]
    dc.drop_table("sales.weekly")
    before = tree_digest(catalog.root)
    with pytest.raises(dc.InvalidNameError, match="namespace='other'"):
        dc.write(pd.DataFrame({"x": [1]}), "sales.daily", "other")
    with pytest.raises(dc.NamespaceNotFoundError):
        dc.write(pd.DataFrame({"x": [1]}), "nowhere.t")
    assert tree_digest(catalog.root) == before
