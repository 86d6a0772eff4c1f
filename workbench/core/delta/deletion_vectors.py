"""Delta deletion vectors: which rows of a data file are deleted, kept beside the file instead
of rewriting it (merge-on-read).

A vector is a set of row positions serialized in the protocol's RoaringBitmapArray format (a
4-byte magic number, then pyroaring's portable 64-bit serialization), stored in a file
``deletion_vector_<uuid>.bin`` of the table folder: a version byte, then per vector its size
(4 bytes, big-endian), its bytes and their CRC-32 (big-endian). An ``add`` action names the
vector by a descriptor: storage type ``u`` (the uuid, Z85-encoded), the offset of the size
field, the size and the number of rows deleted (its cardinality). A vector of at most
``INLINE_BYTES`` bytes is kept in the descriptor itself instead (storage type ``i``, its bytes
Z85-encoded), which spares a change a file per touched data file.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import DeletionVectorError
from workbench.core.delta.vector_descriptor import Descriptor, z85_decode, z85_encode
from workbench.core.storage.known import storage_for

if TYPE_CHECKING:
    import numpy as np
    from pyroaring import BitMap64

    from workbench.core.storage.store import Storage

MAGIC = 1681511377  # RoaringBitmapArray's magic number, little-endian
FORMAT_VERSION = 1
INLINE_BYTES = 128  # a few dozen scattered rows: a small MERGE's vectors stay in the log
COMMITS_AT_ONCE = 64  # JSON commits fetched together while replaying a log for its vectors


def serialize(rows: BitMap64) -> bytes:
    """A vector's bytes: the magic number, then the bitmap."""
    return struct.pack("<i", MAGIC) + rows.serialize()


def deserialize(data: bytes) -> BitMap64:
    """The row positions of a vector's bytes."""
    from pyroaring import BitMap64

    if len(data) < 4 or struct.unpack_from("<i", data)[0] != MAGIC:
        raise DeletionVectorError("not a RoaringBitmapArray (its magic number does not match)")
    return BitMap64.deserialize(data[4:])


def vector_uri(table_uri: str, descriptor: Descriptor) -> str:
    """Where a vector's file is."""
    return f"{table_uri.rstrip('/')}/{descriptor.file_name()}"


def store_vector(table_uri: str, rows: BitMap64, storage: Storage | None = None) -> Descriptor:
    """The descriptor of a vector deleting ``rows``: inline when its bytes are few, else in a
    new vector file in the table folder ``table_uri``."""
    data = serialize(rows)
    if len(data) <= INLINE_BYTES:
        return Descriptor("i", z85_encode(data), None, len(data), len(rows))
    return _write_vector_file(table_uri, data, len(rows), storage)


def _write_vector_file(
    table_uri: str, data: bytes, cardinality: int, storage: Storage | None
) -> Descriptor:
    """Write a vector's bytes as a new vector file in the table folder."""
    body = struct.pack(">Bi", FORMAT_VERSION, len(data)) + data
    body += struct.pack(">I", zlib.crc32(data) & 0xFFFFFFFF)
    descriptor = Descriptor("u", z85_encode(uuid.uuid4().bytes), 1, len(data), cardinality)
    uri = vector_uri(table_uri, descriptor)
    with (storage or storage_for(uri)).open_output(uri) as out:
        out.write(body)
    return descriptor


def read_vector(table_uri: str, descriptor: Descriptor, storage: Storage | None = None) -> BitMap64:
    """The rows a descriptor marks deleted, checked against its cardinality (and a vector
    file's size and CRC)."""
    if descriptor.inline:
        data = z85_decode(descriptor.path_or_inline)
        if len(data) < descriptor.size:
            raise DeletionVectorError(
                f"An inline deletion vector holds {len(data)} bytes, its descriptor says "
                f"{descriptor.size}."
            )
        return _checked(deserialize(data[: descriptor.size]), descriptor, "an inline vector")
    uri = vector_uri(table_uri, descriptor)
    (body,) = (storage or storage_for(uri)).get_many([uri], immutable=True)
    if body is None:
        raise DeletionVectorError(f"The deletion vector file {uri!r} is missing.")
    start = descriptor.offset or 0
    (size,) = struct.unpack_from(">i", body, start)
    data = body[start + 4 : start + 4 + size]
    (crc,) = struct.unpack_from(">I", body, start + 4 + size)
    if size != descriptor.size or zlib.crc32(data) & 0xFFFFFFFF != crc:
        raise DeletionVectorError(f"The deletion vector in {uri!r} is damaged (size or CRC).")
    return _checked(deserialize(data), descriptor, repr(uri))


def _checked(rows: BitMap64, descriptor: Descriptor, where: str) -> BitMap64:
    """``rows``, once their count matches the descriptor's cardinality."""
    if len(rows) != descriptor.cardinality:
        raise DeletionVectorError(
            f"The deletion vector in {where} holds {len(rows)} rows, its descriptor says "
            f"{descriptor.cardinality}."
        )
    return rows


def undeleted_mask(rows: int, deleted: BitMap64) -> np.ndarray:
    """A boolean mask over a file's ``rows`` rows: True for the rows a vector does not delete."""
    import numpy as np

    mask = np.ones(rows, dtype=bool)
    if len(deleted):
        mask[np.fromiter(deleted, dtype=np.int64, count=len(deleted))] = False
    return mask


def vectors_in_log(
    table_uri: str, version: int, storage: Storage | None = None
) -> dict[str, Descriptor]:
    """The deletion vector of each file of a table version that has one, by the file's log
    path (delta-rs' Python API gives the rows a vector deletes but not its descriptor, which a
    later change needs to remove the file's current entry)."""
    states = _replay(table_uri, version, version, storage)
    return next(v for at, v in states if at == version)


def vector_files_of(
    table_uri: str, versions: Iterable[int], storage: Storage | None = None
) -> set[str]:
    """The vector files (relative paths) that any of ``versions`` of a table reads."""
    wanted = set(versions)
    if not wanted:
        return set()
    names: set[str] = set()
    for at, vectors in _replay(table_uri, min(wanted), max(wanted), storage):
        if at in wanted:
            names |= {d.file_name() for d in vectors.values() if not d.inline}
    return names


def _replay(
    table_uri: str, first: int, last: int, storage: Storage | None
) -> Iterator[tuple[int, dict[str, Descriptor]]]:
    """The vectors of a table's files at each version from ``first`` to ``last``: from the
    newest checkpoint at or before ``first``, then commit by commit."""
    import pyarrow as pa
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    log = f"{table_uri.rstrip('/')}/_delta_log"
    storage = storage or storage_for(log)
    fs, path = storage.locate(log)
    names = [i.base_name for i in fs.get_file_info(pafs.FileSelector(path))]
    checkpoints = [int(n.split(".")[0]) for n in names if n.endswith(".checkpoint.parquet")]
    start = max((c for c in checkpoints if c <= first), default=-1)
    vectors: dict[str, Descriptor] = {}
    if start >= 0:
        checkpoint = _fetched(storage, [f"{log}/{start:020d}.checkpoint.parquet"])[0]
        adds = pq.read_table(pa.BufferReader(checkpoint), columns=["add"]).column("add")
        for add in adds.to_pylist():
            if add and add.get("deletionVector"):
                vectors[add["path"]] = Descriptor.from_action(add["deletionVector"])
        yield start, dict(vectors)
    for commit, actions in _commits(storage, log, start + 1, last):
        for action in actions:  # a commit's removes apply before its adds
            if "remove" in action:
                vectors.pop(action["remove"]["path"], None)
        for action in actions:
            vector = action.get("add", {}).get("deletionVector")
            if vector:
                vectors[action["add"]["path"]] = Descriptor.from_action(vector)
        yield commit, dict(vectors)


def _commits(
    storage: Storage, log: str, first: int, last: int
) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """The actions of each JSON commit from ``first`` to ``last`` in the Delta log at ``log``,
    in order: fetched ``COMMITS_AT_ONCE`` at a time, each batch's requests under way together
    (on an object store, one GET each where opening a file costs a HEAD and a GET in turn)."""
    import json

    for low in range(first, last + 1, COMMITS_AT_ONCE):
        versions = range(low, min(low + COMMITS_AT_ONCE, last + 1))
        fetched = _fetched(storage, [f"{log}/{v:020d}.json" for v in versions])
        for version, data in zip(versions, fetched, strict=True):
            yield version, [json.loads(line) for line in data.splitlines() if line]


def _fetched(storage: Storage, uris: list[str]) -> list[bytes]:
    """The bytes of the files at ``uris`` (fetched at once); a missing one fails as missing."""
    fetched = storage.get_many(uris)
    for uri, data in zip(uris, fetched, strict=True):
        if data is None:
            raise FileNotFoundError(uri)
    return fetched  # type: ignore[return-value]
