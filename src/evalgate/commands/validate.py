"""`evalgate validate`: every problem of the probe set at once; exit 0 when clean, 2 otherwise.

The console prints the report in its format (console.py); under GitHub Actions
(GITHUB_ACTIONS=true) the problems are also `::error` workflow commands whatever --format says,
so they show on the pull request's diff.
"""

from __future__ import annotations

import argparse

from evalgate.commands._args import cli_paths
from evalgate.config import GateConfig, load_config
from evalgate.console import Console, ValidationReport
from evalgate.errors import EXIT_PASS, EXIT_REFUSED
from evalgate.probeset_io import ValidationOutcome, validate
from evalgate.report.coverage_table import coverage_rows, coverage_text
from evalgate.report.findings import render_text


def summary(cfg: GateConfig, outcome: ValidationOutcome) -> dict:
    probes = outcome.probes
    live = [p for p in probes if not p.deprecated]
    train = [k for k, v in outcome.inputs.items() if v["role"] == "train"]
    coverage_ok = not any(f.check == "coverage" for f in outcome.findings)
    if any(w.check == "coverage-skipped" for w in outcome.warnings):
        coverage_ok = None  # not judged: some records could not be read
    return {
        "probes": len(probes),
        "core": sum(p.category == "core" and p.kind != "ordinal" for p in live),
        "adversarial": sum(p.category == "adversarial" and p.kind != "ordinal" for p in live),
        "ordinal": sum(p.kind == "ordinal" for p in live),
        "deprecated": len(probes) - len(live),
        "files": list(outcome.probe_set["files"]),
        "coverage_ok": coverage_ok,
        # every cell with its count and bounds (report/coverage_table.py); empty when not checked
        "coverage": coverage_rows(outcome.coverage) if coverage_ok is not None else [],
        "leaks": len(outcome.leaks),
        "excluded": sorted(outcome.excluded),
        "leak_detectors": list(cfg.leaks.detectors),
        "train_files": train,
        "version": outcome.probe_set["version"],
        "digest": outcome.probe_set["digest"],
    }


def clean_text(cfg: GateConfig, s: dict, matrix: dict) -> str:
    detectors = ", ".join(f"{cfg.leaks.window}-gram" if d == "ngram" else d for d in cfg.leaks.detectors)
    against = ", ".join(s["train_files"]) or "no training files"
    leaks = f"{s['leaks']} leaks ({detectors}) against {against}" if detectors else "leak detection is off"
    if s["excluded"]:
        leaks += f"; {len(s['excluded'])} leaking probe(s) excluded"
    version = s["version"] or "unsealed"
    return "\n".join(
        [
            "evalgate validate: OK",
            f"  probes:   {s['probes']} ({s['core']} core, {s['adversarial']} adversarial, "
            f"{s['ordinal']} ordinal, {s['deprecated']} deprecated) in {len(s['files'])} file(s)",
            "  coverage: OK",
            f"  leaks:    {leaks}",
            f"  version:  {version} (digest {s['digest'][:12]})",
            "",
            "coverage matrix (scored probes per cell, with the bounds of evalgate.yml `coverage:`):",
            _indent(coverage_text(matrix, only_families=True)),
        ]
    )


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def one_line(s: dict) -> str:
    return (
        f"probe set OK: {s['probes']} probes, coverage OK, {s['leaks']} leaks, "
        f"version {s['version'] or 'unsealed'}"
    )


def text_report(cfg: GateConfig, outcome: ValidationOutcome, s: dict) -> str:
    """The report for people: a short summary when clean, else every problem and the coverage."""
    if outcome.ok:
        lines = [clean_text(cfg, s, outcome.coverage)]
        if outcome.warnings:
            lines += ["", render_text((), outcome.warnings)]
        return "\n".join(lines)
    closing = "the probe set is refused (nothing was scored)"
    lines = [render_text(outcome.findings, outcome.warnings, closing=closing)]
    if s["coverage_ok"] is not None:
        lines += ["", "coverage (cells outside their bounds are marked):"]
        lines.append(_indent(coverage_text(outcome.coverage, only_families=True)))
    return "\n".join(lines)


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config)
    from evalgate.edges.journal import recover_set

    recover_set(cfg)  # a probe change a killed run left half-done: finished or dropped first
    outcome = validate(cfg, cli_paths(args.probes), cli_paths(args.train))
    s = summary(cfg, outcome)
    text = text_report(cfg, outcome, s)
    console.validation(ValidationReport(outcome.findings, outcome.warnings, s, text, one_line(s)))
    return EXIT_PASS if outcome.ok else EXIT_REFUSED
