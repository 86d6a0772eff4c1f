"""The public API as one module: what ``import workbench as dc`` gives, importable by the
front ends (widgets, magics, CLI) without the IPython extension hook of ``workbench``.

The enums and errors load with it; every other name loads on first use (PEP 562), so
``import workbench`` is quick and ``dc.sql`` imports only what a query needs."""

import importlib
from typing import Any

from workbench.core.base.names import MAIN as MAIN_BRANCH
from workbench.core.base.types import (
    ContentType,
    DatasetType,
    LifecycleState,
    NullOrder,
    SchemaConsistencyType,
    SchemaEvolutionMode,
    SortOrder,
    TableProperty,
    TableReadOptimizationLevel,
    TableWriteMode,
)
from workbench.core.base.wiring import wire_later
from workbench.exceptions import *  # noqa: F403
from workbench.exceptions import __all__ as _errors
from workbench.version import __version__ as __version__

# Modules that register hooks when imported (compaction after each commit, runs noting their
# writes, name caches forgotten, the built-in models dc.infer takes by name): loaded before
# anything first records a change, commits or looks a model up by name (core.base.wiring).
wire_later(
    "workbench.core.ops.compaction",
    "workbench.core.ops.names",
    "workbench.core.events.runs",
    "workbench.builtin_models.registry",
)

# public name -> (module, attribute)
_LAZY: dict[str, tuple[str, str]] = {
    "models": ("workbench.builtin_models.registry", "models"),
    "search": ("workbench.builtin_models.search", "search"),
    "Catalog": ("workbench.core.catalog.catalogs", "Catalog"),
    "CatalogProperties": ("workbench.core.catalog.catalogs", "CatalogProperties"),
    "Namespace": ("workbench.core.catalog.descriptions", "Namespace"),
    "Table": ("workbench.core.catalog.descriptions", "Table"),
    "TableInfo": ("workbench.core.catalog.descriptions", "TableInfo"),
    "TableRef": ("workbench.core.catalog.descriptions", "TableRef"),
    "WriteResult": ("workbench.core.catalog.descriptions", "WriteResult"),
    "TableDefinition": ("workbench.core.catalog.descriptions", "TableInfo"),
    "clear_catalogs": ("workbench.core.catalog.registry", "clear_catalogs"),
    "init_local": ("workbench.core.catalog.registry", "init_local"),
    "list_catalogs": ("workbench.core.catalog.registry", "list_catalogs"),
    "pop_catalog": ("workbench.core.catalog.registry", "pop_catalog"),
    "put_catalog": ("workbench.core.catalog.registry", "put_catalog"),
    "current_branch": ("workbench.core.catalog.scope", "current_branch"),
    "get_catalog": ("workbench.core.catalog.scope", "get_catalog"),
    "dataset_length": ("workbench.core.data.datasets", "dataset_length"),
    "dataset_schema": ("workbench.core.data.datasets", "dataset_schema"),
    "from_pandas": ("workbench.core.data.datasets", "from_pandas"),
    "from_pyarrow": ("workbench.core.data.datasets", "from_pyarrow"),
    "to_pandas": ("workbench.core.data.datasets", "to_pandas"),
    "to_pyarrow": ("workbench.core.data.datasets", "to_pyarrow"),
    "from_manifest_table": ("workbench.core.data.manifest", "from_manifest_table"),
    "lineage": ("workbench.core.events.queries", "lineage"),
    "run_events": ("workbench.core.events.queries", "run_events"),
    "runs": ("workbench.core.events.queries", "runs"),
    "Run": ("workbench.core.events.runs", "Run"),
    "current_run": ("workbench.core.events.runs", "current_run"),
    "run": ("workbench.core.events.runs", "run"),
    "infer": ("workbench.core.inference.infer", "infer"),
    "Model": ("workbench.core.inference.model", "Model"),
    "model": ("workbench.core.inference.model", "model"),
    "InferResult": ("workbench.core.inference.result", "InferResult"),
    "catalog_changes": ("workbench.core.io.changes", "catalog_changes"),
    "changes": ("workbench.core.io.changes", "changes"),
    "BranchDiff": ("workbench.core.io.diff", "BranchDiff"),
    "TableDiff": ("workbench.core.io.diff", "TableDiff"),
    "diff": ("workbench.core.io.diff", "diff"),
    "diff_branch": ("workbench.core.io.diff", "diff_branch"),
    "TableHandle": ("workbench.core.io.handle", "TableHandle"),
    "TableMap": ("workbench.core.io.handle", "TableMap"),
    "table": ("workbench.core.io.handle", "table"),
    "IngestResult": ("workbench.core.io.kafka_ingest", "IngestResult"),
    "ingest_kafka": ("workbench.core.io.kafka_ingest", "ingest_kafka"),
    "read": ("workbench.core.io.reader", "read"),
    "read_table": ("workbench.core.io.reader", "read"),
    "sql": ("workbench.core.io.sql", "sql"),
    "DeltaCatUrl": ("workbench.core.io.url_names", "DeltaCatUrl"),
    "copy": ("workbench.core.io.urls", "copy"),
    "get": ("workbench.core.io.urls", "get"),
    "list": ("workbench.core.io.urls", "list_url"),
    "put": ("workbench.core.io.urls", "put"),
    "write": ("workbench.core.io.writer", "write"),
    "write_to_table": ("workbench.core.io.writer", "write"),
    "Preview": ("workbench.core.media.html", "Preview"),
    "show": ("workbench.core.media.html", "show"),
    "ImportResult": ("workbench.core.media.importer", "ImportResult"),
    "import_media": ("workbench.core.media.importer", "import_media"),
    "alter_table": ("workbench.core.ops.alter", "alter_table"),
    "Branch": ("workbench.core.ops.branches", "Branch"),
    "branch": ("workbench.core.ops.branches", "branch"),
    "branches": ("workbench.core.ops.branches", "branches"),
    "create_branch": ("workbench.core.ops.branches", "create_branch"),
    "drop_branch": ("workbench.core.ops.branches", "drop_branch"),
    "use_branch": ("workbench.core.ops.branches", "use_branch"),
    "VacuumResult": ("workbench.core.ops.maintenance", "VacuumResult"),
    "optimize": ("workbench.core.ops.maintenance", "optimize"),
    "vacuum": ("workbench.core.ops.maintenance", "vacuum"),
    "create_namespace": ("workbench.core.ops.namespaces", "create_namespace"),
    "drop_namespace": ("workbench.core.ops.namespaces", "drop_namespace"),
    "get_namespace": ("workbench.core.ops.namespaces", "get_namespace"),
    "list_namespaces": ("workbench.core.ops.namespaces", "list_namespaces"),
    "namespace_exists": ("workbench.core.ops.namespaces", "namespace_exists"),
    "MergeResult": ("workbench.core.ops.publish", "MergeResult"),
    "merge_branch": ("workbench.core.ops.publish", "merge_branch"),
    "create_table": ("workbench.core.ops.tables", "create_table"),
    "delta_table": ("workbench.core.ops.tables", "delta_table"),
    "drop_table": ("workbench.core.ops.tables", "drop_table"),
    "get_table": ("workbench.core.ops.tables", "get_table"),
    "list_tables": ("workbench.core.ops.tables", "list_tables"),
    "table_exists": ("workbench.core.ops.tables", "table_exists"),
    "tag": ("workbench.core.ops.tags", "tag"),
    "MergeOrder": ("workbench.core.schema.merge_order", "MergeOrder"),
    "Field": ("workbench.core.schema.table_schema", "Field"),
    "Schema": ("workbench.core.schema.table_schema", "Schema"),
    "init": ("workbench.core.session", "init"),
    "idempotency_version": ("workbench.core.transactions.committed_keys", "idempotency_version"),
    "current_transaction": ("workbench.core.transactions.context", "current_transaction"),
    "run_transaction": ("workbench.core.transactions.context", "run_transaction"),
    "transaction": ("workbench.core.transactions.context", "transaction"),
    "TransactionRecord": ("workbench.core.transactions.history", "TransactionRecord"),
    "read_transaction": ("workbench.core.transactions.history", "read_transaction"),
    "transactions": ("workbench.core.transactions.history", "transactions"),
    "tags": ("workbench.core.transactions.time_travel", "tags"),
    "Transaction": ("workbench.core.transactions.transaction", "Transaction"),
    "ReportResult": ("workbench.reports", "ReportResult"),
    "report": ("workbench.reports", "report"),
    "tables": ("workbench.core.io.handle", "tables"),
}


def spark_session() -> Any:
    """The shared SparkSession workbench's Spark work runs in (started on first use, with the
    settings of ``dc.init(spark=...)``)."""
    from workbench.engines.spark import spark_session as shared

    return shared()


def default_namespace() -> str:
    """The namespace used when none is named (``default``; every catalog has it)."""
    from workbench.core.catalog.registry import DEFAULT_NAMESPACE

    return DEFAULT_NAMESPACE


def __getattr__(name: str) -> Any:
    """A public name's value, imported on its first use (then kept as a module global)."""
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = found
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# dc.list, dc.copy, dc.get and dc.put stay out of __all__ so a star import cannot shadow builtins.

__all__ = [
    "MAIN_BRANCH",
    "alter_table",
    "Branch",
    "BranchDiff",
    "MergeResult",
    "branch",
    "branches",
    "create_branch",
    "current_branch",
    "drop_branch",
    "merge_branch",
    "use_branch",
    "Catalog",
    "CatalogProperties",
    "ContentType",
    "DatasetType",
    "DeltaCatUrl",
    "Field",
    "ImportResult",
    "IngestResult",
    "LifecycleState",
    "MergeOrder",
    "Namespace",
    "NullOrder",
    "Preview",
    "Schema",
    "SchemaConsistencyType",
    "SchemaEvolutionMode",
    "SortOrder",
    "Table",
    "Run",
    "ReportResult",
    "TableDefinition",
    "InferResult",
    "Model",
    "TableDiff",
    "TableInfo",
    "TableProperty",
    "TableReadOptimizationLevel",
    "TableRef",
    "TableWriteMode",
    "Transaction",
    "TransactionRecord",
    "TableHandle",
    "TableMap",
    "VacuumResult",
    "WriteResult",
    "create_namespace",
    "default_namespace",
    "write_to_table",
    "read_table",
    "put_catalog",
    "pop_catalog",
    "clear_catalogs",
    "current_run",
    "current_transaction",
    "lineage",
    "run",
    "report",
    "run_events",
    "runs",
    "catalog_changes",
    "changes",
    "create_table",
    "dataset_length",
    "dataset_schema",
    "delta_table",
    "diff",
    "diff_branch",
    "drop_namespace",
    "drop_table",
    "from_manifest_table",
    "idempotency_version",
    "import_media",
    "ingest_kafka",
    "from_pandas",
    "from_pyarrow",
    "get_catalog",
    "get_namespace",
    "get_table",
    "infer",
    "init",
    "init_local",
    "list_catalogs",
    "list_namespaces",
    "list_tables",
    "model",
    "models",
    "namespace_exists",
    "optimize",
    "show",
    "read",
    "read_transaction",
    "run_transaction",
    "search",
    "spark_session",
    "sql",
    "table",
    "table_exists",
    "tables",
    "tag",
    "tags",
    "to_pandas",
    "to_pyarrow",
    "transaction",
    "transactions",
    "vacuum",
    "write",
    *_errors,
]
