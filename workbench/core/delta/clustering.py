"""Clustering: a table's rows laid out by a few of its columns, so that rows with close values
in each of them share files and row groups, and a query selecting on any of those columns reads
few of either, in every Delta reader (by the statistics in the log and in the Parquet footers).
No I/O: an order of rows in memory, where files are cut, and the table property that names the
columns.

Each column's values become ranks (how many rows hold a smaller value; nulls first), so a skewed
or a string column spreads over the whole range as evenly as uniform numbers would. One column
is a plain sort. Two to four are ordered along a Hilbert curve over the ranks scaled to one
number of bits (consecutive cells of the curve are always neighbours, so a run of rows covers a
compact box, where a Z-order's runs jump between distant boxes); a rewrite into files of a size
cuts them as tiles of the ranks (``clustered_files``), whose boxes are tighter than a run's."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import ClusteringError
from workbench.core.base.types import TableProperty

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from workbench.core.schema.table_schema import Schema

CLUSTER_BY_PROPERTY = TableProperty.CLUSTER_BY.value
MAX_COLUMNS = 4  # beyond that each column gets too few bits of the curve to narrow anything
_EXAMPLE = "e.g. ['user'] or ['user', 'category']"


def clustering_argument(value: Any, argument: str) -> list[str]:
    """``value`` given as ``argument`` (``cluster_by=`` or the table property) checked as a
    clustering: a list of 1 to ``MAX_COLUMNS`` distinct column names."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ClusteringError(
            f"{argument} takes a list of column names, {_EXAMPLE}, not {value!r}."
        )
    if not value:
        raise ClusteringError(
            f"{argument}=[] names no column: give 1 to {MAX_COLUMNS} column names, {_EXAMPLE} "
            f"(to stop clustering a table, set {TableProperty.CLUSTER_BY.name} to None)."
        )
    if len(value) > MAX_COLUMNS:
        raise ClusteringError(
            f"{argument}={list(value)!r} names {len(value)} columns; a table clusters by at "
            f"most {MAX_COLUMNS}: keep the ones queries select on most."
        )
    if not all(isinstance(name, str) and name for name in value):
        raise ClusteringError(f"{argument} takes column names as strings, {_EXAMPLE}: {value!r}.")
    folded = [name.lower() for name in value]
    if len(set(folded)) < len(folded):
        raise ClusteringError(
            f"{argument}={list(value)!r} names a column twice (names match regardless of "
            "case); name each column once."
        )
    return list(value)


def encode_clustering(value: Any) -> str:
    """The table property's stored text: a JSON list of names, or ``null`` (not clustered)."""
    if value is None:
        return json.dumps(None)
    return json.dumps(clustering_argument(value, f"table property {CLUSTER_BY_PROPERTY}"))


def clustering_of(properties: Mapping[str, str]) -> list[str]:
    """The clustering columns a table's properties name (empty when it is not clustered)."""
    stored = properties.get(CLUSTER_BY_PROPERTY)
    if stored is None:
        return []
    try:
        value = json.loads(stored)
    except ValueError:
        value = stored  # not written by workbench: refused below, saying what it takes
    if value is None:
        return []
    return clustering_argument(value, f"table property {CLUSTER_BY_PROPERTY}")


def check_clustering(schema: Schema, columns: Sequence[str]) -> None:
    """Raise ``ClusteringError`` for a clustering column the schema lacks, or one whose type
    has no order."""
    fields = {f.name: f for f in schema}
    for name in columns:
        found = fields.get(name)
        if found is None:
            alike = [n for n in fields if n.lower() == name.lower()]
            hint = f" (did you mean {alike[0]!r}?)" if alike else ""
            raise ClusteringError(
                f"Cannot cluster by {name!r}: the table has no such column{hint}. Its columns "
                f"are {list(fields)}; to drop a clustering column, first set "
                f"{TableProperty.CLUSTER_BY.name} without it."
            )
        if not _orderable(found.type):
            raise ClusteringError(
                f"Cannot cluster by {name!r}: its type {found.type} has no order to lay rows "
                "out by; cluster by columns of numbers, strings, booleans, dates or times."
            )


def _orderable(kind: pa.DataType) -> bool:
    import pyarrow.types as pt

    checks = (
        pt.is_integer,
        pt.is_floating,
        pt.is_decimal,
        pt.is_string,
        pt.is_large_string,
        pt.is_boolean,
        pt.is_date,
        pt.is_time,
        pt.is_timestamp,
        pt.is_duration,
    )
    return any(check(kind) for check in checks)


def clustered(data: pa.Table, columns: Sequence[str]) -> pa.Table:
    """``data``'s rows in the clustering order of ``columns`` (rows at one point of the curve
    keep their order)."""
    if data.num_rows < 2 or not columns:
        return data
    return data.take(clustering_order(data, columns))


def clustering_order(data: pa.Table, columns: Sequence[str]) -> np.ndarray:
    """The positions of ``data``'s rows in clustering order."""
    import numpy as np

    ranks = [_ranks(data.column(name)) for name in columns]
    return np.argsort(_curve(ranks, data.num_rows), kind="stable")


def _curve(ranks: list[np.ndarray], rows: int) -> np.ndarray:
    """Each row's place along the clustering curve of its columns' ``ranks``: the rank itself
    for one column, else its Hilbert index."""
    import numpy as np

    if len(ranks) == 1:
        return ranks[0]
    bits = min(64 // len(ranks), -(-rows.bit_length() // len(ranks)) + 2)
    scale = float(2**bits) / rows
    top = np.uint64(2**bits - 1)
    cells = [np.minimum((r * scale).astype(np.uint64), top) for r in ranks]
    return hilbert_index(cells, bits)


def clustered_files(
    data: pa.Table,
    columns: Sequence[str],
    file_bytes: int,
    row_bytes: Callable[[pa.Table], float],
) -> tuple[pa.Table, list[int]]:
    """``data``'s rows clustered by ``columns`` and cut into files of about ``file_bytes``:
    the rows in file order, and the row each file starts at. ``row_bytes``: what a row of
    the rows given takes in a file (asked of the first rows along the curve, which compress
    as a file's do).

    Two or more columns are cut as tiles (sort-tile-recursive): the rows sorted by the column
    of fewest values are cut into about ``files ** (1/d)`` slabs, each slab by the next column,
    and so on, every cut where the column's value changes nearest the even share, so a value
    of a column with few values (a category) lies in one slab, not at the edge of two. A
    query on any of the columns then opens about ``files ** (1 - 1/d)`` files; stretches of
    the curve, whose boxes are ragged, open about a fifth more. Within a file, rows follow
    the curve."""
    import numpy as np
    import pyarrow.compute as pc

    if data.num_rows < 2:
        return data, [0]
    ranks = {name: _ranks(data.column(name)) for name in columns}
    order = np.argsort(_curve(list(ranks.values()), data.num_rows), kind="stable")
    sample = data.take(order[:SAMPLE_ROWS])
    rows_per_file = max(int(file_bytes / row_bytes(sample)), 1)
    files = max(round(data.num_rows / rows_per_file), 1)
    if len(columns) == 1 or files == 1:
        return data.take(order), list(range(0, data.num_rows, rows_per_file))
    place = np.empty(data.num_rows, np.int64)
    place[order] = np.arange(data.num_rows)  # along the curve
    fewest_first = sorted(columns, key=lambda name: pc.count_distinct(data.column(name)).as_py())
    tiles: list[np.ndarray] = []
    _tile(np.arange(data.num_rows), [ranks[n] for n in fewest_first], files, rows_per_file, tiles)
    ordered = np.concatenate([tile[np.argsort(place[tile], kind="stable")] for tile in tiles])
    starts, at = [], 0
    for tile in tiles:  # a tile no value change could cut (a column of one value) cut evenly
        pieces = max(round(len(tile) / rows_per_file), 1)
        starts += [at + len(tile) * k // pieces for k in range(pieces)]
        at += len(tile)
    return data.take(ordered), starts


SAMPLE_ROWS = 64 * 1024  # rows along the curve a file's bytes a row are asked of


def _tile(
    rows: np.ndarray, ranks: list[np.ndarray], files: int, rows_per_file: int, out: list
) -> None:
    """Append to ``out`` the tiles of ``rows`` (positions) over the columns' ``ranks``:
    ``files`` of them, cut slab by slab along each column in turn."""
    import numpy as np

    if files <= 1 or not ranks:
        out.append(rows)
        return
    slabs = max(round(files ** (1 / len(ranks))), 1)
    ordered = rows[np.argsort(ranks[0][rows], kind="stable")]
    values = ranks[0][ordered]
    changes = np.flatnonzero(values[1:] != values[:-1]) + 1  # where a new value starts
    cuts = [0]
    for share in range(1, slabs):
        if len(changes) == 0:
            break
        cut = int(changes[np.abs(changes - share * len(ordered) // slabs).argmin()])
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(len(ordered))
    for start, end in itertools.pairwise(cuts):
        slab = ordered[start:end]
        inner = max(round(len(slab) / rows_per_file), 1)
        _tile(slab, ranks[1:], inner, rows_per_file, out)


def _ranks(column: pa.ChunkedArray) -> np.ndarray:
    """Each row's rank: the number of rows whose value sorts before its own (nulls first, so
    a null's rank is 0)."""
    import numpy as np
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column).unify_dictionaries()
    values = encoded.chunk(0).dictionary
    null = len(values)  # nulls take the entry after the values'
    entry = np.concatenate(
        [pc.fill_null(chunk.indices, null).to_numpy().astype(np.int64) for chunk in encoded.chunks]
    )
    order = np.concatenate([[null], pc.sort_indices(values).to_numpy()]).astype(np.int64)
    counts = np.bincount(entry, minlength=null + 1)[order]
    first = np.empty(null + 1, np.uint64)
    first[order] = np.cumsum(counts) - counts  # rows before each entry, in sorted order
    return first[entry]


def hilbert_index(cells: list[np.ndarray], bits: int) -> np.ndarray:
    """The position along a Hilbert curve of the points whose coordinates are ``cells`` (one
    array of unsigned ints below ``2**bits`` per dimension; dimensions times bits at most 64).

    The coordinates are turned, from the top bit down, into the curve's "transposed" index
    (J. Skilling, "Programming the Hilbert curve", 2004): at each bit, a dimension whose bit is
    set inverts the lower bits of the first dimension, one whose bit is clear swaps its lower
    bits with the first's; then a Gray code. Interleaving the transposed bits gives the index.
    Worked in place in the narrowest type that holds the bits (the arrays are big).
    """
    import numpy as np

    kind = np.uint16 if bits <= 16 else np.uint32 if bits <= 32 else np.uint64
    x = [c.astype(kind) for c in cells]  # copies, worked on in place
    first = x[0]
    where_set, swap = np.empty_like(first), np.empty_like(first)

    def bit_mask(value: np.ndarray, bit: int) -> np.ndarray:
        """``where_set``: the bits below ``bit`` set where ``value`` has ``bit`` set."""
        np.right_shift(value, bit, out=where_set)
        np.bitwise_and(where_set, 1, out=where_set)
        np.negative(where_set, out=where_set)  # all ones where the bit is set
        return np.bitwise_and(where_set, kind((1 << bit) - 1), out=where_set)

    for bit in range(bits - 1, 0, -1):
        low = kind((1 << bit) - 1)
        np.bitwise_xor(first, bit_mask(first, bit), out=first)
        for xi in x[1:]:
            bit_mask(xi, bit)
            np.bitwise_xor(first, xi, out=swap)
            np.bitwise_and(swap, low, out=swap)
            np.bitwise_and(swap, np.bitwise_not(where_set), out=swap)  # where the bit is clear
            np.bitwise_xor(xi, swap, out=xi)
            np.bitwise_or(where_set, swap, out=where_set)
            np.bitwise_xor(first, where_set, out=first)
    for before, xi in itertools.pairwise(x):
        np.bitwise_xor(xi, before, out=xi)
    flip = np.zeros_like(first)
    for bit in range(bits - 1, 0, -1):
        np.bitwise_xor(flip, bit_mask(x[-1], bit), out=flip)
    index = np.zeros(len(first), np.uint64)
    for i, xi in enumerate(x):
        np.bitwise_xor(xi, flip, out=xi)
        spread = _spread(xi.astype(np.uint64), len(x), bits)
        np.bitwise_or(index, np.left_shift(spread, len(x) - 1 - i, out=spread), out=index)
    return index


def _spread(value: np.ndarray, ways: int, bits: int) -> np.ndarray:
    """``value`` with its bit ``j`` moved to bit ``j * ways`` (in place), in halving blocks:
    bits in the upper half of a block move up by the half's size times ``ways - 1``."""
    import numpy as np

    shifted = np.empty_like(value)
    block = 1 << max(bits - 1, 0).bit_length()  # a power of two holding every bit
    while block > 1:
        block //= 2
        mask = sum(1 << ((j // block) * block * ways + j % block) for j in range(bits))
        np.left_shift(value, block * (ways - 1), out=shifted)
        np.bitwise_or(value, shifted, out=value)
        np.bitwise_and(value, np.uint64(mask), out=value)
    return value
