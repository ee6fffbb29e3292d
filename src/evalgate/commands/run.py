"""`evalgate run` (the default command): validate → load → score → compare → report → exit code.

Whatever happens after the configuration is read, the output folder receives a results.json and a
REPORT.md saying what happened (a refusal included) before any network call, so nothing is lost.
The run itself is the composition root's (pipeline/root.GateRoot.run); this adapter turns the
flags into its request and posts the PR comment after the outputs are written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evalgate.commands._args import config_overrides, gate_request, gate_root
from evalgate.console import Console


def maybe_comment(args: argparse.Namespace, out_dir: Path, console: Console) -> None:
    """`--comment`: post the sticky PR comment; a failure is a warning and never changes the exit
    code (github/report_comment.py). With --format json its lines go to stderr."""
    if not getattr(args, "comment", False):
        return
    from evalgate.github.report_comment import post_report

    with console.aside():
        post_report(out_dir, own_report=True)


def main(args: argparse.Namespace, console: Console) -> int:
    outcome = gate_root(console).run(gate_request(args, config_overrides(args)))
    maybe_comment(args, outcome.out_dir, console)
    if outcome.refusal is not None:
        raise outcome.refusal
    return outcome.exit_code
