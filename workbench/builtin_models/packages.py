"""Finding a model's files and runtime in installed packages, with an install hint if absent."""

from __future__ import annotations

import importlib.metadata

from workbench.core.base.dependencies import INFERENCE_INSTALL, require
from workbench.core.base.errors import MissingDependencyError

# The voice-activity model's ONNX file comes in silero-vad's wheel, which declares torch: the
# model never imports torch, but an extra cannot drop a dependency, so this one package is
# installed by itself without its dependencies (the Makefile reads the pin from here).
SILERO_VAD = "silero-vad==6.2.3"
SILERO_INSTALL = (
    f"pip install --no-deps '{SILERO_VAD}' (the inference extra cannot bring it: its wheel "
    "requires torch, which this model does not use; make install does this in a clone)"
)


def package_file(distribution: str, path: str, install: str = INFERENCE_INSTALL) -> str:
    """The local path of ``path`` inside the installed ``distribution``, found through the
    package's metadata so the package itself is never imported."""
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.as_posix() == path:
            located = file.locate()
            if located.is_file():
                return str(located)
    raise MissingDependencyError(
        f"The file {path} of the package {distribution!r} is not installed; {install}."
    )


def onnx_session(path: str) -> object:
    """An onnxruntime CPU session for the model file ``path``, quiet about graph clean-ups."""
    ort = require("onnxruntime", "A built-in model")
    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only: the int8 graphs warn about unused initialisers
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
