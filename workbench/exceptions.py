"""The errors workbench raises, importable as ``workbench.exceptions``."""

from workbench.core.errors import (
    CatalogNotFoundError,
    InvalidArgumentError,
    InvalidNameError,
    MergeKeyError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    SchemaValidationError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableValidationError,
    TableVersionNotFoundError,
    UnsupportedDatasetError,
    WorkbenchError,
    WriteFailedError,
)

__all__ = [
    "CatalogNotFoundError",
    "InvalidArgumentError",
    "InvalidNameError",
    "MergeKeyError",
    "NamespaceNotEmptyError",
    "NamespaceNotFoundError",
    "SchemaValidationError",
    "TableAlreadyExistsError",
    "TableNotFoundError",
    "TableValidationError",
    "TableVersionNotFoundError",
    "UnsupportedDatasetError",
    "WorkbenchError",
    "WriteFailedError",
]
