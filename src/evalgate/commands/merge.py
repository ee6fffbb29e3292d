"""`evalgate merge PARTS... --out DIR`: combine sharded partial results into one result and report.

The merged results.json is byte-identical to what the unsharded run would have written: the
parts are checked to be the shards of one run, their probes are put back in probe-file order,
and the result is derived through the same `pipeline.finalize` and gated like a plain run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evalgate.commands._args import cli_path, output_folder, write_outputs
from evalgate.commands.run import read_base_inputs_changed, read_gate_changes, verify_baseline
from evalgate.config import load_config
from evalgate.console import Console
from evalgate.edges.json_input import load_json_file
from evalgate.errors import RefusedError
from evalgate.gate.results import validate_results
from evalgate.gate.shards import merge_parts, pin_differences
from evalgate.pipeline import BASE_KEYS, exit_code, finalize, gate, refused_results
from evalgate.probeset_io import load_baseline, load_history


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config, {"out": cli_path(args.out), "baseline": cli_path(args.baseline)})
    out_dir = output_folder(cfg)
    progress = console.progress()
    # What the sharded gate's merge job passes, as the single-runner gate passes it to `run`.
    gate_changes = read_gate_changes(getattr(args, "gate_changes", None))
    base_changed = read_base_inputs_changed(getattr(args, "base_inputs_changed", None))
    try:
        with progress.phase(f"merge {len(args.parts)} partial results"):
            parts = []
            for name in args.parts:
                path = Path(name)
                if path.is_dir():
                    path = path / "results.json"
                doc = load_json_file(path, "partial result")
                validate_results(doc, str(path))
                if doc.get("verdict") == "refused":
                    raise RefusedError(f"{path}: this shard was refused; fix its input and rerun it")
                parts.append(doc)
            base, entries = merge_parts(parts, BASE_KEYS)
            # Gate under the configuration the parts were scored with and record (docs/approval.md).
            pin = cfg.pin()
            differing = pin_differences(base["config"], pin)
            if differing:
                raise RefusedError(
                    "the configuration of this merge pins differently from the parts' "
                    "(their results.json 'config'):\n  " + "\n  ".join(differing),
                    hint="merge with the configuration the shards were run with "
                    "(the same evalgate.yml, or --config FILE)",
                )
            # the baseline is this merge's choice (the shards never load one): record it
            base["config"] = {**base["config"], "baseline": pin["baseline"]}
            results = finalize(base, entries)
        baseline = load_baseline(cfg)
        if getattr(args, "verify_baseline", False):
            verify_baseline(baseline, results)
        results = gate(
            results,
            baseline,
            cfg,
            approve_gate_changes=bool(getattr(args, "approve_gate_changes", False)),
            base_inputs_changed=base_changed,
            history=load_history(cfg, baseline),
            baseline_update=bool(getattr(args, "verify_baseline", False)),
        )
        if gate_changes:
            results["gate_changes"] = gate_changes
    except RefusedError as exc:
        write_outputs(refused_results(cfg, exc, gate_changes=gate_changes), out_dir, cfg)
        raise
    write_outputs(results, out_dir, cfg)
    console.summary(results, out_dir)
    return exit_code(results, cfg, bool(getattr(args, "fail_on_inconclusive", False)))
