"""`evalgate comment --report DIR`: render the sticky PR comment from DIR/results.json and post it.

The folder may be an artifact downloaded from a fork's run, so it is treated as untrusted data:
github/report_comment.py says how (no markdown from it is posted, results.json is checked, the PR
number and the provenance come from the trusted event or the flags).
"""

from __future__ import annotations

import argparse

from evalgate.console import Console
from evalgate.errors import EXIT_PASS
from evalgate.github.report_comment import post_report


def main(args: argparse.Namespace, console: Console) -> int:
    overrides = {
        "run_url": getattr(args, "run_url", None),
        "conclusion": getattr(args, "conclusion", None),
        "head_repo": getattr(args, "head_repo", None),
        "head_branch": getattr(args, "head_branch", None),
    }
    post_report(
        args.report,
        pr=args.pr,
        repo=args.repo,
        sha=getattr(args, "sha", None),
        strict=True,
        provenance_overrides=overrides,
        verify_workflow=True,  # never a verdict a PR's own workflow produced (docs/security.md)
    )
    return EXIT_PASS
