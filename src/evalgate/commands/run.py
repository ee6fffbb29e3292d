"""`evalgate run` (the default command): validate → load → score → compare → report → exit code.

Whatever happens after the configuration is read, the output folder receives a results.json and a
REPORT.md saying what happened (a refusal included) before any network call, so nothing is lost.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from evalgate.commands._args import cli_loader, cli_path, cli_paths, output_folder, write_outputs
from evalgate.config import load_config
from evalgate.console import Console
from evalgate.edges.inputs import read_checked
from evalgate.errors import EvalgateError, RefusedError
from evalgate.pipeline import (
    exit_code,
    gate,
    refuse_before_scoring,
    refuse_blind_clusters,
    refused_results,
    score,
)
from evalgate.probeset_io import load_baseline, load_history


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Flags in the configuration's own shape (None = not given)."""
    return {
        "checkpoint": cli_path(getattr(args, "checkpoint", None)),
        "loader": cli_loader(getattr(args, "loader", None)),
        "test": cli_path(getattr(args, "test", None)),
        "baseline": cli_path(getattr(args, "baseline", None)),
        "out": cli_path(getattr(args, "out", None)),
        # --probes/--train replace the configured files: the pinned configuration of results.json
        # (and of a baseline) must name the files that were used, not the ones in evalgate.yml.
        "probes": cli_paths(getattr(args, "probes", None)),
        "train": cli_paths(getattr(args, "train", None)),
    }


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        index, count = (int(p) for p in text.split("/"))
    except ValueError:
        raise RefusedError(f"--shard {text}: expected I/N, e.g. 2/4") from None
    if not 1 <= index <= count:
        raise RefusedError(f"--shard {text}: I must be between 1 and N")
    return index, count


def read_gate_changes(path: str | None) -> str | None:
    if not path:
        return None
    p = Path(path)
    if not os.path.lexists(p):
        raise RefusedError(f"--gate-changes {path}: file not found")
    # named by the workflow (the operator): any folder, but a bounded regular file
    data = read_checked(p, "gate-changes", "gate changes", shown=f"--gate-changes {path}")
    text = data.decode("utf-8", errors="replace")
    return text if text.strip() else None


def read_base_inputs_changed(path: str | None) -> list[str]:
    """The workflow's list of gate files the PR changed and it replaced with the base's copy."""
    if not path:
        return []
    p = Path(path)
    if not os.path.lexists(p):
        raise RefusedError(f"--base-inputs-changed {path}: file not found")
    data = read_checked(p, "base-inputs-changed", "changed gate files", shown=f"--base-inputs-changed {path}")
    return sorted(
        {line.strip() for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()}
    )


def verify_baseline(
    baseline: tuple[dict[str, Any], str, dict[str, Any]] | None, results: dict[str, Any]
) -> None:
    """`--verify-baseline`: a baseline the PR brings is checked against what this run scored."""
    from evalgate.gate.baseline import measured_elsewhere

    if baseline is None:
        raise RefusedError("--verify-baseline: there is no baseline to verify")
    doc, shown, _ = baseline
    why = measured_elsewhere(doc, results)
    if why:
        raise RefusedError(
            f"{shown} is not the baseline this checkpoint scores: " + "; ".join(why),
            hint="under the label evalgate:update-baseline the baseline must be the one "
            "update-baseline-apply.yml wrote for this head (docs/approval.md); re-apply the label to "
            "have it written, or remove the PR's own edit of the baseline",
        )


def maybe_comment(args: argparse.Namespace, out_dir: Path, console: Console) -> None:
    """`--comment`: post the sticky PR comment; a failure is a warning and never changes the exit
    code (github/report_comment.py). With --format json its lines go to stderr."""
    if not getattr(args, "comment", False):
        return
    from evalgate.github.report_comment import post_report

    with console.aside():
        post_report(out_dir, own_report=True)


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config, config_overrides(args))
    out_dir = output_folder(cfg)
    from evalgate.edges.outputs import clear_outputs

    clear_outputs(out_dir)  # nothing of an earlier run (or of the PR) can pass for this run's report
    progress = console.progress()
    gate_changes = read_gate_changes(getattr(args, "gate_changes", None))
    base_changed = read_base_inputs_changed(getattr(args, "base_inputs_changed", None))
    shard = parse_shard(getattr(args, "shard", None))
    outcome = None
    read: dict[str, Any] = {}  # inputs read so far, beyond the probe set: a refusal lists them too
    try:
        from evalgate.edges.journal import refuse_pending
        from evalgate.probeset_io import validate

        refuse_pending(cfg)  # a journal is never applied by the gate (edges/journal.py)
        with progress.phase("validate probe set"):
            outcome = validate(cfg, cli_paths(args.probes), cli_paths(args.train))
        # A deletion since the baseline is a gate change: refused below unless approved.
        outcome = outcome.with_approvable_as_warnings()
        if not outcome.ok:
            raise RefusedError(
                f"the probe set is invalid: {len(outcome.findings)} problem(s); nothing was scored",
                hint="fix every problem listed (run `evalgate validate` for the same list)",
                findings=list(outcome.findings),
            )
        baseline = None if shard else load_baseline(cfg)
        if baseline is not None:
            read.update(baseline[2])
        history = load_history(cfg, baseline)  # its chain checked before any model is loaded
        if history is not None:
            read.update(history.inputs)
        approve = bool(getattr(args, "approve_gate_changes", False))
        refuse_before_scoring(cfg, outcome, baseline, approve, base_changed)  # docs/approval.md
        refuse_blind_clusters(cfg, outcome, baseline)  # a gate.cluster that could never fail
        cache = getattr(args, "cache", None)
        results = score(
            cfg,
            outcome,
            progress,
            shard=shard,
            cache_dir=Path(cache).absolute() if cache else None,
            checkpoint_arg=getattr(args, "checkpoint", None),
        )
        read.update(results["inputs"])  # checkpoint files and test set: hashed even if the gate refuses
        if getattr(args, "verify_baseline", False):
            verify_baseline(baseline, results)
        if shard is None:
            results = gate(
                results,
                baseline,
                cfg,
                approve_gate_changes=approve,
                probe_files={p.id: p.file for p in outcome.probes},
                base_inputs_changed=base_changed,
                history=history,
                baseline_update=bool(getattr(args, "verify_baseline", False)),
            )
        if gate_changes:
            results["gate_changes"] = gate_changes
    except EvalgateError as exc:
        if not isinstance(exc, RefusedError):
            raise
        results = refused_results(cfg, exc, outcome=outcome, extra_inputs=read, gate_changes=gate_changes)
        write_outputs(results, out_dir, cfg)
        console.refused(results, out_dir, list(exc.findings))
        maybe_comment(args, out_dir, console)
        raise
    write_outputs(results, out_dir, cfg)
    console.summary(results, out_dir)
    maybe_comment(args, out_dir, console)
    return exit_code(results, cfg, bool(getattr(args, "fail_on_inconclusive", False)))
