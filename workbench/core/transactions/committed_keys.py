"""``idempotency_version``: how far an app's idempotency keys have committed on a catalog line."""

from __future__ import annotations

from workbench.core.base.arguments import text
from workbench.core.catalog.scope import lookup_catalog
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.idempotency import parse_keys


def idempotency_version(
    app_id: str, catalog: str | None = None, *, branch: str | None = None
) -> int | None:
    """The newest version a committed transaction carried for ``app_id`` (None: none yet), on
    ``branch`` (default: the current branch): where a rerun of the app starts."""
    text("app_id", app_id, optional=False)
    parse_keys((app_id, 0), "app_id")  # the same rules as the keys themselves
    cat = lookup_catalog(catalog)
    if branch is not None:
        cat = cat.on_branch(branch)
    return log_of(cat).refresh().apps.get(app_id)
