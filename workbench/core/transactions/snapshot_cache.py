"""Table versions this process has opened, kept so that other versions near them are built
from the actions the catalog log recorded instead of replaying the table's Delta log (on an
object store, a listing and a request per commit since the last checkpoint)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from workbench.core.base.caches import drop_where, process_cache
from workbench.core.delta.commits import TableActions
from workbench.core.storage.identity import made_from

if TYPE_CHECKING:
    from workbench.core.catalog.locations import OpenTable
    from workbench.core.transactions.catalog_log import TransactionLog

MAX_ADVANCE = 100  # versions applied on top of a remembered one before reading Delta again
MAX_REMEMBERED = 256  # table versions kept, least recently used dropped first

# (folder, incarnation, line, version), the line being the catalog's ``line_key``: its identity
# (so another catalog on the root, with other credentials, never gets what this one read) and
# on a branch the branch's id (its versions are its own)
_tables: OrderedDict[tuple[str, str, str, int], OpenTable] = OrderedDict()


def _forget(identity: str) -> None:
    drop_where(_tables, lambda key: made_from(key[2], identity))


process_cache("transactions.snapshot_cache", _tables.clear, forget=_forget)


def keep(table: OpenTable, line: str) -> None:
    """Keep a table version of a catalog line (its ``line_key``) for later opens."""
    key = (table.uri, table.incarnation, line, table.version)
    _tables[key] = table
    _tables.move_to_end(key)
    while len(_tables) > MAX_REMEMBERED:
        _tables.popitem(last=False)


def recall(uri: str, incarnation: str, version: int, log: TransactionLog) -> OpenTable | None:
    """The table at ``version``, from the nearest remembered version at or below it and the
    log's actions after that; None when none is near or an action is not at hand."""
    wanted = log.catalog.line_key
    bases = [
        v
        for (u, i, line, v) in _tables
        if u == uri
        and i == incarnation
        and line == wanted
        and version - MAX_ADVANCE <= v <= version
    ]
    if not bases:
        return None
    return advanced(_tables[(uri, incarnation, wanted, max(bases))], version, log)


def advanced(table: OpenTable, version: int, log: TransactionLog) -> OpenTable | None:
    """``table`` brought to ``version`` by the actions the log recorded for the versions in
    between, applied as one change; None when the log has not read one of them."""
    changes = []
    for next_version in range(table.version + 1, version + 1):
        found = log.actions_for(table.incarnation, next_version, known_only=True)
        if found is None or found[1] is None:
            return None
        changes.append(TableActions.from_json(found[1]))
    table = table.with_actions(TableActions.in_turn(changes), version)
    keep(table, log.catalog.line_key)
    return table
