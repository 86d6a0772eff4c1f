"""Where each key of a data file is: the file's keys sorted once, so a small MERGE or DELETE
finds its rows by binary search instead of reading and hashing the whole key column again.

Data files never change once written, so an index stays valid as long as its file exists; the
indexes of recently used files are kept up to a memory budget (least recently used first out).
Only single-column integer keys are indexed; other keys are matched by a hash join. A change
too big for an index of a big file to pay for itself (over a thousandth of the file's rows) is
matched in one pass instead (``find_in_column``), and builds no index.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.base.caches import drop_where, process_cache

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    import pyarrow as pa

BUDGET_BYTES = 512 * 1024**2
INDEX_BELOW = 1000  # index a file when a change holds fewer keys than its rows / this,
SMALL_FILE_ROWS = 65_536  # or when the file is this small (its index costs next to nothing)


@dataclass(frozen=True)
class KeyIndex:
    """A file's keys in sorted order, and the row position of each (None when the file holds
    its keys in order already, as a bulk load in key order or a sorted rewrite writes them:
    the position is then the index, and the index costs no sort and half the memory)."""

    sorted_keys: np.ndarray
    positions: np.ndarray | None

    @classmethod
    def of(cls, keys: pa.Array | pa.ChunkedArray) -> KeyIndex:
        """The index of a file's key column (row positions follow the column's order)."""
        import numpy as np

        values = keys.to_numpy(zero_copy_only=False)
        if len(values) < 2 or bool(np.all(values[1:] > values[:-1])):
            return cls(values, None)
        order = np.argsort(values)  # a file's keys are unique, so any sort order will do
        return cls(values[order], order)

    @property
    def nbytes(self) -> int:
        """Memory the index holds."""
        return self.sorted_keys.nbytes + (0 if self.positions is None else self.positions.nbytes)

    def find(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the ``wanted`` keys found in the file: their row positions, and their indexes
        in ``wanted``."""
        import numpy as np

        at = np.searchsorted(self.sorted_keys, wanted)
        inside = at < len(self.sorted_keys)
        found = np.zeros(len(wanted), dtype=bool)
        found[inside] = self.sorted_keys[at[inside]] == wanted[inside]
        rows = at[found]
        return (rows if self.positions is None else self.positions[rows]), np.flatnonzero(found)


def worth_indexing(rows: int, wanted: int) -> bool:
    """True when a change of ``wanted`` keys should build the index of a file of ``rows``."""
    return rows <= SMALL_FILE_ROWS or wanted * INDEX_BELOW < rows


def find_in_column(column: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``KeyIndex.find`` without an index: one pass over a file's key ``column`` (numpy's
    membership test), then the matched keys looked up among the sorted ``wanted`` ones."""
    import numpy as np

    positions = np.flatnonzero(np.isin(column, wanted))
    order = np.argsort(wanted)
    sources = order[np.searchsorted(wanted[order], column[positions])]
    return positions, sources


class IndexCache:
    """Indexes of recently used files, by the identity of the store that read them (a catalog
    never gets what another's credentials read), file URI and size, within a memory budget."""

    def __init__(self, budget: int = BUDGET_BYTES):
        self.budget = budget
        self.used = 0
        self.indexes: OrderedDict[tuple[str, str, int], KeyIndex] = OrderedDict()
        self._lock = threading.Lock()

    def has(self, store: str, uri: str, size: int) -> bool:
        """True when the index of a file is kept."""
        return (store, uri, size) in self.indexes

    def get(self, store: str, uri: str, size: int, load: Callable[[], pa.Array]) -> KeyIndex:
        """The index of a file of ``store`` (its identity), made from its key column
        (``load``) when not kept."""
        key = (store, uri, size)
        with self._lock:
            index = self.indexes.get(key)
            if index is not None:
                self.indexes.move_to_end(key)
                return index
        return self._keep(key, KeyIndex.of(load()))

    def prepare(self, store: str, files: list[tuple[str, int, Callable[[], pa.Array]]]) -> None:
        """Make the indexes of ``files`` (URI, size, key column loader) not kept yet, their
        key columns read and sorted side by side (pyarrow and NumPy leave the GIL), so a
        first change to a table of many big files does not read them one after another."""
        missing = [(uri, size, load) for uri, size, load in files if not self.has(store, uri, size)]
        if len(missing) < 2:
            return  # ``get`` makes a lone one
        workers = min(len(missing), os.cpu_count() or 1)
        with ThreadPoolExecutor(workers, thread_name_prefix="workbench-index") as pool:
            made = list(pool.map(lambda file: KeyIndex.of(file[2]()), missing))
        for (uri, size, _), index in zip(missing, made, strict=True):
            self._keep((store, uri, size), index)

    def _keep(self, key: tuple[str, str, int], index: KeyIndex) -> KeyIndex:
        """Keep a new index, dropping the least recently used ones over the budget."""
        with self._lock:
            if key in self.indexes:  # another thread made it meanwhile
                return self.indexes[key]
            self.indexes[key] = index
            self.used += index.nbytes
            while self.used > self.budget and len(self.indexes) > 1:
                _, dropped = self.indexes.popitem(last=False)
                self.used -= dropped.nbytes
            return index

    def clear(self) -> None:
        """Forget every index."""
        with self._lock:
            self.indexes.clear()
            self.used = 0

    def forget(self, store: str) -> None:
        """Forget the indexes of one store's files."""
        with self._lock:
            dropped = drop_where(self.indexes, lambda key: key[0] == store)
            self.used -= sum(index.nbytes for index in dropped)


def indexable(key_type: pa.DataType) -> bool:
    """True for the key types the index serves (integers)."""
    import pyarrow.types as pt

    return pt.is_integer(key_type)


INDEXES = IndexCache()
process_cache("data.key_index", INDEXES.clear, forget=INDEXES.forget)
