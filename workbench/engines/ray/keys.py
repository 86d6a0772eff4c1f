"""Merge-key checks on Ray without gathering the keys: a task per block splits its keys into
buckets by hash, and a task per bucket counts repeated keys (and, when de-duplicating, picks
the rows to drop). Only counts and the positions of dropped rows reach the driver."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.schema.merge_keys import (
    distinct_count,
    kept_rows,
    null_keys_error,
    plain_keys,
    repeated_keys_error,
)
from workbench.core.schema.merge_order import Ranking, refuse_ordered_duplicates
from workbench.engines.ray.tasks import Task

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

ROW = "__wb_row"  # a row's block index (high 32 bits) and position in the block (low 32 bits)
MAX_BUCKETS = 64


def unique_blocks(
    blocks: list[Any], keys: list[str], table: str, dedupe: str | None, order: Ranking = ()
) -> list[Any]:
    """The blocks (object references) with non-null, unique merge keys: as they are, or with
    the rows ``dedupe`` drops taken out in their own tasks. Raises ``MergeKeyError`` for null
    keys, and for repeated keys unless ``dedupe`` resolves them."""
    import numpy as np
    import ray

    if not blocks:
        return blocks
    buckets = min(len(blocks), MAX_BUCKETS)
    split = [
        _split.with_returns(buckets + 1).remote(ref, keys, i, buckets)
        for i, ref in enumerate(blocks)
    ]
    nulls = ray.get([parts[0] for parts in split])
    for key in keys:
        if total := sum(n[key] for n in nulls):
            raise null_keys_error(total, key, table)
    found = ray.get(
        [_repeated.remote(keys, dedupe, *[parts[1 + b] for parts in split]) for b in range(buckets)]
    )
    repeated = sum(count for count, _ in found)
    if not repeated:
        return blocks
    refuse_ordered_duplicates(order, "ray", table)
    if dedupe is None:
        raise repeated_keys_error(repeated, keys, table)
    dropped = np.concatenate([rows for _, rows in found if rows is not None])
    in_block = dropped >> 32
    return [
        _drop.remote(ref, dropped[in_block == i] & 0xFFFFFFFF) if (in_block == i).any() else ref
        for i, ref in enumerate(blocks)
    ]


def _split_impl(block: pa.Table, keys: list[str], index: int, buckets: int) -> tuple:
    """The block's null count per key, then its keys (numbered by ``ROW``) in ``buckets``
    parts by hash, each in block order."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    nulls = {k: block.column(k).null_count for k in keys}
    plain = plain_keys(block.select(keys), keys)
    numbered = plain.append_column(
        ROW, pa.array((index << 32) + np.arange(block.num_rows, dtype=np.int64))
    )
    if buckets == 1 or not block.num_rows:
        return (nulls, numbered, *[numbered.slice(0, 0)] * (buckets - 1))
    hashes = pd.util.hash_pandas_object(plain.to_pandas(), index=False).to_numpy()
    bucket = hashes % np.uint64(buckets)
    grouped = numbered.take(np.argsort(bucket, kind="stable"))
    ends = np.cumsum(np.bincount(bucket.astype(np.int64), minlength=buckets))
    starts = np.concatenate([[0], ends[:-1]])
    return (nulls, *[grouped.slice(s, e - s) for s, e in zip(starts, ends, strict=True)])


def _repeated_impl(keys: list[str], dedupe: str | None, *parts: pa.Table) -> tuple:
    """How many rows of one bucket repeat a key, and (when de-duplicating) the ``ROW`` codes
    of the rows ``dedupe`` drops."""
    import numpy as np
    import pyarrow as pa

    data = pa.concat_tables(parts)
    repeated = data.num_rows - distinct_count(data, keys)
    if not repeated or dedupe is None:
        return repeated, None
    dropped = np.ones(data.num_rows, dtype=bool)
    dropped[kept_rows(data, keys, dedupe).to_numpy()] = False
    return repeated, data.column(ROW).to_numpy()[dropped]


def _drop_impl(block: pa.Table, positions: np.ndarray) -> pa.Table:
    import numpy as np

    kept = np.ones(block.num_rows, dtype=bool)
    kept[positions] = False
    return block.filter(kept)


_split = Task(_split_impl)
_repeated = Task(_repeated_impl)
_drop = Task(_drop_impl)
