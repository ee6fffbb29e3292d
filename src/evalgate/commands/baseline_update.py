"""`evalgate baseline update`: score a checkpoint and write baselines/NAME.json atomically.

Replacing a baseline appends one line to its history, baselines/history/NAME.jsonl (the first
time, the replaced baseline is kept as the anchor, NAME.anchor.json), all or nothing with the
baseline (pipeline.write_baseline, docs/gate.md "Drift").

The baseline is the one file the gate trusts; it moves only through a labelled PR (see the
update-baseline workflow). It carries no wall-clock time, so rewriting it from the same inputs on
the same commit changes no byte. How it is made is pipeline/'s, shared with `evalgate init`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalgate.commands._args import cli_loader, cli_path, gate_root
from evalgate.config import load_config
from evalgate.console import Console
from evalgate.edges.files import refused_if_unwritable
from evalgate.edges.json_input import load_json_file
from evalgate.errors import EXIT_PASS, RefusedError
from evalgate.gate.results import refuse_partial, validate_results
from evalgate.pipeline import (
    baseline_document,
    baseline_name,
    baseline_outcome,
    configured_baseline_name,
    display_path,
    drift_of_update,
    floors_failed,
    rederive,
    write_baseline,
)


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(
        args.config, {"checkpoint": cli_path(args.checkpoint), "loader": cli_loader(args.loader)}
    )
    progress = console.progress()
    if not args.from_results:  # a name that cannot be written is refused before the scoring, not after
        checkpoint = str(cfg.path(cfg.checkpoint)) if cfg.checkpoint else None
        baseline_name(args.name, checkpoint, configured_baseline_name(cfg))
    if args.from_results:
        results: dict[str, Any] = load_json_file(Path(args.from_results), "results")
        validate_results(results, args.from_results)
        if results.get("verdict") == "refused":
            raise RefusedError(f"{args.from_results}: a refused run cannot become a baseline")
        refuse_partial(
            results, args.from_results, "cannot become a baseline: it holds only part of the probes"
        )
        # the baseline's tables come from the entries, never from a table a hand may have edited
        results = rederive(results, args.from_results, cfg)
        _warn_drift(cfg, results, args.from_results)
    else:
        try:
            outcome = baseline_outcome(cfg, progress)
        except RefusedError as exc:
            from evalgate.report.findings import render_findings

            print(render_findings(list(exc.findings), "text"))
            raise
        results = gate_root(console).score_for_baseline(
            cfg, outcome, getattr(args, "checkpoint", None), progress
        )
    name = baseline_name(args.name, results["checkpoint"]["path"], configured_baseline_name(cfg))
    target, doc = baseline_document(cfg, results, name, commit=args.commit, pr=args.pr)
    with refused_if_unwritable(
        str(display_path(cfg, target)),
        "the baseline",
        "the baseline goes to baselines/NAME.json beside evalgate.yml: make that folder writable",
    ):
        note = write_baseline(cfg, target, doc)
    overall = (results.get("slices") or {}).get("overall") or {}
    acc = overall.get("accuracy")
    shown = f"{acc:.1%}" if isinstance(acc, float) else "n/a"
    print(f"evalgate: wrote {display_path(cfg, target)} (overall accuracy {shown})")
    if note:
        print(f"evalgate: {note}")
    _warn_floors(cfg, results, display_path(cfg, target))
    return EXIT_PASS


def _warn_floors(cfg: Any, results: dict[str, Any], shown: Any) -> None:
    """Warn when the new baseline is below a configured floor: every run gated against it then
    fails that floor (a labelled update leaves the PR red) until a maintainer lowers the floor in
    evalgate.yml, a gate change (docs/gate.md, "Floors from the first baseline"). Not a refusal:
    the floors are the base's to change."""
    below = floors_failed(results, cfg)
    if below:
        print(
            f"evalgate: warning: {shown} is below its floors (gate.min_accuracy): {'; '.join(below)}. "
            "Every run gated against it fails them until the floors in evalgate.yml are lowered (a gate "
            'change a maintainer approves; docs/gate.md, "Floors from the first baseline")',
            file=sys.stderr,
        )


def _warn_drift(cfg: Any, results: dict[str, Any], source: str) -> None:
    """Warn when the results about to become the baseline drifted beyond gate.drift_tolerance
    since the anchor, or may have and the test cannot tell (issue 25: the update was written with
    exit 0 and no word). Not a refusal:
    the refusal is `run --verify-baseline`'s, which the labelled workflow runs (docs/gate.md
    "Drift"); a drift that cannot be measured here is not this command's to report."""
    from evalgate.errors import EvalgateError
    from evalgate.gate.drift import drifting

    try:
        found = drift_of_update(results, cfg)
    except EvalgateError:
        return
    if not found or found.get("status") not in ("fail", "inconclusive"):
        return
    names = ", ".join(drifting(found)) or "the run"
    if found["status"] == "inconclusive":
        # never silence for what could not be decided: a gate says "inconclusive" there, not pass
        print(
            f"evalgate: warning: {source} may have drifted beyond gate.drift_tolerance since the anchor "
            f"{found.get('anchor', '')}, and the test cannot tell: {names}. Runs gated against it say "
            '"inconclusive" for that drift, not pass; more shared items (or a floor) make it decidable '
            '(docs/gate.md, "Drift")',
            file=sys.stderr,
        )
        return
    print(
        f"evalgate: warning: {source} drifted beyond gate.drift_tolerance since the anchor "
        f"{found.get('anchor', '')}: {names}. `evalgate run --verify-baseline` refuses this update unless "
        "a maintainer approves it (the label evalgate:approve-gate-change, --approve-gate-changes); "
        'then mark the new anchor with `evalgate baseline anchor --name NAME` (docs/gate.md, "Drift")',
        file=sys.stderr,
    )
