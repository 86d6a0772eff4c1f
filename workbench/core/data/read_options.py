"""DeltaCAT's read options: its own system arguments and the keyword arguments it hands to its
file readers. Workbench reads files straight into the dataset type asked for, so they change
nothing; they are accepted so DeltaCAT code runs unchanged, and anything else is refused."""

from __future__ import annotations

from typing import Any

from workbench.core.base.errors import InvalidArgumentError

DELTACAT_READ_OPTIONS = frozenset(
    {
        "max_parallelism", "partition_filter", "table_version_schema", "entry_params",
        "file_reader_kwargs_provider", "ray_options_provider", "distributed_dataset_type",
        "column_names", "include_columns", "manifest", "io_config", "ray_init_options",
        "pre_buffer", "use_pandas_metadata", "use_pyarrow", "use_threads", "memory_map",
        "lines", "sep", "separator", "header", "has_header", "delimiter", "encoding",
    }
)  # fmt: skip


def check_read_options(options: dict[str, Any]) -> None:
    """Refuse keyword arguments that are not DeltaCAT read options (most likely typos)."""
    unknown = sorted(set(options) - DELTACAT_READ_OPTIONS)
    if unknown:
        raise InvalidArgumentError(
            f"read() got unexpected keyword argument(s) {unknown}; see help(dc.read) for its "
            "arguments."
        )
