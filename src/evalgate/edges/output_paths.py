"""Output paths given on the command line: a regular file (or nothing yet), never something else.

An atomic write renames a new file over the target: over a FIFO, a device (`/dev/full` run as
root) or a symlink that would silently replace it with a regular file. Such targets are refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from evalgate.errors import RefusedError

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def refuse_special_output(path: str | os.PathLike[str], flag: str) -> None:
    """RefusedError (exit 2) when `path` exists and is not a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RefusedError(f"{flag} {path}: cannot check the output path: {exc.strerror or exc}") from None
    for test, kind in _KINDS:
        if test(mode):
            target = f" to {os.readlink(path)}" if kind == "a symbolic link" else ""
            raise RefusedError(
                f"{flag} {path}: the output path is {kind}{target}; evalgate writes regular files only "
                "and would replace it",
                hint=f"give {flag} the path of a regular file (it is written atomically), or leave it out "
                "to print to standard output",
            )
    if not stat.S_ISREG(mode):
        raise RefusedError(f"{flag} {Path(path)}: the output path is not a regular file")
