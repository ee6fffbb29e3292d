"""Reading the files validation checks: regular files only, never more than a byte cap.

A probe file that is /dev/zero, a FIFO or a terminal would be read forever (or until memory
runs out, exit 3); one that is larger than any probe set could be is refused before it is read.
The type is checked on the opened descriptor (O_NONBLOCK: opening a FIFO does not wait for a
writer), so a file swapped between a check and the read cannot slip through.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MIB = 1 << 20
# Generous for real sets (the shipped probe set is ~200 KB, a 100,000-sentence corpus ~10 MB).
BYTE_CAPS = {
    "probes": 64 * MIB,
    "manifest": 64 * MIB,
    "template": 1 * MIB,
    "grammar": 16 * MIB,
    "train": 1024 * MIB,
    "baseline": 256 * MIB,
}
DEFAULT_CAP = 64 * MIB


class NotRegularFile(OSError):
    """The path names something other than a regular file; `kind` says what."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class TooLarge(OSError):
    def __init__(self, size: int, cap: int):
        super().__init__(f"{size} > {cap}")
        self.size, self.cap = size, cap


def _kind(mode: int) -> str | None:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def read_input(path: Path, role: str) -> bytes:
    """The bytes of a regular file no larger than the role's cap; NotRegularFile / TooLarge else."""
    cap = BYTE_CAPS.get(role, DEFAULT_CAP)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if (kind := _kind(st.st_mode)) is not None:
            raise NotRegularFile(kind)
        if st.st_size > cap:
            raise TooLarge(st.st_size, cap)
        data = fh.read(cap + 1)  # a file growing while read stops at the cap too
    if len(data) > cap:
        raise TooLarge(len(data), cap)
    return data
