"""What the lived-in tables are made of: a ``Writer`` that writes a table the way users do
beside a model of its rows, and the ``TableState`` each point a reader can address becomes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

import workbench as dc
from tests.conformance.model import Row, TableModel

NAMESPACE = "lived"
BRANCH = "exp"
# How a state is addressed: its latest version, a Delta version, a past catalog point, a branch.
LATEST, VERSION, AS_OF, ON_BRANCH = "latest", "version", "as_of", "branch"
PARTNER = "partner"  # a second table, for joins
TYPES = {"id": pa.int64(), "n": pa.int64(), "s": pa.string(), "x": pa.float64(), "m": pa.int64()}
KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("n", pa.int64())),
        dc.Field.of(pa.field("s", pa.string())),
    ]
)
VECTORS_OFF = {"delta.enableDeletionVectors": False}


@dataclass(frozen=True)
class TableState:
    """One addressable state of a lived-in table and the rows a reader must see there."""

    name: str
    table: str
    model: TableModel
    read: dict[str, Any] = field(default_factory=dict)  # version= / as_of= / branch=
    folder_version: int | None = None  # the Delta version a reader of the folder opens
    vectors: bool = False  # some file of this state carries a deletion vector
    first: TableModel | None = None  # the table as first written (what dc.diff compares with)
    first_point: Any = None  # ... and the point that names it

    @property
    def rows(self) -> list[Row]:
        return self.model.rows()

    @property
    def columns(self) -> list[str]:
        return self.model.columns

    @property
    def address(self) -> str:
        for kind in (VERSION, AS_OF, ON_BRANCH):
            if kind in self.read:
                return kind
        return LATEST

    @property
    def keyed(self) -> bool:
        return self.model.key is not None

    def __str__(self) -> str:
        return self.name


def table_of(
    data: list[Row] | dict[str, list],
    columns: Iterable[str] | None = None,
    types: dict[str, pa.DataType] | None = None,
) -> pa.Table:
    """Rows (or columns) as an Arrow table in the lived-in tables' types (or ``types``)."""
    types = types or TYPES
    if isinstance(data, list):
        names = list(columns or (data[0] if data else []))
        data = {c: [r.get(c) for r in data] for c in names}
    return pa.table({c: pa.array(v, types[c]) for c, v in data.items()})


class Writer:
    """Writes to one table of a catalog and keeps its model in step. ``types`` are column
    types besides (or instead of) the usual ones; ``options`` go to every write (e.g.
    ``table_version``); ``convert`` turns each write's Arrow data into what is written (pandas,
    polars, Daft: the engine that writes it)."""

    def __init__(
        self,
        catalog: str,
        table: str,
        model: TableModel,
        types: dict[str, pa.DataType] | None = None,
        **options: Any,
    ):
        self.catalog, self.table, self.model = catalog, table, model
        self.types = {**TYPES, **(types or {})}
        self.options = options
        self.convert: Callable[[pa.Table], Any] = lambda rows: rows
        self.branch: str | None = None
        self.first: tuple[TableModel, Any] | None = None  # the model and version at creation

    def _write(self, rows: pa.Table, mode: str, **options: Any) -> None:
        dc.write(
            self.convert(rows),
            self.table,
            NAMESPACE,
            catalog=self.catalog,
            mode=mode,
            branch=self.branch,
            **self.options,
            **options,
        )

    def create(self, rows: list[Row], schema: dc.Schema | None = None, **options: Any) -> None:
        if schema is not None:
            options["schema"] = schema
        self._write(table_of(rows, self.model.columns, self.types), "create", **options)
        self.model.append(rows)
        if self.branch is None:
            self.first = (self.model.snapshot(), self.version())

    def append(self, rows: list[Row]) -> None:
        self._write(table_of(rows, self.model.columns, self.types), "append")
        self.model.append(rows)

    def merge(self, rows: list[Row]) -> None:
        for name in rows[0]:
            self.model.add_column(name)
        self._write(table_of(rows, types=self.types), "merge")
        self.model.merge(rows)

    def delete(self, keys: Iterable[Any]) -> None:
        """Delete by key: values of the key column, or tuples of a composite key's values."""
        keys = [k.item() if isinstance(k, np.generic) else k for k in keys]
        names = self.model.keys
        rows = [dict(zip(names, k if isinstance(k, tuple) else (k,), strict=True)) for k in keys]
        self._write(table_of(rows, names, self.types), "delete")
        self.model.delete(keys)

    def version(self) -> int:
        return _open(self.table, self.catalog, self.branch).version

    def vectored(self) -> bool:
        """Whether a file of the table as it is now carries a deletion vector."""
        return any(
            f.deletion_vector is not None
            for f in _open(self.table, self.catalog, self.branch).files
        )

    def state(self, name: str, **read: Any) -> TableState:
        """The table as it is now, addressed by ``read`` (default: its latest state)."""
        on_branch = self.branch is not None
        return TableState(
            name,
            self.table,
            self.model.snapshot(),
            read={**({"branch": self.branch} if on_branch else {}), **read},
            folder_version=None if on_branch else self.version(),
            vectors=self.vectored(),
            first=self.first[0] if self.first else None,
            first_point=self.first[1] if self.first else None,
        )


def _open(table: str, catalog: str, branch: str | None) -> Any:
    from workbench.core.catalog.locations import locate
    from workbench.core.catalog.scope import branch_scope
    from workbench.core.transactions.table_versions import open_table

    with branch_scope(branch, catalog):
        return open_table(locate(table, NAMESPACE, catalog))


def last_transaction(catalog: str) -> str:
    return dc.transactions(catalog=catalog, read_as="pyarrow").column("transaction_id")[0].as_py()


def rows(rng: np.random.Generator, ids: Iterable[int], columns: str = "ns") -> list[Row]:
    """Rows for ``ids`` with random values (about one ``s`` in ten null)."""
    out = []
    for i in ids:
        row: Row = {"id": int(i)}
        if "n" in columns:
            row["n"] = int(rng.integers(0, 1000))
        if "s" in columns:
            row["s"] = None if rng.random() < 0.1 else f"s{int(rng.integers(0, 50))}"
        if "x" in columns:
            row["x"] = float(rng.integers(0, 100)) / 4
        out.append(row)
    return out
