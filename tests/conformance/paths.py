"""Every way to read a table, each able to answer the query shapes it has a native form for.

A path runs a shape over a state and returns plain rows (or the aggregate's numbers); the test
compares them with the model. Paths whose engine needs Spark or Ray carry that tier's mark."""

from __future__ import annotations

import contextlib
import functools
import glob
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

import workbench as dc
from tests.conformance.filters import FILTERS, Case, cases_for
from tests.conformance.shapes import (
    AGGREGATE,
    ALL,
    DIFF,
    FILTER,
    FILTERED,
    FORMS,
    JOIN,
    JOINED,
    LIMIT,
    LIMIT_ROWS,
    PROJECT,
    PROJECTED,
    REPEATED,
    REPEATS,
    aggregate,
    filter_bound,
)
from tests.conformance.states import Traits
from tests.conformance.tables import (
    AS_OF,
    LATEST,
    NAMESPACE,
    ON_BRANCH,
    PARTNER,
    VERSION,
    TableState,
)
from workbench.core.base.identifiers import quote_identifier

EAGER = {
    "pandas": dc.DatasetType.PANDAS,
    "pyarrow": dc.DatasetType.PYARROW,
    "polars": dc.DatasetType.POLARS,
    "numpy": dc.DatasetType.NUMPY,
}


@dataclass
class Where:
    """Where the lived-in tables are: the catalog's name, and for readers of the folders, its
    storage options."""

    catalog: str
    storage_options: dict[str, str] | None = None

    def read(self, state: TableState, table: str | None = None, **options: Any) -> Any:
        """The state's table (or ``table``, such as the join partner, at the same catalog
        point: a Delta version names one table's version only)."""
        return dc.read(
            table or state.table, NAMESPACE, self.catalog, **address(state, table), **options
        )

    @contextlib.contextmanager
    def on(self, state: TableState) -> Iterator[None]:
        """The block a call that takes no ``branch=`` runs in, for a branch state."""
        branch = state.read.get("branch")
        if branch is None:
            yield
        else:
            with dc.branch(branch, catalog=self.catalog):
                yield


def address(state: TableState, table: str | None = None) -> dict[str, Any]:
    """How a read names the state: for another table, the same point without the version."""
    return {k: v for k, v in state.read.items() if table is None or k != VERSION}


def rows_of(table: pa.Table, columns: list[str]) -> list[tuple]:
    assert table.column_names == columns, f"columns {table.column_names}, asked for {columns}"
    return list(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def _pandas_rows(frame: Any, columns: list[str]) -> list[tuple]:
    assert list(frame.columns) == columns, f"columns {list(frame.columns)}, asked for {columns}"
    return [
        tuple(None if _missing(v) else v for v in row)
        for row in frame.itertuples(index=False, name=None)
    ]


def _missing(v: Any) -> bool:
    import pandas as pd

    return v is None or (pd.api.types.is_scalar(v) and bool(pd.isna(v)))


class Path:
    """A way to read a table. ``shapes`` are those it has a native form for."""

    name = ""
    marks: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    keeps_write_order = False  # rows of a table without keys come back in write order
    telling_states_only = False  # runs only on test_conformance.TELLING_STATES
    addresses: tuple[str, ...] = (LATEST, VERSION, AS_OF, ON_BRANCH)

    def applies(self, traits: Traits, shape: str) -> bool:
        return shape in self.shapes and traits.address in self.addresses

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        raise NotImplementedError

    def filter_cases(self, state: TableState) -> list[Case]:
        """The filter cases this path must answer for ``state``."""
        return cases_for(state)

    def __str__(self) -> str:
        return self.name


class EagerRead(Path):
    """``dc.read`` into memory (pandas, pyarrow, polars, numpy); ``columns=`` and ``limit=``
    are its projections and limits."""

    shapes = (ALL, PROJECT, LIMIT, REPEATED, FILTERS)
    keeps_write_order = True

    def __init__(self, kind: str):
        self.kind, self.name = kind, f"read:{kind}"

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        if shape == FILTERS:
            out = {}
            for case in cases_for(state):
                data = where.read(state, read_as=EAGER[self.kind], filter=case.sql)
                out[case.name] = self._rows(data, state.columns)
                if self.kind == "pyarrow" and case.arrow is not None:
                    data = where.read(state, read_as=EAGER[self.kind], filter=case.arrow())
                    out[f"{case.name}:pyarrow"] = self._rows(data, state.columns)
            return out
        columns = PROJECTED if shape == PROJECT else None
        limit = LIMIT_ROWS if shape == LIMIT else None
        if shape == REPEATED:
            reads = [self._read(where, state, None, None, state.columns) for _ in range(REPEATS)]
            return [
                aggregate([dict(zip(state.columns, r, strict=True)) for r in rows])
                for rows in reads
            ]
        return self._read(where, state, columns, limit, columns or state.columns)

    def _read(
        self, where: Where, state: TableState, columns: Any, limit: Any, names: list[str]
    ) -> list[tuple]:
        data = where.read(state, read_as=EAGER[self.kind], columns=columns, limit=limit)
        return self._rows(data, names)

    def _rows(self, data: Any, names: list[str]) -> list[tuple]:
        if self.kind == "pyarrow":
            return rows_of(data, names)
        if self.kind == "pandas":
            return _pandas_rows(data, names)
        if self.kind == "polars":
            assert data.columns == names, f"columns {data.columns}, asked for {names}"
            return data.rows()
        assert data.shape[1] == len(names)
        return [tuple(None if _missing(v) else v for v in row) for row in data]


class ParquetFilesRead(Path):
    """``read_as=PYARROW_PARQUET``: the files as they are, refused when a vector deletes rows."""

    name = "read:pyarrow_parquet"
    shapes = (ALL,)

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        if state.vectors:
            try:
                where.read(state, read_as=dc.DatasetType.PYARROW_PARQUET)
            except dc.UnsupportedFeatureError:
                return [tuple(r[c] for c in state.columns) for r in state.rows]
            raise AssertionError("PYARROW_PARQUET gave files whose vectors delete rows")
        files = where.read(state, read_as=dc.DatasetType.PYARROW_PARQUET)
        files = files if isinstance(files, list) else [files]
        tables = [f.read() for f in files]
        out = []
        for t in tables:
            out += [tuple(r.get(c) for c in state.columns) for r in t.to_pylist()]
        return out


class DaftRead(Path):
    """``dc.read`` as a lazy Daft DataFrame, the shapes as Daft expressions."""

    name = "read:daft"
    shapes = (ALL, PROJECT, FILTER, AGGREGATE, LIMIT, JOIN, REPEATED, FILTERS)

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        from daft import col

        frame = where.read(state)
        if shape == FILTERS:
            out = {}
            for case in cases_for(state):
                given = where.read(state, filter=case.sql)
                out[case.name] = rows_of(given.to_arrow(), state.columns)
                if case.daft is not None:  # Daft's own filter, pushed into the scan
                    kept = frame.where(case.daft()).to_arrow()
                    out[f"{case.name}:daft"] = rows_of(kept, state.columns)
            return out
        if shape == ALL:
            return rows_of(frame.to_arrow(), state.columns)
        if shape == PROJECT:
            return rows_of(frame.select(*PROJECTED).to_arrow(), PROJECTED)
        if shape == FILTER:
            kept = frame.where(col("id") < filter_bound(state)).select(*FILTERED)
            return rows_of(kept.to_arrow(), FILTERED)
        if shape == LIMIT:
            first = rows_of(where.read(state, limit=LIMIT_ROWS).to_arrow(), state.columns)
            second = rows_of(frame.limit(LIMIT_ROWS).to_arrow(), state.columns)
            assert len(first) == len(second)
            return first
        if shape == JOIN:
            other = where.read(state, PARTNER).select("id", "m")
            joined = frame.join(other, on="id").select(*JOINED)
            return rows_of(joined.to_arrow(), JOINED)
        answers = []
        for _ in range(REPEATS if shape == REPEATED else 1):
            got = frame.agg(
                col("id").count().alias("c"),
                col("n").sum().alias("sum_n"),
                col("s").count().alias("c_s"),
            ).to_pydict()
            every = frame.count_rows()  # a count of every row: from the log, no file opened
            assert every == got["c"][0], f"count_rows {every} != count(id) {got['c'][0]}"
            answers.append((every, got["sum_n"][0] or 0, got["c_s"][0]))
        return answers if shape == REPEATED else answers[0]


class RayRead(Path):
    """``dc.read`` as a lazy Ray Dataset, the shapes as Dataset operations."""

    name = "read:ray"
    marks = ("ray",)
    shapes = (ALL, PROJECT, FILTER, AGGREGATE, LIMIT, REPEATED, FILTERS)

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        ds = where.read(state, read_as=dc.DatasetType.RAY_DATASET)
        if shape == FILTERS:
            out = {}
            for case in cases_for(state):
                given = where.read(state, read_as=dc.DatasetType.RAY_DATASET, filter=case.sql)
                out[case.name] = _ray_rows(given, state.columns)
                if case.ray is not None:  # Ray's own filter, pushed into the datasource
                    out[f"{case.name}:ray"] = _ray_rows(ds.filter(expr=case.ray()), state.columns)
            return out
        if shape == ALL:
            return _ray_rows(ds, state.columns)
        if shape == PROJECT:
            return _ray_rows(ds.select_columns(PROJECTED), PROJECTED)
        if shape == FILTER:
            kept = ds.filter(expr=f"id < {filter_bound(state)}").select_columns(FILTERED)
            return _ray_rows(kept, FILTERED)
        if shape == LIMIT:
            return _ray_rows(ds.limit(LIMIT_ROWS), state.columns)
        answers = []
        for _ in range(REPEATS if shape == REPEATED else 1):
            # Ray's count (from the blocks' metadata, where vectors must count too); the sums
            # over the rows it gives (its hash aggregates cost seconds a call here)
            rows = [dict(zip(state.columns, r, strict=True)) for r in _ray_rows(ds, state.columns)]
            counted, (given, sum_n, with_s) = ds.count(), aggregate(rows)
            assert counted == given, f"Ray counts {counted} rows, gives {given}"
            answers.append((counted, sum_n, with_s))
        return answers if shape == REPEATED else answers[0]


def _ray_rows(ds: Any, columns: list[str]) -> list[tuple]:
    tables = list(ds.iter_batches(batch_format="pyarrow"))
    if not tables:
        return []
    return rows_of(pa.concat_tables(tables).select(columns), columns)


class SparkFrame(Path):
    """A Spark DataFrame of the table, the shapes as DataFrame operations: ``dc.read`` as
    SPARK, or Spark's own ``format("workbench")``."""

    marks = ("spark",)
    shapes = (ALL, PROJECT, FILTER, AGGREGATE, LIMIT, JOIN, REPEATED, FILTERS)

    def __init__(self, through_format: bool):
        self.through_format = through_format
        self.name = "spark:format" if through_format else "read:spark"

    def frame(self, where: Where, state: TableState, table: str | None = None) -> Any:
        if not self.through_format:
            return where.read(state, table, read_as=dc.DatasetType.SPARK)
        from workbench.engines.spark.session import spark_session

        reader = spark_session().read.format("workbench").option("catalog", where.catalog)
        names = {"version": "version", "as_of": "asOf", "branch": "branch"}
        for key, value in address(state, table).items():
            reader = reader.option(names[key], str(value))
        return reader.load(f"{NAMESPACE}.{table or state.table}")

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        from pyspark.sql import functions as F

        frame = self.frame(where, state)
        if shape == FILTERS:
            return self._filtered(where, state, frame)
        if shape == ALL:
            return _spark_rows(frame, state.columns)
        if shape == PROJECT:
            return _spark_rows(frame.select(*PROJECTED), PROJECTED)
        if shape == FILTER:
            return _spark_rows(
                frame.where(F.col("id") < filter_bound(state)).select(*FILTERED), FILTERED
            )
        if shape == LIMIT:
            return _spark_rows(frame.limit(LIMIT_ROWS), state.columns)
        if shape == JOIN:
            other = self.frame(where, state, PARTNER).select("id", "m")
            return _spark_rows(frame.join(other, on="id").select(*JOINED), JOINED)
        answers = []
        for _ in range(REPEATS if shape == REPEATED else 1):
            row = frame.agg(F.count(F.lit(1)), F.sum("n"), F.count("s")).collect()[0]
            answers.append((row[0], row[1] or 0, row[2]))
        return answers if shape == REPEATED else answers[0]

    def _filtered(self, where: Where, state: TableState, frame: Any) -> dict[str, list[tuple]]:
        """Every case's rows from one Spark job: a union of the filtered scans, each tagged (a
        loaded frame's scans read the files any of them admitted: see ``scan_files``)."""
        from pyspark.sql import functions as F

        scans: dict[str, Any] = {}
        for case in cases_for(state):
            if self.through_format:
                scans[case.name] = frame.where(F.expr(case.text("spark")))
            else:
                read = where.read(state, read_as=dc.DatasetType.SPARK, filter=case.sql)
                scans[case.name] = read
            if case.spark is not None:  # Spark's own filter: pushed into the workbench source
                scans[f"{case.name}:spark"] = frame.where(case.spark())
        return _tagged_union(scans, state.columns)


class SparkStream(Path):
    """``spark.readStream.format("workbench")`` run to the table's newest version
    (``availableNow``) into a memory sink: its first batch is the table as it is."""

    name = "stream:spark"
    marks = ("spark",)
    shapes = (ALL,)
    addresses = (LATEST, ON_BRANCH)  # a stream starts at the newest version of its line
    telling_states_only = True  # a stream costs a few batch reads

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        import uuid

        from workbench.engines.spark.session import spark_session

        spark = spark_session()
        reader = spark.readStream.format("workbench").option("catalog", where.catalog)
        for value in address(state).values():  # the branch, for ON_BRANCH
            reader = reader.option("branch", str(value))
        sink = f"conformance_{uuid.uuid4().hex}"
        query = reader.load(f"{NAMESPACE}.{state.table}").writeStream.format("memory")
        query = query.queryName(sink).trigger(availableNow=True).start()
        try:
            query.awaitTermination()
            return _spark_rows(spark.table(sink), state.columns)
        finally:
            query.stop()
            spark.catalog.dropTempView(sink)


def _tagged_union(scans: dict[str, Any], columns: list[str]) -> dict[str, list[tuple]]:
    from functools import reduce

    from pyspark.sql import functions as F

    if not scans:
        return {}
    quoted = [F.col(quote_identifier(c, "`")) for c in columns]
    tagged = [f.select(F.lit(name).alias("__case"), *quoted) for name, f in scans.items()]
    out: dict[str, list[tuple]] = {name: [] for name in scans}
    for row in reduce(lambda a, b: a.unionByName(b), tagged).collect():
        out[row[0]].append(tuple(row[1:]))
    return out


def _spark_rows(frame: Any, columns: list[str]) -> list[tuple]:
    assert frame.columns == columns, f"columns {frame.columns}, asked for {columns}"
    return [tuple(r) for r in frame.collect()]


def sql_for(
    state: TableState, shape: str, table: str, partner: str, mark: str = '"'
) -> tuple[str, list[str]]:
    """The query of a shape over ``table`` (joined with ``partner``: names the engine knows)
    and its result columns; column names quoted with ``mark`` (the engine's quote)."""

    def q(*names: str) -> str:
        return ", ".join(quote_identifier(c, mark) for c in names)

    if shape == ALL:
        return f"SELECT {q(*state.columns)} FROM {table}", state.columns
    if shape == PROJECT:
        return f"SELECT {q(*PROJECTED)} FROM {table}", PROJECTED
    if shape == FILTER:
        bound = filter_bound(state)
        return f"SELECT {q(*FILTERED)} FROM {table} WHERE id < {bound}", FILTERED
    if shape == LIMIT:
        return f"SELECT {q(*state.columns)} FROM {table} LIMIT {LIMIT_ROWS}", state.columns
    if shape == JOIN:
        return (
            f"SELECT t.id AS id, t.n AS n, p.m AS m FROM {table} t JOIN {partner} p ON t.id = p.id",
            JOINED,
        )
    return f"SELECT count(*) AS c, sum(n) AS sum_n, count(s) AS c_s FROM {table}", [
        "c",
        "sum_n",
        "c_s",
    ]


def query_forms(state: TableState, table: str) -> dict[str, str]:
    """The filter shape's query in each form DuckDB's SQL has that a scan is put in front of
    (see ``engines/local/sql.py``): its own WITH, a CTE named like the table, FROM first,
    set operations and parentheses, subqueries, a leading comment and a closing semicolon."""
    cols = ", ".join(quote_identifier(c, '"') for c in FILTERED)
    kept = f"id < {filter_bound(state)}"
    bare = quote_identifier(state.table, '"')
    return {
        "own_with": f"WITH k AS (SELECT {cols}, id FROM {table}) SELECT {cols} FROM k WHERE {kept}",
        "with_recursive": f"WITH RECURSIVE k AS (SELECT {cols} FROM {table} WHERE {kept}) "
        "SELECT * FROM k",
        "cte_named_like_the_table": f"WITH {bare} AS (SELECT {cols}, id FROM {table}) "
        f"SELECT {cols} FROM {bare} WHERE {kept}",
        "from_first": f"-- the filter, FROM first\nFROM {table} SELECT {cols} WHERE {kept};",
        "set_operation": f"(SELECT {cols} FROM {table} WHERE {kept}) UNION ALL "
        f"(SELECT {cols} FROM {table} WHERE false)",
        "parenthesized_with": f"(WITH k AS (SELECT {cols}, id FROM {table}) "
        f"SELECT {cols} FROM k WHERE {kept})",
        "subquery": f"\n  select {cols} from (select * from {table}) where {kept}",
        "in_subquery": f"SELECT {cols} FROM {table} WHERE id IN "
        f"(SELECT id FROM {table} WHERE {kept})",
    }


class Sql(Path):
    """``dc.sql`` on one engine (DuckDB, Daft or Spark); on DuckDB, each form of a query too."""

    shapes = (ALL, PROJECT, FILTER, AGGREGATE, LIMIT, JOIN, REPEATED, FILTERS)
    addresses = (LATEST, AS_OF, ON_BRANCH)  # SQL names no Delta version

    def __init__(self, engine: str):
        self.engine, self.name = engine, f"sql:{engine}"
        self.marks = ("spark",) if engine == "spark" else ()
        if engine == "local":  # the forms DuckDB's SQL has
            self.shapes = (*Sql.shapes, FORMS)

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        if shape == FILTERS:
            return self._filtered(where, state)
        if shape == FORMS:
            forms = query_forms(state, f"{NAMESPACE}.{state.table}")
            return {f: rows_of(self._sql(where, state, q), FILTERED) for f, q in forms.items()}
        query, columns = sql_for(
            state,
            shape,
            f"{NAMESPACE}.{state.table}",
            f"{NAMESPACE}.{PARTNER}",
            "`" if self.engine == "spark" else '"',
        )
        answers = [
            rows_of(self._sql(where, state, query), columns)
            for _ in range(REPEATS if shape == REPEATED else 1)
        ]
        if shape in (AGGREGATE, REPEATED):
            answers = [(c, s or 0, cs) for ((c, s, cs),) in answers]
        return answers if shape == REPEATED else answers[0]

    @property
    def _dialect(self) -> str:
        return {"local": "duckdb"}.get(self.engine, self.engine)

    def filter_cases(self, state: TableState) -> list[Case]:
        return [c for c in cases_for(state) if c.text(self._dialect) is not None]

    def _filtered(self, where: Where, state: TableState) -> dict[str, list[tuple]]:
        """Each case as its own SELECT of one UNION ALL query (each a place of the table of
        its own, skipped by its own condition); Daft's SQL, a query per case."""
        dialect = self._dialect
        mark = "`" if self.engine == "spark" else '"'
        table = f"{NAMESPACE}.{state.table}"
        listed = ", ".join(quote_identifier(c, mark) for c in state.columns)
        cases = self.filter_cases(state)
        selects = {
            c.name: f"SELECT '{c.name}' AS __case, {listed} FROM {table} WHERE {c.text(dialect)}"
            for c in cases
        }
        one = [" UNION ALL ".join(selects.values())]
        queries = list(selects.values()) if self.engine == "daft" else one  # Daft: no UNION
        out: dict[str, list[tuple]] = {c.name: [] for c in cases}
        for query in queries:
            for row in rows_of(self._sql(where, state, query), ["__case", *state.columns]):
                out[row[0]].append(row[1:])
        return out

    def _sql(self, where: Where, state: TableState, query: str) -> pa.Table:
        """``dc.sql`` of ``query`` on this path's engine, at the state's point."""
        with where.on(state):
            return dc.sql(
                query,
                engine=self.engine,
                as_of=state.read.get("as_of"),
                read_as=dc.DatasetType.PYARROW,
                catalog=where.catalog,
            )


class FolderReader(Path):
    """A reader of the table folder that applies deletion vectors (polars, deltalake's
    ``QueryBuilder``, DuckDB's ``delta_scan``): main's states only, at their Delta version,
    while their files are there (other tools' errors for vacuumed files are their own)."""

    shapes = (ALL, PROJECT, FILTER, AGGREGATE, LIMIT, JOIN, REPEATED, FILTERS)
    addresses = (LATEST, VERSION, AS_OF)

    def applies(self, traits: Traits, shape: str) -> bool:
        if shape == FILTERS and self.reader == "deltalake":
            return False  # DataFusion's SQL differs from DuckDB's in the cases' literals
        return super().applies(traits, shape) and not traits.gone

    def __init__(self, reader: str):
        self.reader, self.name = reader, f"folder:{reader}"
        if reader == "duckdb":
            self.addresses = (LATEST,)  # delta_scan reads the newest version

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        uri = dc.get_table(state.table, NAMESPACE, where.catalog).uri
        partner_uri = dc.get_table(PARTNER, NAMESPACE, where.catalog).uri
        if shape == FILTERS:  # other readers' skipping by the statistics workbench wrote
            return self._filtered(where, state, uri, partner_uri)
        if self.reader == "polars":
            return self._polars(where, state, shape, uri, partner_uri)
        query, columns = sql_for(state, shape, "t", "partner")
        answers = []
        for _ in range(REPEATS if shape == REPEATED else 1):
            answers.append(rows_of(self._sql(where, state, query, uri, partner_uri), columns))
        if shape in (AGGREGATE, REPEATED):
            answers = [(c, s or 0, cs) for ((c, s, cs),) in answers]
        return answers if shape == REPEATED else answers[0]

    def filter_cases(self, state: TableState) -> list[Case]:
        if self.reader == "duckdb":
            return [c for c in cases_for(state) if c.text("delta_scan") is not None]
        return [c for c in cases_for(state) if c.polars is not None]

    def _filtered(
        self, where: Where, state: TableState, uri: str, partner_uri: str
    ) -> dict[str, list[tuple]]:
        import polars as pl

        out: dict[str, list[tuple]] = {}
        listed = ", ".join(quote_identifier(c, '"') for c in state.columns)
        for case in self.filter_cases(state):
            if self.reader == "duckdb":
                query = f"SELECT {listed} FROM t WHERE {case.text('delta_scan')}"
                got = self._sql(where, state, query, uri, partner_uri)
                out[case.name] = rows_of(got, state.columns)
            else:
                frame = pl.scan_delta(
                    uri, version=state.folder_version, storage_options=where.storage_options
                )
                out[case.name] = _polars_rows(frame.filter(case.polars()), state.columns)
        return out

    def _sql(
        self, where: Where, state: TableState, query: str, uri: str, partner_uri: str
    ) -> pa.Table:
        if self.reader == "duckdb":
            con = _duckdb_with_delta()
            con.execute(f"CREATE OR REPLACE VIEW t AS SELECT * FROM delta_scan('{uri}')")
            con.execute(
                f"CREATE OR REPLACE VIEW partner AS SELECT * FROM delta_scan('{partner_uri}')"
            )
            return con.execute(query).fetch_arrow_table()
        from deltalake import DeltaTable, QueryBuilder

        options = where.storage_options
        table = DeltaTable(uri, version=state.folder_version, storage_options=options)
        partner = DeltaTable(partner_uri, storage_options=options)
        builder = QueryBuilder().register("t", table).register("partner", partner)
        result = pa.table(builder.execute(query).read_all())
        plain = [
            pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
            for f in result.schema
        ]
        return result.cast(pa.schema(plain))

    def _polars(
        self, where: Where, state: TableState, shape: str, uri: str, partner_uri: str
    ) -> Any:
        import polars as pl

        options = where.storage_options
        frame = pl.scan_delta(uri, version=state.folder_version, storage_options=options)
        if shape == ALL:
            return _polars_rows(frame, state.columns)
        if shape == PROJECT:
            return _polars_rows(frame.select(PROJECTED), PROJECTED)
        if shape == FILTER:
            kept = frame.filter(pl.col("id") < filter_bound(state)).select(FILTERED)
            return _polars_rows(kept, FILTERED)
        if shape == LIMIT:
            return _polars_rows(frame.limit(LIMIT_ROWS), state.columns)
        if shape == JOIN:
            other = pl.scan_delta(partner_uri, storage_options=options).select("id", "m")
            return _polars_rows(frame.join(other, on="id").select(JOINED), JOINED)
        answers = []
        for _ in range(REPEATS if shape == REPEATED else 1):
            got = frame.select(pl.len(), pl.col("n").sum(), pl.col("s").count()).collect()
            answers.append(tuple(got.row(0)))
        return answers if shape == REPEATED else answers[0]


def _polars_rows(frame: Any, columns: list[str]) -> list[tuple]:
    data = frame.collect()
    assert data.columns == columns, f"columns {data.columns}, asked for {columns}"
    return data.rows()


@functools.cache
def _duckdb_with_delta() -> Any:
    """A DuckDB connection with the ``delta`` extension from its PyPI wheel (one per process:
    loading the extension costs a quarter of a second)."""
    import duckdb
    import duckdb_extension_delta

    package = os.path.dirname(duckdb_extension_delta.__file__)
    (extension,) = glob.glob(os.path.join(package, "extensions", "*", "delta.duckdb_extension"))
    con = duckdb.connect()
    con.execute(f"LOAD '{extension}'")
    return con


class RefusingFolderReader(Path):
    """A reader of the folder that cannot apply deletion vectors (``daft.read_deltalake``,
    deltalake's ``to_pyarrow_table``): it must refuse a state whose files carry vectors (it may
    refuse any table whose protocol names them), and read what it does not refuse exactly."""

    shapes = (ALL,)
    addresses = (LATEST, VERSION, AS_OF)

    def __init__(self, reader: str):
        self.reader, self.name = reader, f"folder:{reader}"

    def applies(self, traits: Traits, shape: str) -> bool:
        return super().applies(traits, shape) and not traits.gone

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        uri = dc.get_table(state.table, NAMESPACE, where.catalog).uri
        try:
            rows = self._read(where, state, uri)
        except Exception as e:
            assert "deletion" in str(e).lower(), e
            return [tuple(r[c] for c in state.columns) for r in state.rows]
        assert not state.vectors, f"{self.name} read a table whose vectors it cannot apply"
        return rows_of(rows.select(state.columns), state.columns)

    def _read(self, where: Where, state: TableState, uri: str) -> pa.Table:
        if self.reader == "daft":
            import daft

            from workbench.engines.daft.write import io_config

            config = io_config(dc.get_catalog(where.catalog).storage)
            return daft.read_deltalake(
                uri, version=state.folder_version, io_config=config
            ).to_arrow()
        from deltalake import DeltaTable

        table = DeltaTable(uri, version=state.folder_version, storage_options=where.storage_options)
        return table.to_pyarrow_table()


class Show(Path):
    """``dc.show``: the first rows and the table's row count."""

    name = "show"
    shapes = (LIMIT,)
    addresses = (LATEST, AS_OF, ON_BRANCH)

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        with where.on(state):
            preview = dc.show(
                state.table,
                NAMESPACE,
                limit=LIMIT_ROWS,
                catalog=where.catalog,
                as_of=state.read.get("as_of"),
            )
        assert preview.total == len(state.rows), f"shows {preview.total} rows in all"
        return [tuple(r[c] for c in state.columns) for r in preview.rows]


class Diff(Path):
    """``dc.diff`` from the table's first version (a branch: from main) to the state."""

    name = "diff"
    shapes = (DIFF,)

    def applies(self, traits: Traits, shape: str) -> bool:
        return shape == DIFF and traits.diffable

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        after = state.read.get("version", state.read.get("as_of", state.read.get("branch")))
        result = dc.diff(
            state.table, NAMESPACE, before=state.first_point, after=after, catalog=where.catalog
        )
        return (result.added, result.removed, result.changed if state.keyed else 0)


class Changes(Path):
    """``dc.changes`` from the table's first version to the state, net: every row of the state
    as an insert (the changes of all its commits add up to the table)."""

    shapes = (ALL,)
    # dc.vacuum removed files an earlier commit's changes are made of
    vacuumed = ("vacuumed", "vacuumed_partly", "vacuumed_whole")

    def __init__(self, kind: str):
        self.kind, self.name = kind, f"changes:{kind}"

    def run(self, where: Where, state: TableState, shape: str) -> Any:
        end = state.read.get("version", state.read.get("as_of"))
        try:
            feed = dc.changes(
                state.table,
                end=end,
                namespace=NAMESPACE,
                catalog=where.catalog,
                branch=state.read.get("branch"),
                net=True,
                read_as=EAGER[self.kind],
                columns=state.columns,
            )
        except dc.ChangesUnavailableError:
            assert state.name in self.vacuumed, "changes unavailable, though nothing was vacuumed"
            return [tuple(r[c] for c in state.columns) for r in state.rows]
        feed = dc.to_pyarrow(feed)
        assert set(feed.column("_change_type").to_pylist()) <= {"insert"}, "not only inserts"
        return rows_of(feed.select(state.columns), state.columns)


PATHS: list[Path] = [
    *(EagerRead(kind) for kind in EAGER),
    ParquetFilesRead(),
    DaftRead(),
    RayRead(),
    SparkFrame(through_format=False),
    SparkFrame(through_format=True),
    SparkStream(),
    *(Sql(engine) for engine in ("local", "daft", "spark")),
    *(FolderReader(reader) for reader in ("polars", "deltalake", "duckdb")),
    *(RefusingFolderReader(reader) for reader in ("daft", "pyarrow")),
    Show(),
    Diff(),
    *(Changes(kind) for kind in ("pyarrow", "pandas")),
]
