"""The public API as one module: what ``import workbench as dc`` gives, importable by the
front ends (widgets, magics, CLI) without the IPython extension hook of ``workbench``."""

from typing import Any

from workbench.builtin_models.registry import models
from workbench.builtin_models.search import search
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
from workbench.core.catalog.catalogs import Catalog, CatalogProperties
from workbench.core.catalog.descriptions import Namespace, Table, TableInfo, TableRef, WriteResult
from workbench.core.catalog.descriptions import TableInfo as TableDefinition  # DeltaCAT's name
from workbench.core.catalog.registry import (
    clear_catalogs,
    init_local,
    list_catalogs,
    pop_catalog,
    put_catalog,
)
from workbench.core.catalog.scope import current_branch, get_catalog
from workbench.core.data.datasets import (
    dataset_length,
    dataset_schema,
    from_pandas,
    from_pyarrow,
    to_pandas,
    to_pyarrow,
)
from workbench.core.data.manifest import from_manifest_table
from workbench.core.events.queries import lineage, run_events, runs
from workbench.core.events.runs import Run, current_run, run
from workbench.core.inference.infer import infer
from workbench.core.inference.model import Model, model
from workbench.core.inference.result import InferResult
from workbench.core.io.changes import catalog_changes, changes
from workbench.core.io.diff import BranchDiff, TableDiff, diff, diff_branch
from workbench.core.io.handle import TableHandle, TableMap, table
from workbench.core.io.kafka_ingest import IngestResult, ingest_kafka
from workbench.core.io.reader import read
from workbench.core.io.reader import read as read_table  # DeltaCAT's long name
from workbench.core.io.sql import sql
from workbench.core.io.url_names import DeltaCatUrl
from workbench.core.io.urls import copy as copy
from workbench.core.io.urls import get as get
from workbench.core.io.urls import list_url as list  # noqa: F401 - dc.list, as in DeltaCAT
from workbench.core.io.urls import put as put
from workbench.core.io.writer import write
from workbench.core.io.writer import write as write_to_table  # DeltaCAT's long name
from workbench.core.media.html import Preview, show
from workbench.core.media.importer import ImportResult, import_media
from workbench.core.ops.alter import alter_table
from workbench.core.ops.branches import (
    Branch,
    branch,
    branches,
    create_branch,
    drop_branch,
    use_branch,
)
from workbench.core.ops.maintenance import VacuumResult, optimize, vacuum
from workbench.core.ops.namespaces import (
    create_namespace,
    drop_namespace,
    get_namespace,
    list_namespaces,
    namespace_exists,
)
from workbench.core.ops.publish import MergeResult, merge_branch
from workbench.core.ops.tables import (
    create_table,
    delta_table,
    drop_table,
    get_table,
    list_tables,
    table_exists,
)
from workbench.core.ops.tags import tag
from workbench.core.schema.merge_order import MergeOrder
from workbench.core.schema.table_schema import Field, Schema
from workbench.core.session import init
from workbench.core.transactions.committed_keys import idempotency_version
from workbench.core.transactions.context import current_transaction, run_transaction, transaction
from workbench.core.transactions.history import TransactionRecord, read_transaction, transactions
from workbench.core.transactions.time_travel import tags
from workbench.core.transactions.transaction import Transaction
from workbench.exceptions import *  # noqa: F403
from workbench.exceptions import __all__ as _errors
from workbench.reports import ReportResult, report
from workbench.version import __version__ as __version__


def spark_session() -> Any:
    """The shared SparkSession workbench's Spark work runs in (started on first use, with the
    settings of ``dc.init(spark=...)``)."""
    from workbench.engines.spark import spark_session as shared

    return shared()


def default_namespace() -> str:
    """The namespace used when none is named (``default``; every catalog has it)."""
    from workbench.core.catalog.registry import DEFAULT_NAMESPACE

    return DEFAULT_NAMESPACE


tables = TableMap()  # dc.tables["ns.t"]: a handle per table of the default catalog

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
