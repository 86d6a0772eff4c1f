"""Files that ship inside the package (report templates, engine settings), found through
``importlib.resources``: they come from wherever workbench is installed, never a checkout."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from workbench.core.base.errors import UnsupportedFeatureError


def package_path(package: str, *parts: str) -> Path:
    """The path on disk of ``parts`` inside the installed ``package`` (a file or a folder that
    papermill, nbconvert or a JVM opens by name, so it must be a real file)."""
    resource = importlib.resources.files(package).joinpath(*parts)
    if not isinstance(resource, Path):
        raise UnsupportedFeatureError(
            f"{'/'.join(parts)} of {package} is inside an archive ({resource}); workbench reads "
            "its bundled files by path, so install it as files: pip install workbench (a wheel "
            "or a clone), not a zip on sys.path."
        )
    return resource
