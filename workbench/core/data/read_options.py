"""DeltaCAT's read options: its own system arguments and the keyword arguments it hands to its
file readers. Those that only tune how files are read change nothing here and are accepted so
DeltaCAT code runs unchanged; those that change the answer are applied (``include_columns``
and ``column_names`` choose columns, an empty ``partition_filter`` no rows) or refused with
an error saying what to use instead, never ignored; anything else is refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.core.base.errors import InvalidArgumentError, UnsupportedFeatureError

DELTACAT_READ_OPTIONS = frozenset(
    {
        "max_parallelism", "partition_filter", "table_version_schema", "entry_params",
        "file_reader_kwargs_provider", "ray_options_provider", "distributed_dataset_type",
        "column_names", "include_columns", "manifest", "io_config", "ray_init_options",
        "pre_buffer", "use_pandas_metadata", "use_pyarrow", "use_threads", "memory_map",
        "lines", "sep", "separator", "header", "has_header", "delimiter", "encoding",
    }
)  # fmt: skip

# Options that would change which rows or values a read gives, and how to get that here.
_REFUSED = {
    "table_version_schema": "read the table's own schema, then cast (e.g. table.cast(schema))",
    "entry_params": "use mode='merge' with merge keys, or filter=...",
    "file_reader_kwargs_provider": "use columns= and filter=",
    "manifest": "read the table, or dc.from_manifest_table(...) for a schemaless table",
}
_PROJECTING = ("include_columns", "column_names")


@dataclass(frozen=True)
class ReadRequest:
    """What DeltaCAT's options ask of a read: the columns (None: all) and whether any rows."""

    columns: Any
    no_rows: bool = False


def read_request(columns: Any, options: dict[str, Any], read_as: Any) -> ReadRequest:
    """The columns and rows a read with ``options`` asks for; raises for an unknown option,
    and for one that changes the answer in a way this read cannot give."""
    unknown = sorted(set(options) - DELTACAT_READ_OPTIONS)
    if unknown:
        raise InvalidArgumentError(
            f"read() got unexpected keyword argument(s) {unknown}; see help(dc.read) for its "
            "arguments."
        )
    for name, instead in _REFUSED.items():
        if options.get(name) is not None:
            raise UnsupportedFeatureError(
                f"read(..., {name}=...) would change what the read gives, which workbench "
                f"cannot apply to a Delta table; {instead}."
            )
    distributed = options.get("distributed_dataset_type")
    if distributed is not None and _named(distributed) != _named(read_as):
        raise InvalidArgumentError(
            f"distributed_dataset_type={distributed!r} differs from read_as={read_as!r}; pass "
            "the type you want as read_as=... only."
        )
    return ReadRequest(_columns(columns, options), _no_partitions(options.get("partition_filter")))


def _named(kind: Any) -> str:
    return str(getattr(kind, "name", kind)).upper()


def _columns(columns: Any, options: dict[str, Any]) -> Any:
    """``columns``, or the columns DeltaCAT's ``include_columns``/``column_names`` choose (all
    given must agree)."""
    given = {"columns": columns} if columns is not None else {}
    given |= {name: options[name] for name in _PROJECTING if options.get(name) is not None}
    choices = list(given.values())
    if any(_listed(c) != _listed(choices[0]) for c in choices[1:]):
        raise InvalidArgumentError(
            f"{' and '.join(f'{k}={v!r}' for k, v in given.items())} choose different columns; "
            "pass one of them."
        )
    return choices[0] if choices else None


def _listed(columns: Any) -> Any:
    return [columns] if isinstance(columns, str) else list(columns)


def _no_partitions(partition_filter: Any) -> bool:
    """True for an empty ``partition_filter`` (no partition: no rows). Workbench tables are
    unpartitioned Delta tables, so a list that names partitions cannot be applied."""
    if partition_filter is None:
        return False
    if isinstance(partition_filter, (list, tuple)) and not partition_filter:
        return True
    raise UnsupportedFeatureError(
        f"partition_filter={partition_filter!r}: workbench tables are not partitioned, so no "
        "partition can be chosen; choose rows with filter=..., e.g. filter=\"region = 'eu'\"."
    )
