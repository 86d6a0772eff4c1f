"""What a transaction does to one table: its staged Delta actions and their effect, until the
transaction commits them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.delta.commits import TableActions
from workbench.core.transactions.catalog_state import TableEntry

if TYPE_CHECKING:
    from workbench.core.catalog.locations import OpenTable
    from workbench.core.delta.data_files import WrittenFile


@dataclass
class TableChange:
    """What a transaction does to one table: its staged Delta actions and their effect."""

    namespace: str
    name: str
    incarnation: str
    pinned: TableEntry | None  # the committed entry the change is based on
    table: OpenTable  # the table as this transaction sees it: committed plus staged
    version: int  # the Delta version the commit writes
    actions: TableActions = field(default_factory=TableActions)
    written: list[WrittenFile] = field(default_factory=list)
    superseded: list[WrittenFile] = field(default_factory=list)  # staged, then replaced
    operations: list[str] = field(default_factory=list)
    engines: list[str] = field(default_factory=list)
    rows_added: int = 0
    rows_removed: int = 0
    dropped: bool = False
    details: dict[str, Any] = field(default_factory=dict)  # JSON-able, for the log row

    @property
    def entry(self) -> TableEntry | None:
        """The table as this transaction sees it (None when absent or dropped)."""
        if self.dropped:
            return None
        if self.actions.empty:
            return self.pinned
        return TableEntry(self.version, self.incarnation)
