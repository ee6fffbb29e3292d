"""The probe and training files a configuration names: each must be a file of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalgate.types import Finding

if TYPE_CHECKING:  # the caller resolves the paths; they are compared here, never opened
    from pathlib import Path


def same_file_findings(role: str, named: Sequence[tuple[str, Path]]) -> list[Finding]:
    """Configured names that resolve to a file another name already names (a symlink, `a/../a`).

    `named` pairs each name as configured with the path it resolves to (the caller resolves).

        Each configured file counts once, as itself: read once under two names, the first file's
        probes would silently be dropped (docs/probes.md, "Configured files").
    """
    first: dict[Path, str] = {}
    out = []
    for b, key in named:  # as configured: a display path would show the symlink's target
        if key in first:
            a = first[key]
            same = "is listed twice" if a == b else f"and {a} are the same file ({key})"
            out.append(
                Finding(
                    "file-twice",
                    f"the {role} file {b} {same}: every configured file must be a file of its own",
                    b,
                    hint=f"list each {role} file once; if one was replaced by a symlink to another, restore "
                    "it from version control",
                )
            )
        else:
            first[key] = b
    return out
