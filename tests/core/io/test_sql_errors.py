"""SQL errors are said in the user's query: the tables' own names (never the views they are
given to the engine as), no engine jargon, a hint that fits the error, and the user's line
marked where the engine pointed, on DuckDB (local) and Daft."""

from __future__ import annotations

import pandas as pd
import pytest

import workbench as dc
from workbench.core.io.sql_errors import engine_error

ENGINES = ["local", "daft"]


@pytest.fixture
def orders(catalog):
    frame = pd.DataFrame({"id": [1, 2], "amount": [2.0, 3.5]})
    dc.write(frame, "orders", "sales", auto_create_namespace=True)
    dc.write(frame, "payroll", "hr", auto_create_namespace=True)


def _error(query: str, engine: str) -> dc.SqlQueryError:
    with pytest.raises(dc.SqlQueryError) as raised:
        dc.sql(query, engine=engine)
    assert isinstance(raised.value, dc.InvalidArgumentError)  # as before: a bad argument
    assert "__wb" not in str(raised.value)
    return raised.value


def _marked(message: str) -> str:
    """The text above the caret of ``message``'s marked line, up to the caret."""
    line, caret = message.split("\n")[-2:]
    assert caret.strip() == "^", message
    return line[len(caret) - 1 :]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unknown_column_is_marked_in_the_users_query(orders, engine):
    query = "SELECT id,\n       nope\nFROM sales.orders JOIN hr.payroll USING (id)"
    error = _error(query, engine)
    assert "nope" in str(error)
    if engine == "local":  # Daft does not point at a bound name
        assert _marked(str(error)).startswith("nope")
        assert "LINE 2:" in str(error)
        assert query[error.position :].startswith("nope")


def test_a_place_after_a_table_name_is_marked_where_the_user_wrote_it(orders):
    query = "SELECT * FROM sales.orders o JOIN hr.payroll p ON o.idd = p.id"
    error = _error(query, "local")
    assert _marked(str(error)).startswith("o.idd")
    assert 'Table "o"' in str(error) and "Values list" not in str(error)


def test_an_error_while_reading_rows_is_marked_in_the_users_text(orders):
    # A value that fails its cast only while the rows are read: DuckDB's relation error
    # points into its own rendering ("CAST(... AS INTEGER)"), the user's text says INT.
    dc.write(pd.DataFrame({"code": ["1", "x"]}), "codes", "sales")
    query = "SELECT id,\n       CAST(code AS INT) AS n\nFROM sales.codes, sales.orders"
    error = _error(query, "local")
    assert "Could not convert string 'x'" in str(error)
    assert _marked(str(error)).startswith("CAST(code AS INT)")
    assert query[error.position :].startswith("CAST(code AS INT)")


def test_a_long_line_is_shown_as_a_window_around_the_place(orders):
    query = "SELECT " + "amount, " * 40 + "nope FROM sales.orders WHERE " + "id > 0 AND " * 20
    error = _error(query + "true", "local")
    marked_line = str(error).split("\n")[-2]
    assert marked_line.count("...") == 2 and len(marked_line) < 130
    assert _marked(str(error)).startswith("nope")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("name", "meant"), [("orders", "sales.orders"), ("Orderz", "sales.orders"), ("PAYROL", None)]
)
def test_a_table_named_without_its_namespace_gets_the_name_it_may_mean(orders, engine, name, meant):
    error = str(_error(f"SELECT * FROM {name}", engine))
    assert f"{name} is not a catalog table" in error
    assert "pg_" not in error  # DuckDB's guesses among its own system tables
    if meant is None:
        assert "did you mean hr.payroll?" in error
    else:
        assert f"did you mean {meant}?" in error


def test_a_table_like_none_in_the_catalog_says_how_to_name_tables(orders):
    error = str(_error("SELECT * FROM zzzz", "local"))
    assert "did you mean" not in error
    assert "namespace.table" in error and "dc.list_tables" in error


@pytest.mark.parametrize("engine", ENGINES)
def test_a_syntax_error_keeps_the_engines_reason_and_the_users_line(orders, engine):
    error = str(_error("SELEC amount FROM sales.orders", engine))
    assert "SELEC" in error and "REASON" not in error
    assert error.split("\n")[-2].endswith("SELEC amount FROM sales.orders")


def test_a_pointer_the_query_does_not_hold_gives_no_position():
    message = "Binder Error: x\n\nLINE 3: nothing\n        ^"
    assert engine_error(message, "SELECT 1").position is None
    assert engine_error("Parser Error: y", "SELECT 1").position is None
    assert str(engine_error(message, "SELECT 1")) == "The SQL query failed: Binder Error: x"


def test_spark_errors_are_said_in_the_users_query_without_spark_logging_them(orders, spark, capfd):
    error = _error("SELECT id\nFROM sales.orders o\nWHERE o.idd > 1", "spark")
    assert "`o`.`idd`" in str(error) and "SQLSTATE" not in str(error)
    assert "Project" not in str(error)  # no plan
    assert _marked(str(error)).startswith("o.idd") and "LINE 3:" in str(error)
    missing = str(_error("SELECT * FROM orders", "spark"))
    assert "orders is not a catalog table" in missing and "did you mean sales.orders?" in missing
    assert "Search path" not in missing
    syntax = _error("SELEC 1", "spark")
    assert syntax.position == 0 and "== SQL ==" not in str(syntax)
    assert "SQLQueryContextLogger" not in capfd.readouterr().err
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException):  # Spark's own logging of its errors still works
        spark.sql("SELECT nope FROM range(1)")
