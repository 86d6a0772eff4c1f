"""workbench: a Jupyter-first lakehouse on open Delta Lake tables, with a DeltaCAT-style API.

``import workbench as dc`` gives catalogs, namespaces and tables that ``dc.write`` and ``dc.read``
manage. Heavy libraries (pyarrow, deltalake, pandas, daft, ...) load only when first needed.
"""

from workbench.api import *  # noqa: F403
from workbench.api import (  # noqa: F401 - names outside __all__, and dc.list as in DeltaCAT
    __all__,
    __version__,
    copy,
    get,
    list,
    put,
    write_to_table,
)


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext workbench``: register the ``%dc``/``%%dc`` magics and rich display."""
    from workbench.magics import load

    load(ipython)
