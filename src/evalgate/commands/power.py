"""`evalgate power [--config F] [--baseline F|none] [--checkpoint A --against B] [--drop D] [--format ...]`.

What the suite can see before it matters (docs/gate.md, "What your suite can see"): for every slice
the gate would gate, the smallest drop the shipped test detects with power 0.8 at the configured
alpha, tolerance and multiplicity, and the items a slice needs to detect a drop of D points. At
typical disagreement rates from the probe set and the baseline; with two checkpoints, at the
disagreement measured between them (both scored with the real scorer). The numbers are
gate/power.py's; this module reads the files and prints. Exit 0; a refusal (a bad configuration,
an invalid probe set, an unreadable baseline or checkpoint) exits 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any

from evalgate.commands._args import cli_loader, cli_path, scorer_factory
from evalgate.config import GateConfig, load_config
from evalgate.console import Console, PowerReport
from evalgate.errors import EXIT_PASS, RefusedError
from evalgate.gate import power
from evalgate.probeset_io import validate
from evalgate.report.power import power_annotations, power_text


def _drop(value: float) -> float:
    if not (math.isfinite(value) and 0 < value < 100):
        raise RefusedError(
            f"--drop {value:g}: a drop in accuracy points, above 0 and below 100",
            hint="e.g. --drop 10 for the items a slice needs to see a 10-point drop",
        )
    return value / 100


def _without_perplexity(cfg: GateConfig) -> GateConfig:
    """Disagreement needs the probes' outcomes only: no test set is read or scored."""
    suites = tuple(dataclasses.replace(s, test=None) for s in cfg.suites)
    return dataclasses.replace(cfg, test=None, suites=suites)


def _outcome(cfg: GateConfig, console: Console) -> Any:
    outcome = validate(cfg).with_approvable_as_warnings()
    if not outcome.ok:
        console.findings(outcome.findings)
        raise RefusedError(
            f"the probe set is invalid: {len(outcome.findings)} problem(s); its power is not computed",
            hint="`evalgate validate` lists them",
            findings=list(outcome.findings),
        )
    return outcome


def _measured(args: argparse.Namespace, drop: float, console: Console) -> dict[str, Any]:
    from evalgate.pipeline import perplexity_checks
    from evalgate.pipeline.scoring import score

    overrides = {"loader": cli_loader(args.loader)}
    cfg_a = load_config(args.config, {**overrides, "checkpoint": cli_path(args.checkpoint)})
    cfg_b = load_config(args.config, {**overrides, "checkpoint": cli_path(args.against)})
    if not cfg_a.checkpoint and not cfg_a.loader:
        raise RefusedError(
            "--against needs a checkpoint to compare with it: --checkpoint, or `checkpoint:` in evalgate.yml",
            hint="evalgate power --checkpoint A --against B",
        )
    outcome = _outcome(cfg_a, console)
    progress = console.progress()
    factory = scorer_factory()
    a = score(
        _without_perplexity(cfg_a), outcome, progress, checkpoint_arg=args.checkpoint, scorer_factory=factory
    )
    b = score(
        _without_perplexity(cfg_b), outcome, progress, checkpoint_arg=args.against, scorer_factory=factory
    )
    reference = {e["id"]: e for e in b["probes"]}
    counts = power.slice_counts(a["probes"], cfg_a.gate, reference, measured=True)
    field = cfg_a.gate.cluster
    deff = power.measured_design_effect(a["probes"], reference, field) if field else None
    doc = power.power_table(
        counts,
        cfg_a.gate,
        measured=True,
        drop=drop,
        design_effect=deff,
        reference=f"checkpoint {b['checkpoint']['path']} (--against)",
        perplexities=perplexity_checks(cfg_a),  # the gate's family: the configuration's, not the scoring's
        # "low power" at the background compare would judge these two runs at (gate/power.py, `judge`)
        background=power.measured_background(a["probes"], reference, cfg_a.gate.assumed_disagreement),
    )
    doc["checkpoints"] = {"checkpoint": a["checkpoint"]["path"], "against": b["checkpoint"]["path"]}
    return power.with_floors(doc, counts, cfg_a.gate.z)


def main(args: argparse.Namespace, console: Console) -> int:
    drop = _drop(args.drop)
    if args.checkpoint and not args.against:
        raise RefusedError(
            "--checkpoint A needs --against B: the disagreement is measured between two checkpoints",
            hint="evalgate power --checkpoint A --against B (without both: typical rates 5%, 10%, 20%)",
        )
    if args.against:
        if args.baseline:
            raise RefusedError(
                "--baseline with --against: the baseline accuracy then comes from checkpoint B",
                hint="leave out --baseline; or leave out --against for the typical rates with the baseline",
            )
        doc = _measured(args, drop, console)
    else:
        from evalgate.pipeline import probe_set_power

        cfg = load_config(args.config, {"baseline": cli_path(args.baseline)})
        doc = probe_set_power(cfg, _outcome(cfg, console), strict=True, drop=drop)
    console.power(PowerReport(doc, power_text(doc), power_annotations(doc)))
    return EXIT_PASS
