"""What the widgets and magics show beside the public API's results: the registered name of a
catalog, the statuses a run can have, and the media cells (thumbnails, players, snippets) of a
media table's rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.core.catalog.locations import locate
from workbench.core.catalog.registry import catalog_name
from workbench.core.catalog.scope import get_catalog
from workbench.core.events.queries import STATUSES
from workbench.core.media.columns import URI_PROPERTY, arrow_schema
from workbench.core.media.html import media_cells

RUN_STATUSES: tuple[str, ...] = tuple(str(s) for s in STATUSES)
MEDIA_URI_PROPERTY = URI_PROPERTY  # the table property naming a media table's URI column


def catalog_name_of(catalog: str | None = None) -> str:
    """The registered name of a catalog (the default one when None): raises
    ``CatalogNotFoundError`` for a name not registered."""
    return catalog_name(get_catalog(catalog))


def media_columns() -> list[str]:
    """The columns every media table has (the rest are predictions)."""
    return list(arrow_schema().names)


def media_cells_of(
    table: str,
    namespace: str | None,
    catalog: str | None,
    rows: Sequence[Mapping[str, Any]],
    uri_column: str,
) -> list[str]:
    """One HTML cell per row of a media table, its files read from the table's catalog."""
    storage = locate(table, namespace, catalog).catalog.storage
    return media_cells(rows, uri_column, storage)
