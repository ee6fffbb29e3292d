"""Reading the files validation checks: regular files only, never more than a byte cap.

A probe file that is /dev/zero, a FIFO or a terminal would be read forever (or until memory
runs out, exit 3); one that is larger than any probe set could be is refused before it is read.
The type is checked on the opened descriptor (O_NONBLOCK: opening a FIFO does not wait for a
writer), so a file swapped between a check and the read cannot slip through.
"""

from __future__ import annotations

from pathlib import Path

from evalgate.paths import NotRegularFile, TooLarge, read_regular

__all__ = ["BYTE_CAPS", "DEFAULT_CAP", "MIB", "NotRegularFile", "TooLarge", "read_input"]

MIB = 1 << 20
# Generous for real sets (the shipped probe set is ~200 KB, a 100,000-sentence corpus ~10 MB).
BYTE_CAPS = {
    "probes": 64 * MIB,
    "manifest": 64 * MIB,
    "template": 1 * MIB,
    "grammar": 16 * MIB,
    "train": 1024 * MIB,
    "baseline": 256 * MIB,
    "test": 256 * MIB,
    "results": 256 * MIB,  # a results.json (compare, merge, baseline update --from-results)
    "config": 4 * MIB,  # evalgate.yml (the shipped one is 4 KB)
    "checkpoint-text": 256 * MIB,  # a checkpoint's config, tokenizer or index file, parsed whole
    "gate-changes": 16 * MIB,  # the workflow's `git diff` of the gate's files
    "import": 256 * MIB,  # the rows `probes import` reads
    "event": 16 * MIB,  # $GITHUB_EVENT_PATH
    "plugin": 64 * MIB,  # one file of a `loader:` plugin's package (edges/plugin_code.py)
}
DEFAULT_CAP = 64 * MIB


def read_input(path: Path, role: str, cap: int | None = None) -> bytes:
    """The bytes of a regular file no larger than the role's cap; NotRegularFile / TooLarge else."""
    return read_regular(path, BYTE_CAPS.get(role, DEFAULT_CAP) if cap is None else cap)
