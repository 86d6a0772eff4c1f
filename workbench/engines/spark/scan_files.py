"""The files the scans of one loaded ``format("workbench")`` DataFrame may read.

Spark 4.3 keeps the read a Python data source plans while filters are pushed into it on the
source, not on the scan (``PythonDataSourceV2.setReadInfo``): every scan of one loaded
DataFrame reads what the last scan planned, and a scan with no filter Spark can push plans
nothing of its own. So ``load`` filters every frame on a column of zeros (``SCAN_COLUMN``),
which makes every scan push a filter, and each push adds the files its filters admit to a
record kept for that load (``SCAN_OPTION``, its id): every scan reads the union of what the
scans of that DataFrame admitted so far, which holds all of its own rows. The records are
small files in the driver's temporary folder (Spark plans in Python workers on the driver's
host), removed when the driver's process ends."""

from __future__ import annotations

import atexit
import fcntl
import os
import tempfile
import uuid
from pathlib import Path

SCAN_COLUMN = "__wb_scan"  # a column of zeros each load's frame is filtered on
SCAN_OPTION = "workbenchScan"  # the id of a load, as a read option
_made: list[Path] = []


def new_scan() -> str:
    """A new load's id; its record goes when this process ends."""
    scan = uuid.uuid4().hex
    _made.append(_record(scan))
    return scan


def admit(scan: str, paths: list[str]) -> set[str]:
    """Add ``paths`` to the files the scans of load ``scan`` admitted; all of them so far."""
    record = _record(scan)
    record.parent.mkdir(parents=True, exist_ok=True)
    with open(record, "a+", encoding="utf-8") as out:
        fcntl.flock(out, fcntl.LOCK_EX)
        out.write("".join(f"{path}\n" for path in paths) + "\n")  # a blank line ends a scan
        out.flush()
        out.seek(0)
        return {line for line in out.read().splitlines() if line}


def _record(scan: str) -> Path:
    folder = Path(tempfile.gettempdir()) / f"workbench-spark-scans-{os.getuid()}"
    return folder / f"{scan}.txt"


@atexit.register
def _remove_records() -> None:
    for record in _made:
        record.unlink(missing_ok=True)
