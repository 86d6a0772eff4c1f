"""Which notebook a report runs: a path to one, or a bundled template's name, read as a
notebook or refused with a typed error before any kernel starts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workbench.core.base.dependencies import require
from workbench.core.base.errors import InvalidArgumentError
from workbench.core.base.resources import package_path

# the bundled templates' folder inside the package (the checkout's notebooks/ links to it)
TEMPLATES = ("workbench.reports", "templates")
REPORTS_INSTALL = "pip install 'workbench[reports]'"


def resolve_template(template: str | os.PathLike[str]) -> Path:
    """A notebook path as given, or the bundled template of that name."""
    if not isinstance(template, (str, os.PathLike)) or not str(template).strip():
        raise InvalidArgumentError(
            f"template={template!r} must name a notebook: a path to a .ipynb file or a bundled "
            f"template's name ({', '.join(_bundled()) or 'none found'})."
        )
    path = Path(template)
    if path.is_file():
        return path.resolve()
    bundled = package_path(*TEMPLATES) / (
        path.name if path.suffix == ".ipynb" else f"{path.name}.ipynb"
    )
    if path.parent == Path(".") and bundled.is_file():
        return bundled
    raise InvalidArgumentError(
        f"No notebook {str(template)!r}: give a path to a notebook with a 'parameters' cell or "
        f"a bundled template ({', '.join(_bundled()) or 'none found'})."
    )


def _bundled() -> list[str]:
    """The names of the bundled templates."""
    return sorted(p.stem for p in package_path(*TEMPLATES).glob("*.ipynb"))


def read_notebook(path: Path) -> Any:
    """The notebook at ``path`` (nbformat v4), or a typed error when it is none."""
    nbformat = require("nbformat", "dc.report", REPORTS_INSTALL)
    try:
        return nbformat.read(str(path), as_version=4)
    except Exception as e:  # NotJSONError, a validation or decoding error: not a notebook
        raise InvalidArgumentError(
            f"{str(path)!r} is not a Jupyter notebook ({type(e).__name__}: {str(e)[:200]}); "
            "give a .ipynb file with a cell tagged 'parameters', or a bundled template's name."
        ) from e
