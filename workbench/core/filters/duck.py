"""The process's one sandboxed DuckDB database, and a scratch connection to it that parses
SQL, casts constants as SQL casts them, and checks a filter's text against a table's columns
before any file is read. Times are UTC, as in every query workbench runs."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

# The process's database: one DuckDB instance (a second costs ~9 ms to open), held by
# DATABASE_LOCK while a query runs on it; scratch work runs on a cursor of its own.
DATABASE_LOCK = threading.RLock()
_SCRATCH_LOCK = threading.Lock()  # taken after DATABASE_LOCK, never before it
_open: dict[str, Any] = {}  # "database", its "folders", the "scratch" cursor
_first_folders: list[Callable[[], frozenset[str]]] = []  # what a scratch opens it for


def open_first_for(folders: Callable[[], frozenset[str]]) -> None:
    """The folders a database the scratch connection opens may read: those a query is likely
    to read next (the parse comes before the query), so it need not be opened again."""
    _first_folders[:] = [folders]


def process_database(folders: frozenset[str]) -> Any:
    """The process's database, able to read files under ``folders`` (local folders ending in
    "/"): opened anew, wider, when it may not yet (its settings are locked). Call it holding
    ``DATABASE_LOCK``."""
    import duckdb

    allowed = _open.get("folders", frozenset())
    if "database" in _open and folders <= allowed:
        return _open["database"]
    close_database()
    allowed = frozenset(allowed | folders)
    connection = duckdb.connect()
    connection.execute("SET parquet_metadata_cache = true")
    _open.update(database=sandboxed(connection, tuple(sorted(allowed))), folders=allowed)
    return _open["database"]


def close_database() -> None:
    """Close the process's database and its scratch cursor (the next use opens a new one)."""
    with DATABASE_LOCK, _SCRATCH_LOCK:
        opened = [_open.pop(key, None) for key in ("scratch", "database")]
        _open.clear()
        for connection in opened:
            if connection is not None:
                connection.close()


@contextlib.contextmanager
def scratch() -> Iterator[Any]:
    """A connection that parses, casts and checks (a cursor of the process's database, its
    tables and registrations its own), for this thread alone while the block runs."""
    while True:
        with _SCRATCH_LOCK:
            connection = _open.get("scratch")
            if connection is not None:
                yield connection
                return
        with DATABASE_LOCK:  # not under the scratch lock: a query holds this one as it runs
            if "scratch" not in _open:
                first = _first_folders[0]() if _first_folders else frozenset()
                _open["scratch"] = process_database(first).cursor()


def sandboxed(connection: Any, folders: tuple[str, ...] = ()) -> Any:
    """``connection`` closed to everything but ``folders`` (no other file, no network, no
    Python variables as tables), with times in UTC, its settings locked."""
    connection.execute("SET TimeZone = 'UTC'")  # before the lock; the ICU extension is built in
    connection.execute("SET python_enable_replacements = false")
    if folders:
        listed = ", ".join(_quoted(f) for f in folders)
        connection.execute(f"SET allowed_directories = [{listed}]")
    connection.execute("SET enable_external_access = false")
    connection.execute("SET lock_configuration = true")
    return connection


def duck_type(arrow: pa.DataType) -> str | None:
    """The DuckDB type holding the values of an Arrow type, spelt as DuckDB's DESCRIBE spells
    it, or None for one this does not name (nested types, among others)."""
    import pyarrow as pa
    import pyarrow.types as t

    simple = {
        pa.bool_(): "BOOLEAN",
        pa.int8(): "TINYINT",
        pa.int16(): "SMALLINT",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.uint8(): "UTINYINT",
        pa.uint16(): "USMALLINT",
        pa.uint32(): "UINTEGER",
        pa.uint64(): "UBIGINT",
        pa.float16(): "FLOAT",
        pa.float32(): "FLOAT",
        pa.float64(): "DOUBLE",
        pa.date32(): "DATE",
        pa.date64(): "DATE",
    }
    if arrow in simple:
        return simple[arrow]
    if t.is_string(arrow) or t.is_large_string(arrow) or t.is_string_view(arrow):
        return "VARCHAR"
    if t.is_binary(arrow) or t.is_large_binary(arrow) or t.is_binary_view(arrow):
        return "BLOB"
    if t.is_timestamp(arrow):
        if arrow.tz is not None:
            return "TIMESTAMP WITH TIME ZONE"
        return {"s": "TIMESTAMP_S", "ms": "TIMESTAMP_MS", "us": "TIMESTAMP", "ns": "TIMESTAMP_NS"}[
            arrow.unit
        ]
    if t.is_decimal(arrow) and arrow.precision <= 38:
        return f"DECIMAL({arrow.precision},{arrow.scale})"
    return None


def cast_value(value: Any, target: pa.DataType) -> Any:
    """``value`` cast to ``target`` as SQL casts a constant (text read as a time, a number, a
    decimal or a boolean), as a Python value; raises ``ValueError`` when SQL would refuse."""
    import duckdb
    import pyarrow as pa

    if value is None:
        return None
    name = duck_type(target)
    if name is None:
        raise ValueError(f"no SQL cast to {target}")
    try:
        return _cast_constant(_constant(value), name, target)
    except (duckdb.Error, pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ValueError(str(e).split("\n")[0]) from e


@functools.lru_cache(maxsize=4096)
def _cast_constant(constant: str, name: str, target: pa.DataType) -> Any:
    """The SQL constant text cast to DuckDB type ``name`` and Arrow ``target``, remembered:
    a notebook runs the same filters again and again (refusals are not remembered)."""
    with scratch() as con:
        got = con.execute(f"SELECT CAST({constant} AS {name}) AS v").to_arrow_table()
    return got.column(0).cast(target)[0].as_py()


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _constant(value: Any) -> str:
    """A Python constant as SQL text (inline: a Python parameter makes DuckDB import pandas)."""
    import datetime
    import decimal

    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value) if value == value and abs(value) != float("inf") else _quoted(str(value))
    if isinstance(value, decimal.Decimal):
        return _quoted(str(value))
    if isinstance(value, datetime.datetime):
        return _quoted(value.isoformat(sep=" "))
    if isinstance(value, datetime.date):
        return _quoted(value.isoformat())
    if isinstance(value, bytes):
        return f"from_hex('{value.hex()}')"
    return _quoted(str(value))


def duck_types(con: Any, schema: pa.Schema) -> dict[str, str]:
    """DuckDB's type of each column of an Arrow schema: spelt by ``duck_type`` where it can,
    else as ``con`` reads it from Arrow (registering Arrow data makes DuckDB import pandas, so
    only for nested types)."""
    import pyarrow as pa

    spelt = {f.name: duck_type(f.type) for f in schema}
    if all(spelt.values()):
        return spelt  # type: ignore[return-value]
    empty = pa.Table.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
    con.register("__wb_types", empty)
    try:
        return {row[0]: row[1] for row in con.execute("DESCRIBE __wb_types").fetchall()}
    finally:
        con.unregister("__wb_types")


def no_rows(con: Any, schema: pa.Schema) -> str:
    """A SELECT of no rows with ``schema``'s columns, as DuckDB types them."""
    from workbench.core.base.identifiers import quote_identifier

    typed = ", ".join(
        f"CAST(NULL AS {kind}) AS {quote_identifier(name, chr(34))}"
        for name, kind in duck_types(con, schema).items()
    )
    return f"SELECT {typed} LIMIT 0"


def check_predicate(text: str, schema: pa.Schema) -> None:
    """Bind ``SELECT * FROM <no rows of schema> WHERE <text>``: raises ``duckdb.Error`` with
    DuckDB's message when the text names a column the schema lacks, compares values of types
    that do not meet, or calls a function that does not exist."""
    with scratch() as con:
        empty = no_rows(con, schema)
        con.execute(f"SELECT * FROM ({empty}) AS __wb_filter WHERE (\n{text}\n)").fetchall()


def filter_rows(rows: pa.Table, row_filter: Any) -> pa.Table:
    """The rows of an Arrow table ``row_filter`` (a ``TableFilter``) holds for, in order, as
    SQL evaluates it: wrapped so DuckDB does not push it into the Arrow scan, where pyarrow
    would evaluate it with its own meaning (NaN above no number)."""
    with scratch() as con:
        con.register("__wb_rows", rows)
        try:
            kept = con.execute(
                f"SELECT * FROM __wb_rows WHERE coalesce((\n{row_filter.sql}\n), false)"
            )
            return kept.to_arrow_table().cast(rows.schema)
        finally:
            con.unregister("__wb_rows")
