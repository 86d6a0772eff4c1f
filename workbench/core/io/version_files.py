"""What each version of a table did to its rows, read from the actions the catalog log recorded
(``changes.table_history``; no data file opened): the files it added and whether it changed or
deleted rows. A stream of a table's appends plans its reads from these, a task per added file."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from workbench.core.delta.commits import TableActions
from workbench.core.delta.data_files import DataFile
from workbench.core.io.changes import Commit, table_history
from workbench.core.transactions.context import view

if TYPE_CHECKING:
    from workbench.core.catalog.locations import OpenTable


@dataclass(frozen=True)
class VersionFiles:
    """One committed table version (its commit, without its actions): the data files it added
    as new rows, and whether it also changed rows (removed a file or gave one a deletion
    vector, as an update, a delete or an overwrite does). A compaction (``dataChange: false``)
    adds nothing and changes nothing."""

    commit: Commit
    added: tuple[DataFile, ...]
    changes_rows: bool

    @property
    def version(self) -> int:
        return self.commit.version


def version_files(opened: OpenTable, start: int, end: int) -> list[VersionFiles]:
    """The committed versions from ``start`` to ``end`` (inclusive) of ``opened``'s table
    incarnation, oldest first; versions no committed catalog transaction recorded (a failed
    writer's) are left out."""
    loc = opened.loc
    entry = view(loc.catalog).entry(loc.namespace, loc.name)
    if entry is None or entry.incarnation != opened.incarnation:
        return []
    found = []
    for commit in table_history(loc, entry):
        if start <= commit.version <= end:
            found.append(_files_of(commit, opened.uri))
    return found


def _files_of(commit: Commit, table_uri: str) -> VersionFiles:
    actions = commit.actions
    removed = [r for r in actions.removes.values() if r["remove"].get("dataChange", True)]
    adds = [a["add"] for a in actions.adds.values() if a["add"].get("dataChange", True)]
    new = tuple(
        DataFile.from_add(a, table_uri)
        for a in adds
        if a["path"] not in actions.removes and not a.get("deletionVector")
    )
    light = replace(commit, recorded=None, read_from_table=_no_actions)  # what a task needs
    return VersionFiles(light, new, bool(removed) or len(new) < len(adds))


def _no_actions(version: int) -> TableActions:
    """The actions of a commit stripped for a Spark task: none (it needs the commit's version,
    time and transaction only)."""
    return TableActions()
