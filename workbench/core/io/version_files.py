"""What each version of a table did to its rows, read from the actions the catalog log recorded
(no data file opened): the files it added and whether it changed or deleted rows. A stream of a
table's appends plans its reads from these, a task per added file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.delta.commits import TableActions
from workbench.core.delta.data_files import DataFile
from workbench.core.transactions.catalog_log import log_of

if TYPE_CHECKING:
    from workbench.core.catalog.locations import OpenTable


@dataclass(frozen=True)
class VersionFiles:
    """One committed table version: the data files it added as new rows, and whether it also
    changed rows (removed a file or gave one a deletion vector, as an update, a delete or an
    overwrite does). A compaction (``dataChange: false``) adds nothing and changes nothing."""

    version: int
    end_time: int  # ns since the epoch: when its catalog transaction committed
    transaction_id: str
    added: tuple[DataFile, ...]
    changes_rows: bool


def version_files(opened: OpenTable, start: int, end: int) -> list[VersionFiles]:
    """The committed versions from ``start`` to ``end`` (inclusive) of ``opened``'s table
    incarnation, oldest first; versions no committed catalog transaction recorded (a failed
    writer's) are left out."""
    log = log_of(opened.loc.catalog)
    found = []
    for version in range(max(start, 0), end + 1):
        recorded = log.actions_for(opened.incarnation, version)
        if recorded is None:
            continue
        row, text = recorded
        actions = TableActions.from_json(text)
        removed = {p for p, r in actions.removes.items() if r["remove"].get("dataChange", True)}
        adds = [a["add"] for a in actions.adds.values() if a["add"].get("dataChange", True)]
        new = tuple(
            DataFile.from_add(a, opened.uri)
            for a in adds
            if a["path"] not in actions.removes and not a.get("deletionVector")
        )
        changes = bool(removed) or len(new) < len(adds)
        found.append(VersionFiles(version, row["end_time"], row["transaction_id"], new, changes))
    return found
