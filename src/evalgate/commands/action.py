"""`evalgate action`: the GitHub Action's entry, reached through the installed console script.

The image's Action step runs `evalgate action` (never `python -m ...` from the workspace), so the
gate that runs is the installed one whatever the PR commits (docs/security.md, "The container runs
the installed gate").
"""

from __future__ import annotations

import argparse

from evalgate.console import Console


def main(args: argparse.Namespace, console: Console) -> int:
    from evalgate.github.action import main as entry

    return entry()
