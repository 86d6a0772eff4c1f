"""Catalog-wide time travel: resolve ``as_of`` (ns, datetime, transaction id or tag) to a state."""

from __future__ import annotations

import json
import numbers
import time
from bisect import bisect_right
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Protocol

from workbench.core.base.errors import AsOfUnitError, TimeTravelError
from workbench.core.base.names import validate_name
from workbench.core.catalog.branch_records import line_key
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.catalog_state import CatalogState

if TYPE_CHECKING:
    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.transactions.catalog_log import TransactionLog


TAG_SUFFIX = ".json"


TAG_FOLDER = "_workbench/tags"
STAGING_SUFFIX = 4  # a local store writes "<name>#<n>" first, then renames it into place


def tag_folder(catalog: Catalog) -> str:
    """Where the tags of a catalog's line live (each branch has its own)."""
    return TAG_FOLDER if catalog.record is None else f"{line_key(catalog.record)}/tags"


def tag_key(catalog: Catalog, name: str) -> str:
    """Where the tag ``name`` of a catalog's line is stored (the name validated)."""
    limit = catalog.max_name_length - len(TAG_SUFFIX) - STAGING_SUFFIX
    return f"{tag_folder(catalog)}/{validate_name('tag', name, limit)}{TAG_SUFFIX}"


def resolve_sequence(catalog: Catalog, as_of: Any, argument: str = "as_of") -> int:
    """The sequence of the last transaction committed at or before ``as_of`` (given as the
    ``argument`` parameter, named in errors)."""
    log = log_of(catalog)
    log.refresh()
    if not log.rows:
        raise TimeTravelError(
            f"Catalog {catalog.root!r} has no committed transactions yet, so there is no past "
            "state to read."
        )
    if isinstance(as_of, str):
        named = _sequence_of_name(catalog, as_of)
        if named is not None:
            return named
        as_of = _iso_time(catalog, as_of, argument)
    sequence = _sequence_at(log, _past_instant(as_of, argument))
    if sequence == -1:  # before the first transaction: the empty catalog
        check_unit(catalog, as_of, argument)
    return sequence


def as_of_instant(catalog: Catalog, as_of: Any, argument: str = "as_of") -> int | None:
    """The moment (ns) ``as_of`` names when it is a time; None when it names a transaction or
    tag (a state, which holds until the next transaction) or is None."""
    if as_of is None:
        return None
    if isinstance(as_of, str):
        lines = [catalog] if catalog.record is None else [catalog, catalog.trunk]
        for line in lines:
            log_of(line).refresh()
            if _sequence_of_name(line, as_of) is not None:
                return None
        as_of = _iso_time(catalog, as_of, argument)
    return _past_instant(as_of, argument)


def _past_instant(as_of: Any, argument: str) -> int:
    """ns since the epoch of a time given as ``argument``, which must not be in the future."""
    moment = instant_ns(as_of, argument)
    if moment > time.time_ns():
        raise TimeTravelError(
            f"Historic timestamp {argument}={as_of!r} cannot be set in the future; time travel "
            "reads the past (omit it to read the latest state)."
        )
    return moment


def _sequence_at(log: TransactionLog, moment: int) -> int:
    """The sequence of the last transaction of ``log`` committed at or before ``moment`` (-1
    when none was)."""
    position = bisect_right(log.rows, moment, key=lambda row: row["end_time"])
    return log.rows[position - 1]["sequence"] if position else -1


# Units an integer time is mistaken for, with their size in nanoseconds.
_SLIPS = (("seconds", 10**9), ("milliseconds", 10**6), ("microseconds", 10**3))


def _first_commit_ns(catalog: Catalog) -> int | None:
    rows = log_of(catalog).rows
    return rows[0]["end_time"] if rows else None


def _utc(ns: int) -> str:
    seconds, nanos = divmod(ns, _NS)
    moment = _EPOCH + timedelta(seconds=seconds)
    return f"{moment:%Y-%m-%d %H:%M:%S}.{nanos:09d} UTC"


def check_unit(catalog: Catalog, value: Any, argument: str = "as_of", reading: str = "") -> None:
    """Raise ``AsOfUnitError`` when an integer time before the catalog's first transaction
    would fall inside its history read as seconds, milliseconds or microseconds (``reading``:
    how the caller read the value, for the message)."""
    first = _first_commit_ns(catalog)
    if first is None or not _is_integer(value) or int(value) >= first:
        return
    value, now = int(value), time.time_ns()
    reading = reading or (
        f"{argument}={value} is read as nanoseconds since the epoch, as integer times always are:"
    )
    for unit, size in _SLIPS:
        if (value + 1) * size > first and value * size <= now:
            raise AsOfUnitError(
                f"{reading} {_utc(value)}, before the catalog's first transaction "
                f"({_utc(first)}). It looks like {unit} ({_utc(value * size)}): pass "
                f"{argument}={value} * {size}, time.time_ns() or a datetime."
            )


class View(Protocol):
    """What a note about a view needs: its catalog, whether it only reads, its state."""

    catalog: Catalog
    read_only: bool
    state: CatalogState


def before_history_note(seen: View, as_of: Any = None) -> str:
    """Why a read-only view ``seen`` (of ``as_of``, when given) shows an empty catalog: it is
    before the first transaction ("" for views of a later state)."""
    first = _first_commit_ns(seen.catalog)
    if first is None or not seen.read_only or seen.state.sequence != -1:
        return ""
    first_at = f"before the catalog's first transaction at {_utc(first)}"
    if not _is_integer(as_of):  # a time given as a datetime or text: no unit to mistake
        return f" ({first_at})"
    return (
        f" (integer as_of values are nanoseconds since the epoch: {as_of} is "
        f"{_utc(int(as_of))}, {first_at})"
    )


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_NS = 1_000_000_000


def _aware_ns(moment: datetime) -> int:
    """Exact ns since the epoch of a timezone-aware datetime (integer arithmetic, no floats)."""
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000


def _local_wall_ns(wall_ns: int) -> int:
    """The instant of a naive wall-clock time in local time, read as ``datetime.timestamp()``
    reads a naive datetime."""
    seconds, nanos = divmod(wall_ns, _NS)
    naive = datetime(1970, 1, 1) + timedelta(seconds=seconds)
    return _aware_ns(naive.astimezone()) + nanos


def instant_ns(value: Any, argument: str = "as_of") -> int:
    """ns since the epoch of a time given as ns (int or numpy int), a datetime, a pandas
    Timestamp or a numpy datetime64, exactly. Naive datetimes and Timestamps are local time;
    numpy datetime64 values are UTC, as numpy defines them."""
    if _is_integer(value):
        return int(value)
    if type(value).__module__.startswith("pandas") and hasattr(value, "nanosecond"):
        if value != value:  # NaT
            raise TimeTravelError(f"{argument}=NaT is not a time; pass a real timestamp.")
        return int(value.value) if value.tzinfo is not None else _local_wall_ns(int(value.value))
    if isinstance(value, datetime):
        try:
            return _aware_ns(value if value.tzinfo is not None else value.astimezone())
        except (ValueError, OverflowError) as e:
            raise TimeTravelError(
                f"{argument}={value!r} is outside the range of times this machine can place ({e})."
            ) from e
    if type(value).__name__ == "datetime64" and type(value).__module__ == "numpy":
        import numpy as np

        if np.isnat(value):
            raise TimeTravelError(f"{argument}=NaT is not a time; pass a real timestamp.")
        return int(value.astype("datetime64[ns]").astype(np.int64))  # numpy times are UTC
    raise TimeTravelError(
        f"{argument}={value!r} is not a time: pass ns since the epoch (int), a datetime or pandas "
        "Timestamp (naive means local time), a transaction id or a tag name."
    )


def _sequence_of_name(catalog: Catalog, name: str) -> int | None:
    """The sequence of the transaction with id ``name`` or tagged ``name``, if any."""
    for row in log_of(catalog).rows:
        if row["transaction_id"] == name:
            return row["sequence"]
    tagged = tags_of(catalog).get(name)
    return None if tagged is None else _sequence_of_name(catalog, tagged)


def _iso_time(catalog: Catalog, text: str, argument: str) -> datetime:
    """An ISO 8601 time given as text (e.g. '2026-11-21T09:30'), for as_of strings that name no
    transaction or tag."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise TimeTravelError(
            f"{argument}={text!r} is neither a transaction id, a tag of catalog "
            f"{catalog.root!r}, nor an ISO time like '2026-11-21T09:30'; see dc.transactions() "
            "and dc.tags()."
        ) from None


def state_as_of(catalog: Catalog, as_of: Any) -> CatalogState:
    """The catalog state right after the transaction ``as_of`` resolves to (on a branch, see
    ``_branch_state_as_of``)."""
    if catalog.record is not None:
        return _branch_state_as_of(catalog, as_of)
    return log_of(catalog).state_at(resolve_sequence(catalog, as_of))


def _branch_state_as_of(catalog: Catalog, as_of: Any) -> CatalogState:
    """A branch's state as of a point: after its own transaction at or before it; its base
    between the branch point and its first transaction; ``main``'s state before that (a
    branch's history is ``main``'s up to the branch point)."""
    record, log = catalog.record, log_of(catalog)
    assert record is not None
    log.refresh()
    main = catalog.trunk
    if isinstance(as_of, str):
        named = _sequence_of_name(catalog, as_of)
        if named is not None:
            return log.state_at(named)
        on_main = _sequence_of_name(main, as_of)
        if on_main is not None:
            return _main_state_within(catalog, on_main, as_of)
        as_of = _iso_time(catalog, as_of, "as_of")
    moment = _past_instant(as_of, "as_of")
    sequence = _sequence_at(log, moment)
    if sequence >= 0:
        return log.state_at(sequence)
    if moment >= record.base_end_time:
        return log.initial_state()
    return _main_state_within(catalog, resolve_sequence(main, as_of), as_of)


def _main_state_within(catalog: Catalog, sequence: int, as_of: Any) -> CatalogState:
    """``main``'s state after ``sequence``, which must be part of the branch's history."""
    record = catalog.record
    assert record is not None
    if sequence > record.base_sequence:
        raise TimeTravelError(
            f"as_of={as_of!r} names a transaction of main committed after branch "
            f"{record.name!r} started from it, so it is not in the branch's history; read it "
            "on main (branch='main')."
        )
    if sequence == record.base_sequence:
        return log_of(catalog).initial_state()
    return log_of(catalog.trunk).state_at(sequence)


def tags(catalog: str | None = None) -> dict[str, str]:
    """Every tag of a catalog and the transaction it names."""
    from workbench.core.catalog.scope import get_catalog

    return tags_of(get_catalog(catalog))


def tags_of(catalog: Catalog) -> dict[str, str]:
    """Every tag of the line ``catalog`` is open on (its branch's own)."""
    found = {}
    for meta in sorted(catalog.storage.list(tag_folder(catalog)), key=lambda m: m["path"]):
        name = meta["path"].rsplit("/", 1)[-1].removesuffix(TAG_SUFFIX)
        found[name] = json.loads(catalog.storage.get(meta["path"]))["transaction_id"]
    return found
