"""Catalog branches: try changes on the whole catalog in isolation, then publish them to ``main``
in one catalog transaction, or drop them.

Creating a branch saves the ``main`` state it starts from and copies no data file. Work on the
branch commits to the branch's own log (see ``BranchLog``); its new data files are written
beside ``main``'s in the table folders (or, for tables it creates, in a folder of its own) and
no table's Delta log ever names them, so readers of ``main`` and of the table folders do not see
them. Publishing replays what the branch changed, table by table, onto ``main``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from workbench.core.base.errors import (
    BranchAlreadyExistsError,
    InvalidArgumentError,
    TransactionError,
)
from workbench.core.base.names import MAIN, validate_branch_name
from workbench.core.catalog.branch_records import (
    BranchRecord,
    base_key,
    branch_key,
    line_key,
    new_record,
    record_key,
    records,
)
from workbench.core.catalog.catalogs import Catalog
from workbench.core.catalog.descriptions import html_table
from workbench.core.catalog.folders import remove_folder
from workbench.core.catalog.registry import catalog_name
from workbench.core.catalog.scope import (
    branch_scope,
    current_branch,
    leave_branch,
    main_catalog,
    set_default_branch,
)
from workbench.core.ops.branch_files import branch_files, free_branch_files
from workbench.core.storage import leases
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.context import current_transaction
from workbench.core.transactions.rollforward import roll_forward
from workbench.core.transactions.time_travel import state_as_of
from workbench.core.transactions.transaction import new_transaction_id

PUBLISH = "MERGE_BRANCH"
BRANCH_LEASE = "_branches"  # lease namespace: publishing and dropping a branch queue on it


@dataclass(frozen=True)
class Branch:
    """A line of the catalog: ``main``, or a branch with the point it started from."""

    name: str
    catalog: str
    base_transaction: str | None = None  # main's transaction the branch started after
    created_ns: int | None = None
    source: str = ""
    transactions: int = 0  # commits on the branch
    tables_changed: list[str] = field(default_factory=list)
    current: bool = False

    def _summary(self) -> dict[str, Any]:
        return {
            "branch": self.name + (" (current)" if self.current else ""),
            "catalog": self.catalog,
            "from": self.source or "-",
            "transactions": self.transactions,
            "tables changed": ", ".join(self.tables_changed) or "-",
        }

    def __str__(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self._summary().items())

    def _repr_html_(self) -> str:
        return html_table(self._summary(), "wb-branch")


# ------------------------------------------------------------------------------ create / list
def create_branch(name: str, from_: Any = None, catalog: str | None = None) -> Branch:
    """Create branch ``name`` of a catalog from ``main``'s latest state, or from a past one
    (``from_``: a tag, transaction id, time or ns, as ``as_of`` takes). No data is copied."""
    trunk = trunk_of(catalog)
    name = validate_branch_name(name, trunk.max_name_length)
    if name.lower() == MAIN:
        raise BranchAlreadyExistsError(
            f"{name!r}: 'main' is the catalog's own line and always exists, and a branch named "
            "like it in another case would be mistaken for it; name the branch otherwise."
        )
    _refuse_case_twin(trunk, name)
    in_use = current_branch(trunk)
    if in_use != MAIN:
        raise InvalidArgumentError(
            f"Branches start from a state of main, and calls here use branch {in_use!r} (a "
            f"dc.branch block or dc.use_branch); create branch {name!r} outside the block, or "
            "after dc.use_branch('main'), with from_= a tag, transaction id or time of main."
        )
    if from_ is None:
        roll_forward(trunk)
        state = log_of(trunk).state
    else:
        state = state_as_of(trunk, from_)
    record = new_record(
        name,
        new_transaction_id(),
        state.sequence,
        state.end_time,
        MAIN if from_ is None else f"{MAIN} as of {from_}",
    )
    with trunk.writing():
        trunk.storage.put(base_key(record), state.encode(state.sequence))
        if not trunk.storage.put_if_absent(record_key(name), record.encode()):
            remove_folder(trunk, line_key(record))
            raise BranchAlreadyExistsError(
                f"Branch {name!r} already exists in catalog {trunk.root!r}; use it with "
                f"dc.branch({name!r}), or drop it first with dc.drop_branch({name!r})."
            )
    return _describe(trunk, record)


def _refuse_case_twin(trunk: Catalog, name: str) -> None:
    """Refuse a name that differs from an existing branch's only in case: their folders would
    be one folder on a case-insensitive disk."""
    for record in records(trunk.storage):
        if record.name != name and record.name.lower() == name.lower():
            raise BranchAlreadyExistsError(
                f"Branch {record.name!r} exists, and {name!r} differs from it only in case, "
                "which case-insensitive disks cannot tell apart; name the branch otherwise."
            )


def branches(catalog: str | None = None) -> list[Branch]:
    """``main`` and every branch of a catalog, oldest first, with what each changed."""
    trunk = trunk_of(catalog)
    found = [Branch(MAIN, catalog_name(trunk), current=current_branch(trunk) == MAIN)]
    for record in records(trunk.storage):
        found.append(_describe(trunk, record))
    return found


def changed_tables(bound: Catalog) -> list[tuple[str, str]]:
    """The (namespace, table) pairs a branch (its catalog line) changed since it started."""
    log = log_of(bound)
    head, base = log.refresh(), log.base
    return sorted(
        k for k in set(head.tables) | set(base.tables) if head.tables.get(k) != base.tables.get(k)
    )


def _describe(trunk: Catalog, record: BranchRecord) -> Branch:
    bound = trunk.on_record(record)
    changed = [f"{ns}.{t}" for ns, t in changed_tables(bound)]
    return Branch(
        record.name,
        catalog_name(trunk),
        _transaction_at(trunk, record.base_sequence),
        record.created_ns,
        record.source,
        log_of(bound).version + 1,
        changed,
        current_branch(trunk) == record.name,
    )


def _transaction_at(trunk: Catalog, sequence: int) -> str | None:
    """The id of ``main``'s transaction with ``sequence`` (the newest one needs no history)."""
    if sequence < 0:
        return None
    main = log_of(trunk)
    rows = main.last_entry if main.state.sequence == sequence else main.rows
    return next((r["transaction_id"] for r in rows if r["sequence"] == sequence), None)


def trunk_of(catalog: str | None) -> Catalog:
    """The ``main`` line of a catalog (branch operations are outside transactions)."""
    if current_transaction() is not None:
        raise TransactionError(
            "Branches are created, dropped and published outside transactions; leave the "
            "`with dc.transaction()` block first."
        )
    return main_catalog(catalog)


# ----------------------------------------------------------------------------------- working on
@contextmanager
def branch(name: str, catalog: str | None = None) -> Iterator[Branch]:
    """A block whose reads, writes and transactions use branch ``name`` (``main`` included):
    ``with dc.branch("exp"): dc.write(df, "t")``."""
    trunk = main_catalog(catalog)
    bound = trunk.on_branch(name)
    with branch_scope(name, trunk):
        if bound.record is None:
            yield Branch(name, catalog_name(trunk), current=True)
        else:
            yield _describe(trunk, bound.record)


def use_branch(name: str, catalog: str | None = None) -> None:
    """Make ``name`` the branch every later call on a catalog (the default one) uses when it
    names none, for the rest of the session (``main`` to go back); ``dc.branch`` is the same
    for a block."""
    set_default_branch(name, catalog)


# ------------------------------------------------------------------------------------ dropping
def drop_branch(name: str, catalog: str | None = None) -> None:
    """Drop a branch: its log, tags and the data files it wrote that ``main`` does not use
    (what it published stays). Work in progress on it elsewhere fails to commit."""
    trunk = trunk_of(catalog)
    if name == MAIN:
        raise InvalidArgumentError("'main' is the catalog's own line; it cannot be dropped.")
    bound = trunk.on_branch(name)
    record = bound.record
    assert record is not None
    with branch_lease(trunk, record), trunk.writing():
        written = branch_files(bound)
        trunk.storage.delete(record_key(name))  # the branch is gone from here on
        trunk.forget_branch(name)
        leave_branch(trunk, name)
        free_branch_files(trunk, written)
        remove_folder(trunk, line_key(record))
        if not trunk.storage.list(branch_key(name)):
            remove_folder(trunk, branch_key(name))


@contextmanager
def branch_lease(trunk: Catalog, record: BranchRecord) -> Iterator[None]:
    """Hold the branch's lease, so a publish and a drop of one branch never overlap."""
    holder = new_transaction_id()
    with trunk.writing():
        leases.acquire(trunk.storage, BRANCH_LEASE, record.name, holder, time.time_ns())
    try:
        yield
    finally:
        leases.release(trunk.storage, BRANCH_LEASE, record.name, holder)
