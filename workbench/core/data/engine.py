"""Compute engines behind one protocol, and the registry that finds them.

An engine reads a table version into its own dataset type, turns data of its type into Parquet
files inside a table folder, rewrites the files that hold given merge keys, and may run SQL. It
never commits: it hands back the files it wrote (and, for a rewrite, the files they replace),
and core commits them inside the catalog transaction.

Core never imports an engine module: engines are found by name through lazy loaders (built in:
``local``, ``spark``, ``daft``, ``ray``; others through the ``workbench.engines`` entry-point
group), and a missing optional dependency becomes an install hint.
"""

from __future__ import annotations

import importlib
import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from workbench.core.base.errors import (
    EngineUnavailableError,
    InvalidArgumentError,
    UnsupportedFeatureError,
)
from workbench.core.base.types import DEFAULT_ENGINE, DatasetType
from workbench.core.delta.clustering import clustered, clustering_of
from workbench.core.delta.compaction_plan import CompactionSettings
from workbench.core.delta.data_files import Rewrite, write_parts, write_streamed
from workbench.core.delta.reading import live_file_chunks, live_table

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.data.predict_plan import Model, PredictPlan
    from workbench.core.delta.data_files import DataFile, WrittenFile
    from workbench.core.filters.table_filter import TableFilter
    from workbench.core.schema.merge_order import Ranking
    from workbench.core.schema.table_schema import Schema
    from workbench.core.storage.store import Storage

ENTRY_POINT_GROUP = "workbench.engines"
T = TypeVar("T")


class Engine(ABC):
    """A compute engine. Subclasses import their libraries lazily, inside methods."""

    name: ClassVar[str]
    # Top-level modules whose datasets this engine writes (e.g. "pyspark").
    data_modules: ClassVar[tuple[str, ...]] = ()
    # The ``read_as`` dataset types this engine produces.
    dataset_types: ClassVar[tuple[DatasetType, ...]] = ()
    # The dataset type ``sql`` returns.
    sql_result_type: ClassVar[DatasetType | None] = None
    # True when the engine's data lives on a cluster's workers, so collecting it into this
    # process (to inspect values) could exhaust the driver's memory.
    clustered: ClassVar[bool] = False
    # True when the engine's reads, SQL, MERGE and DELETE apply Delta deletion vectors.
    applies_deletion_vectors: ClassVar[bool] = False
    # True when ``dc.infer`` keeps rows in the engine: chosen by ``map_files``, predictions
    # written as files by ``predict_files`` and merged back from ``read_staged``. False gathers
    # predictions in this process (local and Daft, which run here).
    merges_predictions: ClassVar[bool] = False

    def __init__(self, settings: Mapping[str, Any] | None = None):
        self.settings = dict(settings or {})

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """``settings`` from ``dc.init(engines=...)`` if the engine accepts them, else raise
        ``InvalidArgumentError`` naming what it does not know."""
        return dict(settings)

    # ------------------------------------------------------------------------------ reading
    @abstractmethod
    def read(
        self,
        table: OpenTable,
        read_as: DatasetType,
        columns: list[str] | None,
        limit: int | None,
        path_column: str | None = None,
        row_filter: TableFilter | None = None,
    ) -> Any:
        """The table version as ``read_as``, lazily where the engine can (``limit``: only the
        first rows, in write order; ``path_column``: a column naming each row's file;
        ``row_filter``: only the rows it holds for, with SQL's meaning; the table's files are
        those it could match already)."""

    # ------------------------------------------------------------------------------ writing
    @abstractmethod
    def source(self, data: Any) -> Any:
        """``data`` in the engine's own form, converted once."""

    @abstractmethod
    def schema(self, source: Any) -> pa.Schema:
        """The Arrow schema of a source."""

    @abstractmethod
    def keyed(
        self, source: Any, keys: list[str], table: str, dedupe: str | None, order: Ranking = ()
    ) -> Any:
        """The source with non-null, unique merge keys (the merge ``order`` ranks the rows of
        a repeated key, then ``dedupe`` keeps the first or last); raises ``MergeKeyError``
        for repeated keys that neither resolves."""

    @abstractmethod
    def write_files(self, source: Any, schema: Schema, folder: str) -> list[str]:
        """Write the source as Parquet files in ``schema``'s types (absent columns filled with
        their defaults) into the table folder; return the files written, in write order."""

    @abstractmethod
    def merge(self, table: OpenTable, source: Any, schema: Schema, keys: list[str]) -> Rewrite:
        """Upsert a keyed source (a subset of ``schema``'s columns): rewrite the table files
        holding its keys with the source's values, and write new files for keys not found."""

    @abstractmethod
    def delete(self, table: OpenTable, source: Any, keys: list[str]) -> Rewrite:
        """Rewrite the table files holding the source's keys without those rows."""

    def cast_exact(self, source: Any, targets: Mapping[str, pa.DataType]) -> tuple[Any, list[str]]:
        """The source with each column of ``targets`` cast to its type where every value
        converts exactly (nulls stay null), and the names of the columns cast. This default
        converts through Arrow in this process; an engine whose data is on a cluster checks
        and casts it there."""
        from workbench.core.schema.exact_casts import exactly_cast

        table, cast = exactly_cast(self.to_arrow(source), targets)
        return (self.source(self.from_arrow(table)), cast) if cast else (source, [])

    # ---------------------------------------------------------------------------- inference
    def predict(self, source: Any, model: Model, plan: PredictPlan) -> Iterator[pa.Table]:
        """Run ``model`` over a work table (``source``: the engine's form of the Arrow table
        ``plan`` describes), loading it once per worker, never per batch, and yield its
        predictions (``inference.plan.result_schema``) as they are made. A model raising
        surfaces as (or wraps) ``ModelFailedError``."""
        raise InvalidArgumentError(
            f"The {self.name} engine does not run models; use engine='daft', 'ray', 'spark' "
            "or 'local'."
        )

    def compact(self, table: OpenTable, files: list[DataFile]) -> list[WrittenFile]:
        """The live rows of ``files`` (a table's files, in write order) written again into the
        table folder as few files: what a compaction step writes. Engines whose data lives on
        workers (``clustered``) read and write a keyed table's files there; rows of a table
        without keys keep their write order, so they are rewritten in this process (a step's
        capped bytes at a time, streamed a file's rows at a time into parts of the target
        size). A clustered table's rows (``TableProperty.CLUSTER_BY``) are written in its
        clustering order."""
        clustering = clustering_of(table.properties)
        if self.clustered and table.schema.merge_keys:
            storage = table.loc.catalog.storage
            data = self.read_staged(files, table.uri, table.schema.arrow, storage)
            return self.write_files(self.one_part(data, clustering), table.schema, table.uri)
        if clustering:  # one order over every row: sorted in memory, the step's bytes capped
            rows = live_table(table, files, keep=False)  # files this step replaces
            return write_parts(clustered(rows, clustering), table.schema, table.uri, table.storage)
        return write_streamed(
            (chunk for f in files for chunk in live_file_chunks(table, f)),  # a batch at a time
            table.schema,
            table.uri,
            table.storage,
            CompactionSettings.of(table.properties).target_size,
        )

    def one_part(self, data: Any, clustering: list[str]) -> Any:
        """``data`` (this engine's dataset) as one partition, written as one file, its rows in
        the clustering order of the columns ``clustering`` names (if any). This default orders
        them in this process; engines whose data lives on workers order them there."""
        if not clustering:
            return data
        return self.from_arrow(clustered(self.to_arrow(data), clustering))

    def predict_files(
        self, source: Any, model: Model, plan: PredictPlan, schema: pa.Schema, folder: str
    ) -> Iterator[WrittenFile]:
        """The model's predictions (in ``schema``) written by the engine's workers as Parquet
        files into ``folder`` on the catalog's storage (``plan.storage``), each yielded once
        written (engines with ``merges_predictions``)."""
        raise InvalidArgumentError(f"The {self.name} engine writes no prediction files.")

    def map_files(self, files: list[DataFile], function: Callable[[DataFile], T]) -> list[T]:
        """``function`` of each file, in order, each in a task of the engine's workers
        (engines with ``merges_predictions``)."""
        raise InvalidArgumentError(f"The {self.name} engine runs no tasks over files.")

    def read_staged(
        self, files: list[DataFile], folder: str, schema: pa.Schema, storage: Storage
    ) -> Any:
        """Files ``predict_files`` wrote into ``folder``, as this engine's lazy dataset."""
        raise InvalidArgumentError(f"The {self.name} engine reads no staged files.")

    # ---------------------------------------------------------------------------------- SQL
    def sql(self, query: str, tables: Mapping[str, OpenTable]) -> Any:
        """Run ``query`` where each name in ``tables`` is a table version; return the engine's
        own result."""
        raise InvalidArgumentError(f"The {self.name} engine does not run SQL; use 'local'.")

    def sql_plan(self, query: str, tables: Mapping[str, OpenTable]) -> str:
        """The engine's own plan of ``query`` as text ('' when it shows none)."""
        return ""

    # ------------------------------------------------------------------------ conversions
    def to_arrow(self, data: Any) -> pa.Table:
        """A dataset of this engine (or a ``sql`` result) as one pyarrow Table."""
        raise InvalidArgumentError(f"The {self.name} engine cannot convert {type(data)}.")

    def from_arrow(self, table: pa.Table) -> Any:
        """A pyarrow Table as this engine's dataset type."""
        raise InvalidArgumentError(f"The {self.name} engine makes no dataset from Arrow.")


@dataclass(frozen=True)
class EngineSpec:
    """How to load an engine: the class to import and the packages it needs."""

    name: str
    target: str  # "module:Class"
    requires: tuple[str, ...] = ()  # importable modules the engine needs
    extra: str | None = None  # the pip extra that installs them


BUILT_IN = {
    spec.name: spec
    for spec in (
        EngineSpec("local", "workbench.engines.local:LocalEngine"),
        EngineSpec("daft", "workbench.engines.daft:DaftEngine", ("daft",), "daft"),
        EngineSpec("spark", "workbench.engines.spark:SparkEngine", ("pyspark",), "spark"),
        EngineSpec("ray", "workbench.engines.ray:RayEngine", ("ray",), "ray"),
    )
}
# Which engine writes data of a library, and which produces each dataset type.
_BY_MODULE = {"daft": "daft", "pyspark": "spark", "ray": "ray"}
ENGINE_MODULES = frozenset(_BY_MODULE)
_BY_DATASET_TYPE = {
    DatasetType.DAFT: "daft",
    DatasetType.RAY_DATASET: "ray",
    DatasetType.SPARK: "spark",
}


class _Registry:
    """Engine specs by name, their settings, and the engines loaded so far."""

    def __init__(self) -> None:
        self.specs = dict(BUILT_IN)
        self.settings: dict[str, dict[str, Any]] = {}
        self.loaded: dict[str, Engine] = {}
        self._plugins_found = False

    def find_plugins(self) -> None:
        """Add engines other packages declare in the ``workbench.engines`` entry-point group."""
        if self._plugins_found:
            return
        self._plugins_found = True
        from importlib.metadata import entry_points

        for point in entry_points(group=ENTRY_POINT_GROUP):
            self.specs.setdefault(point.name, EngineSpec(point.name, point.value))

    def get(self, name: str) -> Engine:
        if name not in self.loaded:
            if name not in self.specs:  # a built-in engine needs no search of entry points
                self.find_plugins()
            spec = self.specs.get(name)
            if spec is None:
                raise InvalidArgumentError(
                    f"Unknown engine {name!r}; available engines are {sorted(self.specs)}."
                )
            self.loaded[name] = _load(spec)(self.settings.get(name))
        return self.loaded[name]

    def configure(self, settings: Mapping[str, Mapping[str, Any]]) -> None:
        for name, values in settings.items():
            self.find_plugins()
            if name not in self.specs:
                raise InvalidArgumentError(
                    f"dc.init(engines=...) names unknown engine {name!r}; available engines "
                    f"are {sorted(self.specs)}."
                )
            if not isinstance(values, Mapping):
                raise InvalidArgumentError(
                    f"Settings of engine {name!r} must be a dict, e.g. "
                    "engines={'ray': {'num_cpus': 2}}."
                )
            self.settings[name] = _load(self.specs[name]).check_settings(values)
            self.loaded.pop(name, None)  # the next use starts it with the new settings


_registry = _Registry()


def _load(spec: EngineSpec) -> type[Engine]:
    missing = [m for m in spec.requires if importlib.util.find_spec(m) is None]
    if missing:
        hint = f"pip install 'workbench[{spec.extra}]'" if spec.extra else f"pip install {missing}"
        raise EngineUnavailableError(
            f"The {spec.name} engine needs {', '.join(missing)}, which is not installed; "
            f"install it with {hint}."
        )
    module, _, attribute = spec.target.partition(":")
    engine = getattr(importlib.import_module(module), attribute)
    if not (isinstance(engine, type) and issubclass(engine, Engine)):
        raise EngineUnavailableError(f"{spec.target} is not a workbench Engine subclass.")
    return engine


def get_engine(name: str) -> Engine:
    """The engine called ``name``, loaded (and started, for some engines) on first use."""
    if not isinstance(name, str):
        raise InvalidArgumentError(f"engine={name!r} must be an engine name such as 'local'.")
    return _registry.get(name)


def engine_for_data(data: Any) -> Engine:
    """The engine that writes ``data``: by the library it comes from (local for in-memory
    data such as pandas, pyarrow, polars and numpy). Data an engine already wrote as files
    brings the engine that commits it (``writing_engine``)."""
    own = getattr(data, "writing_engine", None)
    if isinstance(own, Engine):
        return own
    module = type(data).__module__.split(".")[0]
    return get_engine(_BY_MODULE.get(module, DEFAULT_ENGINE))


def engine_for_dataset_type(read_as: DatasetType) -> Engine:
    """The engine that produces ``read_as``."""
    return get_engine(_BY_DATASET_TYPE.get(read_as, DEFAULT_ENGINE))


def configure_engines(settings: Mapping[str, Mapping[str, Any]]) -> None:
    """Remember engine settings from ``dc.init(engines=...)``; engines already started are
    started again with them on next use."""
    if not isinstance(settings, Mapping):
        raise InvalidArgumentError(
            "engines= takes a dict of engine name -> settings, e.g. {'ray': {'num_cpus': 2}}."
        )
    _registry.configure(settings)


def engine_settings(name: str) -> dict[str, Any]:
    """The settings ``dc.init`` gave an engine (empty if none)."""
    return dict(_registry.settings.get(name, {}))


def available_engines() -> list[str]:
    """Names of the engines that can be loaded (installed or not)."""
    _registry.find_plugins()
    return sorted(_registry.specs)


def require_vectors_applied(engine: Engine, table: OpenTable, doing: str) -> None:
    """Refuse to let an engine that does not apply deletion vectors read a table that has some
    (it would see deleted rows)."""
    vectored = sum(1 for f in table.files if f.deletion_vector is not None)
    if vectored and not engine.applies_deletion_vectors:
        raise UnsupportedFeatureError(
            f"Table {table.loc.qualified!r} has deletion vectors ({vectored} files with deleted "
            f"rows) and the {engine.name} engine cannot apply them yet, so it cannot {doing} it. "
            "Fold them into the files with dc.optimize(...), or use the local engine "
            "(read_as=dc.DatasetType.PYARROW or PANDAS)."
        )
