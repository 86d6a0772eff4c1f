"""Table handles: ``dc.table("shop.orders")`` names a table once (catalog, branch and point in
time included) and carries the operations on it, each the public function it stands for with
the address filled in; ``dc.tables`` maps every ``namespace.table`` to its handle."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from html import escape
from typing import Any

from workbench.core.base.errors import InvalidArgumentError, InvalidUrlError, WorkbenchError
from workbench.core.base.names import MAIN, validate_branch_name
from workbench.core.base.types import DatasetType, TableWriteMode
from workbench.core.catalog.branch_records import read_record
from workbench.core.catalog.descriptions import TableInfo, WriteResult
from workbench.core.catalog.locations import locate
from workbench.core.catalog.registry import catalog_name
from workbench.core.catalog.scope import current_branch, get_catalog
from workbench.core.io.changes import changes
from workbench.core.io.diff import TableDiff, diff
from workbench.core.io.reader import read
from workbench.core.io.url_names import SCHEME, parse_url
from workbench.core.io.writer import write
from workbench.core.ops.branches import branch as branch_scope
from workbench.core.ops.maintenance import VacuumResult, optimize, vacuum
from workbench.core.ops.names import catalog_names
from workbench.core.ops.namespaces import list_namespaces
from workbench.core.ops.tables import get_table, list_tables
from workbench.core.transactions.history import transactions

PREVIEW_ROWS = 5
RECENT_COMMITS = 5


@dataclass(frozen=True)
class TableHandle:
    """One table of one catalog, on a branch (None: the session's) and at a point in time
    (None: now). Immutable: ``at`` and ``on`` give new handles."""

    name: str
    namespace: str
    catalog: str
    branch: str | None = None
    as_of: Any = None

    @property
    def qualified(self) -> str:
        """``namespace.table``, as SQL, the magics and ``dc.tables`` name it."""
        return f"{self.namespace}.{self.name}"

    def at(self, as_of: Any) -> TableHandle:
        """The same table as of a past point (ns, datetime, transaction id or tag); read-only."""
        return replace(self, as_of=as_of)

    def on(self, branch: str) -> TableHandle:
        """The same table as branch ``branch`` shows it."""
        return replace(self, branch=validate_branch_name(branch))

    # ----------------------------------------------------------------------------- reads
    def read(self, read_as: DatasetType | str = DatasetType.DAFT, **options: Any) -> Any:
        """``dc.read`` of this table (``columns=``, ``limit=``, ``version=``, ...)."""
        with self._scope():
            return read(
                self.name, self.namespace, self.catalog, read_as, as_of=self.as_of, **options
            )

    def to_pandas(self, **options: Any) -> Any:
        """The table as a pandas DataFrame."""
        return self.read(DatasetType.PANDAS, **options)

    def to_arrow(self, **options: Any) -> Any:
        """The table as a pyarrow Table."""
        return self.read(DatasetType.PYARROW, **options)

    @property
    def info(self) -> TableInfo:
        """``dc.get_table``: schema, merge keys, version, counts and size."""
        with self._scope():
            return get_table(self.name, self.namespace, self.catalog, as_of=self.as_of)

    def history(
        self,
        read_as: DatasetType | str = DatasetType.PANDAS,
        limit: int | None = None,
        *,
        compactions: bool = False,
    ) -> Any:
        """``dc.transactions`` that touched this table, newest first."""
        with self._scope():
            return transactions(
                read_as,
                self.catalog,
                table=self.qualified,
                limit=limit,
                as_of=self.as_of,
                compactions=compactions,
            )

    def diff(self, before: Any, after: Any = None, **options: Any) -> TableDiff:
        """``dc.diff`` of this table from ``before`` to ``after`` (default: this handle's
        point, or now)."""
        after = self.as_of if after is None else after
        with self._scope():
            return diff(self.name, self.namespace, before, after, self.catalog, **options)

    def changes(self, start: Any = None, end: Any = None, **options: Any) -> Any:
        """``dc.changes`` of this table from ``start`` to ``end`` (default: this handle's
        point, or the newest version; ``net=``, ``read_as=``, ``columns=``)."""
        end = self.as_of if end is None else end
        with self._scope():
            return changes(self.name, start, end, self.namespace, self.catalog, **options)

    # ---------------------------------------------------------------------------- writes
    def write(
        self, data: Any, mode: TableWriteMode | str = TableWriteMode.AUTO, **options: Any
    ) -> WriteResult:
        """``dc.write`` of ``data`` into this table (``schema=``, ``auto_create_namespace=``...)."""
        self._refuse_past("write")
        with self._scope():
            return write(data, self.name, self.namespace, self.catalog, mode, **options)

    def merge(self, data: Any, **options: Any) -> WriteResult:
        """Upsert ``data`` by the table's merge keys."""
        return self.write(data, TableWriteMode.MERGE, **options)

    def delete(self, keys: Any, **options: Any) -> WriteResult:
        """Delete the rows whose merge keys ``keys`` (a dataset of key columns) holds."""
        return self.write(keys, TableWriteMode.DELETE, **options)

    def optimize(self, *, cluster_by: Sequence[str] | None = None) -> dict[str, Any]:
        """``dc.optimize``: compact the table's files (or cluster its rows by ``cluster_by``)."""
        self._refuse_past("optimize")
        with self._scope():
            return optimize(self.name, self.namespace, self.catalog, cluster_by=cluster_by)

    def vacuum(
        self, retain: timedelta | float | int = timedelta(days=7), dry_run: bool = False
    ) -> VacuumResult:
        """``dc.vacuum`` of the table's catalog: deletes the files no retained point needs,
        this table's and the other tables' (vacuum works on a whole catalog)."""
        self._refuse_past("vacuum")
        return vacuum(self.catalog, retain, dry_run)

    # --------------------------------------------------------------------------- helpers
    def _scope(self) -> AbstractContextManager[Any]:
        return nullcontext() if self.branch is None else branch_scope(self.branch, self.catalog)

    def _refuse_past(self, action: str) -> None:
        if self.as_of is not None:
            raise InvalidArgumentError(
                f"Cannot {action} {self.qualified} through a handle as of {self.as_of!r}: a past "
                "point is read-only. Use the handle without .at(...)."
            )

    def __repr__(self) -> str:
        where = "".join(
            f", {k}={v!r}" for k, v in (("branch", self.branch), ("as_of", self.as_of)) if v
        )
        return f"dc.table('dc://{self.catalog}/{self.namespace}/{self.name}'{where})"

    def _repr_html_(self) -> str:
        line = self.branch or current_branch(self.catalog)
        where = "" if line == MAIN else f" on branch <b>{escape(line)}</b>"
        if self.as_of is not None:
            where += f" as of {escape(str(self.as_of))}"
        title = f"<h4 style='margin:4px 0'>{escape(self.qualified)}{where}</h4>"
        try:
            info = self.info
            preview = self.to_arrow(limit=PREVIEW_ROWS)
            recent = self._line_commits(line)
        except WorkbenchError as error:
            return (
                title
                + f"<div style='color:#b00020'>{escape(type(error).__name__)}: "
                + (f"{escape(str(error))}</div>")
            )
        commits = recent.select(["line", "end_time", "commit_message", "operations", "rows_added"])
        commits = commits.set_column(1, "committed", [[_moment(t) for t in recent["end_time"]]])
        return (
            title
            + info._repr_html_()
            + f"<b>last {commits.num_rows} commits</b>"
            + arrow_html(commits)
            + f"<b>first {preview.num_rows} of {info.row_count} rows</b>"
            + arrow_html(preview)
        )

    def _line_commits(self, line: str) -> Any:
        """The table's last commits as its line shows them, newest first, each with the line
        that made it: a branch's own, then ``main``'s from before the branch started."""
        import pyarrow as pa
        import pyarrow.compute as pc

        own = self.history("pyarrow", limit=RECENT_COMMITS)
        own = own.append_column("line", pa.array([line] * own.num_rows, pa.string()))
        record = None if line == MAIN else read_record(get_catalog(self.catalog).storage, line)
        if record is None or own.num_rows >= RECENT_COMMITS:
            return own
        base = replace(self, branch=MAIN).history("pyarrow")
        base = base.filter(pc.less_equal(base["sequence"], record.base_sequence))
        base = base.slice(0, RECENT_COMMITS - own.num_rows)
        base = base.append_column("line", pa.array([MAIN] * base.num_rows, pa.string()))
        return pa.concat_tables([own, base.select(own.column_names)])


def _moment(ns: Any) -> str:
    """A commit time (ns since the epoch) as local time to the second."""
    return datetime.fromtimestamp(ns.as_py() / 1e9).isoformat(sep=" ", timespec="seconds")


def arrow_html(rows: Any) -> str:
    """A small pyarrow Table as an HTML table (every cell escaped)."""
    head = "".join(f"<th>{escape(c)}</th>" for c in rows.column_names)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row.values()) + "</tr>"
        for row in rows.to_pylist()
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def table(
    name: str,
    namespace: str | None = None,
    catalog: str | None = None,
    branch: str | None = None,
    as_of: Any = None,
) -> TableHandle:
    """A handle on table ``name``: ``"ns.t"``, ``"t"`` (with ``namespace``, or the default one)
    or ``"dc://catalog/ns/t"``. Names are checked now; the table need not exist yet (its first
    ``write`` creates it)."""
    if isinstance(name, str) and name.startswith(SCHEME):
        url = parse_url(name)
        if url.table is None or url.wildcard:
            raise InvalidUrlError(f"{name!r} does not name a table (dc://catalog/namespace/table).")
        if catalog is not None and catalog != url.catalog:
            raise InvalidArgumentError(
                f"{name!r} names catalog {url.catalog!r}, but catalog={catalog!r} was given."
            )
        name, namespace, catalog = url.table, url.namespace or namespace, url.catalog
    loc = locate(name, namespace, catalog)
    if branch is not None:
        validate_branch_name(branch)
    return TableHandle(loc.table_name, loc.namespace, loc.catalog_name, branch, as_of)


class TableMap(Mapping[str, TableHandle]):
    """``dc.tables``: every table of the default catalog (on the session's branch) by
    ``namespace.table``, listed afresh on each use; ``dc.tables["shop.orders"]`` is its handle
    and Tab after ``dc.tables["`` completes the names."""

    def __init__(self, catalog: str | None = None):
        self._catalog = catalog

    @property
    def catalog(self) -> str | None:
        """The catalog whose tables these are (None: the default one)."""
        return self._catalog

    def __call__(self, catalog: str | None = None) -> TableMap:
        """The tables of another catalog: ``dc.tables("lake")["shop.orders"]``."""
        return TableMap(catalog)

    def _names(self) -> list[str]:
        return [
            f"{ns.name}.{t.name}"
            for ns in list_namespaces(self._catalog)
            for t in list_tables(ns.name, self._catalog)
        ]

    def __getitem__(self, qualified: str) -> TableHandle:
        if qualified not in self._names():
            raise KeyError(qualified)
        return table(qualified, catalog=self._catalog)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def _ipython_key_completions_(self) -> list[str]:
        try:
            return list(catalog_names(self._catalog).tables)  # completion's cached listing
        except WorkbenchError:
            return []

    def __repr__(self) -> str:
        try:
            name = catalog_name(get_catalog(self._catalog))
            return f"dc.tables of catalog {name!r}: {', '.join(self._names()) or '(none)'}"
        except WorkbenchError as error:
            return f"dc.tables: {type(error).__name__}: {error}"


tables = TableMap()  # dc.tables["ns.t"]: a handle per table of the default catalog
