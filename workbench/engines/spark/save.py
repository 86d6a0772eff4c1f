"""``df.write.format("workbench")...save(table)`` on the driver: the ``writeMode`` option's
MERGE and DELETE run as ``dc.write(df, table, mode=...)`` (Spark jobs; the driver holds only
file actions), and a workbench error raised inside Spark's Python workers reaches the caller
as itself, not wrapped in Spark's exception text.

Why here: PySpark (4.3) runs a Python data source's ``writer()``, its tasks' ``write`` and its
``commit`` in Python worker processes (a ``KeyedTableModeError`` raised by ``writer()`` reaches
the driver as an ``AnalysisException`` [PYTHON_DATA_SOURCE_ERROR] holding the worker's
traceback). Those processes have no SparkSession, so a MERGE, which joins the rows with the
table, cannot run there as a Spark job. ``DataFrameWriter.save`` is the one point that runs in
the driver, so workbench wraps it once, when its session starts; writes to other formats pass
through unchanged.

``writeMode`` is ``merge`` (upsert by the table's merge keys, with schema evolution) or
``delete`` (delete the rows holding the frame's keys). Both change the table as it is, so
they take Spark's ``append`` save mode (or none: Spark's default) and refuse ``overwrite``
and ``ignore``. Without ``writeMode`` the data source appends or overwrites.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from workbench.core.base import errors
from workbench.core.base.errors import CatalogNotFoundError, InvalidArgumentError, WorkbenchError
from workbench.core.catalog.branches import MAIN
from workbench.core.catalog.registry import current_branch
from workbench.engines.spark.datasource import NAME

if TYPE_CHECKING:
    from pyspark.sql.readwriter import DataFrameWriter

WRITE_MODES = ("merge", "delete")  # values of the writeMode option
BY_KEY_SAVE_MODES = ("Append", "ErrorIfExists")  # Spark save modes writeMode combines with
_RAISED = re.compile(r"^workbench\.core\.base\.errors\.(\w+): ", re.MULTILINE)
_SPARK_TAIL = re.compile(r"\n\s*(?:SQLSTATE: |JVM stacktrace:)")


def requested_write_mode(options: Mapping[str, str]) -> str | None:
    """The ``writeMode`` option (lower case), None when absent; an unknown value is an error
    naming the valid ones."""
    value = options.get("writeMode")
    if value is None:
        return None
    mode = value.strip().lower()
    if mode not in WRITE_MODES:
        raise InvalidArgumentError(
            f"Unknown writeMode {value!r} for format('workbench'); use one of {list(WRITE_MODES)} "
            "(MERGE upserts by the table's merge keys, DELETE removes the rows holding the "
            "frame's keys), or leave it out to append or overwrite with .mode(...)."
        )
    return mode


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
    from workbench.core.io.writer import write

    options = _options(writer)
    branch = options.get("branch") or _branch_in_use(options)
    if branch != MAIN:  # a dc.branch block's branch, or the session's
        writer.option("branch", branch)
        options["branch"] = branch
    mode = requested_write_mode(options)
    if mode is None:
        spark_save()
        return
    save_mode = str(writer._jwrite.curmode())
    if save_mode not in BY_KEY_SAVE_MODES:
        raise InvalidArgumentError(
            f"writeMode {mode!r} changes the table by key as it is, so it cannot be combined "
            f"with .mode({save_mode.lower()!r}); use .mode('append') (or no mode), or leave "
            "writeMode out to overwrite the table."
        )
    table = path or options.get("path")
    if not table:
        raise InvalidArgumentError(
            f"writeMode {mode!r} needs the table: call .save('namespace.table')."
        )
    namespace, _, name = table.rpartition(".")
    root = options.get("root")
    catalog = _catalog_at(root) if root else options.get("catalog")
    write(writer._df, name, namespace or None, catalog, mode=mode, branch=options.get("branch"))


def _branch_in_use(options: Mapping[str, str]) -> str:
    """The branch this process uses on the catalog a save names (``main`` for a root it has
    not registered)."""
    root = options.get("root")
    try:
        return current_branch(_catalog_at(root) if root else options.get("catalog"))
    except CatalogNotFoundError:
        return MAIN


def _catalog_at(root: str) -> str:
    """The name of the registered catalog at ``root`` (the ``root`` option: the driver writes
    through its registered catalogs, unlike a worker, which takes the root alone)."""
    from workbench.core.catalog.registry import Catalog, CatalogProperties, list_catalogs

    wanted = Catalog(CatalogProperties(root)).root
    for name, catalog in list_catalogs().items():
        if catalog.root == wanted:
            return name
    raise CatalogNotFoundError(
        f"option('root', {root!r}): no registered catalog has that root, and a writeMode "
        "write runs on the driver through its catalogs. Register it (dc.put_catalog('name', "
        "root=...)) and pass .option('catalog', 'name'), or call dc.init_local(root)."
    )


def _options(writer: DataFrameWriter) -> dict[str, str]:
    """The options set on the writer (read from Spark's writer, which keeps them), with
    workbench's names; a missing one is left out."""
    held = writer._jwrite.extraOptions()  # case-insensitive, as the data source sees them
    found = {}
    for key in ("writeMode", "path", "root", "catalog"):
        value = held.get(key)
        if value.isDefined():
            found[key] = str(value.get())
    return found


@contextmanager
def workbench_errors() -> Iterator[None]:
    """Re-raise a Spark exception that carries a workbench error raised in a Python worker as
    that error (its type and message, without the worker's traceback or Java's stack)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import CapturedException

    try:
        yield
    except (CapturedException, Py4JJavaError) as e:  # the second from a standalone cluster
        error = raised_in_worker(str(e))
        if error is None:
            raise
        raise error from None


def raised_in_worker(text: str) -> WorkbenchError | None:
    """The last workbench error a Python traceback in ``text`` ends with, rebuilt from its
    class name and message; None if it holds none."""
    found = list(_RAISED.finditer(text))
    if not found:
        return None
    last = found[-1]
    kind = getattr(errors, last.group(1), None)
    if not (isinstance(kind, type) and issubclass(kind, WorkbenchError)):
        return None
    return kind(_SPARK_TAIL.split(text[last.end() :], maxsplit=1)[0].strip())
