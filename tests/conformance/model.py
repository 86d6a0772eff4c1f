"""A plain-Python model of a table's rows: what every read path must return, computed without
workbench, Delta or any engine."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

Row = dict[str, Any]


class TableModel:
    """The rows a table holds after a sequence of writes: a list in write order without merge
    keys, a dict by key (one column, or a tuple of columns) with them."""

    def __init__(self, columns: Iterable[str], key: str | tuple[str, ...] | None = None):
        self.columns = list(columns)
        self.key = key
        self._by_key: dict[Any, Row] = {}
        self._appended: list[Row] = []

    @property
    def keys(self) -> tuple[str, ...]:
        """The merge key columns (none without keys)."""
        if self.key is None:
            return ()
        return (self.key,) if isinstance(self.key, str) else tuple(self.key)

    def key_of(self, row: Mapping[str, Any]) -> Any:
        """A row's key: its key column's value, or the tuple of its key columns' values."""
        if isinstance(self.key, str):
            return row[self.key]
        return tuple(row[k] for k in self.keys)

    def rows(self) -> list[Row]:
        """The rows, each with every column (missing values are None)."""
        rows = self._by_key.values() if self.key else self._appended
        return [{c: r.get(c) for c in self.columns} for r in rows]

    def append(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """New rows, as ADD/APPEND or a create writes them."""
        if self.key:
            self.merge(rows)
        else:
            self._appended += [dict(r) for r in rows]

    def merge(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Upsert by key: a row of some columns changes only those columns of its key."""
        for row in rows:
            known = self._by_key.setdefault(self.key_of(row), dict.fromkeys(self.columns))
            known.update(row)

    def delete(self, keys: Iterable[Any]) -> None:
        """Remove the rows of ``keys`` (key values, as ``key_of`` gives them)."""
        for k in keys:
            self._by_key.pop(k, None)

    def add_column(self, name: str) -> None:
        """A column added by schema evolution: null in every row written before."""
        if name not in self.columns:
            self.columns.append(name)

    def snapshot(self) -> TableModel:
        return copy.deepcopy(self)
