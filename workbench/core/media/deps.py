"""Optional libraries of media tables, imported on first use with an install hint."""

from __future__ import annotations

import importlib
from types import ModuleType

from workbench.core.errors import MissingDependencyError


def require(module: str, feature: str, extra: str = "inference") -> ModuleType:
    """Import ``module`` or raise ``MissingDependencyError`` saying which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingDependencyError(
            f"{feature} needs {module.split('.')[0]}, which is not installed; install it with "
            f"pip install 'workbench[{extra}]'."
        ) from e
