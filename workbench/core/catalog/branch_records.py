"""Branch records: the named lines of a catalog besides ``main``, kept under
``_workbench/branches/<name>/``.

A branch starts at a catalog state of ``main`` (its base), saved beside its record so opening the
branch reads two small objects and no history. The record is created with a put-if-absent (two
creators of one name cannot both win) and deleted first when the branch is dropped. Its id is
new for every creation, so a name dropped and created again never reuses what was cached for
the old branch.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from workbench.core.base.errors import BranchNotFoundError, InvalidNameError
from workbench.core.base.names import MAIN, validate_branch_name

if TYPE_CHECKING:
    from workbench.core.storage.store import Storage

BRANCHES_KEY = "_workbench/branches"
RECORD_NAME = "branch.json"
BRANCH_TABLE_MARKER = "_branch_table.json"  # in the folder of a table a branch created


@dataclass(frozen=True)
class BranchRecord:
    """A branch: its name, unique id, and the ``main`` state it started from."""

    name: str
    id: str
    base_sequence: int  # main's log sequence of the base state (-1: the empty catalog)
    base_end_time: int  # when that state was committed (ns)
    created_ns: int
    source: str  # what the branch was created from, as the user named it

    def encode(self) -> bytes:
        """The record as stored."""
        return json.dumps(asdict(self)).encode()

    @classmethod
    def decode(cls, data: bytes) -> BranchRecord:
        """A stored record."""
        return cls(**json.loads(data))


def branch_key(name: str) -> str:
    """Key of a branch name's folder: its record, and the folder of each branch by that name."""
    return f"{BRANCHES_KEY}/{name}"


def record_key(name: str) -> str:
    """Key of a branch's record."""
    return f"{branch_key(name)}/{RECORD_NAME}"


def line_key(record: BranchRecord) -> str:
    """Key of one branch's own folder: its base state, log, tags and new tables (by id, so a
    branch created again under a dropped one's name starts empty)."""
    return f"{branch_key(record.name)}/{record.id}"


def base_key(record: BranchRecord) -> str:
    """Key of the ``main`` state a branch started from."""
    return f"{line_key(record)}/base.json"


def created_table_key(record: BranchRecord, incarnation: str) -> str:
    """Key of the folder of a table created on a branch, until publishing moves it live."""
    return f"{line_key(record)}/tables/{incarnation}"


def leased_name(table: str, record: BranchRecord | None) -> str:
    """The name a table's lease is taken under on a line: a branch's writers queue among
    themselves, not behind writers of ``main`` or other branches."""
    return table if record is None else f"{table}#{record.id}"


def read_record(storage: Storage, name: str) -> BranchRecord | None:
    """The record of branch ``name`` (None when there is no such branch)."""
    data = storage.get(record_key(name))
    return None if data is None else BranchRecord.decode(data)


def records(storage: Storage) -> list[BranchRecord]:
    """Every branch of the catalog, oldest first."""
    found = [read_record(storage, name) for name in storage.folders(BRANCHES_KEY)]
    return sorted((r for r in found if r is not None), key=lambda r: r.created_ns)


def require_record(storage: Storage, name: str, root: str) -> BranchRecord:
    """The record of branch ``name``, or ``BranchNotFoundError`` listing the branches."""
    if not isinstance(name, str):
        raise InvalidNameError(f"branch={name!r} is not a branch name; pass a str such as 'exp'.")
    record = read_record(storage, validate_branch_name(name))
    if record is None:
        known = [MAIN, *(r.name for r in records(storage))]
        raise BranchNotFoundError(
            f"Branch {name!r} does not exist in catalog {root!r}; its branches are {known}. "
            f"Create it with dc.create_branch({name!r})."
        )
    return record


def new_record(
    name: str, branch_id: str, base_sequence: int, base_end: int, source: str
) -> BranchRecord:
    """A record for a branch created now."""
    return BranchRecord(name, branch_id, base_sequence, base_end, time.time_ns(), source)
