"""workbench: a Jupyter-first lakehouse on open Delta Lake tables, with a DeltaCAT-style API.

``import workbench as dc`` gives catalogs, namespaces and tables that ``dc.write`` and ``dc.read``
manage. Its names load on first use (``workbench.api``), and heavy libraries (pyarrow,
deltalake, pandas, daft, ...) only when first needed.
"""

from typing import Any

from workbench import api as _api
from workbench.api import __all__, __version__  # noqa: F401


def __getattr__(name: str) -> Any:
    """``dc.<name>``: the public API's (``dc.list``, ``dc.copy``, ... as in DeltaCAT too)."""
    if name not in vars(_api) and name not in _api._LAZY:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    return getattr(_api, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(dir(_api)))


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext workbench``: register the ``%dc``/``%%dc`` magics and rich display."""
    from workbench.magics import load

    load(ipython)
