"""`evalgate compare RESULTS BASELINE`: gate two existing results without loading any model.

The gate is the composition root's (pipeline/root.GateRoot.compare)."""

from __future__ import annotations

import argparse

from evalgate.commands._args import cli_path, gate_request, gate_root
from evalgate.console import Console


def main(args: argparse.Namespace, console: Console) -> int:
    overrides = {"out": cli_path(args.out), "baseline": cli_path(args.baseline)}
    outcome = gate_root(console).compare(gate_request(args, overrides))
    if outcome.refusal is not None:
        raise outcome.refusal
    return outcome.exit_code
