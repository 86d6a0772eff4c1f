"""Optional libraries imported on first use, with an install hint when they are missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from workbench.core.base.errors import MissingDependencyError

INFERENCE_INSTALL = "pip install 'workbench[inference]'"
STREAMING_INSTALL = "pip install 'workbench[streaming]'"


def require(module: str, feature: str, install: str = INFERENCE_INSTALL) -> ModuleType:
    """Import ``module`` or raise ``MissingDependencyError`` saying what installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingDependencyError(
            f"{feature} needs {module.split('.')[0]}, which is not installed ({e}); {install}."
        ) from e
