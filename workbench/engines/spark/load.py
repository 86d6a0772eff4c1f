"""``spark.read.format("workbench")...load(table)`` on the driver: the options, catalog, branch,
table and point in time are checked here before Spark plans the read, so a mistake reaches the
caller as workbench's own error (``TableNotFoundError``, ``BranchNotFoundError``,
``TimeTravelError``, ...), not as an ``AnalysisException`` holding a Python worker's traceback.

Why here: PySpark runs a Python data source's ``schema()`` in a worker process, so its errors
come back as text; ``DataFrameReader.load`` is the one point that runs in the driver, so
workbench wraps it once, when its session starts (reads of other formats pass through). A read
inside a ``dc.branch`` block reads that branch, as a save there writes it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from workbench.core.base.names import MAIN
from workbench.core.catalog.locations import check_readable
from workbench.engines.spark.datasource import line_for, open_requested, trunk_for
from workbench.engines.spark.source_options import NAME, read_options
from workbench.engines.spark.worker_errors import workbench_errors

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.readwriter import DataFrameReader
    from pyspark.sql.streaming.readwriter import DataStreamReader

    from workbench.core.catalog.locations import OpenTable
    from workbench.engines.spark.source_options import SourceOptions


def install_load() -> None:
    """Wrap PySpark's ``DataFrameReader.load`` (once per process) with the driver's checks."""
    from pyspark.sql.readwriter import DataFrameReader

    if getattr(DataFrameReader.load, "_workbench", False):
        return
    checked = checked_load(DataFrameReader.load, _checked_branch, scanned=True)
    DataFrameReader.load = checked  # type: ignore[method-assign]


def checked_load(original: Any, check: Callable[[Any, Any], str], scanned: bool = False) -> Any:
    """``original`` (a ``DataFrameReader``'s or ``DataStreamReader``'s ``load``) that first runs
    ``check(reader, path)`` for a workbench read (raising workbench's error for a mistake) and
    reads the branch it returns; reads of other formats pass through. ``scanned``: the frame
    is a load of its own whose scans skip files by the filters Spark pushes (``scan_files``)."""

    @functools.wraps(original)
    def load(
        self: DataFrameReader | DataStreamReader,
        path: Any = None,
        format: str | None = None,
        schema: Any = None,
        **options: Any,
    ) -> DataFrame:
        if format is not None:
            self.format(format)
        if schema is not None:
            self.schema(schema)
        self.options(**options)
        if str(self._jreader.source()).lower() != NAME:
            return original(self, path)
        with workbench_errors(), with_branch(self, check(self, path)):
            if not scanned:
                return original(self, path)
            with _a_scan(self):
                return _scanned(original(self, path))

    load._workbench = True  # type: ignore[attr-defined]
    return load


@contextmanager
def _a_scan(reader: DataFrameReader) -> Iterator[None]:
    """The reader with a new load's id as an option for the block, and Spark pushing filters
    into Python data sources (for this session: off by default)."""
    from workbench.engines.spark.scan_files import SCAN_OPTION, new_scan

    reader._spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    with restored(reader._jreader, "extraOptions"):
        reader.option(SCAN_OPTION, new_scan())
        yield


def _scanned(frame: DataFrame) -> DataFrame:
    """The loaded frame filtered on its column of zeros, then without it: every scan of it
    pushes that filter, so every scan plans which files it reads (``scan_files``)."""
    from pyspark.sql import functions as F

    from workbench.engines.spark.scan_files import SCAN_COLUMN

    return frame.where(F.col(SCAN_COLUMN) == 0).drop(SCAN_COLUMN)


def _checked_branch(reader: DataFrameReader, path: Any) -> str:
    """Open the table the reader's options (and ``path``) ask for, raising workbench's error
    for any mistake; the branch it reads."""
    options = held_options(reader._jreader)
    if path is not None:
        options["paths" if isinstance(path, list | tuple) else "path"] = str(path)
    return readable(read_options(options))[1]


def readable(request: SourceOptions) -> tuple[OpenTable, str]:
    """The table a read asks for, checked readable (workbench's error otherwise), and the branch
    it reads."""
    line = line_for(request, trunk_for(request))
    opened = open_requested(request, line)
    check_readable(opened)
    return opened, line.branch


@contextmanager
def with_branch(reader: DataFrameReader | DataStreamReader, branch: str) -> Iterator[None]:
    """The reader (a ``DataFrameReader`` or ``DataStreamReader``) with the ``branch`` option
    set for the block when it reads a branch the options do not name (a ``dc.branch``
    block's): Spark's workers do not see the block."""
    if branch == MAIN or "branch" in held_options(reader._jreader):
        yield
        return
    with restored(reader._jreader, "extraOptions"):
        reader.option("branch", branch)
        yield


def held_options(java: Any) -> dict[str, str]:
    """The options a Java ``DataFrameReader``/``DataFrameWriter`` holds, by name."""
    held = java.extraOptions()  # Spark's case-insensitive map
    return {str(k): str(v) for k, v in _scala_items(held)}


def _scala_items(scala_map: Any) -> Iterator[tuple[Any, Any]]:
    entries = scala_map.iterator()
    while entries.hasNext():
        entry = entries.next()
        yield entry._1(), entry._2()


@contextmanager
def restored(java: Any, *fields: str) -> Iterator[None]:
    """Give a Java reader or writer the values of its ``fields`` (``extraOptions``,
    ``curmode``) back after the block, so what workbench sets for one call does not stay on the
    user's reader or writer."""
    saved = {name: getattr(java, name)() for name in fields}
    try:
        yield
    finally:
        for name, value in saved.items():
            getattr(java, f"{name}_$eq")(value)
