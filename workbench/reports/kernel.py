"""What a report's kernel does before the notebook's first cell: open the reported catalog as
the default one, pinned to the reported transaction, so any notebook (a bundled template or a
user's own, with no set-up cell) reads exactly the state the report's header names."""

from __future__ import annotations

import os
import sys

from workbench.core.base.names import MAIN

CATALOG_ROOT = "WORKBENCH_REPORT_CATALOG"
CATALOG_NAME = "WORKBENCH_REPORT_CATALOG_NAME"
AS_OF = "WORKBENCH_REPORT_AS_OF"  # a transaction id; empty: the catalog had none yet
BRANCH = "WORKBENCH_REPORT_BRANCH"  # the branch the report reads ("main" by default)
MOMENT = "WORKBENCH_REPORT_AS_OF_TIME"  # ns; empty: as of the pinned transaction (dc.runs)
START_UP = f"from {__name__} import open_pinned_catalog; open_pinned_catalog()"


def pinned_environment(
    root: str,
    name: str,
    transaction_id: str | None,
    branch: str = MAIN,
    moment: int | None = None,
) -> dict[str, str]:
    """The kernel environment that makes ``open_pinned_catalog`` open this catalog on
    ``branch`` and pin it (at ``moment``, ns, when the report was asked for a time)."""
    return {
        CATALOG_ROOT: root,
        CATALOG_NAME: name,
        AS_OF: transaction_id or "",
        BRANCH: branch,
        MOMENT: "" if moment is None else str(moment),
    }


def open_pinned_catalog() -> None:
    """Register the report's catalog as the default and pin it (see ``environment``). If that
    fails, no catalog stays registered, so the notebook's first read fails loudly instead of
    reading another catalog."""
    from workbench.core.catalog.catalogs import Catalog, CatalogProperties
    from workbench.core.catalog.registry import clear_catalogs
    from workbench.core.session import init
    from workbench.core.transactions.context import pin

    root = os.environ.get(CATALOG_ROOT)
    if not root:
        return
    try:
        catalog = Catalog(CatalogProperties(root))
        branch = os.environ.get(BRANCH) or MAIN
        init({os.environ.get(CATALOG_NAME) or "default": catalog}, branch=branch)
        moment = int(os.environ[MOMENT]) if os.environ.get(MOMENT) else None
        pin(catalog.on_branch(branch), os.environ.get(AS_OF) or None, moment)
    except Exception as e:
        clear_catalogs()
        print(f"workbench: could not open the reported catalog {root!r}: {e}", file=sys.stderr)
