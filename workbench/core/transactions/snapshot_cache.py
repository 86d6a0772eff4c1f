"""Table versions this process has opened, kept so that other versions near them are built
from the actions the catalog log recorded instead of replaying the table's Delta log (on an
object store, a listing and a request per commit since the last checkpoint)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from workbench.core.base.caches import process_cache
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
# the versions kept of each (folder, incarnation, line): what ``recall`` looks through
_versions: dict[tuple[str, str, str], set[int]] = {}


def _clear() -> None:
    _tables.clear()
    _versions.clear()


def _forget(identity: str) -> None:
    for folder, incarnation, line, version in [*_tables]:
        if made_from(line, identity):
            _drop((folder, incarnation, line, version))


def _drop(key: tuple[str, str, str, int]) -> None:
    del _tables[key]
    versions = _versions[key[:3]]
    versions.discard(key[3])
    if not versions:
        del _versions[key[:3]]


process_cache("transactions.snapshot_cache", _clear, forget=_forget)


def keep(table: OpenTable, line: str) -> None:
    """Keep a table version of a catalog line (its ``line_key``) for later opens."""
    key = (table.uri, table.incarnation, line, table.version)
    _tables[key] = table
    _tables.move_to_end(key)
    _versions.setdefault(key[:3], set()).add(table.version)
    while len(_tables) > MAX_REMEMBERED:
        _drop(next(iter(_tables)))


def recall(uri: str, incarnation: str, version: int, log: TransactionLog) -> OpenTable | None:
    """The table at ``version``, from the nearest remembered version at or below it and the
    log's actions after that; None when none is near or an action is not at hand."""
    wanted = log.catalog.line_key
    kept = _versions.get((uri, incarnation, wanted))
    if not kept:
        return None
    nearest = range(version, max(version - MAX_ADVANCE, 0) - 1, -1)  # mostly the first or next
    base = next((v for v in nearest if v in kept), None)
    if base is None:
        return None
    return advanced(_tables[(uri, incarnation, wanted, base)], version, log)


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
