"""Incremental inference: which rows need the model again, from the provenance columns (model
version and input hash) written beside its outputs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa


def input_hashes(data: pa.Table, sources: Mapping[str, str]) -> pa.Array:
    """A hash per row of its model inputs: input name and the value of the column ``sources``
    names for it (for a media uri input, the row's sha256 column, so a changed file counts as a
    changed input while its bytes are never read here)."""
    import pyarrow as pa

    names = sorted(sources)
    values = [data.column(sources[name]).to_pylist() for name in names]
    prefixes = [name.encode() + b"\0" for name in names]
    hashes = []
    for row in zip(*values, strict=True):
        digest = hashlib.sha256()
        for prefix, value in zip(prefixes, row, strict=True):
            digest.update(prefix + _encoded(value) + b"\0")
        hashes.append(digest.hexdigest()[:32])
    return pa.array(hashes, pa.string())


def _encoded(value: Any) -> bytes:
    if isinstance(value, bytes):
        return b"b" + value
    return b"j" + json.dumps(value, sort_keys=True, default=str).encode()


def stale(
    hashes: pa.Array, versions: pa.Array | None, previous: pa.Array | None, version: str
) -> pa.Array:
    """A mask of the rows to predict: no earlier output, another model version, or other
    inputs than the ones their outputs were made from."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if versions is None or previous is None:
        return pa.array([True] * len(hashes), pa.bool_())
    same = pc.and_(pc.equal(versions, version), pc.equal(previous, hashes))
    return pc.invert(pc.fill_null(same, False))
