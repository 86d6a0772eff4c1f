"""File skipping: which of a table version's files a filter could match, judged from the
statistics in the Delta log (each file's row count, per-column minimum, maximum and null
count) before any file is opened.

A file is skipped only when its statistics prove no row of it satisfies the filter. Where a
file has no statistics for a column (written before the column was added, or by a writer that
records none) nothing is proved on that column. Bounds are read as loosely as writers write
them: a long text maximum may be truncated (no upper bound), a time may be cut to
milliseconds (its maximum widened by one), and NaN, which Parquet leaves out of the bounds and
SQL orders above every number, may be above any float maximum.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.base.caches import BoundedCache
from workbench.core.delta.data_files import TRUNCATED_STRING_STATS, DataFile, row_group_files
from workbench.core.filters.binding import column_type
from workbench.core.filters.expression import (
    And,
    Column,
    Compare,
    Expr,
    In,
    IsNull,
    Like,
    Literal,
    Or,
    without_not,
)

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

_MILLISECOND_NS = 1_000_000
REMEMBERED_STATS = 100_000  # (file, column) statistics kept per process (about 45 MB)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class Skipped:
    """The files a filter could match (``kept``, in the order given) and how many bytes and
    files it rules out."""

    kept: list[DataFile]
    skipped: int
    skipped_bytes: int


def skip_files(
    files: list[DataFile], predicate: Expr | None, schema: pa.Schema, store: str | None = None
) -> Skipped:
    """``files`` less those whose statistics prove ``predicate`` false for every row
    (``store``: the identity of the store they are on, under which their statistics as read
    are remembered for the next query)."""
    if predicate is None:
        return Skipped(list(files), 0, 0)
    judge = _Judge(without_not(predicate), schema, store)
    kept = [f for f in files if judge.may_match(f)]
    gone = len(files) - len(kept)
    return Skipped(kept, gone, sum(f.size for f in files) - sum(f.size for f in kept))


def kept_row_groups(
    meta: pq.FileMetaData, f: DataFile, predicate: Expr | None, schema: pa.Schema
) -> list[int] | None:
    """The row groups of file ``f`` (footer ``meta``) whose statistics allow a row
    ``predicate`` holds for, judged as files are; None when it rules none out."""
    if predicate is None:
        return None
    judge = _Judge(without_not(predicate), schema)
    groups = row_group_files(meta, f)
    kept = [g for g, group in enumerate(groups) if judge.may_match(group)]
    return None if len(kept) == len(groups) else kept


class _Judge:
    """Whether a file may hold a row the predicate (NOTs pushed to its leaves) holds for."""

    def __init__(self, predicate: Expr, schema: pa.Schema, store: str | None = None):
        self.predicate, self.schema, self.store = predicate, schema, store
        self._seen: dict[tuple[int, tuple[str, ...]], _Stats] = {}

    def stats(self, f: DataFile, column: Column) -> _Stats:
        """``f``'s statistics for ``column``, read once per file however often the
        predicate names the column (a range names it twice); with a ``store``, once per
        process (``f`` is then a whole data file, which never changes once written)."""
        key = (id(f), column.path)
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = self._read(f, column)
        return found

    def _read(self, f: DataFile, column: Column) -> _Stats:
        if self.store is None:
            return _Stats(f, column, self.schema)
        kind = column_type(self.schema, column.path)
        key = (self.store, f.absolute, f.size, f.rows, column.path, str(kind))
        found = _READ.get(key)
        if found is None:
            found = _Stats(f, column, self.schema)
            _READ.keep(key, found)
        return found

    def may_match(self, f: DataFile) -> bool:
        return self._may(self.predicate, f)

    def _may(self, expr: Expr, f: DataFile) -> bool:
        if isinstance(expr, And):
            return all(self._may(p, f) for p in expr.parts)
        if isinstance(expr, Or):
            return any(self._may(p, f) for p in expr.parts)
        if isinstance(expr, Literal):
            return expr.value is True
        if (
            isinstance(expr, Compare)
            and isinstance(expr.left, Column)
            and isinstance(expr.right, Literal)
        ):
            return self._compare(f, expr.left, expr.op, expr.right.value)
        if isinstance(expr, In) and isinstance(expr.operand, Column):
            return self._in(f, expr.operand, expr)
        if isinstance(expr, IsNull) and isinstance(expr.operand, Column):
            return self._null(f, expr.operand, expr.negated)
        if isinstance(expr, Like) and isinstance(expr.operand, Column):
            return self._like(f, expr.operand, expr)
        return True  # not modelled: a file is never skipped on it

    def _compare(self, f: DataFile, column: Column, op: str, value: Any) -> bool:
        if value is None:
            return False  # a comparison with NULL holds for no row
        stats = self.stats(f, column)
        if stats.all_null:
            return False
        value = stats.comparable(value)
        if value is _UNKNOWN:
            return True
        low, high = stats.low, stats.high
        if stats.floats and op in (">", ">=", "!="):
            high = None  # a NaN may be above any maximum
        try:
            if op == "==":
                return (low is None or low <= value) and (high is None or value <= high)
            if op == "!=":
                return not (low is not None and high is not None and low == value == high)
            if op == "<":
                return low is None or low < value
            if op == "<=":
                return low is None or low <= value
            if op == ">":
                return high is None or high > value
            return high is None or high >= value
        except TypeError:  # bounds of another representation: nothing is proved
            return True

    def _in(self, f: DataFile, column: Column, expr: In) -> bool:
        values = [v.value for v in expr.values]
        if not expr.negated:
            return any(self._compare(f, column, "==", v) for v in values)
        if any(v is None for v in values):
            return False  # NOT IN a list holding NULL holds for no row
        stats = self.stats(f, column)
        if stats.all_null:
            return False
        if stats.floats or stats.low is None or stats.low != stats.high:
            return True
        return not any(stats.comparable(v) == stats.low for v in values)

    def _null(self, f: DataFile, column: Column, negated: bool) -> bool:
        stats = self.stats(f, column)
        if stats.nulls is None:
            return True
        return stats.nulls < f.rows if negated else stats.nulls > 0

    def _like(self, f: DataFile, column: Column, like: Like) -> bool:
        prefix = like.prefix
        if like.negated or like.case_insensitive or not prefix:
            return True
        stats = self.stats(f, column)
        if stats.all_null:
            return False
        low, high = stats.low, stats.high
        if not isinstance(low, str) or not isinstance(high, str):
            return True
        if high < prefix:
            return False  # every value sorts before the first text that starts with it
        return not (low > prefix and not low.startswith(prefix))


_UNKNOWN = object()


# A data file's statistics for a column, as ``_Stats`` reads them: a table's files are judged
# again by every query, and parsing their bounds is most of a judgement's cost.
_READ: BoundedCache[tuple, _Stats] = BoundedCache(
    "delta.skipping_stats", lambda _: 1, lambda: REMEMBERED_STATS
)


class _Stats:
    """One file's statistics for one column, as values comparable with a filter's constants
    (times as nanoseconds since the epoch, decimals as ``Decimal``); None where unknown."""

    __slots__ = ("all_null", "floats", "high", "kind", "low", "nulls")

    def __init__(self, f: DataFile, column: Column, schema: pa.Schema):
        import pyarrow.types as t

        self.kind = column_type(schema, column.path)
        self.floats = self.kind is not None and t.is_floating(self.kind)
        self.nulls = _lookup(f.nulls, column.path)
        self.all_null = isinstance(self.nulls, int) and f.rows > 0 and self.nulls >= f.rows
        low, high = _lookup(f.low, column.path), _lookup(f.high, column.path)
        self.low = self._value(low, upper=False)
        self.high = self._value(high, upper=True)

    def _value(self, raw: Any, upper: bool) -> Any:
        import pyarrow.types as t

        kind = self.kind
        if raw is None or kind is None or isinstance(raw, dict):
            return None
        try:
            if t.is_integer(kind):
                return int(raw) if not isinstance(raw, bool) else None
            if t.is_floating(kind):
                number = float(raw)
                return number if math.isfinite(number) else None
            if t.is_decimal(kind):
                return _decimal(raw, kind)
            if t.is_string(kind) or t.is_large_string(kind) or t.is_string_view(kind):
                if not isinstance(raw, str):
                    return None
                return None if upper and len(raw) >= TRUNCATED_STRING_STATS else raw
            if t.is_boolean(kind):
                return raw if isinstance(raw, bool) else None
            if t.is_date(kind):
                return raw if isinstance(raw, datetime.date) else datetime.date.fromisoformat(raw)
            if t.is_timestamp(kind):
                nanos = _nanos(raw)
                return nanos + _MILLISECOND_NS if upper else nanos
        except (ValueError, TypeError, decimal.InvalidOperation):
            return None
        return None

    def comparable(self, value: Any) -> Any:
        """A filter's constant in the bounds' terms (``_UNKNOWN`` when it has none)."""
        import pyarrow.types as t

        kind = self.kind
        if kind is None:
            return _UNKNOWN
        if isinstance(value, float) and math.isnan(value):
            return _UNKNOWN  # NaN meets NaN rows, which bounds leave out
        try:
            if t.is_timestamp(kind):
                return _nanos(value)
            if t.is_decimal(kind) and isinstance(value, float):
                return decimal.Decimal(repr(value))
            if t.is_floating(kind) and isinstance(value, decimal.Decimal):
                return float(value)
        except (ValueError, TypeError, decimal.InvalidOperation):
            return _UNKNOWN
        return value


def _lookup(stats: dict[str, Any], path: tuple[str, ...]) -> Any:
    """A column's entry in a statistics map: nested for struct fields (as Delta writes
    them), or under the dotted name (as deltalake flattens them)."""
    found: Any = stats
    for name in path:
        if not isinstance(found, dict) or name not in found:
            found = None
            break
        found = found[name]
    if found is None and len(path) > 1:
        found = stats.get(".".join(path))
    return found


@functools.lru_cache(maxsize=1 << 16)
def _text_nanos(text: str) -> int:
    """``_nanos`` of ISO text, remembered: a table's bounds are read again by every query."""
    return _nanos(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")))


def _decimal(raw: Any, kind: Any) -> decimal.Decimal | None:
    """A decimal bound: exact from text or a ``Decimal``; from a JSON float only where the
    type's precision survives a double (15 digits), else unknown."""
    if isinstance(raw, decimal.Decimal):
        return raw
    if isinstance(raw, (int, str)):
        return decimal.Decimal(raw)
    if isinstance(raw, float) and kind.precision <= 15:
        return decimal.Decimal(repr(raw))
    return None


def _nanos(value: Any) -> int:
    """A time as nanoseconds since the epoch: ISO text (Delta's statistics), a ``datetime``
    (zone-less read as UTC, as the engines read it), a pandas ``Timestamp``, or a date."""
    if isinstance(value, str):
        return _text_nanos(value)
    nanos = getattr(value, "value", None)  # a pandas Timestamp keeps nanoseconds
    if isinstance(nanos, int) and hasattr(value, "nanosecond"):
        return nanos
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        delta = value - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    if isinstance(value, datetime.date):
        return (value - _EPOCH.date()).days * 86_400 * 1_000_000_000
    raise TypeError(f"not a time: {value!r}")
