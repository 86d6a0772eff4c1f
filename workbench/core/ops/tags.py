"""``dc.tag``: name a catalog state (a transaction) so time travel can find it by name; tags
are immutable."""

from __future__ import annotations

import json

from workbench.core.base.errors import TimeTravelError, TransactionError
from workbench.core.catalog.scope import get_catalog
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.context import current_transaction
from workbench.core.transactions.time_travel import tag_key


def tag(name: str, transaction_id: str | None = None, catalog: str | None = None) -> str:
    """Name a catalog snapshot (the latest transaction by default); returns its transaction id."""
    cat = get_catalog(catalog)
    open_txn = current_transaction()
    if transaction_id is None and open_txn is not None and open_txn.read_only:
        raise TransactionError(
            "dc.tag names the latest catalog state, but this block reads the past "
            "(dc.transaction(as_of=...)); tag outside it, or pass transaction_id=..."
        )
    log = log_of(cat)
    log.refresh()
    if transaction_id is None:
        if not log.last_entry and cat.record is not None:
            raise TimeTravelError(
                f"Branch {cat.branch!r} has no transactions of its own yet; tag the state it "
                "started from on main (dc.tag(name, catalog=...) outside the branch), or after "
                "the branch's first transaction."
            )
        if not log.last_entry:
            raise TimeTravelError("The catalog has no transactions yet; there is nothing to tag.")
        transaction_id = log.last_entry[0]["transaction_id"]
    elif not any(r["transaction_id"] == transaction_id for r in log.rows):
        raise TimeTravelError(f"Transaction {transaction_id!r} is not in the catalog's log.")
    with cat.writing():
        record = json.dumps({"transaction_id": transaction_id}).encode()
        if not cat.storage.put_if_absent(tag_key(cat, name), record):
            raise TimeTravelError(f"Tag {name!r} already exists; tags are immutable.")
    return transaction_id
