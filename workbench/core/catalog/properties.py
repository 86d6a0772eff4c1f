"""Table properties: DeltaCAT's ``TableProperty`` keys stored as Delta configuration strings,
their defaults, and the checks their values must pass."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

from workbench.core.base.arguments import choice
from workbench.core.base.errors import InvalidArgumentError, UnsupportedFeatureError
from workbench.core.base.types import (
    COMPACTION_COUNTS,
    DatasetType,
    SchemaConsistencyType,
    SchemaEvolutionMode,
    TableProperty,
    TableReadOptimizationLevel,
)
from workbench.core.delta.clustering import (
    check_clustering,
    clustering_of,
    encode_clustering,
)
from workbench.core.delta.commits import PURGE_SHARE_PROPERTY
from workbench.core.delta.compaction_plan import check_settings as check_compaction_settings
from workbench.core.schema.table_schema import Schema

RECORDS_PER_COMPACTED_FILE = 4_000_000
# What a table holds for a property it was not given (DeltaCAT's defaults).
DEFAULTS: dict[TableProperty, Any] = {
    TableProperty.READ_OPTIMIZATION_LEVEL: TableReadOptimizationLevel.MAX,
    TableProperty.RECORDS_PER_COMPACTED_FILE: RECORDS_PER_COMPACTED_FILE,
    TableProperty.APPENDED_RECORD_COUNT_COMPACTION_TRIGGER: RECORDS_PER_COMPACTED_FILE * 16,
    TableProperty.APPENDED_FILE_COUNT_COMPACTION_TRIGGER: 1000,
    TableProperty.APPENDED_DELTA_COUNT_COMPACTION_TRIGGER: 100,
    TableProperty.DEFAULT_COMPACTION_HASH_BUCKET_COUNT: 8,
    TableProperty.SCHEMA_EVOLUTION_MODE: SchemaEvolutionMode.AUTO,
    TableProperty.DEFAULT_SCHEMA_CONSISTENCY_TYPE: SchemaConsistencyType.NONE,
    TableProperty.SUPPORTED_READER_TYPES: list(DatasetType),
    TableProperty.CLUSTER_BY: None,  # not clustered
}


def decode_reader_types(properties: Mapping[str, str]) -> list[DatasetType]:
    """Supported reader types stored in table properties (all types when unset; none, so no
    reader validation, when set to None or [])."""
    value = properties.get(TableProperty.SUPPORTED_READER_TYPES.value)
    if not value:
        return list(DatasetType)
    return [DatasetType[name] for name in json.loads(value)]


def decode_properties(configuration: Mapping[str, str]) -> dict[TableProperty, Any]:
    """Every ``TableProperty`` of a Delta configuration, decoded, defaults filled in."""
    decoded: dict[TableProperty, Any] = {}
    for key, default in DEFAULTS.items():
        stored = configuration.get(key.value)
        if key is TableProperty.SUPPORTED_READER_TYPES:
            decoded[key] = decode_reader_types(configuration) if stored != "[]" else None
        elif key is TableProperty.CLUSTER_BY:
            decoded[key] = clustering_of(configuration) or None
        elif stored is None:
            decoded[key] = default
        elif isinstance(default, Enum):
            decoded[key] = type(default)(stored)
        else:
            decoded[key] = int(stored)
    return decoded


def stored_properties(configuration: Mapping[str, str]) -> dict[TableProperty, Any]:
    """The ``TableProperty`` values a table was given (no defaults), as ``table_properties=``
    takes them."""
    decoded = decode_properties(configuration)
    return {key: decoded[key] for key in DEFAULTS if key.value in configuration}


def encode_properties(table_properties: Mapping[Any, Any] | None) -> dict[str, str]:
    """Serialise user table properties to Delta configuration strings."""
    if table_properties is not None and not isinstance(table_properties, Mapping):
        raise InvalidArgumentError(
            f"table_properties={table_properties!r} must be a dict of property -> value, e.g. "
            "{dc.TableProperty.SCHEMA_EVOLUTION_MODE: dc.SchemaEvolutionMode.MANUAL}."
        )
    encoded: dict[str, str] = {}
    for key, value in (table_properties or {}).items():
        name = key.value if isinstance(key, TableProperty) else str(key)
        if name == TableProperty.SUPPORTED_READER_TYPES.value:
            if value is not None and (isinstance(value, str) or not isinstance(value, Iterable)):
                raise InvalidArgumentError(
                    f"SUPPORTED_READER_TYPES must be a list of dc.DatasetType (or None: no "
                    f"reader validation), got {value!r}."
                )  # None or [] turns reader validation off, as in DeltaCAT
            types = [choice(DatasetType, t, "SUPPORTED_READER_TYPES") for t in value or []]
            encoded[name] = json.dumps([t.name for t in types])
        elif name == TableProperty.READ_OPTIMIZATION_LEVEL.value:
            encoded[name] = _choice(TableReadOptimizationLevel, name, value)
        elif name in {p.value for p in COMPACTION_COUNTS}:
            encoded[name] = str(_positive_count(name, value))
        elif name == TableProperty.SCHEMA_EVOLUTION_MODE.value:
            encoded[name] = _choice(SchemaEvolutionMode, name, value)
        elif name == TableProperty.DEFAULT_SCHEMA_CONSISTENCY_TYPE.value:
            encoded[name] = _choice(SchemaConsistencyType, name, value)
        elif name == PURGE_SHARE_PROPERTY:
            encoded[name] = str(_share(name, value))
        elif name == TableProperty.CLUSTER_BY.value:
            encoded[name] = encode_clustering(value)
        else:
            encoded[name] = _delta_property(key, value)
    return encoded


_DELTA_FLAGS = (
    "delta.appendOnly",
    "delta.enableChangeDataFeed",
    "delta.enableExpiredLogCleanup",
    "delta.enableDeletionVectors",
)
_DELTA_DURATIONS = ("delta.logRetentionDuration", "delta.deletedFileRetentionDuration")
# Properties that raise the reader protocol, which Spark without the Delta jars cannot read.
_DELTA_FORBIDDEN = ("delta.columnMapping.mode",)
_DURATION = re.compile(
    r"interval \d+ (nanosecond|microsecond|millisecond|second|minute|hour|day|week)s?"
)


def _choice(kind: type[Enum], name: str, value: Any) -> str:
    return choice(kind, value, f"table property {name}").value


def _share(name: str, value: Any) -> float:
    try:
        share = float(value)
    except (TypeError, ValueError):
        share = -1.0
    if isinstance(value, bool) or not 0 < share <= 1:
        raise InvalidArgumentError(
            f"Table property {name} is the share of a file's rows deleted past which the file "
            f"is rewritten: a number above 0 and at most 1, not {value!r}."
        )
    return share


def _positive_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgumentError(f"Table property {name} is a count of 1 or more, not {value!r}.")
    return value


def check_configuration(schema: Schema, configuration: Mapping[str, str]) -> None:
    """Raise for table properties the table cannot use: a read optimization level its merge
    keys do not allow, compaction settings that are no numbers, clustering columns it lacks."""
    check_read_optimization(schema, configuration)
    check_compaction_settings(configuration)
    check_clustering(schema, clustering_of(configuration))


def check_read_optimization(schema: Schema, configuration: Mapping[str, str]) -> None:
    """Merge keys need copy-on-write merges (``TableReadOptimizationLevel.MAX``), the only kind
    workbench does."""
    level = configuration.get(TableProperty.READ_OPTIMIZATION_LEVEL.value, "max")
    if schema.merge_keys and level != TableReadOptimizationLevel.MAX.value:
        raise UnsupportedFeatureError(
            f"Table read optimization level `{level}` is not yet supported for tables with merge "
            "keys. Please use TableReadOptimizationLevel.MAX (merges rewrite the files holding "
            "the keys at once)."
        )


def _delta_property(key: Any, value: Any) -> str:
    """A Delta (or user) table property as its configuration string, checked where Delta
    defines the value."""
    if not isinstance(key, str) or not key:
        raise InvalidArgumentError(
            f"Table property names are strings (or dc.TableProperty), not {key!r}."
        )
    if not isinstance(value, (str, bool, int, float)):
        raise InvalidArgumentError(
            f"Table property {key!r} must be a string, number or boolean, not "
            f"{type(value).__name__}."
        )
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if key in _DELTA_FLAGS and text not in ("true", "false"):
        raise InvalidArgumentError(f"Table property {key!r} is 'true' or 'false', not {value!r}.")
    if key in _DELTA_DURATIONS and not _DURATION.fullmatch(text):
        raise InvalidArgumentError(
            f"Table property {key!r} is a duration like 'interval 7 days', not {value!r}."
        )
    if key in _DELTA_FORBIDDEN and text not in ("false", "none"):
        raise InvalidArgumentError(
            f"Table property {key!r}={value!r} would need Delta reader features that Spark "
            "without the Delta jars and other plain-Parquet readers cannot read; leave it unset."
        )
    return text


def default_consistency(configuration: Mapping[str, str]) -> SchemaConsistencyType | None:
    """The consistency type a table gives fields without one: None when the table was not
    given ``DEFAULT_SCHEMA_CONSISTENCY_TYPE`` (types then widen only where no value is lost)."""
    stored = configuration.get(TableProperty.DEFAULT_SCHEMA_CONSISTENCY_TYPE.value)
    return SchemaConsistencyType(stored) if stored is not None else None


# Delta configuration key of a table's description (DeltaCAT's ``table_description``).
DESCRIPTION_PROPERTY = "workbench.description"
SCHEMALESS_PROPERTY = "workbench.schemaless"  # table property marking a schemaless table
