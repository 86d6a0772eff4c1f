"""Named consumers of a table's change feed. A consumer's cursor (the last table version it
consumed) is an idempotency key in the table's catalog; the transaction that reads the changes
advances it when it commits, together with whatever it wrote, so a pipeline table -> table
processes each change once across crashes and reruns (a crash before the commit leaves the
cursor where it was; a rerun of a committed batch finds its key and is skipped)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.base.arguments import text
from workbench.core.base.errors import InvalidArgumentError
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.context import current_transaction

if TYPE_CHECKING:
    from workbench.core.catalog.locations import Location

PREFIX = "consumer"


def cursor_app(name: str, loc: Location, incarnation: str) -> str:
    """The app id of a consumer's cursor on one table (a table created again starts anew)."""
    return f"{PREFIX}/{name}/{loc.namespace}.{loc.name}/{incarnation}"


def consumer_name(value: object) -> str:
    """A consumer's name, checked."""
    name = text("consumer", value, optional=False)
    if not name or not name.strip() or "/" in name:
        raise InvalidArgumentError(
            f"consumer={value!r} must be a non-empty name without '/', e.g. consumer='features'."
        )
    return name


def claim_changes(loc: Location, incarnation: str, newest: int, name: str) -> int:
    """The first table version consumer ``name`` has not consumed. Inside a transaction on the
    table's catalog line, that transaction advances the cursor to ``newest`` when it commits
    (and conflicts if another run moved the cursor meanwhile); outside one, nothing advances
    (a look at what is pending)."""
    app = cursor_app(name, loc, incarnation)
    cursor = log_of(loc.catalog).refresh().apps.get(app)
    first = 0 if cursor is None else cursor + 1
    txn = current_transaction()
    if txn is None or first > newest:
        return first
    if txn.catalog.line_key != loc.catalog.line_key:
        raise InvalidArgumentError(
            f"Consumer {name!r} keeps its cursor in the catalog (and branch) of "
            f"{loc.qualified!r}, but the open transaction is on another: read the changes in a "
            "transaction on the table's own catalog, or outside any transaction to look only."
        )
    txn.add_idempotency((app, newest), after={app: cursor})
    return first
