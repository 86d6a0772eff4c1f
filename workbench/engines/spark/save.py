"""``df.write.format("workbench")...save(table)`` on the driver: the options, catalog, branch and
save mode are checked here before Spark's writer starts, the ``writeMode`` option's MERGE and
DELETE run as ``dc.write(df, table, mode=...)`` (Spark jobs; the driver holds only file
actions), and a workbench error raised inside Spark's Python workers reaches the caller as
itself, not wrapped in Spark's exception text.

Why here: PySpark (4.3) runs a Python data source's ``writer()``, its tasks' ``write`` and its
``commit`` in Python worker processes, which have no SparkSession, so a MERGE, which joins the
rows with the table, cannot run there as a Spark job. ``DataFrameWriter.save`` is the one point
that runs in the driver, so workbench wraps it once, when its session starts; writes to other
formats pass through unchanged.

Save modes, as Spark users expect them: ``append`` and ``overwrite`` create a missing table;
``errorifexists`` (Spark's default) creates a missing table and refuses an existing one
(``TableAlreadyExistsError``); ``ignore`` creates a missing table and leaves an existing one
as it is. ``writeMode`` is ``merge`` (upsert by the table's merge keys, with schema evolution)
or ``delete`` (delete the rows holding the frame's keys): both change the table as it is, so
they take ``append`` or no mode and refuse ``overwrite`` and ``ignore``. Every write lands on
the branch the ``branch`` option names, else on the ``dc.branch`` block's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import (
    CatalogNotFoundError,
    InvalidArgumentError,
    TableAlreadyExistsError,
)
from workbench.core.base.names import MAIN
from workbench.core.catalog.locations import locate_in
from workbench.engines.spark.datasource import line_for, trunk_for
from workbench.engines.spark.load import held_options, restored
from workbench.engines.spark.source_options import NAME, SourceOptions, write_options
from workbench.engines.spark.worker_errors import workbench_errors

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.readwriter import DataFrameWriter

    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.catalog.locations import Location

BY_KEY_SAVE_MODES = ("Append", "ErrorIfExists")  # Spark save modes writeMode combines with
CREATING_SAVE_MODES = ("ErrorIfExists", "Ignore")  # write only a missing table


def install_save() -> None:
    """Wrap PySpark's ``DataFrameWriter.save`` (once per process) with ``_save``."""
    from pyspark.sql.readwriter import DataFrameWriter

    if getattr(DataFrameWriter.save, "_workbench", False):
        return
    original = DataFrameWriter.save

    @functools.wraps(original)
    def save(
        self: DataFrameWriter,
        path: str | None = None,
        format: str | None = None,
        mode: str | None = None,
        partitionBy: str | list[str] | None = None,
        **options: Any,
    ) -> None:
        if format is not None:
            self.format(format)
        self.mode(mode).options(**options)
        if str(self._jwrite.source()).lower() != NAME:
            return original(self, path, partitionBy=partitionBy)
        with workbench_errors():
            _save(self, path, functools.partial(original, self, path, partitionBy=partitionBy))
        return None

    save._workbench = True  # type: ignore[attr-defined]
    DataFrameWriter.save = save  # type: ignore[method-assign]


def _save(writer: DataFrameWriter, path: str | None, spark_save: Callable[[], None]) -> None:
    """Run a ``format("workbench")`` save: by key through ``dc.write`` when ``writeMode`` asks
    for it, else by Spark's writer (the data source appends or overwrites)."""
    from workbench.core.transactions.context import current_transaction
    from workbench.core.transactions.table_versions import open_table

    request = write_options(held_options(writer._jwrite), path)
    trunk = trunk_for(request)
    line = line_for(request, trunk)  # a missing branch is an error now, before any job
    save_mode = str(writer._jwrite.curmode())
    if request.write_mode is not None:
        if save_mode not in BY_KEY_SAVE_MODES:
            raise InvalidArgumentError(
                f"writeMode {request.write_mode!r} changes the table by key as it is, so it "
                f"cannot be combined with .mode({save_mode.lower()!r}); use .mode('append') (or "
                "no mode), or leave writeMode out to overwrite the table."
            )
        write_on_driver(writer._df, request, trunk, line, request.write_mode)
        return
    loc = locate_in(line, request.table, request.namespace)
    exists = table_exists_at(loc)
    if save_mode in CREATING_SAVE_MODES:
        if exists:
            if save_mode == "Ignore":
                return
            raise TableAlreadyExistsError(
                f"Table {loc.qualified!r} exists, and "
                "DataFrameWriter's default save mode (errorifexists) writes only a new table: "
                "use .mode('append') or .mode('overwrite'), or .option('writeMode', 'merge'). "
                "Nothing was written."
            )
        save_mode = "Append"  # Spark's writer takes append or overwrite; the table is created
    if current_transaction() is not None or (exists and open_table(loc).schemaless):
        # Spark's writer commits in a worker, outside the open transaction; a schemaless table
        # takes the rows as a file, as dc.write stores them
        mode = ("replace" if save_mode == "Overwrite" else "append") if exists else "create"
        write_on_driver(writer._df, request, trunk, line, mode, auto_create_namespace=True)
        return
    with restored(writer._jwrite, "extraOptions", "curmode"):
        writer.mode(save_mode.lower())
        if line.branch != MAIN:  # the dc.branch block's branch reaches the workers
            writer.option("branch", line.branch)
        spark_save()


def write_on_driver(
    frame: DataFrame,
    request: SourceOptions,
    trunk: Catalog,
    line: Catalog,
    mode: str,
    **options: Any,
) -> None:
    """The save (or a stream's micro-batch) as ``dc.write(frame, ...)`` on the driver (Spark
    jobs write the files; the driver commits them, inside the open transaction if there is
    one)."""
    from workbench.core.io.writer import write

    catalog = registered_name(trunk, request)
    table, namespace = request.table, request.namespace
    write(frame, table, namespace, catalog, mode=mode, branch=line.branch, **options)


def table_exists_at(loc: Location) -> bool:
    """Whether the table at ``loc`` exists (in the line of its catalog)."""
    from workbench.core.transactions.context import view
    from workbench.core.transactions.table_versions import versions_in

    return bool(versions_in(view(loc.catalog), loc.namespace, loc.name))


def registered_name(trunk: Catalog, request: SourceOptions) -> str:
    """The registered name of the catalog a save that runs on the driver writes through (the
    driver writes through its registered catalogs, unlike a worker, which takes a root
    alone)."""
    from workbench.core.catalog.registry import list_catalogs

    for name, catalog in list_catalogs().items():
        if catalog is trunk:
            return name
    raise CatalogNotFoundError(
        f"option('root', {request.root!r}): no registered catalog has that root, and this save "
        "(a writeMode, inside dc.transaction or to a schemaless table) runs on the driver "
        "through its catalogs. Register it "
        "(dc.put_catalog('name', root=...)) and pass .option('catalog', 'name'), or call "
        "dc.init_local(root)."
    )
