"""Completion from the catalog through IPython's own completer (a real shell, real tables):
tables and columns in ``%%dc sql`` cells, names in workbench calls' string arguments, ``%dc``
lines; odd input, unknown tables, several catalogs, branches and an object store that does
not answer give candidates or nothing, never an error or a wait."""

from __future__ import annotations

import socket
import time
import warnings

import pandas as pd
import pytest
from IPython.core.completer import provisionalcompleter
from IPython.core.interactiveshell import InteractiveShell

import workbench as dc
from workbench.core.ops.names import forget_names
from workbench.frontend.python_text import call_string
from workbench.frontend.sql_text import named_tables, sql_place
from workbench.magics.completion import MATCHER, NO_MATCH


@pytest.fixture
def shell(catalog):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "workbench")
    ip.run_line_magic("dc", "use default")
    forget_names()
    dc.write(
        pd.DataFrame({"id": [1], "item": ["tea"], "price": [2.5]}),
        "shop.orders",
        auto_create_namespace=True,
    )
    dc.write(pd.DataFrame({"sku": [1], "count": [3]}), "shop.stock")
    dc.write(pd.DataFrame({"x": [1]}), "default.notes")
    ip.user_ns.update(dc=dc, pd=pd)
    yield ip
    ip.user_ns.pop("dc", None)


def complete(shell, code: str, cursor: int | None = None) -> list[tuple[str, str, str]]:
    """(text, origin, type) of every candidate IPython gives at ``cursor`` (default: the end)."""
    cursor = len(code) if cursor is None else cursor
    with warnings.catch_warnings(), provisionalcompleter():
        warnings.simplefilter("ignore")
        found = shell.Completer.completions(code, cursor)
        return [(c.text, c._origin, c.type) for c in found]


def texts(shell, code: str, cursor: int | None = None) -> list[str]:
    """The workbench matcher's candidates (checking no other matcher answered), without the
    no-op candidate that stands for none."""
    found = complete(shell, code, cursor)
    assert {origin for _, origin, _ in found} <= {MATCHER}, f"other matchers answered: {found}"
    return [text for text, _, kind in found if kind != NO_MATCH]


def test_sql_cells_complete_tables_after_from_join_into_update(shell):
    all_tables = ["default.notes", "shop.orders", "shop.stock"]
    assert texts(shell, "%%dc sql\nSELECT * FROM ") == all_tables
    assert texts(shell, "%%dc sql\nSELECT * FROM sh") == ["shop.orders", "shop.stock"]
    assert texts(shell, "%%dc sql\nSELECT * FROM shop.o") == ["shop.orders"]
    assert texts(shell, "%%dc sql\nselect 1 from shop.orders o join shop.s") == ["shop.stock"]
    assert texts(shell, "%%dc sql\nSELECT * FROM shop.orders, d") == ["default.notes"]
    assert texts(shell, "%%dc sql\nINSERT INTO ") == all_tables
    assert texts(shell, "%%dc sql --engine local\nUPDATE shop.st") == ["shop.stock"]


def test_quoted_names_complete_quoted_and_run(shell):
    assert texts(shell, '%%dc sql\nSELECT * FROM "shop"."o') == ['"shop"."orders"']
    assert texts(shell, '%%dc sql\nSELECT * FROM "Sh') == ['"shop"."orders"', '"shop"."stock"']
    assert texts(shell, '%%dc sql\nSELECT * FROM shop."st') == ['"shop"."stock"']
    assert texts(shell, "%%dc sql\nSELECT 1 FROM shop.stock, `def") == ["`default`.`notes`"]
    assert texts(shell, '%%dc sql\nSELECT * FROM "shop"."zzz') == []
    for name in ('"shop"."orders"', "`shop`.`orders`"):
        assert dc.sql(f"SELECT item FROM {name}", read_as="pyarrow").to_pylist() == [
            {"item": "tea"}
        ]


def test_sql_cells_complete_columns_of_the_named_tables(shell):
    orders = ["id", "item", "price"]
    cell = "%%dc sql\nSELECT o. FROM shop.orders o"
    assert texts(shell, cell, cell.index("o.") + 2) == orders
    cell = "%%dc sql\nSELECT orders.it FROM shop.orders"
    assert texts(shell, cell, cell.index(" FROM")) == ["item"]
    assert texts(shell, "%%dc sql\nSELECT * FROM shop.orders WHERE shop.orders.p") == ["price"]
    assert texts(shell, "%%dc sql\nSELECT * FROM shop.orders WHERE orders.") == orders
    cell = "%%dc sql\nSELECT  FROM shop.orders JOIN shop.stock s ON s.sku = id"
    assert texts(shell, cell, cell.index("  FROM") + 1) == [*orders, "sku", "count"]
    cell = "%%dc sql\nSELECT * FROM shop.orders WHERE i"
    assert texts(shell, cell) == ["id", "item"]
    # A second statement sees only its own tables.
    cell = "%%dc sql\nSELECT * FROM shop.stock;\nSELECT * FROM shop.orders WHERE "
    assert texts(shell, cell) == orders


def test_sql_cells_on_odd_input_offer_nothing_and_hide_python_names(shell):
    for cell in (
        "%%dc sql\nSELECT 'unterminated FROM ",
        "%%dc sql\nSELECT * FROM shop.orders -- FROM ",
        "%%dc sql\nSELECT * FROM nowhere.missing m WHERE m.",
        "%%dc sql\nSELECT * FROM shop.orders WHERE unknown.",
        "%%dc sql\nSELECT * FROM shop.orders AS ",
        "%%dc sql\n/* open comment FROM ",
        '%%dc sql\n"quoted FROM ',
        "%%dc sql\nSELECT é FROM ",
        "%%dc sql\n",
        "%%dc sql\n" + "SELECT (((" * 500,
    ):
        assert texts(shell, cell) in ([], ["default.notes", "shop.orders", "shop.stock"])
    assert texts(shell, "%%dc sql\nSELECT 'x' FROM ") == [
        "default.notes",
        "shop.orders",
        "shop.stock",
    ]


def test_call_strings_complete_tables_namespaces_branches_tags_catalogs(shell):
    dc.tag("start")
    dc.create_branch("exp")
    assert texts(shell, 'dc.read("') == ["default.notes", "shop.orders", "shop.stock"]
    assert texts(shell, "dc.read('shop.s") == ["shop.stock"]
    assert texts(shell, 'dc.table("shop.orders", "') == ["default", "shop"]
    assert texts(shell, 'dc.read("orders", namespace="s') == ["shop"]
    assert texts(shell, 'dc.write(df, "shop.') == ["shop.orders", "shop.stock"]
    assert texts(shell, 'dc.write(df, "t", branch="') == ["main", "exp"]
    assert texts(shell, 'dc.read("shop.orders", catalog="') == ["default"]
    assert texts(shell, 'dc.diff("shop.orders", before="') == ["main", "exp", "start"]
    assert texts(shell, 'dc.report("r.ipynb", as_of="') == ["start"]
    assert texts(shell, 'dc.branch("') == ["main", "exp"]
    assert texts(shell, 'dc.infer("shop.orders", "image-facts", into="shop.o') == ["shop.orders"]
    assert texts(shell, 'dc.sql("SELECT * FROM shop.orders WHERE ') == ["id", "item", "price"]
    assert texts(shell, 'dc.sql("""\nSELECT *\nFROM sh') == ["shop.orders", "shop.stock"]
    shell.user_ns["orders"] = dc.table("shop.orders")
    assert texts(shell, 'orders.on("') == ["main", "exp"]
    assert texts(shell, 'orders.diff("') == ["main", "exp", "start"]
    assert [t for t, _, _ in complete(shell, 'dc.tables["shop.')] == ["shop.orders", "shop.stock"]


def test_python_outside_workbench_strings_is_left_to_ipython(shell):
    for code in (
        'len("',
        'x = "',
        'dc.read(f"',
        'dc.read(x + "',
        "# dc.read('",
        'dc.read("a", "b", "c", "',
    ):
        assert all(origin != MATCHER for _, origin, _ in complete(shell, code)), code


def test_dc_lines_complete_commands_and_names(shell):
    assert texts(shell, "%dc sh") == ["show"]
    assert texts(shell, "%dc show sh") == ["shop.orders", "shop.stock"]
    assert texts(shell, "%%dc write shop.o") == ["shop.orders"]
    assert texts(shell, "x = 1\n%dc describe default.") == ["default.notes"]
    assert texts(shell, "%dc use ") == ["default", "default/default", "default/shop"]


def test_listings_follow_commits(shell):
    assert texts(shell, 'dc.read("default.') == ["default.notes"]
    dc.write(pd.DataFrame({"y": [1]}), "default.later")
    assert texts(shell, 'dc.read("default.') == ["default.later", "default.notes"]
    dc.write(pd.DataFrame({"y": [2], "z": [3]}), "default.later")  # a new column
    assert texts(shell, "%%dc sql\nSELECT * FROM default.later WHERE ") == ["y", "z"]
    dc.drop_table("default.later")
    assert texts(shell, 'dc.read("default.') == ["default.notes"]


def test_several_catalogs(shell, new_catalog, tmp_path):
    dc.put_catalog("lake", new_catalog(tmp_path / "lake"))
    dc.write(pd.DataFrame({"v": [1]}), "raw.events", catalog="lake", auto_create_namespace=True)
    assert texts(shell, 'dc.read("', None) == ["default.notes", "shop.orders", "shop.stock"]
    assert texts(shell, 'dc.read("r", catalog="lake") if 0 else dc.read("', None)[:1] == [
        "default.notes"
    ]
    assert texts(shell, 'dc.read(catalog="lake", table="') == ["raw.events"]
    assert texts(shell, 'dc.read("x", catalog="l') == ["lake"]
    assert texts(shell, "%%dc sql\nSELECT * FROM lake.") == ["lake.raw.events"]
    assert texts(shell, "%%dc sql\nSELECT * FROM lake.raw.events e WHERE e.") == ["v"]
    shell.run_line_magic("dc", "use lake")
    assert texts(shell, "%%dc sql\nSELECT * FROM ") == ["raw.events"]
    assert texts(shell, "%dc show ") == ["raw.events"]


def test_a_branch_in_use(shell):
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(pd.DataFrame({"b": [1]}), "default.only_on_exp")
    assert "default.only_on_exp" not in texts(shell, 'dc.read("')
    assert "default.only_on_exp" in texts(shell, 'dc.read(branch="exp", table="')
    dc.use_branch("exp")
    try:
        assert "default.only_on_exp" in texts(shell, 'dc.read("')
        assert texts(shell, "%%dc sql\nSELECT * FROM default.only_on_exp WHERE ") == ["b"]
        on_main = dc.table("default.notes").on("main")
        shell.user_ns["notes"] = on_main
        assert texts(shell, "notes.on('") == ["main", "exp"]
    finally:
        dc.use_branch("main")


def test_an_object_store_that_does_not_answer_gives_nothing_quickly(shell):
    with socket.socket() as black_hole:  # accepts connections, never answers
        black_hole.bind(("127.0.0.1", 0))
        black_hole.listen(64)
        options = {
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{black_hole.getsockname()[1]}",
            "AWS_ACCESS_KEY_ID": "x",
            "AWS_SECRET_ACCESS_KEY": "x",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }
        dc.put_catalog("far", dc.Catalog(dc.CatalogProperties("s3://nowhere/cat", options)))
        for code in (
            'dc.read(catalog="far", table="',
            "%%dc sql\nSELECT * FROM far.",
            'dc.read(catalog="far", table="sh',
        ):
            started = time.monotonic()
            assert texts(shell, code) == []
            assert time.monotonic() - started < 1.0, code
        started = time.monotonic()
        assert texts(shell, 'dc.read("') == ["default.notes", "shop.orders", "shop.stock"]
        assert time.monotonic() - started < 1.0
        dc.pop_catalog("far")


def test_a_broken_catalog_gives_nothing(shell, tmp_path):
    not_a_folder = tmp_path / "file"
    dc.put_catalog("broken", dc.Catalog(dc.CatalogProperties(str(not_a_folder))))
    not_a_folder.write_text("x")  # the root became a file
    assert texts(shell, 'dc.read(catalog="broken", table="') == []
    assert texts(shell, "%dc show nowhere.") == []


def test_text_readers_on_their_own():
    place = sql_place("SELECT x FROM a.b AS t1, c.d WHERE t1.", 38)
    assert (place.kind, place.qualifier, place.tables["t1"]) == ("column", "t1", "a.b")
    assert named_tables("FROM a.b JOIN c.d ON 1")["d"] == "c.d"
    assert sql_place("SELECT 1 FROM a.b LEFT JOIN ", 28).kind == "table"
    assert call_string('f(1, g("a", "b"), name="x", "') is not None
    found = call_string('dc.read("a", catalog="lake", branch = "exp", "')
    assert found is not None and found.given == {0: "a", "catalog": "lake", "branch": "exp"}
    assert call_string('dc.read("a")') is None
    assert call_string("dc.read('''a\nb") is not None
    assert call_string('dc.read("a\\"b') is not None
    assert call_string('dc.read("a"\n"') is None  # joined to the string before it


def test_a_table_written_after_a_tab_on_its_name_completes_at_once(shell):
    cell = "%%dc sql\nSELECT * FROM shop.later l WHERE l."
    assert texts(shell, cell) == []  # unknown yet: its columns cannot be read
    dc.write(pd.DataFrame({"a": [1]}), "shop.later")
    assert texts(shell, cell) == ["a"], "a quick failure is not held against the table"


def kinds(shell, code: str) -> list[tuple[str, str]]:
    """(text, kind) of the workbench matcher's candidates."""
    return [(text, kind) for text, _, kind in complete(shell, code) if kind != NO_MATCH]


def test_names_match_in_any_case_and_fuzzily_prefix_first():
    from workbench.frontend.completion import ranked

    names = [(n, "table") for n in ("sales.returns", "sales.orders", "ord.lines", "shop.stock")]
    assert [t for t, _ in ranked("ord", names)] == ["ord.lines", "sales.orders"]
    assert [t for t, _ in ranked("Sales.", names)] == ["sales.returns", "sales.orders"]
    assert [t for t, _ in ranked("ORDERS", names)] == ["sales.orders"]
    assert [t for t, _ in ranked("slsrt", names)] == ["sales.returns"]  # in order, fuzzily
    assert [t for t, _ in ranked("tur", names)] == ["sales.returns"]  # inside a name
    assert [t for t, _ in ranked("shop.o", names)] == []  # a dotted word is not fuzzy
    assert [t for t, _ in ranked("r", names)] == ["sales.returns"]  # one letter: part starts


def test_candidates_say_what_they_are(shell):
    dc.create_branch("exp")
    assert kinds(shell, "%%dc sql\nSELECT * FROM ord") == [("shop.orders", "table")]
    assert kinds(shell, "%%dc sql\nSELECT * FROM SHOP.st") == [("shop.stock", "table")]
    cell = "%%dc sql\nSELECT * FROM shop.orders WHERE orders.pr"
    assert kinds(shell, cell) == [("price", "column · double · shop.orders")]
    assert kinds(shell, 'dc.read("orders') == [("shop.orders", "table")]
    assert kinds(shell, 'dc.read("dc://default/shop/s') == [("dc://default/shop/stock", "table")]
    assert kinds(shell, 'dc.tables["sto') == [("shop.stock", "table")]
    assert kinds(shell, 'dc.read("shop.orders", namespace="') == [
        ("default", "namespace"),
        ("shop", "namespace"),
    ]
    assert kinds(shell, 'dc.write(df, "t", branch="e') == [("exp", "branch")]
    assert kinds(shell, "%dc hist") == [("history", "%dc command")]
    assert kinds(shell, "%dc branch cr") == [("create", "%dc branch action")]
    assert kinds(shell, "%dc use def") == [
        ("default", "catalog"),
        ("default/default", "namespace"),
        ("default/shop", "namespace"),
    ]
    assert [kind for _, _, kind in complete(shell, "%%dc sql\nSELECT * FROM zzz")] == [NO_MATCH]
