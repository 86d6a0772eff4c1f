"""Lived-in tables: each is written the way users write (appends, merges, partial upserts,
deletes, schema evolution, optimize, a branch), beside a model of its rows, and every point a
reader can address (latest, ``version=``, ``as_of``, a branch) becomes a ``TableState``."""

from __future__ import annotations

from collections.abc import Iterable
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
class Traits:
    """What a state is, known before it is built: how it is addressed, whether ``dc.diff``
    has a first point to compare it with, whether a small (object-store) build has it."""

    address: str = LATEST
    diffable: bool = True
    small: bool = True


STATES = {
    "plain": Traits(),
    "vectors_file": Traits(),
    "vec_version": Traits(VERSION),
    "vec_as_of": Traits(AS_OF),
    "vec_tag": Traits(AS_OF),
    "branch": Traits(ON_BRANCH),
    "branch_only": Traits(ON_BRANCH, diffable=False),
    "vectors_inline": Traits(),
    "purged": Traits(),
    "evolved": Traits(),
    "vectors_off": Traits(),
    "turned_off": Traits(),
    "optimized": Traits(),
    "many_commits": Traits(small=False),
    "compacted": Traits(),
    "compacted_version": Traits(VERSION),
    "compacted_appends": Traits(),
}


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


def table_of(data: list[Row] | dict[str, list], columns: Iterable[str] | None = None) -> pa.Table:
    """Rows (or columns) as an Arrow table in the lived-in tables' types."""
    if isinstance(data, list):
        names = list(columns or (data[0] if data else []))
        data = {c: [r.get(c) for r in data] for c in names}
    return pa.table({c: pa.array(v, TYPES[c]) for c, v in data.items()})


class Writer:
    """Writes to one table of a catalog and keeps its model in step."""

    def __init__(self, catalog: str, table: str, model: TableModel):
        self.catalog, self.table, self.model = catalog, table, model
        self.branch: str | None = None
        self.first: tuple[TableModel, Any] | None = None  # the model and version at creation

    def _write(self, rows: pa.Table, mode: str, **options: Any) -> None:
        dc.write(
            rows,
            self.table,
            NAMESPACE,
            catalog=self.catalog,
            mode=mode,
            branch=self.branch,
            **options,
        )

    def create(self, rows: list[Row], schema: dc.Schema | None = None, **options: Any) -> None:
        if schema is not None:
            options["schema"] = schema
        self._write(table_of(rows, self.model.columns), "create", **options)
        self.model.append(rows)
        if self.branch is None:
            self.first = (self.model.snapshot(), self.version())

    def append(self, rows: list[Row]) -> None:
        self._write(table_of(rows, self.model.columns), "append")
        self.model.append(rows)

    def merge(self, rows: list[Row]) -> None:
        for name in rows[0]:
            self.model.add_column(name)
        self._write(table_of(rows), "merge")
        self.model.merge(rows)

    def delete(self, keys: Iterable[int]) -> None:
        keys = [int(k) for k in keys]
        self._write(table_of({"id": keys}), "delete")
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


def build(catalog: str, *, small: bool = False) -> dict[str, TableState]:
    """Write every lived-in table into ``catalog`` (``small``: fewer rows, for object stores)
    and return its states by name."""
    rng = np.random.default_rng(20261126)
    size = 600 if small else 2000
    dc.create_namespace(NAMESPACE, catalog=catalog)
    states: dict[str, TableState] = {}
    partner = Writer(catalog, PARTNER, TableModel(["id", "m"], key="id"))
    partner_schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("m", pa.int64())),
        ]
    )
    partner.create([{"id": i, "m": i * 7} for i in range(0, size * 2, 3)], partner_schema)
    builders = (_plain, _vectors, _inline, _purged, _evolved, _copy_on_write, _turned_off)
    for builder in (*builders, _compacted):
        states.update(builder(catalog, rng, size))
    if not small:
        states.update(_many_commits(catalog, rng))
    wanted = {name for name, traits in STATES.items() if traits.small or not small}
    assert set(states) == wanted, set(states) ^ wanted
    for name, state in states.items():
        assert state.address == STATES[name].address, name
    return states


def _plain(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """No merge keys: appends in write order, nulls, a one-row commit."""
    w = Writer(catalog, "plain", TableModel(["id", "n", "s"]))
    w.create(rows(rng, range(size // 4)))
    w.append(rows(rng, range(size // 4, size // 2)))
    w.append(rows(rng, [size]))
    return {"plain": w.state("plain")}


def _vectors(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Keyed, merge-on-read: full merges, a partial upsert, then many keys deleted (vectors in
    files); its history gives the ``version=``, ``as_of`` and tag states, and a branch."""
    w = Writer(catalog, "vec", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size)), KEYED)
    w.merge(rows(rng, range(size - size // 5, size + size // 5)))
    early = w.state("vec_as_of", as_of=last_transaction(catalog))
    w.merge(rows(rng, rng.choice(size, size // 6, replace=False), columns="n"))  # partial
    older = w.state("vec_version", version=w.version())
    w.merge(rows(rng, rng.choice(size, size // 6, replace=False)))
    dc.tag("before-delete", catalog=catalog)
    tagged = w.state("vec_tag", as_of="before-delete")
    live = [r["id"] for r in w.model.rows()]
    w.delete(rng.choice(live, size // 4, replace=False))
    states = {
        "vectors_file": w.state("vectors_file"),
        "vec_version": older,
        "vec_as_of": early,
        "vec_tag": tagged,
    }
    on_main = w.model.snapshot()
    dc.create_branch(BRANCH, catalog=catalog)
    w.branch, w.first = BRANCH, (on_main, "main")
    w.merge(rows(rng, range(size + size // 5, size + size // 5 + 50)))
    live = [r["id"] for r in w.model.rows()]
    w.delete(rng.choice(live, 30, replace=False))
    states["branch"] = w.state("branch")
    only = Writer(catalog, "branch_only", TableModel(["id", "n", "s"], key="id"))
    only.branch = BRANCH
    only.create(rows(rng, range(300)), KEYED)
    only.delete(range(0, 300, 7))
    states["branch_only"] = only.state("branch_only")
    return states


def _inline(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """A few scattered rows deleted and updated: vectors small enough to stay in the log."""
    w = Writer(catalog, "inline", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 2)), KEYED)
    w.delete([3, 17, 101])
    w.merge(rows(rng, [5, 250]))
    return {"vectors_inline": w.state("vectors_inline")}


def _purged(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Most of a file deleted (past the purge share, so it is rewritten), then merged into."""
    w = Writer(catalog, "purged", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 2)), KEYED)
    w.delete(range(0, size // 2, 3))
    w.delete(range(1, size // 2, 3))
    w.merge(rows(rng, range(0, 40)))
    return {"purged": w.state("purged")}


def _evolved(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """A column added by a merge of new and old keys: null in the rows written before."""
    w = Writer(catalog, "evolved", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 4)), KEYED)
    w.merge(rows(rng, range(size // 8, size // 4 + 50), columns="x"))
    w.delete(range(0, size // 4, 11))
    return {"evolved": w.state("evolved")}


def _copy_on_write(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Vectors off from the start: MERGE and DELETE rewrite files."""
    w = Writer(catalog, "cow", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 2)), KEYED, table_properties=VECTORS_OFF)
    w.merge(rows(rng, range(size // 4, size // 2 + 100)))
    w.delete(range(0, size // 2, 5))
    return {"vectors_off": w.state("vectors_off")}


def _turned_off(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Vectors on, used, then turned off and optimized on another table: no file keeps a
    vector a reader trusting the property would ignore."""
    w = Writer(catalog, "turned_off", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 2)), KEYED)
    w.merge(rows(rng, range(0, 60)))
    w.delete(range(100, 400, 2))
    dc.alter_table(
        "turned_off", namespace=NAMESPACE, catalog=catalog, table_version_properties=VECTORS_OFF
    )
    states = {"turned_off": w.state("turned_off")}
    o = Writer(catalog, "optimized", TableModel(["id", "n", "s"], key="id"))
    o.create(rows(rng, range(size // 2)), KEYED)
    o.merge(rows(rng, range(size // 4, size // 2 + 80)))
    o.delete(range(0, size // 2, 4))
    dc.optimize("optimized", NAMESPACE, catalog)
    states["optimized"] = o.state("optimized")
    return states


def _many_commits(catalog: str, rng: np.random.Generator) -> dict[str, TableState]:
    """A commit a minute: dozens of small merges and deletes, each leaving a file or a vector."""
    w = Writer(catalog, "busy", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(300)), KEYED)
    for step in range(40):
        w.merge(rows(rng, rng.choice(400, 6, replace=False)))
        if step % 4 == 3:
            live = [r["id"] for r in w.model.rows()]
            w.delete(rng.choice(live, 3, replace=False))
    return {"many_commits": w.state("many_commits")}


def _compacted(catalog: str, rng: np.random.Generator, size: int) -> dict[str, TableState]:
    """Automatic compaction after almost every commit (a step per two small files): merges
    and deletes folded in tiers, time travel to a version before the last steps, and appends
    folded in write order."""
    eager = {"workbench.autoCompact.minNumFiles": "2"}
    w = Writer(catalog, "compacted", TableModel(["id", "n", "s"], key="id"))
    w.create(rows(rng, range(size // 4)), KEYED, table_properties=eager)
    for step in range(12):
        w.merge(rows(rng, rng.choice(size // 2, 8, replace=False)))
        if step == 5:
            middle = w.state("compacted_version", version=w.version())
        if step % 3 == 2:
            live = [r["id"] for r in w.model.rows()]
            w.delete(rng.choice(live, 5, replace=False))
    a = Writer(catalog, "compacted_appends", TableModel(["id", "n", "s"]))
    a.create(rows(rng, range(10)), table_properties=eager)
    for step in range(1, 16):
        a.append(rows(rng, range(step * 10, step * 10 + 10)))
    return {
        "compacted": w.state("compacted"),
        "compacted_version": middle,
        "compacted_appends": a.state("compacted_appends"),
    }
