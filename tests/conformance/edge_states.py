"""Lived-in tables at the edges of what users write: columns of many Arrow types under odd
names, a column widened by a merge, a DeltaCAT table version, string and two-column merge keys,
several engines writing one table, a table every row was deleted from, a branch published and
written on again, and versions that ``dc.vacuum`` removed (a read of those must raise
``TableVersionNotFoundError``, never return other rows)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

import workbench as dc
from tests.conformance.model import Row, TableModel
from tests.conformance.tables import (
    KEYED,
    NAMESPACE,
    TYPES,
    TableState,
    Writer,
    last_transaction,
    rows,
)

# Columns besides id, n and s: names SQL reserves or that need quoting, and types engines map
# differently (times with and without a zone, decimals, nested types, unsigned ints, NaN).
TYPED = {
    "order": pa.timestamp("us"),
    "at utc": pa.timestamp("us", tz="UTC"),
    "a.b": pa.date32(),
    "select": pa.decimal128(12, 3),
    "bytes": pa.binary(),
    "list": pa.list_(pa.int32()),
    "struct": pa.struct([("a", pa.int32()), ("b", pa.string())]),
    "flag": pa.bool_(),
    "u8": pa.uint8(),
    "f": pa.float64(),
    "Ünï": pa.string(),
}
FLOATS = (float("nan"), float("inf"), float("-inf"), -0.0, 2.5)
EPOCH = dt.datetime(2024, 2, 28, 23, 0)


def _typed_value(column: str, i: int, k: int) -> Any:
    """The value of ``column`` in row ``i`` of write ``k``."""
    at = EPOCH + dt.timedelta(minutes=97 * i + k)
    return {
        "order": at,
        "at utc": at.replace(tzinfo=dt.timezone.utc) + dt.timedelta(hours=k),
        "a.b": at.date() - dt.timedelta(days=400 * k),
        "select": decimal.Decimal(i * 1000 + k) / 1000,
        "bytes": bytes([i % 256, 0, k % 256]),
        "list": [] if i % 5 == 0 else [i, None, k],
        "struct": {"a": i, "b": "é" * (i % 3) or None},
        "flag": (i + k) % 2 == 0,
        "u8": (i * 7 + k) % 256,
        "f": FLOATS[(i + k) % len(FLOATS)],
        "Ünï": "" if i % 4 == 0 else f"ü{i}😀{k}",
    }[column]


def typed_rows(rng: np.random.Generator, ids: Any, k: int, columns: list[str]) -> list[Row]:
    """Rows of id, n, s and ``columns`` of ``TYPED``, about one value in seven null."""
    out = rows(rng, ids)
    for row in out:
        for c in columns:
            row[c] = None if rng.random() < 0.15 else _typed_value(c, row["id"], k)
    return out


def _many_types(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Every ``TYPED`` column through a full merge, a partial one and deletes (vectors)."""
    columns = ["id", "n", "s", *TYPED]
    types = {**TYPES, **TYPED}
    schema = dc.Schema.of(
        [dc.Field.of(pa.field(c, types[c]), is_merge_key=c == "id") for c in columns]
    )
    w = Writer(catalog, "typed", TableModel(columns, key="id"), TYPED)
    w.create(typed_rows(rng, range(300), 0, list(TYPED)), schema)
    w.merge(typed_rows(rng, range(250, 350), 1, list(TYPED)))
    partial = typed_rows(rng, rng.choice(350, 40, replace=False), 2, ["order", "f", "list"])
    w.merge([{c: r[c] for c in ("id", "order", "f", "list")} for r in partial])
    w.delete(rng.choice(350, 60, replace=False))
    return {"many_types": w.state("many_types")}


def _long_text(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Text longer than writers keep in statistics (a long shared prefix), written in ranges
    over several commits (files with narrow ranges to skip), merged into and deleted from."""
    from tests.conformance.filters import LONG

    types = {"words": pa.string()}
    schema = dc.Schema.of([*KEYED, dc.Field.of(pa.field("words", pa.string()))])

    def texts(ids: Any) -> list[Row]:
        out = rows(rng, ids)
        for r in out:
            r["words"] = None if r["id"] % 13 == 0 else f"{LONG}{r['id']:04d}"
        return out

    w = Writer(catalog, "long_text", TableModel(["id", "n", "s", "words"], key="id"), types)
    w.create(texts(range(0, 40)), schema)
    for start in range(40, 160, 40):
        w.merge(texts(range(start, start + 40)))
    w.merge(texts(range(30, 50)))
    w.delete(range(0, 160, 9))
    return {"long_text": w.state("long_text")}


def _widened(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """``n`` created as int32 and widened to int64 by a merge of values past 2**31, with
    vectors; the version before the widening is read too."""
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("n", pa.int32())),
            dc.Field.of(pa.field("s", pa.string())),
        ]
    )
    w = Writer(catalog, "widened", TableModel(["id", "n", "s"], key="id"), {"n": pa.int32()})
    w.create(rows(rng, range(300)), schema)
    w.delete(range(0, 300, 7))
    narrow = w.state("widened_before", version=w.version())
    w.types["n"] = pa.int64()
    big = rows(rng, range(250, 330))
    for r in big[::3]:
        r["n"] += 2**40
    w.merge(big)
    w.delete(range(1, 300, 11))
    return {"widened_before": narrow, "widened": w.state("widened")}


def _table_version(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """A DeltaCAT table version ``2`` beside a version ``1`` of other rows: reads that name no
    version read ``2``, merged into and deleted from."""
    old = Writer(catalog, "versioned", TableModel(["id", "n", "s"], key="id"))
    old.create(rows(rng, range(200)), KEYED)
    old.delete(range(0, 200, 2))
    w = Writer(catalog, "versioned", TableModel(["id", "n", "s"], key="id"), table_version="2")
    w.create(rows(rng, range(100, 400)), KEYED)
    w.merge(rows(rng, range(350, 420)))
    w.delete(range(100, 400, 6))
    return {"table_version_2": w.state("table_version_2")}


def _keys(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """A string merge key (empty, unicode, look-alike strings) and a two-column key."""
    names = ["", " ", "é", "e\u0301", "null", "NULL", "😀", "a b", "a,b", "'q'"]
    keys = names + [f"k{i}" for i in range(250)]
    by_s = dc.Schema.of(
        [
            dc.Field.of(pa.field("s", pa.string()), is_merge_key=True),
            dc.Field.of(pa.field("id", pa.int64())),
            dc.Field.of(pa.field("n", pa.int64())),
        ]
    )
    w = Writer(catalog, "string_key", TableModel(["s", "id", "n"], key="s"))
    w.create([{"s": k, "id": i, "n": int(rng.integers(0, 1000))} for i, k in enumerate(keys)], by_s)
    w.merge([{"s": k, "id": i, "n": -i} for i, k in enumerate(keys) if i % 3 == 0])
    w.delete([k for i, k in enumerate(keys) if i % 4 == 1])
    states = {"string_key": w.state("string_key")}
    two = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("s", pa.string()), is_merge_key=True),
            dc.Field.of(pa.field("n", pa.int64())),
        ]
    )
    pairs = [(i % 60, f"s{i // 60}") for i in range(300)]
    t = Writer(catalog, "two_keys", TableModel(["id", "s", "n"], key=("id", "s")))
    t.create([{"id": i, "s": s, "n": int(rng.integers(0, 1000))} for i, s in pairs], two)
    t.merge([{"id": i, "s": s, "n": 5000 + i} for i, s in pairs[::4]])
    t.merge([{"id": i % 60, "s": "s9", "n": i} for i in range(0, 120, 7)])
    t.delete(pairs[1::5])
    states["two_keys"] = t.state("two_keys")
    return states


def _engines(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Writes through pandas, polars, Daft and Arrow into one table (the local and Daft
    engines' files, vectors and partial merges side by side)."""
    import daft
    import polars as pl

    w = Writer(catalog, "engines", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(300)), KEYED)
    converts: list[Callable[[pa.Table], Any]] = [
        lambda t: t.to_pandas(),
        pl.from_arrow,
        daft.from_arrow,
        lambda t: t,
    ]
    for step, convert in enumerate(converts * 2):
        w.convert = convert
        w.merge(rows(rng, rng.choice(360, 25, replace=False), "n" if step % 2 else "ns"))
        w.delete(rng.choice([r["id"] for r in w.model.rows()], 12, replace=False))
    return {"engines": w.state("engines")}


def _emptied(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Every row deleted (a vector first, then the files go): an empty table that has lived;
    and a table created with a schema and never written."""
    w = Writer(catalog, "emptied", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(200)), KEYED)
    w.merge(rows(rng, range(150, 250)))
    w.delete(range(0, 250, 4))
    w.delete(range(250))
    dc.create_table("never_written", NAMESPACE, catalog, schema=KEYED)
    empty = Writer(catalog, "never_written", TableModel(["id", "n", "s"], key="id"))
    empty.first = (empty.model.snapshot(), empty.version())
    return {"emptied": w.state("emptied"), "never_written": empty.state("never_written")}


def _published(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """A branch published onto main, then both written on again."""
    w = Writer(catalog, "published", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(300)), KEYED)
    w.delete(range(0, 300, 5))
    dc.create_branch("pub", catalog=catalog)
    w.branch = "pub"
    w.merge(rows(rng, range(250, 330)))
    w.delete(range(1, 300, 9))
    dc.merge_branch("pub", catalog=catalog)
    main = Writer(catalog, "published", w.model.snapshot())
    main.first = (w.model.snapshot(), main.version())
    main.merge(rows(rng, range(400, 420)))
    w.merge(rows(rng, range(330, 360)))
    w.delete(range(2, 300, 13))
    w.first = (main.model.snapshot(), "main")
    return {
        "published_branch": w.state("published_branch"),
        "published_main": main.state("published_main"),
    }


def _vacuumed(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Two tables' early versions removed by ``dc.vacuum``: one whose first file survives
    (the others and the vectors of that version are gone), one optimized away whole. Built
    first, so the vacuum removes no file another state reads."""
    kept = Writer(catalog, "vacuumed", TableModel(["id", "n", "s"], key="id"))
    kept.create(rows(rng, range(600)), KEYED)
    kept.merge(rows(rng, range(600, 700)))
    kept.delete(range(0, 700, 3))  # a third of each file: vectors, no purge
    partly = kept.state("vacuumed_partly", as_of=last_transaction(catalog))
    kept.delete(range(600, 700))  # the second file goes whole
    whole = Writer(catalog, "optimized_away", TableModel(["id", "n", "s"], key="id"))
    whole.create(rows(rng, range(300)), KEYED)
    whole.delete(range(0, 300, 3))
    gone = whole.state("vacuumed_whole", version=whole.version())
    dc.optimize("optimized_away", NAMESPACE, catalog)
    dc.vacuum(catalog, retain=0)
    return {
        "vacuumed_partly": partly,
        "vacuumed_whole": gone,
        "vacuumed": kept.state("vacuumed"),
    }


FIRST_BUILDERS = (_vacuumed,)  # before any other table: vacuum removes only their files
EDGE_BUILDERS = (
    _many_types,
    _long_text,
    _widened,
    _table_version,
    _keys,
    _engines,
    _emptied,
    _published,
)
