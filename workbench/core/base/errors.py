"""Typed errors: every failure is a ``WorkbenchError`` whose message says how to fix it."""

from __future__ import annotations

from typing import Any


class WorkbenchError(Exception):
    """Base class of every error raised by workbench."""


class InvalidNameError(WorkbenchError, ValueError):
    """A catalog, namespace or table name is not allowed (it could escape the catalog root)."""


class InvalidArgumentError(WorkbenchError, ValueError):
    """An argument has a value the call cannot accept."""


class InvalidFilterError(InvalidArgumentError):
    """A read's filter cannot be applied: text that is not a predicate, a column the table does
    not have, a value that does not fit its column's type, or a form the reader cannot run."""


class SqlQueryError(InvalidArgumentError):
    """The SQL engine refused a query (its syntax, a name or a type in it), said in the query's
    own names; ``position`` is where in the query the engine pointed, if it did."""

    def __init__(self, message: str, position: int | None = None):
        super().__init__(message)
        self.position = position


class CatalogNotFoundError(WorkbenchError, LookupError, ValueError):
    """No catalog with that name was registered through ``init``."""


class CatalogRootError(WorkbenchError, NotADirectoryError):
    """A catalog root exists but is not a folder, so it cannot hold namespaces and tables."""


class StorageUnreachableError(WorkbenchError, OSError):
    """A catalog's object store cannot be reached or refuses it: a wrong endpoint, missing
    bucket, or credentials or region it does not accept."""


class CatalogReadOnlyError(WorkbenchError, PermissionError):
    """The catalog root cannot be written by this user; reads still work."""


class NamespaceNotFoundError(WorkbenchError, LookupError):
    """The namespace does not exist in the catalog."""


class NamespaceNotEmptyError(WorkbenchError):
    """The namespace still holds tables, so dropping it would lose them."""


class TableNotFoundError(WorkbenchError, LookupError):
    """The table does not exist in the namespace."""


class TableAlreadyExistsError(WorkbenchError):
    """The table exists but the call asked to create it."""


class TableVersionNotFoundError(WorkbenchError, LookupError):
    """The requested table version (a DeltaCAT version name, or a Delta version number) is
    not in the table's history."""


class TableVersionAlreadyExistsError(WorkbenchError):
    """The table version exists but the call asked to create it."""


class SchemaValidationError(WorkbenchError, ValueError):
    """Data or a schema change is incompatible with the table's schema."""


class SchemaCompatibilityError(SchemaValidationError):
    """A schema update would break existing data or readers (e.g. a required column with no
    default); pass ``allow_incompatible_changes=True`` to make it anyway."""


class TableValidationError(WorkbenchError, ValueError):
    """A write would break a rule of the table (readers, merge keys, write mode)."""


class ContentTypeValidationError(TableValidationError):
    """A write's content type is not among those the table accepts (``content_types=``)."""


class KeyedTableModeError(TableValidationError, SchemaValidationError):
    """A mode that adds rows without matching keys (ADD, APPEND, CHRONO) on a table with merge
    keys, where it could store a key twice."""


class MergeKeyError(TableValidationError):
    """Merge keys are missing, null or duplicated where the write needs them unique."""


class NonRetryableDownloadTableError(WorkbenchError):
    """A table's files are of a content type the requested reader cannot load (retrying will
    not help; read them as another dataset type)."""


class UnsupportedDatasetError(WorkbenchError, TypeError):
    """The object passed as data is not a dataset type workbench can read or write."""


class EngineUnavailableError(WorkbenchError, ImportError):
    """A compute engine cannot be used here: its optional dependency is missing or it failed to
    start."""


class WriteFailedError(WorkbenchError):
    """The storage layer failed during a write; the table was restored to its previous state."""


class CommitOutcomeUnknownError(WriteFailedError):
    """The storage failed while a transaction's commit was being published, and whether it
    landed cannot be told now; its files are kept in case it did."""


class LogVersionError(WorkbenchError):
    """The catalog log was written by a newer workbench than this one."""


class EventLogUnavailableError(WorkbenchError, OSError):
    """The run log cannot be opened or written where its URI points."""


class EventLogLocationError(EventLogUnavailableError):
    """The run log's location holds something else (a data table, another application's
    database, other files), which a run log must neither take over nor change."""


class EventLogVersionError(WorkbenchError):
    """The run log was written with a newer event schema than this workbench reads."""


class TableChangedOutsideError(WorkbenchError):
    """A table's Delta log holds a version the catalog recorded for itself but someone else
    wrote."""


class TransactionError(WorkbenchError):
    """A transaction was used in a way it does not allow (nesting, writes while time travelling)."""


class TransactionCatalogError(TransactionError, ValueError):
    """A call named another catalog than the open transaction's."""


class HistoricTransactionError(TransactionError, RuntimeError):
    """A write inside a transaction that reads the past (``as_of``)."""


class TransactionConflictError(TransactionError):
    """Another transaction changed a table this one used; nothing of this one is visible."""


class IdempotencyConflictError(TransactionConflictError):
    """A transaction's idempotency keys are partly committed already, or a key does not follow
    the version it was meant to follow: another run did some of this work."""


class BranchNotFoundError(WorkbenchError, LookupError):
    """No branch with that name exists in the catalog."""


class BranchAlreadyExistsError(WorkbenchError):
    """A branch with that name exists, so it cannot be created again."""


class BranchConflictError(TransactionConflictError):
    """Publishing a branch would overwrite changes ``main`` made to the same tables since the
    branch point; ``tables`` names them. Nothing was published."""

    def __init__(self, message: str, tables: list[str]):
        super().__init__(message)
        self.tables = tables


class TimeTravelError(WorkbenchError, LookupError, ValueError):
    """An ``as_of`` point does not name a moment, transaction or tag of the catalog's history."""


class AsOfUnitError(TimeTravelError):
    """An integer ``as_of`` looks like seconds, milliseconds or microseconds: integer times
    are nanoseconds since the epoch, so it names a moment before the catalog's history."""


class InvalidUrlError(WorkbenchError, ValueError):
    """A ``dc://`` URL is malformed or names something that cannot be used there."""


class UnsupportedFeatureError(WorkbenchError, NotImplementedError):
    """A DeltaCAT feature workbench does not offer (the message says what to use instead)."""


class MissingDependencyError(WorkbenchError, ImportError):
    """An optional library a feature needs is not installed (the message names the extra)."""


class MediaNotFoundError(WorkbenchError, FileNotFoundError):
    """A media folder or file does not exist where its path or URI points."""


class NotAFolderError(WorkbenchError, NotADirectoryError):
    """A media import was given a file where it needs the folder holding the files."""


class NotAMediaTableError(SchemaValidationError):
    """A table exists under the name a media import targets, but without a media table's
    columns and merge key ``key``, so importing into it would mix two kinds of rows."""


class UnknownModelError(WorkbenchError, LookupError):
    """``dc.infer`` was given a model name that is not a built-in model."""


class InputColumnError(TableValidationError):
    """A model input is bound to a column the table does not have."""


class OutputColumnTypeError(SchemaValidationError):
    """A model output would go into an existing column of another type."""


class OutputColumnOwnedError(SchemaValidationError):
    """A model output would overwrite a column another model wrote (or the model's own input)."""


class ModelOutputsError(WorkbenchError, TypeError):
    """The types of a model's outputs cannot be told: ``dc.model`` was given no ``outputs=``,
    and neither the function's return annotation nor its first batch's values show them."""


class ModelFailedError(WorkbenchError):
    """A model raised on a row during ``dc.infer``; nothing of the run was committed."""


class ReportFailedError(WorkbenchError):
    """A report's notebook raised: the HTML (failing cell and error at the top) and the executed
    notebook are still written, at ``html`` and ``notebook``; the catalog is unchanged."""

    def __init__(self, message: str, html: object = None, notebook: object = None):
        super().__init__(message)
        self.html = html
        self.notebook = notebook


class DeletionVectorError(WorkbenchError, ValueError):
    """A deletion vector could not be read: its file is missing, damaged or of another format."""


class ChangesUnavailableError(TableVersionNotFoundError):
    """A change feed was asked for versions whose files ``dc.vacuum`` removed."""


class ClusteringError(InvalidArgumentError):
    """Clustering columns a table cannot be laid out by: not a list of its columns, or a column
    whose values have no order (lists, structs, maps, binary)."""


class ChangeCommitError(WorkbenchError):
    """A stream of a table's new rows met a version that updated or deleted rows."""


class MessageDecodeError(WorkbenchError, ValueError):
    """A message of a stream could not be decoded into a row; nothing of its batch was written."""


def brief(value: Any, limit: int = 160) -> str:
    """``str(value)`` cut to ``limit`` characters, for error messages."""
    text = str(value).strip().replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."
