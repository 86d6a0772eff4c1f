"""Catalog-wide time travel: resolve ``as_of`` (ns, datetime, transaction id or tag) to a state."""

from __future__ import annotations

import json
import os
from bisect import bisect_right
from datetime import datetime
from typing import TYPE_CHECKING, Any

from workbench.core.errors import TimeTravelError
from workbench.core.lock import metadata_dir
from workbench.core.names import validate_name
from workbench.core.txlog import CatalogState, log_of

if TYPE_CHECKING:
    from workbench.core.catalog import Catalog


def _tag_path(catalog: Catalog, name: str) -> str:
    return os.path.join(metadata_dir(catalog), "tags", validate_name("tag", name) + ".json")


def resolve_sequence(catalog: Catalog, as_of: Any) -> int:
    """The sequence of the last transaction committed at or before ``as_of``."""
    log = log_of(catalog)
    log.refresh()
    if not log.rows:
        raise TimeTravelError(
            f"Catalog {catalog.root!r} has no committed transactions yet, so there is no past "
            "state to read."
        )
    if isinstance(as_of, str):
        return _sequence_of_name(catalog, as_of)
    if isinstance(as_of, datetime):
        as_of = int(as_of.timestamp() * 1_000_000_000)
    if not isinstance(as_of, int) or isinstance(as_of, bool):
        raise TimeTravelError(
            f"as_of={as_of!r} is not a time: pass ns since the epoch (int), a datetime, a "
            "transaction id or a tag name."
        )
    position = bisect_right(log.rows, as_of, key=lambda row: row["end_time"])
    if position == 0:
        first = log.rows[0]["end_time"]
        raise TimeTravelError(
            f"as_of={as_of} is before the catalog's first transaction (committed at {first} ns); "
            "pick a later time."
        )
    return log.rows[position - 1]["sequence"]


def _sequence_of_name(catalog: Catalog, name: str) -> int:
    rows = log_of(catalog).rows
    for row in rows:
        if row["transaction_id"] == name:
            return row["sequence"]
    tagged = _read_tags(catalog).get(name)
    if tagged is not None:
        return _sequence_of_name(catalog, tagged)
    raise TimeTravelError(
        f"as_of={name!r} is neither a transaction id nor a tag of catalog {catalog.root!r}; see "
        "dc.transactions() and dc.tags()."
    )


def state_as_of(catalog: Catalog, as_of: Any) -> CatalogState:
    """The catalog state right after the transaction ``as_of`` resolves to."""
    return log_of(catalog).state_at(resolve_sequence(catalog, as_of))


def tag(name: str, transaction_id: str | None = None, catalog: str | None = None) -> str:
    """Name a catalog snapshot (the latest transaction by default); returns its transaction id."""
    from workbench.core.catalog import get_catalog

    cat = get_catalog(catalog)
    log = log_of(cat)
    log.refresh()
    if transaction_id is None:
        if not log.rows:
            raise TimeTravelError("The catalog has no transactions yet; there is nothing to tag.")
        transaction_id = log.rows[-1]["transaction_id"]
    elif not any(r["transaction_id"] == transaction_id for r in log.rows):
        raise TimeTravelError(f"Transaction {transaction_id!r} is not in the catalog's log.")
    path = _tag_path(cat, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise TimeTravelError(f"Tag {name!r} already exists; tags are immutable.") from None
    with os.fdopen(fd, "w") as f:
        json.dump({"transaction_id": transaction_id}, f)
    return transaction_id


def tags(catalog: str | None = None) -> dict[str, str]:
    """Every tag of a catalog and the transaction it names."""
    from workbench.core.catalog import get_catalog

    return _read_tags(get_catalog(catalog))


def _read_tags(catalog: Catalog) -> dict[str, str]:
    folder = os.path.join(metadata_dir(catalog), "tags")
    if not os.path.isdir(folder):
        return {}
    found = {}
    for entry in sorted(os.listdir(folder)):
        with open(os.path.join(folder, entry)) as f:
            found[entry.removesuffix(".json")] = json.load(f)["transaction_id"]
    return found
