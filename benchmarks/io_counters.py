"""What a query read, measured outside the library that ran it: the bytes this process read
(``/proc/self/io``) and the files it opened in given folders (inotify), so a benchmark's
figures do not depend on a system reporting on itself. Linux only."""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

_IN_OPEN = 0x00000020
_IN_ISDIR = 0x40000000
_IN_Q_OVERFLOW = 0x00004000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name


def io_counters() -> dict[str, int]:
    """This process's I/O counters: ``rchar`` (bytes asked of read() and pread(), page cache
    included) and ``read_bytes`` (bytes fetched from the disk), all threads counted."""
    counters = {}
    for line in Path("/proc/self/io").read_text().splitlines():
        name, _, value = line.partition(":")
        counters[name] = int(value)
    return counters


class FileOpens:
    """The files opened (by any process) in ``folders`` and their subfolders since the last
    ``take()``, seen through inotify; a file read through a handle kept open is not seen
    again. Close it when done."""

    def __init__(self, folders: list[str]) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        for folder in folders:
            for sub, _, _ in os.walk(folder):
                wd = self._libc.inotify_add_watch(self._fd, os.fsencode(sub), _IN_OPEN)
                if wd < 0:
                    raise OSError(ctypes.get_errno(), f"cannot watch {sub}")

    def take(self, suffix: str = ".parquet") -> set[str]:
        """Names ending in ``suffix`` of the files opened since the last call."""
        names: set[str] = set()
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return names
            offset = 0
            while offset < len(chunk):
                _, mask, _, length = _EVENT.unpack_from(chunk, offset)
                offset += _EVENT.size
                name = chunk[offset : offset + length].rstrip(b"\0").decode()
                offset += length
                if mask & _IN_Q_OVERFLOW:
                    raise RuntimeError("inotify's queue overflowed: file opens were lost")
                if mask & _IN_OPEN and not mask & _IN_ISDIR and name.endswith(suffix):
                    names.add(name)

    def close(self) -> None:
        """Stop watching."""
        os.close(self._fd)

    def __enter__(self) -> FileOpens:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
