"""Finding a model's files and runtime in installed packages, with an install hint if absent."""

from __future__ import annotations

import importlib
import importlib.metadata
from types import ModuleType

# What installs the built-in models' runtimes and weights (silero-vad apart: see SILERO_INSTALL).
INSTALL = "pip install 'workbench[inference]'"
# silero-vad's wheel declares torch, which workbench never imports: install it without deps.
SILERO_INSTALL = "pip install --no-deps 'silero-vad==6.2.3' (make install does this)"


def package_file(distribution: str, path: str, install: str = INSTALL) -> str:
    """The local path of ``path`` inside the installed ``distribution``, found through the
    package's metadata so the package itself is never imported."""
    from workbench.core.errors import ModelUnavailableError

    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.as_posix() == path:
            located = file.locate()
            if located.is_file():
                return str(located)
    raise ModelUnavailableError(
        f"The file {path} of the package {distribution!r} is not installed; {install}."
    )


def runtime(module: str, install: str = INSTALL) -> ModuleType:
    """Import ``module`` (a model's runtime), or say which package to install."""
    from workbench.core.errors import ModelUnavailableError

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ModelUnavailableError(f"A built-in model needs {module} ({e}); {install}.") from e


def onnx_session(path: str) -> object:
    """An onnxruntime CPU session for the model file ``path``, quiet about graph clean-ups."""
    ort = runtime("onnxruntime")
    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only: the int8 graphs warn about unused initialisers
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
