"""The transaction a block of code runs in: opening, committing or aborting it, and the view of
the catalog that reads outside an explicit transaction see."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.core.base.arguments import flag, seconds, text, whole_number
from workbench.core.base.caches import process_cache
from workbench.core.base.errors import (
    HistoricTransactionError,
    InvalidArgumentError,
    TransactionCatalogError,
    TransactionConflictError,
    TransactionError,
)
from workbench.core.storage.heartbeat import Heartbeat
from workbench.core.storage.known import using
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.catalog_state import CatalogState
from workbench.core.transactions.read_ahead import unchecked
from workbench.core.transactions.rollforward import roll_forward
from workbench.core.transactions.transaction import Transaction

if TYPE_CHECKING:
    from workbench.core.catalog.catalogs import Catalog

MAX_BACKOFF_S = 0.5
log = logging.getLogger(__name__)
T = TypeVar("T")

_current: ContextVar[Transaction | None] = ContextVar("workbench_transaction", default=None)
_beating: set[str] = set()  # transactions whose leases a heartbeat renews (see ``_kept``)
# (catalog root, branch id or None) -> the state its reads see, the transaction that made it
# (None: empty) and the moment pinned (ns; None: the state's whole span), while this process
# reads the catalog pinned to one past state (a report's kernel). A pin holds the place, not
# one catalog's options: a notebook's own catalog on that root with options of its own reads
# pinned too, and a pop keeps the pin (no ``forget``), so neither lets a report's kernel write.
_pins: dict[tuple[str, str | None], tuple[CatalogState, str | None, int | None]] = {}
process_cache("transactions.context.pins", _pins.clear)


def _pin_key(catalog: Catalog) -> tuple[str, str | None]:
    return catalog.root, None if catalog.record is None else catalog.record.id


def pin(catalog: Catalog, transaction_id: str | None, moment: int | None = None) -> None:
    """Pin ``catalog``, for this process, to the state right after ``transaction_id`` (None:
    the state before its line's first transaction: the empty catalog on ``main``, a branch's
    starting state), as it was at ``moment`` (ns; None: while that state held): reads that
    name no ``as_of`` see that state, the run log as it was then, and writes are refused, so a
    report's notebook reads exactly what its header says."""
    from workbench.core.transactions.time_travel import state_as_of

    if transaction_id is None:
        state = log_of(catalog).initial_state()
    else:
        state = state_as_of(catalog, transaction_id)
    _pins[_pin_key(catalog)] = (state, transaction_id, moment)


def pinned_state(catalog: Catalog) -> CatalogState | None:
    """The state ``catalog`` is pinned to in this process (None when it is not pinned)."""
    found = _pins.get(_pin_key(catalog))
    return None if found is None else found[0]


def pinned_moment(catalog: Catalog) -> int | None:
    """The moment ``catalog`` is pinned at in this process (None: not pinned, or pinned to a
    state for as long as it held)."""
    found = _pins.get(_pin_key(catalog))
    return None if found is None else found[2]


def _pinned_reason(catalog: Catalog) -> str | None:
    """Why writes to a pinned catalog are refused (None when it is not pinned)."""
    found = _pins.get(_pin_key(catalog))
    if found is None:
        return None
    point = f"transaction {found[1]}" if found[1] else "its empty state (before any transaction)"
    return (
        f"Catalog {catalog.root!r} is pinned as of {point}: this notebook runs as a report "
        "(dc.report), which reads the catalog as it was then and cannot change it. Write from "
        "a notebook or script run outside dc.report."
    )


def _refuse_if_pinned(catalog: Catalog) -> None:
    reason = _pinned_reason(catalog)
    if reason is not None:
        raise HistoricTransactionError(reason)


def current_transaction() -> Transaction | None:
    """The transaction open in this context, if any."""
    return _current.get()


@contextmanager
def _open(txn: Transaction, scoped: bool = True) -> Iterator[Transaction]:
    """Make ``txn`` current for the block (and, when ``scoped``, its catalog the only one calls
    may name); commit it if the block succeeds, else abort it. Files written by URI in the block
    (an engine's into a table folder) go out with the catalog's own storage options."""
    from workbench.core.catalog.scope import branch_scope, catalog_scope

    token = _current.set(txn)
    try:
        with using(txn.catalog.storage):
            try:
                with (
                    catalog_scope(txn.catalog) if scoped else nullcontext(),
                    branch_scope(txn.catalog.branch, txn.catalog) if scoped else nullcontext(),
                ):
                    yield txn
            except BaseException:
                txn.abort()
                raise
            else:
                txn.commit()
    finally:
        _current.reset(token)


def transaction(
    catalog_name: str | None = None,
    as_of: Any = None,
    commit_message: str | None = None,
    *,
    catalog: str | None = None,
    branch: str | None = None,
    auto_compact: bool = True,
    idempotency: Any = None,
) -> AbstractContextManager[Transaction]:
    """A block run as one catalog transaction on ``catalog_name`` (or ``catalog=``; the default
    catalog when neither is given): ``with dc.transaction("lake", commit_message="..."):``.
    Calls inside it without ``catalog=`` use its catalog, on its ``branch`` (the current one by
    default). With ``as_of`` it reads the catalog as it was then, read-only. A transaction
    opened inside another is independent of it (it commits or aborts on its own), as in
    DeltaCAT. ``auto_compact=False`` skips the compaction of the tables it changed after it
    commits (see the tables' ``delta.autoOptimize.autoCompact``). ``idempotency=(app_id,
    version)`` (or a list of pairs) commits the block at most once per key: when every key was
    committed before, the block's changes are dropped at commit and ``txn.skipped`` is True
    (``txn.is_repeat()`` tells up front); some keys but not all is an
    ``IdempotencyConflictError``."""
    from workbench.core.catalog.registry import catalog_name as name_of
    from workbench.core.catalog.scope import lookup_catalog
    from workbench.core.transactions.time_travel import state_as_of

    text("commit_message", commit_message)
    flag("auto_compact", auto_compact)
    if catalog_name is not None and catalog is not None and catalog_name != catalog:
        raise InvalidArgumentError(
            f"transaction() got catalog_name={catalog_name!r} and catalog={catalog!r}; name one."
        )
    cat = lookup_catalog(catalog_name if catalog_name is not None else catalog)
    if branch is not None:
        cat = cat.on_branch(branch)
    state = state_as_of(cat, as_of) if as_of is not None else pinned_state(cat)
    txn = Transaction(
        cat,
        name_of(cat),
        commit_message,
        state=state,
        read_only=state is not None,
        enclosing=_current.get(),
        read_only_reason=None if as_of is not None else _pinned_reason(cat),
    )
    txn.auto_compact = auto_compact
    if idempotency is not None:
        txn.add_idempotency(idempotency)
    return _open(txn)


def cross_catalog_transaction(
    catalog: str | None, commit_message: str | None
) -> AbstractContextManager[Transaction]:
    """A transaction on ``catalog`` whose block may still read other catalogs (``dc.copy``
    reads its source inside the destination's transaction)."""
    from workbench.core.catalog.registry import catalog_name
    from workbench.core.catalog.scope import get_catalog

    cat = get_catalog(catalog)
    _refuse_if_pinned(cat)
    return _open(Transaction(cat, catalog_name(cat), commit_message), scoped=False)


def independent(
    catalog: Catalog, name: str, commit_message: str | None = None
) -> AbstractContextManager[Transaction]:
    """A new transaction on ``catalog`` (called ``name``), whatever transaction is open around
    it: for upkeep that runs after a commit (compaction), never joining another's."""
    return _open(Transaction(catalog, name, commit_message), scoped=False)


def _attempt(commit_message: str | None, catalog: str | None, since_ns: int | None) -> Transaction:
    """A new read-write transaction for an attempt of ``run_transaction``."""
    from workbench.core.catalog.registry import catalog_name
    from workbench.core.catalog.scope import get_catalog

    if _current.get() is not None:
        raise TransactionError(
            "dc.run_transaction runs its function in a transaction of its own; call it outside "
            "the open transaction."
        )
    cat = get_catalog(catalog)
    _refuse_if_pinned(cat)
    return Transaction(cat, catalog_name(cat), commit_message, since_ns=since_ns)


@contextmanager
def operation(catalog: Catalog, message: str | None = None) -> Iterator[Transaction]:
    """The open transaction of ``catalog``, or a fresh one committed when the block ends."""
    from workbench.core.catalog.registry import catalog_name

    open_txn = _current.get()
    if open_txn is not None:
        if open_txn.catalog.identity != catalog.identity:
            raise TransactionCatalogError(
                "Transaction and catalog parameters are mutually exclusive: the open "
                f"transaction is on catalog {open_txn.catalog_name!r}, so catalog "
                f"{catalog_name(catalog)!r} cannot be changed inside it."
            )
        if open_txn.catalog.line_key != catalog.line_key:
            raise TransactionCatalogError(
                f"The open transaction is on branch {open_txn.catalog.branch!r}, so branch "
                f"{catalog.branch!r} cannot be changed inside it; leave the block first."
            )
        with _kept(open_txn):
            yield open_txn
        return
    _refuse_if_pinned(catalog)
    with _open(Transaction(catalog, catalog_name(catalog), message)) as txn, _kept(txn):
        yield txn


@contextmanager
def _kept(txn: Transaction) -> Iterator[None]:
    """Renew the transaction's leases on a heartbeat while a call runs in it (one heartbeat
    however calls nest; it stops before the transaction commits and releases them)."""
    if txn.id in _beating:
        yield
        return
    _beating.add(txn.id)
    try:
        with Heartbeat(txn.renew_leases):
            yield
    finally:
        _beating.discard(txn.id)


def view(catalog: Catalog, as_of: Any = None) -> Transaction:
    """What reads of ``catalog`` see: the open transaction, a past state, or the latest state."""
    from workbench.core.catalog.registry import catalog_name
    from workbench.core.transactions.time_travel import state_as_of

    open_txn = _current.get()
    if as_of is None and open_txn is not None and open_txn.catalog.line_key == catalog.line_key:
        return open_txn
    state = pinned_state(catalog) if as_of is None else state_as_of(catalog, as_of)
    if state is None:
        if not unchecked(catalog):  # else another thread checks (read_ahead_of_check)
            roll_forward(catalog)  # a table a branch published moves into place as it applies
        state = log_of(catalog).state
    return Transaction(catalog, catalog_name(catalog), state=state, read_only=True)


def run_transaction(
    fn: Callable[[], T],
    retries: int = 3,
    commit_message: str | None = None,
    catalog: str | None = None,
    backoff_s: float = 0.05,
) -> T:
    """Run ``fn`` in a transaction, retrying it on ``TransactionConflictError``. A retry
    first claims the tables earlier attempts wrote, so it queues behind their writers instead
    of conflicting with them again."""
    if not callable(fn):
        raise InvalidArgumentError(
            f"run_transaction takes a function to run, not {type(fn).__name__}; e.g. "
            "dc.run_transaction(lambda: dc.write(df, 't'))."
        )
    retries = whole_number("retries", retries)
    backoff_s = seconds("backoff_s", backoff_s)
    text("commit_message", commit_message)
    since_ns: int | None = None
    claims: set[tuple[str, str]] = set()
    for attempt in range(retries + 1):
        txn = _attempt(commit_message, catalog, since_ns)
        since_ns = txn.since_ns
        try:
            with _open(txn):
                txn.claim(claims)
                return fn()
        except TransactionConflictError as e:
            log.debug("Attempt %d of a transaction conflicted: %s", attempt + 1, e)
            claims |= txn.contended()
            if attempt == retries:
                raise
            delay = min(backoff_s * 2**attempt, MAX_BACKOFF_S)
            time.sleep(delay * (1 + secrets.randbelow(100) / 100))
    raise AssertionError("unreachable")
