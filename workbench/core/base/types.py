"""Enumerations of the public API: write modes, dataset types, content types, table properties."""

from __future__ import annotations

from enum import Enum


class TableWriteMode(str, Enum):
    """How ``write`` combines new data with a table."""

    AUTO = "auto"  # CREATE if missing, MERGE if the table has merge keys, else ADD
    CREATE = "create"  # create the table; fail if it exists
    ADD = "add"  # add rows (the default for tables without merge keys)
    APPEND = "append"  # add rows, read back in write order
    CHRONO = "chrono"  # add rows in time order, read back in write order (DeltaCAT's name)
    REPLACE = "replace"  # replace every row, keep the table's schema and properties
    MERGE = "merge"  # upsert by merge keys
    DELETE = "delete"  # delete rows whose merge keys match


class SchemaEvolutionMode(str, Enum):
    """Whether writes may change a table's schema."""

    AUTO = "auto"  # add new columns and widen types automatically
    MANUAL = "manual"  # only changes declared through ``schema=`` are applied
    DISABLED = "disabled"  # any schema change is an error


class ContentType(str, Enum):
    """File formats workbench can write and read."""

    PARQUET = "application/parquet"
    CSV = "text/csv"
    TSV = "text/tsv"
    PSV = "text/psv"
    UNESCAPED_TSV = "application/x-amzn-unescaped-tsv"  # tab-separated, nothing quoted
    JSON = "application/json"  # one JSON object per line
    FEATHER = "application/feather"
    ORC = "application/orc"
    AVRO = "application/avro"

    @property
    def extension(self) -> str:
        """File name extension used for files of this type."""
        return _EXTENSIONS[self]


_EXTENSIONS = {
    ContentType.PARQUET: "parquet",
    ContentType.CSV: "csv",
    ContentType.TSV: "tsv",
    ContentType.PSV: "psv",
    ContentType.UNESCAPED_TSV: "utsv",
    ContentType.JSON: "json",
    ContentType.FEATHER: "feather",
    ContentType.ORC: "orc",
    ContentType.AVRO: "avro",
}


class DatasetType(str, Enum):
    """Dataset types that ``read`` returns and ``write`` accepts."""

    DAFT = "daft"
    RAY_DATASET = "ray_dataset"
    PANDAS = "pandas"
    PYARROW = "pyarrow"
    POLARS = "polars"
    NUMPY = "numpy"
    PYARROW_PARQUET = "pyarrow_parquet"
    SPARK = "spark"

    def readable_content_types(self) -> frozenset[ContentType]:
        """Content types this dataset type's reader can load (DeltaCAT's sets, plus Spark)."""
        return _READABLE[self]

    def writable_content_types(self) -> frozenset[ContentType]:
        """Content types this dataset type's own writer produces (DeltaCAT's sets, plus Spark);
        ``write`` converts through Arrow, so a schemaless table takes any of them."""
        return _WRITABLE[self]

    @classmethod
    def local(cls) -> set[DatasetType]:
        """The dataset types held in this process's memory (a new set each call)."""
        return {cls.NUMPY, cls.PANDAS, cls.POLARS, cls.PYARROW, cls.PYARROW_PARQUET}

    @classmethod
    def distributed(cls) -> set[DatasetType]:
        """The dataset types computed by an engine, lazily (a new set each call)."""
        return {cls.DAFT, cls.RAY_DATASET, cls.SPARK}


# Content types whose files carry their own schema; the others (text) are schemaless and can
# only be written to schemaless tables.
SCHEMA_CONTENT_TYPES = frozenset(
    {ContentType.PARQUET, ContentType.ORC, ContentType.FEATHER, ContentType.AVRO}
)
_ALL_FORMATS = frozenset(ContentType)
_TEXT_AND_PARQUET = _ALL_FORMATS - SCHEMA_CONTENT_TYPES | {ContentType.PARQUET}
_READABLE = {
    DatasetType.DAFT: _TEXT_AND_PARQUET,
    DatasetType.RAY_DATASET: _ALL_FORMATS,
    DatasetType.POLARS: _ALL_FORMATS,
    DatasetType.PANDAS: _ALL_FORMATS,
    DatasetType.PYARROW: _ALL_FORMATS,
    DatasetType.NUMPY: _ALL_FORMATS,
    DatasetType.PYARROW_PARQUET: frozenset({ContentType.PARQUET}),
    DatasetType.SPARK: _TEXT_AND_PARQUET | {ContentType.ORC},
}
_WRITABLE = {
    **{t: _ALL_FORMATS for t in _READABLE},
    DatasetType.DAFT: _TEXT_AND_PARQUET,
    DatasetType.RAY_DATASET: _TEXT_AND_PARQUET,
    DatasetType.PYARROW_PARQUET: frozenset(),
}


class TableProperty(str, Enum):
    """Table-level settings, stored in the Delta table's configuration."""

    SUPPORTED_READER_TYPES = "workbench.supportedReaderTypes"
    SCHEMA_EVOLUTION_MODE = "workbench.schemaEvolutionMode"
    DEFAULT_SCHEMA_CONSISTENCY_TYPE = "workbench.defaultSchemaConsistencyType"
    # DeltaCAT's compaction settings. Workbench MERGEs and DELETEs rewrite the files holding the
    # keys at once (copy-on-write: DeltaCAT's MAX level), so the triggers are kept, not used.
    READ_OPTIMIZATION_LEVEL = "workbench.readOptimizationLevel"
    RECORDS_PER_COMPACTED_FILE = "workbench.recordsPerCompactedFile"
    APPENDED_RECORD_COUNT_COMPACTION_TRIGGER = "workbench.appendedRecordCountCompactionTrigger"
    APPENDED_FILE_COUNT_COMPACTION_TRIGGER = "workbench.appendedFileCountCompactionTrigger"
    APPENDED_DELTA_COUNT_COMPACTION_TRIGGER = "workbench.appendedDeltaCountCompactionTrigger"
    DEFAULT_COMPACTION_HASH_BUCKET_COUNT = "workbench.defaultCompactionHashBucketCount"
    # The columns whose values lay the table's rows out (``dc.optimize`` and compaction order
    # rows along a space-filling curve over them): a list of 1 to 4 column names.
    CLUSTER_BY = "workbench.clusterBy"


class SchemaConsistencyType(str, Enum):
    """What a write does with a column's values that do not fit its declared type."""

    NONE = "none"  # no check: the values are written as the data holds them (widening the type)
    COERCE = "coerce"  # cast the values to the declared type where no value is lost
    VALIDATE = "validate"  # refuse values that are not already of the declared type


class LifecycleState(str, Enum):
    """Where a table version is in its life; reads without ``table_version`` use the newest
    ``ACTIVE`` one."""

    CREATED = "created"
    UNRELEASED = "unreleased"
    ACTIVE = "active"
    DEPRECATED = "deprecated"
    BETA = "beta"
    DELETED = "deleted"


class TableReadOptimizationLevel(str, Enum):
    """How much work writes do so reads are fast (DeltaCAT's levels); workbench's merges are
    always copy-on-write, which is ``MAX``."""

    NONE = "none"
    MODERATE = "moderate"
    MAX = "max"


COMPACTION_COUNTS = (
    TableProperty.RECORDS_PER_COMPACTED_FILE,
    TableProperty.APPENDED_RECORD_COUNT_COMPACTION_TRIGGER,
    TableProperty.APPENDED_FILE_COUNT_COMPACTION_TRIGGER,
    TableProperty.APPENDED_DELTA_COUNT_COMPACTION_TRIGGER,
    TableProperty.DEFAULT_COMPACTION_HASH_BUCKET_COUNT,
)


class SortOrder(str, Enum):
    """Direction of a sort or merge order; ``"asc"`` and ``"desc"`` are accepted too."""

    ASCENDING = "ascending"
    DESCENDING = "descending"

    @classmethod
    def _missing_(cls, value: object) -> SortOrder | None:
        short = {"asc": cls.ASCENDING, "desc": cls.DESCENDING}
        return short.get(value.lower()) if isinstance(value, str) else None


class NullOrder(str, Enum):
    """Where nulls go in a sort or merge order."""

    AT_START = "at_start"
    AT_END = "at_end"


DEFAULT_ENGINE = "local"  # the engine core uses for its own reads and rewrites
