"""`evalgate compare RESULTS BASELINE`: gate two existing results without loading any model."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalgate.commands._args import cli_path, output_folder, write_outputs
from evalgate.config import load_config
from evalgate.console import Console
from evalgate.edges.files import file_record
from evalgate.edges.json_input import load_json_file
from evalgate.errors import RefusedError
from evalgate.gate.results import refuse_partial, validate_results
from evalgate.pipeline import exit_code, gate, rederive, refused_results
from evalgate.probeset_io import config_input


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config, {"out": cli_path(args.out), "baseline": cli_path(args.baseline)})
    out_dir = output_folder(cfg)
    results_path = Path(args.results)
    if results_path.is_dir():  # the output folder of a run, as `evalgate merge` takes it
        results_path = results_path / "results.json"
    read: dict[str, dict] = {}  # files read so far: a refusal still lists their SHA-256
    try:
        results = load_json_file(results_path, "results")
        read[results_path.as_posix()] = {**file_record(results_path), "role": "results"}
        validate_results(results, str(results_path))
        if results.get("verdict") == "refused":
            raise RefusedError(f"{results_path}: this run was refused; there is nothing to compare")
        refuse_partial(
            results, str(results_path), "holds only part of the probes; there is nothing to gate yet"
        )
        from evalgate.probeset_io import load_baseline, load_history

        baseline = load_baseline(cfg)
        if baseline is not None:
            read.update(baseline[2])
        history = load_history(cfg, baseline)
        if history is not None:
            read.update(history.inputs)
        shown = results_path.as_posix()
        # The scores come from the results file; the gate (rule, thresholds, slices) and the
        # baseline come from this command's configuration: pin and hash that one too, so the
        # result says how its verdict was reached.
        # Only the per-probe entries are the scores: every table derived from them is recomputed,
        # with the settings the file was written with (a stale table is told apart from a z of
        # this configuration's).
        results = rederive(results, shown, cfg)
        pin = cfg.pin()
        results["config"] = {**results["config"], "gate": pin["gate"], "baseline": pin["baseline"]}
        results["inputs"] = {
            **results["inputs"],
            **config_input(cfg),
            shown: {**file_record(results_path), "role": "results"},
        }
        results = gate(
            results,
            baseline,
            cfg,
            approve_gate_changes=bool(getattr(args, "approve_gate_changes", False)),
            history=history,
        )
    except RefusedError as exc:
        refused = refused_results(cfg, exc, extra_inputs=read)
        write_outputs(refused, out_dir, cfg)
        console.refused(refused, out_dir, list(exc.findings))
        raise
    write_outputs(results, out_dir, cfg)
    console.summary(results, out_dir)
    return exit_code(results, cfg, bool(getattr(args, "fail_on_inconclusive", False)))
