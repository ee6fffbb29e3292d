"""`evalgate merge PARTS... --out DIR`: combine sharded partial results into one result and report.

The merged results.json is byte-identical to what the unsharded run would have written: the
parts are checked to be the shards of one run, their probes are put back in probe-file order,
and the result is derived through the same `pipeline.finalize` and gated like a plain run
(pipeline/root.GateRoot.merge).
"""

from __future__ import annotations

import argparse

from evalgate.commands._args import cli_path, gate_request, gate_root
from evalgate.console import Console


def main(args: argparse.Namespace, console: Console) -> int:
    overrides = {"out": cli_path(args.out), "baseline": cli_path(args.baseline)}
    outcome = gate_root(console).merge(gate_request(args, overrides))
    if outcome.refusal is not None:
        raise outcome.refusal
    return outcome.exit_code
