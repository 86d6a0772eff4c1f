"""Table leases: a writer announces in the catalog's metadata that it is changing a table, for a
limited time, so that other writers of the table queue instead of doing work that would conflict.

A lease is an object ``_workbench/leases/<digest>.json`` naming the transaction, its host and
when the lease expires. It is advisory: correctness comes from the optimistic check at commit,
so a lease taken over from a writer that died (it expired) or a race between two takers can
only cost a conflict, never a wrong commit. Leases name hosts, not processes, so writers on many
machines share one catalog; a writer renews its leases each time it writes, and a heartbeat
renews them while a call runs (``heartbeat.Heartbeat``).

Queueing cannot deadlock: a writer that already holds leases waits only for younger holders
and gives way at once to an older one ("wait-die"), so no cycle of writers can wait on each
other. Age is the start of a transaction's first attempt, kept across retries, so a retried
transaction grows older than newcomers and is not starved.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.base.errors import TransactionConflictError

if TYPE_CHECKING:
    from workbench.core.storage.store import Storage

LEASE_FOLDER = "_workbench/leases"
DEFAULT_LEASE_SECONDS = 60.0
DEFAULT_WAIT_SECONDS = 60.0


def lease_seconds() -> float:
    """How long a lease lasts without renewal (``WORKBENCH_LEASE_SECONDS``, default 60)."""
    return float(os.environ.get("WORKBENCH_LEASE_SECONDS", DEFAULT_LEASE_SECONDS))


def wait_seconds() -> float:
    """How long a writer queues for a table's lease (``WORKBENCH_LEASE_WAIT_SECONDS``)."""
    return float(os.environ.get("WORKBENCH_LEASE_WAIT_SECONDS", DEFAULT_WAIT_SECONDS))


def host_id() -> str:
    """This machine's name in leases (``WORKBENCH_HOST_ID`` overrides the host name)."""
    return os.environ.get("WORKBENCH_HOST_ID") or socket.gethostname()


@dataclass(frozen=True)
class Lease:
    """Who holds a table, from where, until when (ns since the epoch)."""

    transaction_id: str
    host: str
    expires_ns: int
    since_ns: int  # when the holder's first attempt started: its age in wait-die

    def older_than(self, since_ns: int, transaction_id: str) -> bool:
        """True when the holder started before the given transaction."""
        return (self.since_ns, self.transaction_id) < (since_ns, transaction_id)

    @property
    def expired(self) -> bool:
        """True once the holder has not renewed it in time."""
        return time.time_ns() > self.expires_ns

    def encode(self) -> bytes:
        record = {
            "transaction": self.transaction_id,
            "host": self.host,
            "expires": self.expires_ns,
            "since": self.since_ns,
        }
        return json.dumps(record).encode()

    @classmethod
    def decode(cls, data: bytes) -> Lease | None:
        try:
            record = json.loads(data)
            return cls(
                record["transaction"],
                record["host"],
                int(record["expires"]),
                int(record.get("since", 0)),
            )
        except (ValueError, KeyError, TypeError):
            return None  # a lease being written or damaged: treat as absent


def lease_key(namespace: str, table: str) -> str:
    """Where a table's lease lives (a digest: names may each be as long as a file name)."""
    digest = hashlib.sha256(f"{namespace}/{table}".encode()).hexdigest()[:32]
    return f"{LEASE_FOLDER}/{digest}.json"


def _mine(transaction_id: str, since_ns: int) -> Lease:
    expires = time.time_ns() + int(lease_seconds() * 1e9)
    return Lease(transaction_id, host_id(), expires, since_ns)


def current(storage: Storage, namespace: str, table: str) -> Lease | None:
    """The lease on a table, if any (expired or not)."""
    data = storage.get(lease_key(namespace, table))
    return Lease.decode(data) if data is not None else None


def acquire(
    storage: Storage,
    namespace: str,
    table: str,
    transaction_id: str,
    since_ns: int,
    holding: bool = False,
) -> None:
    """Hold a table's lease for ``transaction_id`` (first attempt started at ``since_ns``),
    queueing behind a live holder for up to ``wait_seconds()``; raise
    ``TransactionConflictError`` if it is still held then, or at once if the requester is
    ``holding`` other leases and the holder is older (see above)."""
    deadline = time.monotonic() + wait_seconds()
    delay = 0.005
    while True:
        held = _take(storage, lease_key(namespace, table), transaction_id, since_ns)
        if held is None:
            return
        if holding and held.older_than(since_ns, transaction_id):
            raise TransactionConflictError(
                f"Table {namespace}.{table} is being written by the older transaction "
                f"{held.transaction_id} on host {held.host}, which may be waiting for a table "
                "this one holds; this one gives way. Retry (dc.run_transaction retries "
                "automatically)."
            )
        if time.monotonic() > deadline:
            raise TransactionConflictError(
                f"Table {namespace}.{table} is being written by transaction "
                f"{held.transaction_id} on host {held.host}; waited {wait_seconds():.0f} s for "
                "it. Retry later (dc.run_transaction retries automatically)."
            )
        time.sleep(delay * (1 + random.random()))
        delay = min(delay * 2, 0.2)


def try_acquire(
    storage: Storage, namespace: str, table: str, transaction_id: str, since_ns: int
) -> bool:
    """Take a table's lease if no live writer holds it; False at once when one does."""
    return _take(storage, lease_key(namespace, table), transaction_id, since_ns) is None


def _take(storage: Storage, key: str, transaction_id: str, since_ns: int) -> Lease | None:
    """Take the lease at ``key`` unless a live writer holds it: None when taken (or held by
    ``transaction_id`` already), else the live holder's lease."""
    while True:
        if storage.put_if_absent(key, _mine(transaction_id, since_ns).encode()):
            return None  # free: one request
        data = storage.get(key)
        if data is None:
            continue  # released meanwhile
        held = Lease.decode(data)
        if held is not None and held.transaction_id == transaction_id:
            storage.put(key, _mine(transaction_id, since_ns).encode())
            return None
        if held is None or held.expired:
            storage.delete(key)  # its writer died or stalled (or left it damaged)
            continue
        return held


def renew(storage: Storage, namespace: str, table: str, transaction_id: str) -> None:
    """Extend a lease this transaction holds (a writer renews it each time it writes)."""
    held = current(storage, namespace, table)
    if held is not None and held.transaction_id == transaction_id:
        storage.put(lease_key(namespace, table), _mine(transaction_id, held.since_ns).encode())


def release(storage: Storage, namespace: str, table: str, transaction_id: str) -> None:
    """Give a table's lease back, if this transaction still holds it."""
    held = current(storage, namespace, table)
    if held is not None and held.transaction_id == transaction_id:
        storage.delete(lease_key(namespace, table))
