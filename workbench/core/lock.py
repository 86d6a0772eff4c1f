"""The per-catalog commit lock: one committer at a time, released by the kernel if it dies.

A local catalog uses ``flock`` on ``_workbench/commit.lock``: no stale locks survive a killed
process, so no expiry guesswork is needed. The file also records the current holder for humans.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from workbench.core.errors import TransactionConflictError, WorkbenchError

if TYPE_CHECKING:
    from workbench.core.catalog import Catalog

LOCK_TIMEOUT_S = 120.0


def metadata_path(catalog: Catalog) -> str:
    """The catalog's local ``_workbench`` folder (which may not exist yet)."""
    if not catalog.is_local:
        raise WorkbenchError(
            f"Catalog {catalog.root!r} is on an object store; catalog transactions need a local "
            "root for now (object-store commit locks are planned)."
        )
    return os.path.join(catalog.root.removeprefix("file://"), "_workbench")


def metadata_dir(catalog: Catalog) -> str:
    """The catalog's local ``_workbench`` folder, created for a write if missing."""
    path = metadata_path(catalog)
    os.makedirs(path, exist_ok=True)
    return path


@contextmanager
def commit_lock(catalog: Catalog, owner: str, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the catalog's commit lock for the duration of the block."""
    path = os.path.join(metadata_dir(catalog), "commit.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TransactionConflictError(
                        f"Waited {timeout:.0f} s for the commit lock of catalog {catalog.root!r} "
                        f"(held by: {_holder(fd)}); retry later."
                    ) from None
                time.sleep(0.002)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"owner": owner, "pid": os.getpid()}).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _holder(fd: int) -> str:
    try:
        return os.pread(fd, 4096, 0).decode() or "unknown"
    except OSError:
        return "unknown"


def _process_identity(pid: int) -> str:
    """pid plus its start time, so a recycled pid is not mistaken for the original process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f"{pid}:{f.read().rsplit(')', 1)[1].split()[19]}"
    except OSError:
        return str(pid)


def register_active(catalog: Catalog, transaction_id: str) -> None:
    """Mark a transaction as running in this process (until ``unregister_active``)."""
    folder = os.path.join(metadata_dir(catalog), "active")
    os.makedirs(folder, exist_ok=True)
    record = {"host": socket.gethostname(), "process": _process_identity(os.getpid())}
    with open(os.path.join(folder, transaction_id), "w") as f:
        json.dump(record, f)


def unregister_active(catalog: Catalog, transaction_id: str) -> None:
    """Remove a transaction's running marker."""
    with suppress(FileNotFoundError):
        os.remove(os.path.join(metadata_dir(catalog), "active", transaction_id))


def is_active(catalog: Catalog, transaction_id: str) -> bool:
    """True while the transaction's process is still running."""
    try:
        with open(os.path.join(metadata_dir(catalog), "active", transaction_id)) as f:
            record = json.load(f)
    except (FileNotFoundError, ValueError):
        return False
    if record.get("host") != socket.gethostname():
        return True  # cannot check another host's processes: assume it is alive
    pid = int(record["process"].split(":")[0])
    return _process_identity(pid) == record["process"]


def _claim_path(catalog: Catalog, namespace: str, name: str) -> str:
    # A digest, since namespace and table names may each be as long as a file name.
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:32]
    return os.path.join(metadata_dir(catalog), "claims", digest)


def claim_table(catalog: Catalog, namespace: str, name: str, transaction_id: str) -> str | None:
    """Claim a table for a transaction (call under the commit lock).

    Returns the id of another running transaction that holds it, or None once claimed.
    """
    path = _claim_path(catalog, namespace, name)
    try:
        with open(path) as f:
            holder = f.read().strip()
    except FileNotFoundError:
        holder = ""
    if holder and holder != transaction_id and is_active(catalog, holder):
        return holder
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(transaction_id)
    return None


def release_tables(catalog: Catalog, tables: list[tuple[str, str]], transaction_id: str) -> None:
    """Drop a transaction's claims on ``tables`` (call under the commit lock)."""
    for namespace, name in tables:
        path = _claim_path(catalog, namespace, name)
        try:
            with open(path) as f:
                mine = f.read().strip() == transaction_id
        except FileNotFoundError:
            continue
        if mine:
            os.remove(path)
